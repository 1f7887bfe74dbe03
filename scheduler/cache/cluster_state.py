"""ClusterState: the scheduler's cache of nodes and assigned pods (kube's backend/cache).

It owns one live :class:`~scheduler.cache.snapshot.Snapshot`: every write here updates
the NodeInfo objects the snapshot hands to plugins, in O(1) per event, O(labels) for the
snapshot's indexes of pods and node labels (a node's pods are only touched when that node
goes away). Watch handlers (``kube.controller``) feed it parsed records; the scheduling
cycle assumes and forgets. The cache never reads a clock.

Pod state machine (kube's ``cache.go``, same names)::

                 assume                  watch: Add/Update, bound
    Initial -----------------> Assumed ----------------------------> Added <--+
       |                        |    |          ("confirmed")          | |    | Update
       |  watch: Add, bound     |    | forget                          | +----+
       +------------------------|----|-------------------------------->+
                                     v                                 | Remove, or
                                   Forgotten                           | Succeeded/Failed
                                                                       v
                                                                     Deleted

* Initial → Assumed: :meth:`assume`, before the bind call returns, so the next cycle
  sees the pod's resources taken.
* Assumed → Added ("confirmed"): the watch delivers the pod bound to a node; the
  watched version replaces the assumed copy (moved if the node differs) and the
  assumption ends.
* Assumed → Forgotten: :meth:`forget`, when the bind failed.
* No Expired state: an assumption whose bind succeeded waits for its watch event however
  long that takes, as in kube since kubernetes#106361 (``durationToExpireAssumedPod = 0``):
  expiring it while the event was merely late freed resources the pod holds and let the
  next cycle over-commit the node. A pod deleted while its events were lost (a 410 gap)
  leaves through the Replace that follows the watch's re-list (``kube.controller.relist``).
* Initial → Added: an assigned pod we never assumed (bound by another scheduler, or
  seen at start-up).
* Added → Added: an update (upsert); a pod that turns Succeeded/Failed, or loses its
  node, leaves the cache: a terminal pod consumes nothing.
* Any → Deleted: :meth:`remove_pod`.

Pending pods (no ``spec.nodeName``) are never in the cache: they live in the queue.

Nodes: :meth:`remove_node` keeps the NodeInfo as a "ghost" (node None, invisible to the
snapshot) while pods still name it, as kube does; pods may also arrive before their
node, which creates the ghost. The ghost disappears with its last pod.

Neighbours: ``cache.node_info`` (per-node accounting), ``cache.snapshot`` (the read
side), ``model`` (records built by ``model.parse``).
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from scheduler.cache.node_info import NodeInfo
from scheduler.cache.snapshot import Snapshot
from scheduler.model.keys import NodeName, Uid

if TYPE_CHECKING:
    from collections.abc import Mapping

    from scheduler.cache.disruption_budgets import DisruptionBudgets
    from scheduler.cache.dra_objects import DraObjects
    from scheduler.cache.pod_groups import PodGroups
    from scheduler.cache.volumes import Volumes
    from scheduler.cache.workloads import Workloads
    from scheduler.model.node import Node
    from scheduler.model.pod import Pod

__all__ = ["CacheError", "ClusterState"]


class CacheError(RuntimeError):
    """A cache operation that the pod's state does not allow (a scheduler bug)."""


@dataclasses.dataclass(slots=True)
class _PodState:
    pod: Pod
    assumed: bool


class ClusterState:
    """Nodes, assigned and assumed pods, namespaces; see the module docstring."""

    __slots__ = ("_assumed", "_infos", "_pods", "snapshot")

    def __init__(self) -> None:
        self.snapshot = Snapshot()
        self._infos: dict[str, NodeInfo] = {}
        """Every NodeInfo, ghosts included (the snapshot only holds those with a node)."""
        self._pods: dict[Uid, _PodState] = {}
        self._assumed: set[Uid] = set()
        """Pods assumed and not yet confirmed by the watch or forgotten."""

    # -- nodes -------------------------------------------------------------------------------

    def add_node(self, node: Node) -> None:
        """Add or update ``node`` (upsert); a ghost NodeInfo gets its node back."""
        info = self._infos.get(node.name)
        if info is None:
            info = NodeInfo(node, pod_index=self.snapshot.pod_index)
            self._infos[node.name] = info
            self.snapshot.add_node_info(info)
        elif info.node is None:
            info.set_node(node)
            self.snapshot.add_node_info(info)
        else:
            old = info.node
            info.set_node(node)
            self.snapshot.node_changed(old, info)

    def remove_node(self, name: str) -> None:
        """Drop the node; its NodeInfo stays as a ghost while pods still name it."""
        info = self._infos.get(name)
        if info is None or info.node is None:
            return
        self.snapshot.remove_node_info(name)
        if info.pods:
            info.set_node(None)
        else:
            del self._infos[name]

    # -- pods from the watch -----------------------------------------------------------------

    def add_pod(self, pod: Pod) -> None:
        """Upsert a pod as the watch delivers it (see the state machine above)."""
        state = self._pods.get(pod.uid)
        if not pod.node_name:
            # Pending: not ours to hold. A stale pending event must not undo an assumption.
            if state is not None and not state.assumed:
                self.remove_pod(pod.uid)
            return
        if pod.terminal:
            self.remove_pod(pod.uid)
            return
        if state is not None:
            self._detach(state.pod)
            self._assumed.discard(pod.uid)  # confirmed, if it was assumed
        self._pods[pod.uid] = _PodState(pod, assumed=False)
        self._attach(pod)

    def remove_pod(self, uid: str) -> Pod | None:
        """Forget the pod entirely (deleted in the API); returns what the cache held."""
        state = self._pods.pop(Uid(uid), None)
        if state is None:
            return None
        self._assumed.discard(state.pod.uid)
        self._detach(state.pod)
        return state.pod

    # -- assumptions from the cycle ----------------------------------------------------------

    def assume(self, pod: Pod, node_name: str) -> Pod:
        """Record ``pod`` on ``node_name`` before its bind returns; returns the placed copy."""
        if pod.uid in self._pods:
            held = "assumed" if self._pods[pod.uid].assumed else "added"
            raise CacheError(f"pod {pod.key} ({pod.uid}) is already {held}; cannot assume it")
        info = self._infos.get(node_name)
        if info is None or info.node is None:
            raise CacheError(f"cannot assume pod {pod.key} on unknown node {node_name!r}")
        placed = pod.with_node_name(NodeName(node_name))
        self._pods[pod.uid] = _PodState(placed, assumed=True)
        self._assumed.add(pod.uid)
        info.add_pod(placed)
        groups = self.snapshot.pod_groups
        if placed.scheduling_group or groups.coscheduling:  # a member, maybe
            groups.scheduled(placed)
        return placed

    def confirm(self, uid: Uid) -> bool:
        """Assumed → Added, keeping the assumed copy: the watch shows our bind and nothing
        else the model reads changed (the watched record would equal it but for its
        resourceVersion, which nothing reads from the cache). False if not assumed."""
        if uid not in self._assumed:
            return False
        self._assumed.discard(uid)
        self._pods[uid].assumed = False
        return True

    def forget(self, uid: str) -> Pod | None:
        """Drop an assumption (the bind failed); no-op once confirmed or gone."""
        state = self._pods.get(Uid(uid))
        if state is None or not state.assumed:
            return None
        forgotten = self.remove_pod(uid)
        groups = self.snapshot.pod_groups
        if forgotten is not None and (forgotten.scheduling_group or groups.coscheduling):
            groups.forgotten(forgotten)  # pending again
        return forgotten

    # -- namespaces ---------------------------------------------------------------------------

    def set_namespace(self, name: str, labels: Mapping[str, str]) -> None:
        """Namespace labels, for pod-affinity namespaceSelectors."""
        self.snapshot.set_namespace_labels(name, dict(labels))

    def remove_namespace(self, name: str) -> None:
        self.snapshot.set_namespace_labels(name, None)

    @property
    def disruption_budgets(self) -> DisruptionBudgets:
        """PodDisruptionBudgets, for preemption."""
        return self.snapshot.disruption_budgets

    @property
    def volumes(self) -> Volumes:
        """PVs, PVCs, StorageClasses and CSINodes, for the volume plugins."""
        return self.snapshot.volumes

    @property
    def pod_groups(self) -> PodGroups:
        """PodGroups and their members, for gang scheduling."""
        return self.snapshot.pod_groups

    @property
    def dra(self) -> DraObjects:
        """DeviceClasses, ResourceClaims and ResourceSlices, for DynamicResources."""
        return self.snapshot.dra

    @property
    def workloads(self) -> Workloads:
        """Services and pod controllers, for default topology spreading."""
        return self.snapshot.workloads

    # -- reads ---------------------------------------------------------------------------------

    def is_assumed(self, uid: str) -> bool:
        return Uid(uid) in self._assumed

    def get_pod(self, uid: str) -> Pod | None:
        """The cached pod (the assumed copy, with its node, while assumed)."""
        state = self._pods.get(Uid(uid))
        return state.pod if state is not None else None

    def node_info(self, name: str) -> NodeInfo | None:
        """The NodeInfo for ``name``, ghosts included (``snapshot.get`` hides them)."""
        return self._infos.get(name)

    def has_node(self, name: str) -> bool:
        """Whether the node is in the cache (a ghost, deleted with pods still on it, is not)."""
        info = self._infos.get(name)
        return info is not None and info.node is not None

    def pod_uids(self) -> set[str]:
        """Every cached pod, assumed ones included.

        For reconciling after a re-list, compare with *every* listed pod (pending ones
        too): an assumed pod is still pending in the API until its binding lands.
        """
        return set(self._pods)

    def node_names(self) -> set[str]:
        """Names of the nodes the cache knows (ghosts excluded)."""
        return {name for name, info in self._infos.items() if info.node is not None}

    @property
    def num_nodes(self) -> int:
        return self.snapshot.num_nodes

    @property
    def num_pods(self) -> int:
        """Pods held, assumed ones included."""
        return len(self._pods)

    @property
    def num_assumed(self) -> int:
        return len(self._assumed)

    # -- internals -----------------------------------------------------------------------------

    def _attach(self, pod: Pod) -> None:
        info = self._infos.get(pod.node_name)
        if info is None:
            # A ghost until the node itself arrives; its pods are indexed all the same.
            info = NodeInfo(pod_index=self.snapshot.pod_index)
            self._infos[pod.node_name] = info
        info.add_pod(pod)
        groups = self.snapshot.pod_groups
        if pod.scheduling_group or groups.coscheduling:
            groups.scheduled(pod)

    def _detach(self, pod: Pod) -> None:
        groups = self.snapshot.pod_groups
        if pod.scheduling_group or groups.coscheduling:
            groups.gone(pod)
        info = self._infos.get(pod.node_name)
        if info is None:
            return
        info.remove_pod(pod.uid)
        if info.node is None and not info.pods:
            del self._infos[pod.node_name]  # the last pod of a ghost went
