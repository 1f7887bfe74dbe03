"""QueuedPodGroupInfo: a pod group as one queue entity (kube v1.37's QueuedPodGroupInfo,
GenericWorkload gate).

The members of a PodGroup are never queued alone: they wait in one entity that sorts
against plain pods by the group's priority and its timestamp (the first member's when it
was made, now after each attempt unless kept), is gated while any member is (a PreEnqueue
plugin refused it: a scheduling gate, or GangScheduling's count below ``minCount``), and is
popped whole for one group cycle (cycle/schedule_group.py).

Members are ordered as kube orders them (priority, then attempts, descending; then the
time they were queued, then the name), and then, beyond kube (KEP-4671, kubernetes issue
140354), gathered by signature in the order of each signature's first member: a
homogeneous group keeps kube's order exactly, and a mixed one is placed signature by
signature so that each run shares one batch.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from scheduler.queueing.queued_pod import Pool

if TYPE_CHECKING:
    from scheduler.batching.signature import Signature
    from scheduler.model.keys import Uid
    from scheduler.model.pod_groups import GroupKey
    from scheduler.queueing.queued_pod import QueuedPodInfo


@dataclass(slots=True)
class QueuedPodGroupInfo:
    key: GroupKey
    priority: int
    """The PodGroup's ``spec.priority`` (0 unset): the entity sorts by it."""
    members: dict[Uid, QueuedPodInfo] = field(default_factory=dict)
    timestamp: float = 0.0
    initial_attempt: float | None = None
    attempts: int = 0
    unschedulable_count: int = 0
    """Attempts that ended rejected since the last success (its backoff grows with them)."""
    consecutive_errors: int = 0
    failed_at: float = 0.0
    seq: int = 0
    pool: Pool = Pool.ACTIVE
    pool_since: float = 0.0
    gated_by: str = ""
    """The PreEnqueue plugin that holds the group back (empty: not gated)."""

    @property
    def size(self) -> int:
        return len(self.members)

    def ordered(self) -> list[QueuedPodInfo]:
        """The members in the order the group cycle tries them (see the module docstring)."""
        kube = sorted(self.members.values(), key=_kube_order)
        first: dict[Signature | None, int] = {}
        for index, info in enumerate(kube):
            first.setdefault(_run_key(info), index)
        return sorted(kube, key=lambda info: first[_run_key(info)])

    def backoff(self, initial: float, maximum: float) -> float:
        """kube's calculateBackoffDuration for a group: doubling from ``initial`` per
        failed attempt, capped at ``maximum`` times the square root of its size."""
        count = self.consecutive_errors or self.unschedulable_count
        if count <= 0:
            return 0.0
        cap = maximum * math.sqrt(self.size) if self.size > 1 else maximum
        return float(min(initial * 2 ** (count - 1), cap))


def _kube_order(info: QueuedPodInfo) -> tuple[int, int, float, str]:
    return (-info.pod.priority, -info.attempts, info.timestamp, info.pod.name)


def _run_key(info: QueuedPodInfo) -> Signature | None:
    """Members of one signature run together; unsignable members each stand alone."""
    return info.signature if info.signature is not None else info.pod.uid.encode()
