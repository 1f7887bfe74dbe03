"""WorkerPool: a bounded set of worker tasks fed by a FIFO, the one kit of the kube edge.

The binder, the preemptor, the pre-bind dispatcher and the reporter all take work from a
synchronous caller (the cycle never awaits) and do it in tasks of their own, at most
``limit`` at a time. This module is that shared part, so that its counting is right once:

- **Live workers** are counted by the workers themselves: a worker leaves the count in the
  same loop step in which it finds the queue empty, with no await in between. A worker that
  has finished but whose task is not yet reaped (its done callbacks run one step later) is
  therefore never counted, and an item submitted at that moment starts a new worker.
  Counting the task set instead (a finished task leaves it only in its done callback) left
  such an item without a worker until the next submit: issue 29, the end of a bind burst.
- **Workers start on demand** (one per submit while fewer than ``limit`` live) and end when
  the queue is empty, so an idle pool holds no task.
- **Lanes**: items are served from the first non-empty lane (the reporter writes conditions
  before Events); ``first=True`` puts an item at the front of its lane (a retry is the
  oldest item there). ``capacity`` bounds the queued items: beyond it the oldest item of
  the last non-empty lane is evicted and handed to ``evicted``.
- **Exceptions** from ``work`` are logged with the pool's name and the item's fields and the
  worker goes on with the next item; only a cancellation ends a worker early (its items
  stay queued for the next worker, or are returned by ``stop``). Owners that owe their
  caller an outcome (the binder's ``done``) catch their own errors first; the pool's log is
  the net beneath them.
- **Idle** (``drain``) means nothing queued, nothing being worked on and no delayed submit
  (``submit_later``) pending. ``stop`` refuses new items, cancels the delayed submits and
  the workers (an owner's ``work`` sees ``CancelledError`` and may end its item), and
  returns the items that were never started, so that the owner ends each of them.

Await-free sections: ``submit``, ``evict`` and the worker's step from finishing one item to
taking the next (or leaving) are synchronous, which is what makes the counts exact.

Neighbours: ``binder``, ``preemption``, ``volume_binder`` and ``reporter`` own a pool each.
"""

from __future__ import annotations

import asyncio
import collections
from typing import TYPE_CHECKING, Generic, TypeVar

from scheduler import logs

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Mapping

__all__ = ["WorkerPool"]

log = logs.get_logger(__name__)

T = TypeVar("T")


class WorkerPool(Generic[T]):
    """At most ``limit`` tasks (None: one per queued item) running ``work`` on queued items."""

    def __init__(
        self,
        name: str,
        work: Callable[[T], Awaitable[None]],
        *,
        limit: int | None,
        lanes: int = 1,
        capacity: int | None = None,
        evicted: Callable[[T], None] | None = None,
        describe: Callable[[T], Mapping[str, object]] | None = None,
        started: bool = True,
    ) -> None:
        """``describe``: the log fields naming an item (for a crash); ``started=False``:
        items queue up until ``start``."""
        if limit is not None and limit < 1:
            raise ValueError(f"{name}: worker limit must be >= 1, got {limit}")
        if lanes < 1:
            raise ValueError(f"{name}: lanes must be >= 1, got {lanes}")
        self.name = name
        self.limit = limit
        self.capacity = capacity
        self._work = work
        self._evicted = evicted
        self._describe = describe
        self._lanes: tuple[collections.deque[T], ...] = tuple(
            collections.deque() for _ in range(lanes)
        )
        self._tasks: set[asyncio.Task[None]] = set()
        self._timers: dict[asyncio.TimerHandle, T] = {}
        self._live = 0
        self._busy = 0
        self._started = started
        self._closed = False
        self._idle = asyncio.Event()
        self._idle.set()
        self.crashed = 0
        """Items whose ``work`` raised (logged)."""

    # -- counts ------------------------------------------------------------------------------

    @property
    def live(self) -> int:
        """Workers that will still take an item (finished ones never count)."""
        return self._live

    @property
    def busy(self) -> int:
        """Items being worked on now."""
        return self._busy

    @property
    def pending(self) -> int:
        """Items queued and not yet taken (delayed submits not included)."""
        return sum(len(lane) for lane in self._lanes)

    @property
    def waiting(self) -> int:
        """Delayed submits not yet due."""
        return len(self._timers)

    @property
    def closed(self) -> bool:
        return self._closed

    # -- feeding (synchronous, never blocks) -------------------------------------------------

    def start(self) -> None:
        """Let workers run (a pool made with ``started=False`` only queues until then)."""
        self._started = True
        self._spawn()

    def submit(self, item: T, *, lane: int = 0, first: bool = False) -> bool:
        """Queue ``item`` (evicting the oldest of the last lane beyond ``capacity``); False,
        and nothing queued, once the pool is stopped."""
        if self._closed:
            return False
        if self.capacity is not None and self.pending >= self.capacity:
            victim = self.evict()
            if victim is not None and self._evicted is not None:
                self._evicted(victim)
        queue = self._lanes[lane]
        if first:
            queue.appendleft(item)
        else:
            queue.append(item)
        self._idle.clear()
        self._spawn()
        return True

    def submit_later(self, delay: float, item: T, *, lane: int = 0, first: bool = False) -> bool:
        """``submit`` after ``delay`` seconds; the pool is not idle meanwhile."""
        if self._closed:
            return False

        def due() -> None:
            self._timers.pop(handle, None)
            if not self.submit(item, lane=lane, first=first):
                return
            self._maybe_idle()

        handle = asyncio.get_running_loop().call_later(delay, due)
        self._timers[handle] = item
        self._idle.clear()
        return True

    def evict(self) -> T | None:
        """Take out the oldest item of the last non-empty lane (backpressure); None if none."""
        lane = next((lane for lane in reversed(self._lanes) if lane), None)
        if lane is None:
            return None
        item = lane.popleft()
        self._maybe_idle()
        return item

    # -- lifecycle ---------------------------------------------------------------------------

    async def drain(self, timeout: float | None) -> bool:  # noqa: ASYNC109 - the ports' API
        """Wait up to ``timeout`` s (None: as long as it takes) until the pool is idle; True
        if it is."""
        if self._idle.is_set():
            return True
        try:
            await asyncio.wait_for(self._idle.wait(), timeout)
        except TimeoutError:
            return False
        return True

    async def stop(self) -> list[T]:
        """Refuse new items, cancel delayed submits and workers; the items never started."""
        self._closed = True
        left: list[T] = []
        for handle, item in self._timers.items():
            handle.cancel()
            left.append(item)
        self._timers.clear()
        for lane in self._lanes:
            left.extend(lane)
            lane.clear()
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        self._live = 0  # a worker cancelled before its first step never ran its finally
        self._idle.set()
        return left

    # -- the workers -------------------------------------------------------------------------

    def _spawn(self) -> None:
        if not self._started or self._closed:
            return
        loop: asyncio.AbstractEventLoop | None = None
        # Each live worker not holding an item takes one from the queue: start more only
        # for the items beyond them.
        while self.pending > self._live - self._busy and self._room():
            loop = loop or asyncio.get_running_loop()
            self._live += 1
            task = loop.create_task(self._worker(), name=f"{self.name}-worker")
            self._tasks.add(task)
            task.add_done_callback(self._reaped)

    def _room(self) -> bool:
        return self.limit is None or self._live < self.limit

    def _take(self) -> T | None:
        for lane in self._lanes:
            if lane:
                return lane.popleft()
        return None

    async def _worker(self) -> None:
        try:
            while (item := self._take()) is not None:
                self._busy += 1
                try:
                    await self._work(item)
                except asyncio.CancelledError:
                    raise
                except Exception:  # an owner's bug must not stop the items behind it
                    self.crashed += 1
                    fields = self._describe(item) if self._describe is not None else {}
                    log.exception("worker_crashed", pool=self.name, **fields)
                finally:
                    self._busy -= 1
        finally:
            # In the step that saw the queue empty (or the cancellation): a finished worker
            # is never counted, so the next submit starts a new one.
            self._live -= 1
            self._maybe_idle()

    def _reaped(self, task: asyncio.Task[None]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("worker_died", pool=self.name, error=repr(task.exception()))

    def _maybe_idle(self) -> None:
        if not self._busy and not self._timers and not self.pending:
            self._idle.set()
