"""cache: ClusterState (nodes, assigned and assumed pods), NodeInfo and the live Snapshot.

kube's backend/cache. Import the modules (``from scheduler.cache import cluster_state``)
or the names re-exported here.
"""

from __future__ import annotations

from scheduler.cache.cluster_state import CacheError, ClusterState
from scheduler.cache.node_info import NodeInfo
from scheduler.cache.snapshot import Snapshot
from scheduler.cache.workloads import Workloads

__all__ = ["CacheError", "ClusterState", "NodeInfo", "Snapshot", "Workloads"]
