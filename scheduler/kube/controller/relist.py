"""Re-list detection: when kopf has re-listed a kind, run kube's Replace for it at once.

For the kinds kopf watches: the low-rate ones. Pods and nodes come through the typed
informers (``kube.intake``), which re-list with Replace semantics themselves.

kube's reflector replaces its store with every LIST, so a re-list cannot leave ghosts.
kopf (1.45) re-lists after a 410 Gone (and after a connection error or an escalated 429
during a LIST), hands each listed object to our handlers as an event of type ``None``, and
says nothing about the objects that vanished — nothing at all when the list is empty. Its
own end-of-listing mark (``Bookmark.LISTED``) never reaches handlers. Two signals stand in:

* **listed** (:meth:`Relists.listed`): an object delivered with type ``None``. kopf's LIST
  has been answered by then, so a LIST of ours issued afterwards is at least as new, and
  :meth:`~scheduler.kube.controller.sync.CacheSync.replace` makes the cache equal to it.
  A re-list arrives as a burst (every object of the kind): ours waits until ``QUIET``
  seconds pass without a listed object, at most ``MAX_DELAY`` after the first, so one
  burst costs one LIST; a listed object that comes after our LIST started asks for one
  more. kopf's initial listing counts too: what was deleted between our initial LIST and
  kopf's never gets a DELETED event either.
* **watch restart** (:meth:`Relists.restarted`): kopf's debug record ``Restarting the
  watch-stream for services.v1 ...``, logged on the 410 just before it re-lists; the
  :class:`WatchRestarts` filter hears it whatever the log level. An empty re-list
  delivers no object, so if none follows within ``GRACE`` seconds the Replace runs
  anyway. kopf waits 0.1 s (``reconnect_backoff``) before its LIST and an empty LIST is
  quick; were kopf's LIST slower than ``GRACE``, ours could precede it and an object
  deleted in between would be left to the safety net (``sync.CacheSync.repair``, counted).

kopf's "Restarting" record alone would not do: it comes *before* kopf's LIST, and a
Replace whose LIST precedes kopf's misses what is deleted in between. A listed object is
the proof that kopf's LIST was answered; the record only covers the case without one.

Measured on the emulator (``tests/reliability/test_relist_ghosts.py``, figures in
``docs/reliability.md``) as ``after_s`` of ``reconcile_removed``, from kopf's 410 record to
the removal: 0.42-0.60 s for a non-empty re-list (kopf's 0.1 s backoff, its LIST,
``QUIET``, ours), 0.51 s for an empty one (``GRACE``).

Neighbours: ``operator`` (feeds the signals from kopf's handlers and logs, runs
:meth:`Relists.serve` per kind), ``sync`` (the Replace).
"""

from __future__ import annotations

import asyncio
import logging
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from scheduler import logs
from scheduler.kube import errors
from scheduler.kube.kinds import Kind
from scheduler.kube.listing import Cause
from scheduler.kube.retry_log import RetryLog

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Iterable

log = logs.get_logger(__name__)

QUIET = 0.3
"""Seconds without a listed object after which a re-list's burst counts as delivered:
above the gap between two pages of kopf's LIST (a round trip for ``LIST_CHUNK`` objects),
so a paged listing of a big cluster costs one LIST of ours, not one per page."""
MAX_DELAY = 5.0
"""Seconds after the first listed object by which the Replace starts even if the burst
goes on: ghosts of a very long listing live at most this long (and it costs a few LISTs)."""
GRACE = 0.5
"""Seconds after kopf's 410 record within which a listed object is expected; without one
the re-list was empty and the Replace runs anyway. Expiring early costs one LIST, not
correctness, when the re-list is not empty (its listed objects ask for another Replace)."""
RETRY = 1.0
"""Seconds before a Replace whose LIST failed is tried again."""


@dataclass(slots=True)
class _Demand:
    """What one kind is owed: a Replace after a listed burst and/or after a 410."""

    first_listed: float | None = None
    last_listed: float = 0.0
    restart: float | None = None
    retry: tuple[float, Cause] | None = None
    """When a failed Replace is tried again, and its cause."""
    origin: float | None = None
    """Loop time of the earliest signal not yet answered (for ``after_s``)."""
    wake: asyncio.Event = field(default_factory=asyncio.Event)

    def due(self) -> tuple[float, Cause] | None:
        """When the next Replace should start, and why (None: nothing owed)."""
        owed: list[tuple[float, Cause]] = []
        if self.first_listed is not None:
            at = min(self.last_listed + QUIET, self.first_listed + MAX_DELAY)
            owed.append((at, Cause.LISTED))
        if self.restart is not None:
            owed.append((self.restart + GRACE, Cause.WATCH_RESTART))
        if self.retry is not None:
            owed.append(self.retry)
        return min(owed, default=None)

    def take(self, now: float) -> float:
        """Mark every demand due by ``now`` as answered by a LIST starting now; returns the
        origin of what was answered."""
        origin = self.origin if self.origin is not None else now
        self.first_listed = self.retry = None
        if self.restart is not None and self.restart + GRACE <= now:
            self.restart = None
        self.origin = self.restart  # a 410 newer than the listed burst is still owed
        return origin


class Relists:
    """Per kind, a Replace soon after kopf (re-)listed it; see the module docstring.

    :meth:`listed` and :meth:`restarted` are synchronous and cheap (called per event);
    :meth:`run` owns one task per kind that runs the Replaces, never two at once per kind.
    """

    def __init__(
        self,
        replace: Callable[..., Awaitable[object]],
        kinds: Iterable[Kind] = tuple(Kind),
        *,
        retry_log: RetryLog | None = None,
    ) -> None:
        self._replace = replace
        self._retry_log = retry_log or RetryLog()
        """Where a failed Replace is reported: the client's (rate-limited per kind)."""
        """``CacheSync.replace``: called as ``replace(kind, cause=..., since=...)``."""
        self._demands = {kind: _Demand() for kind in kinds}
        """The kinds kopf watches (the informers' kinds re-list by themselves)."""

    @staticmethod
    def _now() -> float:
        return asyncio.get_running_loop().time()

    def listed(self, kind: Kind) -> None:
        """kopf delivered an object of ``kind`` with type None (a listed one)."""
        demand = self._demands[kind]
        now = self._now()
        if demand.first_listed is None:
            demand.first_listed = now
        demand.last_listed = now
        # kopf lists only after its 410: this listing answers the restart too.
        demand.restart = None
        if demand.origin is None:
            demand.origin = now
        demand.wake.set()

    def restarted(self, kind: Kind) -> None:
        """kopf's watch of ``kind`` got 410 Gone: a re-list follows (maybe an empty one)."""
        demand = self._demands[kind]
        now = self._now()
        demand.restart = now
        if demand.origin is None:
            demand.origin = now
        demand.wake.set()

    def pending(self, kind: Kind) -> bool:
        """Whether a Replace of ``kind`` is owed."""
        return self._demands[kind].due() is not None

    async def run(self) -> None:
        """Run the Replaces of every kind until cancelled."""
        async with asyncio.TaskGroup() as tg:
            for kind in self._demands:
                tg.create_task(self.serve(kind), name=f"relist-{kind}")

    async def serve(self, kind: Kind) -> None:
        """Run the Replaces of ``kind`` until cancelled. Creates no task: kopf takes every
        task created after its start for its own, and waits 5 s for it when it stops."""
        demand = self._demands[kind]
        while True:
            due = demand.due()
            if due is None:
                demand.wake.clear()
                await demand.wake.wait()
                continue
            wait = due[0] - self._now()
            if wait > 0:
                demand.wake.clear()
                try:
                    async with asyncio.timeout(wait):  # not wait_for: it spawns a task
                        await demand.wake.wait()
                    continue  # a new signal may have moved the due time: look again
                except TimeoutError:
                    pass  # due now (not re-checked: timers may round below ``wait``)
            cause = due[1]
            origin = demand.take(self._now())
            try:
                await self._replace(kind, cause=cause, since=origin)
            except errors.ApiError as exc:
                self._retry_log.retrying(
                    "relist_replace_failed",
                    source=str(kind),
                    logger=log,
                    kind=str(kind),
                    error=str(exc),
                    retry_in=RETRY,
                )
                demand.retry = (self._now() + RETRY, cause)
                demand.origin = origin if demand.origin is None else min(origin, demand.origin)


_RESTART = re.compile(r"^Restarting the watch-stream for (?P<plural>[a-z0-9-]+)\.")
WATCHING_LOGGER = "kopf._cogs.clients.watching"
"""The logger of kopf's ``continuous_watch`` (1.45), whose 410 record we listen for."""


class WatchRestarts(logging.Filter):
    """Hears kopf's debug record about a 410 on its watching logger, whatever the level.

    The logger is opened to DEBUG while installed, and this filter lets through only what
    the previously effective level would have: the log output does not change.
    """

    def __init__(
        self, on_restart: Callable[[Kind], None], kinds: Iterable[Kind] = tuple(Kind)
    ) -> None:
        super().__init__()
        self._kinds: dict[str, list[Kind]] = {}
        """The plurals listened for, and the kinds kopf watches under each (two API groups
        may share one: kopf's record names only the plural, so both are relisted)."""
        for kind in kinds:
            self._kinds.setdefault(kind.plural, []).append(kind)
        self._on_restart = on_restart
        """Called from whichever thread logs (kopf: its loop's); must be thread-safe."""
        self._logger = logging.getLogger(WATCHING_LOGGER)
        self._passthrough = logging.NOTSET
        self._level = logging.NOTSET

    def install(self) -> None:
        self._passthrough = self._logger.getEffectiveLevel()
        self._level = self._logger.level
        self._logger.addFilter(self)
        self._logger.setLevel(logging.DEBUG)

    def uninstall(self) -> None:
        self._logger.removeFilter(self)
        self._logger.setLevel(self._level)

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno == logging.DEBUG:
            match = _RESTART.match(record.getMessage())
            for kind in self._kinds.get(match["plural"], ()) if match else ():
                self._on_restart(kind)
        return record.levelno >= self._passthrough
