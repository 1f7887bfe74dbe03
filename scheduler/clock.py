"""Clocks: the one seam through which the scheduler reads time.

Every timer in the queue (backoff, unschedulable flush), batching (batch age,
KEP-5598's ``maxBatchAge``) and the latencies of a pod's way (bind duration, the
scheduling SLI, the reporter's delay) reads a `Clock` instead of calling
`time.monotonic()`, so tests control time instead of sleeping (the CPU timings of
one decision or extension point use `time.perf_counter`: nothing waits on them):

- `LoopClock` reads the running event loop's clock. Async tests run on
  ``looptime``, which fast-forwards that clock, so a 10 s backoff takes no wall
  time and assertions can be made on virtual time.
- `FakeClock` is set and advanced by hand, for synchronous tests.
- `MonotonicClock` reads `time.monotonic()` and works outside an event loop
  (CLI ``simulate``, benchmarks).

Values are monotonic seconds with an arbitrary origin: compare and subtract
them, never turn them into wall-clock dates.

A leaf module: it imports nothing else from ``scheduler``.
"""

from __future__ import annotations

import asyncio
import time
from typing import Protocol, runtime_checkable

__all__ = ["Clock", "FakeClock", "LoopClock", "MonotonicClock"]


@runtime_checkable
class Clock(Protocol):
    """A source of monotonic time in seconds."""

    def now(self) -> float:
        """Monotonic seconds; never decreases between calls on one clock."""
        ...


class MonotonicClock:
    """`time.monotonic()`; usable with or without a running event loop."""

    __slots__ = ()

    def now(self) -> float:
        """Seconds from `time.monotonic()`."""
        return time.monotonic()


class LoopClock:
    """The running event loop's clock (`loop.time()`).

    The loop is looked up on every call rather than captured at construction,
    so one instance serves whichever loop is running (a fresh loop per test)
    and ``looptime``'s patched loop time is what the scheduler sees.
    """

    __slots__ = ()

    def now(self) -> float:
        """Seconds from the running loop; raises `RuntimeError` outside a loop."""
        return asyncio.get_running_loop().time()


class FakeClock:
    """A hand-driven clock for synchronous tests.

    It refuses to go backwards, because every reader assumes monotonic time:
    a test that needs an earlier time should build a new clock.
    """

    __slots__ = ("_now",)

    def __init__(self, start: float = 0.0) -> None:
        self._now = float(start)

    def now(self) -> float:
        """The current fake time."""
        return self._now

    def advance(self, seconds: float) -> float:
        """Move time forward by ``seconds`` (>= 0) and return the new time."""
        if seconds < 0:
            raise ValueError(f"FakeClock cannot go backwards: advance({seconds!r})")
        self._now += seconds
        return self._now

    def set(self, t: float) -> None:
        """Jump to the absolute time ``t`` (>= the current time)."""
        if t < self._now:
            raise ValueError(f"FakeClock cannot go backwards: set({t!r}) < now {self._now!r}")
        self._now = float(t)

    def __repr__(self) -> str:
        return f"FakeClock(now={self._now!r})"
