"""model: pure data — Kubernetes dicts become slotted, typed records (stdlib only).

Re-exports the records and the two parse entry points, so callers outside the layer can
write ``from scheduler import model`` and ``model.pod_from_raw(raw)``.
"""

from __future__ import annotations

from scheduler.model.affinity import (
    PodAffinityTerm,
    TopologySpreadConstraint,
    WeightedPodAffinityTerm,
)
from scheduler.model.errors import ModelError
from scheduler.model.keys import NodeName, PodKey, ProfileName, Uid, pod_key
from scheduler.model.labels import (
    LabelSelector,
    NodeSelector,
    NodeSelectorTerm,
    Operator,
    PreferredSchedulingTerm,
    Requirement,
)
from scheduler.model.node import Node
from scheduler.model.parse import node_from_raw, pod_from_raw
from scheduler.model.pod import HostPort, Pod
from scheduler.model.quantity import QuantityError, parse_quantity
from scheduler.model.resources import Resources
from scheduler.model.taints import Effect, Taint, Toleration

__all__ = [
    "Effect",
    "HostPort",
    "LabelSelector",
    "ModelError",
    "Node",
    "NodeName",
    "NodeSelector",
    "NodeSelectorTerm",
    "Operator",
    "Pod",
    "PodAffinityTerm",
    "PodKey",
    "PreferredSchedulingTerm",
    "ProfileName",
    "QuantityError",
    "Requirement",
    "Resources",
    "Taint",
    "Toleration",
    "TopologySpreadConstraint",
    "Uid",
    "WeightedPodAffinityTerm",
    "node_from_raw",
    "parse_quantity",
    "pod_from_raw",
    "pod_key",
]
