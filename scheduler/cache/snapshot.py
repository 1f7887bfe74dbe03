"""Snapshot: the read-only view of the cluster that one scheduling cycle sees.

kube-scheduler copies changed NodeInfos into a snapshot at the start of every cycle,
because its cache changes concurrently. Ours cannot: a cycle runs on the event loop
without awaiting, so no watch event lands mid-cycle. The snapshot is therefore a *live*
view kept up to date by ClusterState (no per-cycle copy; O(1) per event, O(labels) for
its indexes); a cycle must never await while it holds it. See docs/architecture.md,
"Snapshot without copies".

Besides the nodes it keeps what InterPodAffinity and PodTopologySpread would otherwise scan
every node or pod for: the cached pods by namespace and label and their affinity terms by
term (``pod_index``, kept by NodeInfo), and how many nodes carry each label value (the
topology domains a spread constraint counts over).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scheduler.cache.changes import ChangeFeed
from scheduler.cache.disruption_budgets import DisruptionBudgets
from scheduler.cache.dra_objects import DraObjects
from scheduler.cache.identity_labels import IdentityLabels
from scheduler.cache.pod_groups import PodGroups
from scheduler.cache.pod_index import PodIndex
from scheduler.cache.volumes import Volumes
from scheduler.cache.workloads import Workloads

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

    from scheduler.cache.node_info import NodeInfo
    from scheduler.model.node import Node

_NO_LABELS: Mapping[str, str] = {}
_NO_COUNTS: Mapping[str, int] = {}


class Snapshot:
    __slots__ = (
        "_affinity",
        "_anti_affinity",
        "_by_name",
        "_image_nodes",
        "_label_keys",
        "_label_nodes",
        "_namespace_labels",
        "_order",
        "_order_dirty",
        "changes",
        "disruption_budgets",
        "dra",
        "identity_labels",
        "pod_groups",
        "pod_index",
        "volumes",
        "workloads",
    )

    def __init__(self) -> None:
        self._by_name: dict[str, NodeInfo] = {}
        self._order: list[NodeInfo] = []
        self._order_dirty = False
        self._image_nodes: dict[str, int] = {}
        self._label_nodes: dict[str, dict[str, int]] = {}
        """Label key → value → how many nodes carry that label (ghosts excluded)."""
        self._label_keys: dict[str, int] = {}
        """Label key → how many nodes carry the key."""
        self.changes = ChangeFeed()
        """Observers of every pod and node change (cache/changes.py)."""
        self.identity_labels = IdentityLabels()
        """Which per-pod identity labels some known pod's affinity term reads (signatures)."""
        self.pod_index = PodIndex(self.changes, identity_labels=self.identity_labels)
        """Every pod of every adopted NodeInfo, by namespace and label (ghosts included)."""
        self._namespace_labels: dict[str, Mapping[str, str]] = {}
        self.workloads = Workloads()
        """Services and pod controllers (default topology spreading reads them)."""
        self.disruption_budgets = DisruptionBudgets()
        """PodDisruptionBudgets (preemption reads them)."""
        self.volumes = Volumes()
        """PVs, PVCs, StorageClasses and CSINodes (the volume plugins read them)."""
        self.pod_groups = PodGroups()
        """PodGroups and their members' counts (GangScheduling reads them)."""
        self.dra = DraObjects()
        """DeviceClasses, ResourceClaims and ResourceSlices (DynamicResources reads them)."""

    @classmethod
    def of(
        cls,
        node_infos: Iterable[NodeInfo],
        namespace_labels: Mapping[str, Mapping[str, str]] | None = None,
    ) -> Snapshot:
        """A standalone snapshot over ``node_infos`` (tests, simulate)."""
        snap = cls()
        for info in node_infos:
            snap.add_node_info(info)
        for namespace, labels in (namespace_labels or {}).items():
            snap.set_namespace_labels(namespace, labels)
        return snap

    # -- read side (plugins and the runner) ------------------------------------------------

    @property
    def node_infos(self) -> list[NodeInfo]:
        """Every NodeInfo that has a Node, in a stable order (the order nodes were added)."""
        if self._order_dirty:
            self._order = [info for info in self._by_name.values() if info.node is not None]
            self._order_dirty = False
        return self._order

    @property
    def num_nodes(self) -> int:
        return len(self.node_infos)

    def get(self, name: str) -> NodeInfo | None:
        info = self._by_name.get(name)
        return info if info is not None and info.node is not None else None

    def label_values(self, key: str) -> Mapping[str, int]:
        """Each value of label ``key`` among the nodes, with how many nodes carry it."""
        return self._label_nodes.get(key, _NO_COUNTS)

    def num_nodes_with_label(self, key: str) -> int:
        return self._label_keys.get(key, 0)

    def image_num_nodes(self, image: str) -> int:
        """How many nodes report the (normalized) image."""
        return self._image_nodes.get(image, 0)

    def namespace_labels(self, namespace: str) -> Mapping[str, str]:
        return self._namespace_labels.get(namespace, _NO_LABELS)

    # -- write side (ClusterState only) ----------------------------------------------------

    def add_node_info(self, info: NodeInfo) -> None:
        """Register ``info`` (its node may be None for now), count its images and labels,
        and index its pods unless it is adopted already."""
        self._by_name[info.name] = info
        self._order_dirty = True
        self.adopt(info)
        if info.node is not None:
            self._count_node(info.node, +1)
        self.changes.nodes_changed()

    def adopt(self, info: NodeInfo) -> None:
        """From now on ``info``'s pods are kept in ``pod_index`` (those it holds indexed now)."""
        if info.pod_index is self.pod_index:
            return
        info.pod_index = self.pod_index
        for pod in info.pods.values():
            self.pod_index.add(pod, info)

    def remove_node_info(self, name: str) -> None:
        info = self._by_name.pop(name, None)
        self._order_dirty = True
        if info is not None and info.node is not None:
            self._count_node(info.node, -1)
        self.changes.nodes_changed()

    def node_changed(self, old: Node, info: NodeInfo) -> None:
        """``info``'s node was updated (``old`` is what it was): recount images, labels
        and order."""
        self._count_node(old, -1)
        if info.node is not None:
            self._count_node(info.node, +1)
        self._order_dirty = True
        self.changes.nodes_changed()

    def set_namespace_labels(self, namespace: str, labels: Mapping[str, str] | None) -> None:
        if labels is None:
            self._namespace_labels.pop(namespace, None)
        else:
            self._namespace_labels[namespace] = labels
        self.changes.nodes_changed()

    def _count_node(self, node: Node, delta: int) -> None:
        _count(self._image_nodes, node.images, delta)
        _count(self._label_keys, node.labels, delta)
        for key, value in node.labels.items():
            by_value = self._label_nodes.get(key)
            if by_value is None:
                by_value = self._label_nodes[key] = {}
            _count(by_value, (value,), delta)
            if not by_value:
                del self._label_nodes[key]


def _count(counts: dict[str, int], keys: Iterable[str], delta: int) -> None:
    for key in keys:
        left = counts.get(key, 0) + delta
        if left > 0:
            counts[key] = left
        else:
            counts.pop(key, None)
