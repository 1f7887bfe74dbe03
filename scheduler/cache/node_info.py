"""NodeInfo: one node and what is on it — the per-node view every Filter and Score reads.

Kept up to date in O(1) per pod event by ClusterState (add_pod/remove_pod here).
``generation`` changes with every mutation so batch state and snapshots can tell
whether a node changed since they looked. add_pod/remove_pod also keep the snapshot's
``PodIndex`` (``pod_index``, set when the snapshot adopts the NodeInfo): every change of a
node's pods goes through them, temporary placements by preemption included. The index is
known here only as a ``PodIndexer`` (what it must hear), so the index's modules, which read
NodeInfos, are the only side of the pair that imports the other.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from scheduler.model.resources import Resources

if TYPE_CHECKING:
    from scheduler.model.keys import Uid
    from scheduler.model.node import Node
    from scheduler.model.pod import HostPort, Pod

_generation = 0


def next_generation() -> int:
    """A process-wide increasing counter (kube's nextGeneration)."""
    global _generation
    _generation += 1
    return _generation


class PodIndexer(Protocol):
    """Who indexes a snapshot's pods (cache.pod_index.PodIndex): told of every pod a
    NodeInfo gains or loses, after the change."""

    def add(self, pod: Pod, info: NodeInfo) -> None: ...

    def remove(self, pod: Pod, info: NodeInfo) -> None: ...


class NodeInfo:
    """A node (None while only pods name it: pods may arrive before their node) and its pods.

    ``requested`` sums effective requests of non-terminal pods here (assumed ones included);
    ``non_zero_requested`` the same with kube's 100m / 200Mi defaults, used by scoring.
    ``used_ports`` counts host ports in use, keyed by (host_ip, protocol, port).
    """

    __slots__ = (
        "generation",
        "node",
        "non_zero_requested",
        "pod_index",
        "pods",
        "requested",
        "used_ports",
    )

    def __init__(self, node: Node | None = None, *, pod_index: PodIndexer | None = None) -> None:
        self.node = node
        self.pod_index = pod_index
        """The index this NodeInfo's pods are kept in (None: not in a snapshot yet)."""
        self.pods: dict[Uid, Pod] = {}
        self.requested = Resources()
        self.non_zero_requested = Resources()
        self.used_ports: dict[HostPort, int] = {}
        self.generation = next_generation()

    @property
    def name(self) -> str:
        return self.node.name if self.node is not None else ""

    def add_pod(self, pod: Pod) -> None:
        """Account ``pod`` here. The caller guarantees it is not here already."""
        self.pods[pod.uid] = pod
        self.requested.add(pod.requests)
        self.non_zero_requested.milli_cpu += pod.non_zero_milli_cpu
        self.non_zero_requested.memory += pod.non_zero_memory
        for port in pod.host_ports:
            self.used_ports[port] = self.used_ports.get(port, 0) + 1
        if self.pod_index is not None:
            self.pod_index.add(pod, self)
        self.generation = next_generation()

    def remove_pod(self, uid: Uid) -> Pod | None:
        """Stop accounting the pod with ``uid``; returns it, or None if it was not here."""
        pod = self.pods.pop(uid, None)
        if pod is None:
            return None
        self.requested.sub(pod.requests)
        self.non_zero_requested.milli_cpu -= pod.non_zero_milli_cpu
        self.non_zero_requested.memory -= pod.non_zero_memory
        for port in pod.host_ports:
            left = self.used_ports.get(port, 0) - 1
            if left > 0:
                self.used_ports[port] = left
            else:
                self.used_ports.pop(port, None)
        if self.pod_index is not None:
            self.pod_index.remove(pod, self)
        self.generation = next_generation()
        return pod

    def set_node(self, node: Node | None) -> None:
        self.node = node
        self.generation = next_generation()
