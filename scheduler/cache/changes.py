"""ChangeFeed: who hears of every change to a snapshot's pods and nodes, as it happens.

The exact batch (``batching/exact.py``) keeps per-domain counts and per-node verdicts up to
date between cycles instead of recounting them in each: it must see every pod a NodeInfo
gains or loses (assume, forget, the watch's add, update and delete, ours or another
scheduler's) and learn of anything else that changes what the plugins read of the nodes
(a node added, removed or updated, a namespace's labels). The feed calls its observers
synchronously from the one place each such change goes through (``PodIndex.add``/
``remove`` for pods, ``Snapshot``'s write side for the rest), after the change is applied.

With no observer (every cycle that is not batching exactly) a change costs one truth test.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from scheduler.cache.node_info import NodeInfo
    from scheduler.model.pod import Pod


class ChangeObserver(Protocol):
    def pod_changed(self, pod: Pod, info: NodeInfo, delta: int) -> None:
        """``pod`` was added to (``delta`` 1) or removed from (-1) ``info``."""

    def nodes_changed(self) -> None:
        """A node or a namespace changed: what was derived from them may be stale."""


class ChangeFeed:
    __slots__ = ("observers",)

    def __init__(self) -> None:
        self.observers: list[ChangeObserver] = []

    def pod_changed(self, pod: Pod, info: NodeInfo, delta: int) -> None:
        for observer in self.observers:
            observer.pod_changed(pod, info, delta)

    def nodes_changed(self) -> None:
        for observer in self.observers:
            observer.nodes_changed()
