"""Retries while the API server is away: a few lines that say so, not one per attempt.

When the API server goes away every part of kube retries at once — the informers' watches,
kopf's watches, the cache's LISTs, the Lease, the binds — each with its own backoff: about
110 error lines in 30 s before this module. :class:`RetryLog` (one per API client, shared by
everything that retries through it) keeps two things:

* **Per source, rate-limited lines.** :meth:`RetryLog.retrying` is called by each retry
  site with its own event name (``watch_failed``, ``reconcile_failed``,
  ``lease_update_failed``, ``bind_retry``, ``kopf_request_retry``…) and a source (the kind,
  ``binder``, ``kopf``). The first retry of a source is a warning; then at most one
  warning per ``WARN_EVERY`` seconds per source, carrying ``suppressed``: how many of its
  retries were not written as warnings since its last one. Those are written at debug
  (``-v=4`` shows every attempt).
* **The outage.** The client calls :meth:`RetryLog.failed` for every request that got no
  answer (connection refused or lost, a timeout) or a 5xx, and :meth:`RetryLog.answered`
  for every other response (a 429 or a 4xx is an answer: the server is there). When
  requests have failed for ``UNAVAILABLE_AFTER`` seconds with no answer in between, one
  error, ``api_unavailable``, says since when and how many failed; when the server answers
  again after an outage that was logged, one info line, ``api_available``, says how long
  it lasted.

No timer task: the error is written at the first failure ``UNAVAILABLE_AFTER`` seconds or
more into the outage, which the retries themselves bring (the informers', capped at 8 s).
Those retries wait in :meth:`RetryLog.pause`, which the first answer after an outage ends:
the watches resume the moment the server is back, not up to 12 s later (issue 37).

Neighbours: ``client`` (owns one, feeds :meth:`failed`/:meth:`answered`), the retry sites
(``intake.reflector``, ``controller.sync``, ``controller.relist``, ``controller.kopf_retries``,
``leader``, ``binder``). docs/operations.md ("When the API server goes away") explains the
two durations.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from scheduler import logs

if TYPE_CHECKING:
    from collections.abc import Callable

    import structlog

__all__ = ["UNAVAILABLE_AFTER", "WARN_EVERY", "RetryLog"]

log = logs.get_logger(__name__)

WARN_EVERY = 30.0
"""Seconds between two warnings of one source: a long outage writes one line per source
per half minute, each saying how many retries it stands for."""
UNAVAILABLE_AFTER = 15.0
"""Seconds of failed requests, with no answer in between, before ``api_unavailable``:
kube-scheduler's default ``leaseDuration``, the time after which Kubernetes' own leader
election presumes a silent holder gone. By then a leader of ours has stopped scheduling
(``renewDeadline``, 10 s) and the informers have retried four times (0.5, 1, 2, 4 s
backoffs): the outage is no blip the retries absorb."""


@dataclass(slots=True)
class _Source:
    warned_at: float
    suppressed: int = 0


class RetryLog:
    """Rate-limited retry lines and the outage they add up to; see the module docstring."""

    def __init__(
        self,
        *,
        server: str = "",
        clock: Callable[[], float] = time.monotonic,
        warn_every: float = WARN_EVERY,
        unavailable_after: float = UNAVAILABLE_AFTER,
    ) -> None:
        self.server = server
        self.warn_every = warn_every
        self.unavailable_after = unavailable_after
        self._clock = clock
        self._sources: dict[tuple[str, str], _Source] = {}
        self.down_since: float | None = None
        """Clock time of the first failed request with no answer since (None: answering)."""
        self.failures = 0
        """Requests failed since :attr:`down_since`."""
        self._last_error = ""
        self._noticed = False
        """A line about this outage was written (so its end is worth one too)."""
        self._reported = False
        """``api_unavailable`` was written for this outage."""
        self._back: asyncio.Event | None = None
        """Set when the server answers again: wakes the retries :meth:`pause` holds."""

    def retrying(
        self,
        event: str,
        *,
        source: str = "",
        logger: structlog.stdlib.BoundLogger | None = None,
        **fields: object,
    ) -> None:
        """A retry at ``event``'s site: a warning if ``source`` wrote none for
        :attr:`warn_every` seconds (with ``suppressed``), else a debug line; written by the
        site's ``logger`` (its module's), else this module's."""
        out = log if logger is None else logger
        now = self._clock()
        key = (event, source)
        state = self._sources.get(key)
        if state is not None and now - state.warned_at < self.warn_every:
            state.suppressed += 1
            out.debug(event, **fields)
            return
        if state is not None and state.suppressed:
            fields["suppressed"] = state.suppressed
        self._sources[key] = _Source(warned_at=now)
        if self.down_since is not None:
            self._noticed = True
        out.warning(event, **fields)

    def failed(self, error: object) -> None:
        """A request got no answer, or a 5xx; ``api_unavailable`` once the failures have
        lasted :attr:`unavailable_after` seconds."""
        now = self._clock()
        if self.down_since is None:
            self.down_since = now
        self.failures += 1
        self._last_error = str(error)
        if not self._reported and now - self.down_since >= self.unavailable_after:
            self._reported = self._noticed = True
            log.error(
                "api_unavailable",
                server=self.server,
                seconds=round(now - self.down_since, 1),
                failures=self.failures,
                error=self._last_error,
            )

    async def pause(self, seconds: float) -> None:
        """Wait ``seconds`` before a retry, or less while the server is away: until it
        answers again, so that a retry waiting out the outage's long backoff goes at once."""
        if self.down_since is None:
            await asyncio.sleep(seconds)
            return
        if self._back is None:
            self._back = asyncio.Event()
        back = self._back
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(seconds):
                await back.wait()

    def answered(self) -> None:
        """A response other than a 5xx: the outage, if any, is over."""
        if self.down_since is None:
            return  # the common case, on every request: one attribute read
        if self._back is not None:
            self._back.set()
            self._back = None
        if self._noticed:
            log.info(
                "api_available",
                server=self.server,
                seconds=round(self._clock() - self.down_since, 1),
                failures=self.failures,
            )
        self.down_since = None
        self.failures = 0
        self._noticed = self._reported = False
