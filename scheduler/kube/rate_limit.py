"""A client-side token bucket: ``clientConnection.qps`` and ``burst``, as client-go's
``flowcontrol.NewTokenBucketRateLimiter`` applies them to every request of a client.

The bucket holds up to ``burst`` tokens and refills at ``qps`` per second; each request
attempt takes one, waiting for it when the bucket is empty. Waits are reserved in arrival
order (a token taken in advance makes the balance negative), so callers are served first
come, first served, and a burst after a quiet spell goes at once, as in client-go.
"""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable


class TokenBucket:
    """``await acquire()`` before each request: at most ``burst`` at once, ``qps`` a second."""

    def __init__(
        self,
        qps: float,
        burst: int,
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if qps <= 0:
            raise ValueError(f"qps must be > 0, got {qps}")
        if burst < 1:
            raise ValueError(f"burst must be >= 1, got {burst}")
        self.qps = qps
        self.burst = burst
        self._clock = clock
        self._tokens = float(burst)
        self._at = clock()

    def reserve(self) -> float:
        """Take a token now; the seconds to wait before using it (0: none)."""
        now = self._clock()
        self._tokens = min(float(self.burst), self._tokens + (now - self._at) * self.qps)
        self._at = now
        self._tokens -= 1.0
        return 0.0 if self._tokens >= 0 else -self._tokens / self.qps

    async def acquire(self) -> None:
        """Wait for a token."""
        delay = self.reserve()
        if delay > 0:
            await asyncio.sleep(delay)
