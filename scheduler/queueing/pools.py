"""The active and backoff heaps the queue's entities — pods and pod groups — wait in.

An entity is pushed with a sequence number it keeps while it stays where it was pushed; an
entry whose entity has moved on since (another sequence number, another pool) is stale and
dropped when it comes up, so leaving a pool costs nothing. The unschedulable pool needs no
order and stays with each kind (queueing/scheduling_queue.py for pods,
queueing/group_queue.py for groups).
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
from typing import TYPE_CHECKING, Protocol

from scheduler.queueing.queued_pod import Pool

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator


class Queued(Protocol):
    """What the heaps read of an entity."""

    @property
    def seq(self) -> int: ...

    @property
    def pool(self) -> Pool: ...


class Pools:
    """The two ordered pools; see the module docstring."""

    __slots__ = ("_seq", "active", "backoff", "poppable", "ready")

    def __init__(self) -> None:
        self.active: list[tuple[int, float, int, str]] = []
        """(-priority, timestamp, seq, key): kube's PrioritySort."""
        self.backoff: list[tuple[float, int, str]] = []
        """(backoff expiry, seq, key): entities that wait out their backoff (errors,
        failed binds, groups; kube's errorBackoffQ)."""
        self.poppable: list[tuple[float, int, float, int, str]] = []
        """(backoff expiry, -priority, timestamp, seq, key): pods a cluster event moved out
        of the unschedulable pool while their backoff runs (kube's entityBackoffQ). When the
        active heap is empty its head is popped before its backoff ends, as kube's
        SchedulerPopFromBackoffQ (on by default since v1.33) does; kube orders by 1 s
        windows of the expiry, this heap by the expiry itself."""
        self._seq = itertools.count()
        self.ready = asyncio.Event()
        """Set when something entered the active pool or the poppable backoff (the loop's
        pop awaits it)."""

    def next_seq(self) -> int:
        return next(self._seq)

    def push_active(self, priority: int, timestamp: float, seq: int, key: str) -> None:
        heapq.heappush(self.active, (-priority, timestamp, seq, key))
        self.ready.set()

    def push_backoff(self, until: float, seq: int, key: str) -> None:
        heapq.heappush(self.backoff, (until, seq, key))

    def push_poppable(
        self, until: float, priority: int, timestamp: float, seq: int, key: str
    ) -> None:
        heapq.heappush(self.poppable, (until, -priority, timestamp, seq, key))
        self.ready.set()

    def peek(self, lookup: Callable[[str], Queued | None]) -> Queued | None:
        """The valid head of the active heap, dropping stale entries on the way."""
        heap = self.active
        while heap:
            _, _, seq, key = heap[0]
            entity = lookup(key)
            if entity is not None and entity.seq == seq and entity.pool is Pool.ACTIVE:
                return entity
            heapq.heappop(heap)
        return None

    def drop_head(self) -> None:
        """Pop the head :meth:`peek` returned."""
        heapq.heappop(self.active)

    def pop_backoff_head(self, lookup: Callable[[str], Queued | None]) -> Queued | None:
        """The valid head of the poppable backoff heap, popped (stale entries dropped)."""
        heap = self.poppable
        while heap:
            _, _, _, seq, key = heapq.heappop(heap)
            entity = lookup(key)
            if entity is not None and entity.seq == seq and entity.pool is Pool.BACKOFF:
                return entity
        return None

    def expired(self, now: float, lookup: Callable[[str], Queued | None]) -> Iterator[Queued]:
        """The backed-off entities whose backoff ended by ``now``, popped."""
        heap = self.backoff
        while heap and heap[0][0] <= now:
            _, seq, key = heapq.heappop(heap)
            entity = lookup(key)
            if entity is not None and entity.seq == seq and entity.pool is Pool.BACKOFF:
                yield entity
        poppable = self.poppable
        while poppable and poppable[0][0] <= now:
            _, _, _, seq, key = heapq.heappop(poppable)
            entity = lookup(key)
            if entity is not None and entity.seq == seq and entity.pool is Pool.BACKOFF:
                yield entity
