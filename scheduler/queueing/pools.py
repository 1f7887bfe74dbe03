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

    __slots__ = ("_seq", "active", "backoff", "ready")

    def __init__(self) -> None:
        self.active: list[tuple[int, float, int, str]] = []
        """(-priority, timestamp, seq, key): kube's PrioritySort."""
        self.backoff: list[tuple[float, int, str]] = []
        """(backoff expiry, seq, key)."""
        self._seq = itertools.count()
        self.ready = asyncio.Event()
        """Set when something entered the active pool (the loop's pop awaits it)."""

    def next_seq(self) -> int:
        return next(self._seq)

    def push_active(self, priority: int, timestamp: float, seq: int, key: str) -> None:
        heapq.heappush(self.active, (-priority, timestamp, seq, key))
        self.ready.set()

    def push_backoff(self, until: float, seq: int, key: str) -> None:
        heapq.heappush(self.backoff, (until, seq, key))

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

    def expired(self, now: float, lookup: Callable[[str], Queued | None]) -> Iterator[Queued]:
        """The backed-off entities whose backoff ended by ``now``, popped."""
        heap = self.backoff
        while heap and heap[0][0] <= now:
            _, seq, key = heapq.heappop(heap)
            entity = lookup(key)
            if entity is not None and entity.seq == seq and entity.pool is Pool.BACKOFF:
                yield entity
