"""Re-list detection: when a Replace runs, for which signal, and how bursts coalesce.

``Relists`` is driven with the signals kopf gives (listed objects, the 410 record) and a
recording Replace; under looptime, the loop's clock is virtual, so the assertions are on
exact loop times, not on wall-clock races. ``WatchRestarts`` is checked against the text
kopf really logs (its source is pinned: an upgrade that changes it fails here).
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

import kopf
import pytest
from kopf._cogs.clients import watching

from scheduler.kube import errors
from scheduler.kube.controller import relist
from scheduler.kube.controller.relist import GRACE, MAX_DELAY, QUIET, RETRY, Relists
from scheduler.kube.kinds import Kind
from scheduler.kube.listing import Cause

pytestmark = pytest.mark.looptime


@dataclass
class Recorder:
    """A Replace that records (loop time, kind, cause, since) and can fail on demand."""

    calls: list[tuple[float, Kind, Cause, float]] = field(default_factory=list)
    failures: int = 0

    async def __call__(self, kind: Kind, *, cause: Cause, since: float) -> int:
        self.calls.append((asyncio.get_running_loop().time(), kind, cause, since))
        await asyncio.sleep(0.05)  # the LIST takes a while: signals may arrive meanwhile
        if self.failures:
            self.failures -= 1
            raise errors.ServerError("injected", status=500)
        return 0


@pytest.fixture
async def running() -> AsyncIterator[tuple[Relists, Recorder]]:
    recorder = Recorder()
    relists = Relists(recorder)
    task = asyncio.create_task(relists.run())
    await asyncio.sleep(0)
    yield relists, recorder
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)


def _at(offset: float) -> float:
    return asyncio.get_running_loop().time() + offset


async def test_a_burst_of_listed_objects_costs_one_replace_after_it(
    running: tuple[Relists, Recorder],
) -> None:
    """A re-list's objects arrive together: one LIST, QUIET after the last of them."""
    relists, recorder = running
    start = _at(0)
    for _ in range(5):
        relists.listed(Kind.NAMESPACES)
        await asyncio.sleep(QUIET / 2)
    last = _at(-QUIET / 2)
    await asyncio.sleep(MAX_DELAY)
    assert [(round(t, 3), k, c) for t, k, c, _ in recorder.calls] == [
        (round(last + QUIET, 3), Kind.NAMESPACES, Cause.LISTED)
    ]
    assert recorder.calls[0][3] == pytest.approx(start)  # `since`: the first signal
    assert not relists.pending(Kind.NAMESPACES)


async def test_a_long_burst_is_answered_by_max_delay_and_once_more_after(
    running: tuple[Relists, Recorder],
) -> None:
    """A listing longer than MAX_DELAY does not postpone the Replace; objects listed after
    that LIST started ask for one more (they may belong to a newer re-list)."""
    relists, recorder = running
    start = _at(0)
    for _ in range(int(1.5 * MAX_DELAY / (QUIET / 2))):  # 1.5 MAX_DELAY, QUIET / 2 apart
        relists.listed(Kind.SERVICES)
        await asyncio.sleep(QUIET / 2)
    end = _at(-QUIET / 2)
    await asyncio.sleep(MAX_DELAY)
    times = [t for t, _, _, _ in recorder.calls]
    assert times[0] == pytest.approx(start + MAX_DELAY)
    assert times[-1] == pytest.approx(end + QUIET)
    assert len(times) == 2


async def test_an_empty_relist_is_answered_grace_after_the_410(
    running: tuple[Relists, Recorder],
) -> None:
    """kopf's 410 record without any listed object after it: the Replace runs anyway."""
    relists, recorder = running
    start = _at(0)
    relists.restarted(Kind.SERVICES)
    await asyncio.sleep(2 * GRACE)
    [(at, kind, cause, _)] = recorder.calls
    assert (kind, cause) == (Kind.SERVICES, Cause.WATCH_RESTART)
    assert at == pytest.approx(start + GRACE)


async def test_a_410_followed_by_its_listing_costs_one_replace(
    running: tuple[Relists, Recorder],
) -> None:
    """The listed objects answer the 410 too: one Replace, after them, not GRACE later."""
    relists, recorder = running
    start = _at(0)
    relists.restarted(Kind.NAMESPACES)
    await asyncio.sleep(0.2)  # kopf's reconnect backoff and its LIST
    relists.listed(Kind.NAMESPACES)
    await asyncio.sleep(3 * GRACE)
    [(at, kind, cause, since)] = recorder.calls
    assert (kind, cause) == (Kind.NAMESPACES, Cause.LISTED)
    assert at == pytest.approx(start + 0.2 + QUIET)
    assert since == pytest.approx(start)  # latency counts from the 410


async def test_a_410_during_a_replace_is_owed_another_one(
    running: tuple[Relists, Recorder],
) -> None:
    """A 410 while our LIST runs: that LIST may precede kopf's next one, so one more."""
    relists, recorder = running
    relists.listed(Kind.NAMESPACES)
    await asyncio.sleep(QUIET + 0.01)  # the Replace has started (its LIST takes 0.05 s)
    assert len(recorder.calls) == 1
    relists.restarted(Kind.NAMESPACES)
    await asyncio.sleep(2 * GRACE)
    assert [c for _, _, c, _ in recorder.calls] == [Cause.LISTED, Cause.WATCH_RESTART]


async def test_kinds_are_independent(running: tuple[Relists, Recorder]) -> None:
    """A re-list of pods never LISTs nodes, and the other way round."""
    relists, recorder = running
    relists.listed(Kind.SERVICES)
    relists.restarted(Kind.NAMESPACES)
    await asyncio.sleep(2 * GRACE)
    assert sorted((k, c) for _, k, c, _ in recorder.calls) == [
        (Kind.NAMESPACES, Cause.WATCH_RESTART),
        (Kind.SERVICES, Cause.LISTED),
    ]


async def test_a_failed_replace_is_retried(running: tuple[Relists, Recorder]) -> None:
    """An API error does not drop what is owed: the same Replace runs RETRY later."""
    relists, recorder = running
    recorder.failures = 1
    relists.listed(Kind.SERVICES)
    await asyncio.sleep(QUIET + 0.05 + RETRY + 0.5)
    first, second = recorder.calls
    assert second[0] - first[0] == pytest.approx(0.05 + RETRY)
    assert second[2:] == first[2:]
    assert not relists.pending(Kind.SERVICES)


# -- kopf's 410 record --------------------------------------------------------------------


def test_kopf_still_logs_the_410_record_we_listen_for() -> None:
    """Pinned: kopf's continuous_watch logs this line, on this logger, before it re-lists."""
    source = inspect.getsource(watching.continuous_watch)
    assert 'logger.debug(f"Restarting the watch-stream for {resource} {where}.")' in source
    assert watching.logger.name == relist.WATCHING_LOGGER
    for plural in ("services", "namespaces"):
        resource = kopf.Resource(group="", version="v1", plural=plural)
        line = f"Restarting the watch-stream for {resource} cluster-wide."
        match = relist._RESTART.match(line)
        assert match is not None
        assert match["plural"] == plural


class _Collect(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@pytest.mark.parametrize(
    ("level", "shown"),
    [
        pytest.param(logging.INFO, False, id="info-hears-it-and-shows-nothing-new"),
        pytest.param(logging.DEBUG, True, id="debug-hears-it-and-shows-it"),
    ],
)
def test_the_filter_hears_the_410_whatever_the_level(level: int, shown: bool) -> None:
    """The record reaches us at any level; the log output stays what the level says."""
    heard: list[Kind] = []
    logger = logging.getLogger(relist.WATCHING_LOGGER)
    before = logger.level
    logger.setLevel(level)
    handler = _Collect()
    records = handler.records
    logger.addHandler(handler)
    restarts = relist.WatchRestarts(heard.append, [Kind.SERVICES])
    try:
        restarts.install()
        logger.debug("Restarting the watch-stream for services.v1 cluster-wide.")
        # Pods come through the informers (kube.intake): kopf's record for them is not ours.
        logger.debug("Restarting the watch-stream for pods.v1 cluster-wide.")
        logger.debug("Restarting the watch-stream for leases.v1.coordination.k8s.io in 'x'.")
        logger.debug("Starting the watch-stream for nodes.v1 cluster-wide.")
        logger.warning("something else")
    finally:
        restarts.uninstall()
        logger.removeHandler(handler)
    assert logger.level == level  # restored
    logger.setLevel(before)
    assert heard == [Kind.SERVICES]
    assert len(records) == (5 if shown else 1)
