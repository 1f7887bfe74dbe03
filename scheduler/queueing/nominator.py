"""Nominator: pending pods nominated to nodes (kube's backend/queue/nominator.go).

A pod is nominated when preemption chose a node for it (the scheduler records it at once,
before its ``status.nominatedNodeName`` patch comes back through the watch) or when the
watch delivers a pending pod with ``status.nominatedNodeName`` set (nominated by an earlier
run of ours, or by another scheduler). Filter then leaves room on that node for it against
pods of lower or equal priority (framework/profile.py, the two passes).

The nomination ends when the pod is assumed (it is placed), deleted, bound by someone else,
or updated with another nominated node. An update that carries no nominated node keeps a
nomination made here in memory (kube's UpdateNominatedPod: the watch may still lag our
patch), but ends one the API had shown (someone cleared it).

Everything here is synchronous; the queue owns the nominator and calls it on its events.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Collection

    from scheduler.model.keys import Uid
    from scheduler.model.pod import Pod

__all__ = ["Nominator"]


class Nominator:
    """Nominated pods by node and by uid; implements framework's ``NominatedPods``."""

    __slots__ = ("_by_node", "_node_of", "_seen_in_api")

    def __init__(self) -> None:
        self._by_node: dict[str, dict[Uid, Pod]] = {}
        self._node_of: dict[Uid, str] = {}
        self._seen_in_api: set[Uid] = set()
        """Pods whose current nomination the watch has shown in ``status``."""

    # -- writes ----------------------------------------------------------------------

    def add(self, pod: Pod, node: str | None = None) -> Pod:
        """Nominate ``pod`` to ``node`` (default: its ``status.nominatedNodeName``); an
        empty node clears the nomination. Returns the pod as recorded, with
        ``nominated_node_name`` set to the node (so batching refuses to sign it and the next
        pass tries that node first)."""
        self.delete(pod.uid)
        target = pod.nominated_node_name if node is None else node
        if not target:
            return pod
        if pod.nominated_node_name != target:
            pod = replace(pod, nominated_node_name=target)
        self._node_of[pod.uid] = target
        self._by_node.setdefault(target, {})[pod.uid] = pod
        return pod

    def update(self, pod: Pod) -> Pod:
        """A new version of a pending pod: record its nomination, keeping the one held here
        when neither version names a node. Returns the pod as to be queued."""
        held = self._node_of.get(pod.uid)
        if not pod.nominated_node_name and held is not None and pod.uid not in self._seen_in_api:
            return self.add(pod, held)
        recorded = self.add(pod)
        if pod.nominated_node_name:
            self._seen_in_api.add(pod.uid)
        return recorded

    def delete(self, uid: Uid) -> None:
        """The pod is no longer nominated (placed, gone, bound elsewhere)."""
        self._seen_in_api.discard(uid)
        node = self._node_of.pop(uid, None)
        if node is None:
            return
        pods = self._by_node.get(node)
        if pods is not None:
            pods.pop(uid, None)
            if not pods:
                del self._by_node[node]

    # -- reads (framework.interfaces.NominatedPods) ----------------------------------

    def nominated_pods_for_node(self, node_name: str) -> list[Pod]:
        pods = self._by_node.get(node_name)
        return list(pods.values()) if pods else []

    def nominated_node_names(self) -> Collection[str]:
        return self._by_node.keys()

    def node_of(self, uid: Uid) -> str | None:
        """The node ``uid`` is nominated to, if any."""
        return self._node_of.get(uid)

    def lower_priority_on(self, node: str, priority: int) -> list[Pod]:
        """Pods nominated to ``node`` with a priority below ``priority`` (kube's
        getLowerPriorityNominatedPods: a preemption there may leave them no room)."""
        return [p for p in self.nominated_pods_for_node(node) if p.priority < priority]

    def __len__(self) -> int:
        return len(self._node_of)
