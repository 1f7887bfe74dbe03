"""Reporter against the emulator: Events and conditions read back, de-duplication, limits."""

from __future__ import annotations

import asyncio
import contextlib
import sys
from typing import TYPE_CHECKING, Any

import pytest

from scheduler.clock import FakeClock
from scheduler.kube.reporter import Reporter, ReporterOptions
from scheduler.metrics.registry import Metrics
from tests.kube.kube_helpers import FailFirst, create_pod

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from scheduler.kube.client import ApiClient
    from scheduler.sim.server import SimServer


@pytest.fixture
def clock() -> FakeClock:
    """The de-duplication window's clock."""
    return FakeClock(100.0)


class Wall:
    """An injectable wall clock (written timestamps have 1 s resolution)."""

    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def wall() -> Wall:
    return Wall(1_700_000_000.0)


@pytest.fixture
async def reporter(api: ApiClient, clock: FakeClock, wall: Wall) -> AsyncIterator[Reporter]:
    """A running Reporter (identity ``sched-1``, fast retries), stopped after the test."""
    rep = Reporter(
        api,
        identity="sched-1",
        clock=clock,
        wall_clock=wall,
        options=ReporterOptions(
            dedup_seconds=60.0, max_attempts=5, retry_base=0.01, retry_cap=0.05
        ),
    )
    task = asyncio.create_task(rep.run())
    yield rep
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


async def _events(api: ApiClient, pod: str) -> list[dict[str, Any]]:
    found = await api.request(
        "GET",
        "/api/v1/namespaces/default/events",
        params={"fieldSelector": f"involvedObject.name={pod}"},
    )
    items: list[dict[str, Any]] = found["items"]
    return items


async def _condition(api: ApiClient, pod: str) -> dict[str, Any] | None:
    raw = await api.request("GET", f"/api/v1/namespaces/default/pods/{pod}")
    conditions = raw.get("status", {}).get("conditions", [])
    return next((c for c in conditions if c["type"] == "PodScheduled"), None)


async def test_scheduled_event(api: ApiClient, reporter: Reporter) -> None:
    """scheduled() posts a Normal Scheduled Event about the pod, as kube-scheduler does."""
    pod = await create_pod(api, "r1")
    reporter.scheduled(pod, "node-1")
    assert await reporter.drain(5.0)
    [event] = await _events(api, "r1")
    assert event["type"] == "Normal"
    assert event["reason"] == "Scheduled"
    assert event["message"] == "Successfully assigned default/r1 to node-1"
    assert event["involvedObject"] == {
        "apiVersion": "v1",
        "kind": "Pod",
        "name": "r1",
        "namespace": "default",
        "uid": pod.uid,
    }
    assert event["source"] == {"component": "batch-scheduler"}
    assert event["reportingComponent"] == "batch-scheduler"
    assert event["reportingInstance"] == "sched-1"
    assert event["count"] == 1
    assert event["metadata"]["name"].startswith("r1.")
    assert event["eventTime"].endswith("Z")
    assert "." in event["eventTime"]
    assert await _condition(api, "r1") is None
    assert reporter.posted == 1


async def test_unschedulable_condition_and_event(api: ApiClient, reporter: Reporter) -> None:
    """unschedulable() sets PodScheduled=False/Unschedulable and posts FailedScheduling."""
    await create_pod(api, "r2")
    pod = await create_pod(api, "r2b")
    message = "0/3 nodes are available: 3 Insufficient cpu."
    reporter.unschedulable(pod, message)
    assert await reporter.drain(5.0)
    cond = await _condition(api, "r2b")
    assert cond is not None
    assert (cond["status"], cond["reason"], cond["message"]) == ("False", "Unschedulable", message)
    assert cond["lastTransitionTime"]
    [event] = await _events(api, "r2b")
    assert (event["type"], event["reason"], event["message"]) == (
        "Warning",
        "FailedScheduling",
        message,
    )
    assert await _events(api, "r2") == []


async def test_failed_uses_scheduler_error(api: ApiClient, reporter: Reporter) -> None:
    """failed() marks the condition SchedulerError and posts the error as FailedScheduling."""
    pod = await create_pod(api, "r3")
    reporter.failed(pod, "binding rejected: boom")
    assert await reporter.drain(5.0)
    cond = await _condition(api, "r3")
    assert cond is not None
    assert cond["reason"] == "SchedulerError"
    [event] = await _events(api, "r3")
    assert event["message"] == "binding rejected: boom"


async def test_deduplicated_within_window(
    api: ApiClient, reporter: Reporter, clock: FakeClock
) -> None:
    """Repeats within the window are counted, not posted; the next post carries the count."""
    pod = await create_pod(api, "r4")
    for _ in range(3):
        reporter.unschedulable(pod, "0/3 nodes are available: 3 Insufficient cpu.")
    reporter.unschedulable(pod, "0/3 nodes are available: 3 Insufficient memory.")
    assert await reporter.drain(5.0)
    assert len(await _events(api, "r4")) == 2
    assert reporter.deduplicated == 2
    clock.advance(61.0)
    reporter.unschedulable(pod, "0/3 nodes are available: 3 Insufficient cpu.")
    assert await reporter.drain(5.0)
    events = await _events(api, "r4")
    assert len(events) == 3
    assert max(e["count"] for e in events) == 3  # this one plus the two swallowed


async def test_pod_gone_is_quiet(api: ApiClient, reporter: Reporter) -> None:
    """Reporting on a deleted pod writes nothing and counts no failure."""
    pod = await create_pod(api, "r5")
    await api.request("DELETE", "/api/v1/namespaces/default/pods/r5")
    reporter.unschedulable(pod, "0/3 nodes are available.")
    assert await reporter.drain(5.0)
    assert await _events(api, "r5") == []
    assert reporter.failed_writes == 0
    assert reporter.patched == 0


async def test_errors_are_retried_and_never_raised(
    api: ApiClient, reporter: Reporter, sim: SimServer
) -> None:
    """One 500 on the Event POST is retried; persistent 503s are given up after
    ``max_attempts`` (a counted failure), and nothing raises."""
    first, second = await create_pod(api, "r6"), await create_pod(api, "r7")
    fault = FailFirst(sim, "create", 1, 500)
    reporter.scheduled(first, "node-0")
    assert await reporter.drain(5.0)
    assert fault.injected == 1
    assert len(await _events(api, "r6")) == 1
    assert reporter.retried == 1
    FailFirst(sim, "create", 100, 503)
    reporter.scheduled(second, "node-0")
    assert await reporter.drain(10.0)
    assert reporter.failed_writes == 1
    assert reporter.retried == 1 + reporter.max_attempts - 1
    assert await _events(api, "r7") == []


@pytest.mark.parametrize("code", [500, 503, 429])
async def test_condition_write_faults_are_retried_without_a_new_attempt(
    api: ApiClient, reporter: Reporter, sim: SimServer, code: int
) -> None:
    """Three failed status PATCHes in a row (more than one inline retry used to absorb) still
    end in the condition and the Event, with no further scheduling attempt."""
    pod = await create_pod(api, f"rf{code}")
    fault = FailFirst(sim, "patch", 3, code)
    reporter.unschedulable(pod, "0/3 nodes are available: 3 Insufficient cpu.")
    assert await reporter.drain(5.0)
    assert fault.injected == 3
    cond = await _condition(api, f"rf{code}")
    assert cond is not None
    assert cond["status"] == "False"
    assert len(await _events(api, f"rf{code}")) == 1
    assert reporter.failed_writes == 0


async def test_given_up_report_is_not_deduplicated(
    api: ApiClient, reporter: Reporter, sim: SimServer
) -> None:
    """A report whose writes were given up is written on the next attempt, even inside the
    de-duplication window (the window only swallows repeats of what was written)."""
    pod = await create_pod(api, "rg")
    fault = FailFirst(sim, "patch", 100, 503)
    reporter.unschedulable(pod, "no fit")
    assert await reporter.drain(5.0)
    assert reporter.failed_writes == 1
    assert await _condition(api, "rg") is None
    fault.left = 0
    reporter.unschedulable(pod, "no fit")
    assert await reporter.drain(5.0)
    assert reporter.deduplicated == 0
    cond = await _condition(api, "rg")
    assert cond is not None
    assert cond["message"] == "no fit"


async def test_last_transition_time_kept_while_status_stays_false(
    api: ApiClient, reporter: Reporter, clock: FakeClock, wall: Wall
) -> None:
    """As kube's UpdatePodCondition: a new message keeps lastTransitionTime; after the pod
    was reported scheduled, the next False is a new transition. Events carry report times."""
    pod = await create_pod(api, "rt")
    reporter.unschedulable(pod, "0/3 nodes are available: 3 Insufficient cpu.")
    assert await reporter.drain(5.0)
    first = await _condition(api, "rt")
    assert first is not None
    assert first["lastTransitionTime"] == "2023-11-14T22:13:20Z"
    wall.now += 600
    clock.advance(600)
    reporter.unschedulable(pod, "0/3 nodes are available: 3 Insufficient memory.")
    assert await reporter.drain(5.0)
    second = await _condition(api, "rt")
    assert second is not None
    assert second["message"].endswith("Insufficient memory.")
    assert second["lastTransitionTime"] == first["lastTransitionTime"]
    stamps = sorted(e["lastTimestamp"] for e in await _events(api, "rt"))
    assert stamps == ["2023-11-14T22:13:20Z", "2023-11-14T22:23:20Z"]
    reporter.scheduled(pod, "node-0")  # e.g. bound, then the binding was lost
    wall.now += 600
    reporter.unschedulable(pod, "0/3 nodes are available: 3 Insufficient cpu.")
    assert await reporter.drain(5.0)
    third = await _condition(api, "rt")
    assert third is not None
    assert third["lastTransitionTime"] == "2023-11-14T22:33:20Z"


class Recording:
    """Wraps the client and records the writes in the order they were sent."""

    def __init__(self, api: ApiClient) -> None:
        self.api = api
        self.sent: list[str] = []

    async def request(self, method: str, path: str, **kw: Any) -> dict[str, Any]:
        body = kw.get("body") or {}
        about = body.get("involvedObject", {}).get("name", "")
        self.sent.append(f"{method} {path} {about}".rstrip())
        return await self.api.request(method, path, **kw)


async def test_conditions_are_written_before_queued_events(api: ApiClient) -> None:
    """Under a backlog the condition of a later report goes first, its FailedScheduling
    Event next, and the Scheduled Events queued before them last."""
    pods = [await create_pod(api, f"o{i}") for i in range(4)]
    recording = Recording(api)
    rep = Reporter(recording, identity="x", options=ReporterOptions(workers=1))  # type: ignore[arg-type]
    for pod in pods[:3]:
        rep.scheduled(pod, "node-0")
    rep.unschedulable(pods[3], "no fit")
    task = asyncio.create_task(rep.run())
    try:
        assert await rep.drain(5.0)
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
    events = "POST /api/v1/namespaces/default/events"
    assert recording.sent == [
        "PATCH /api/v1/namespaces/default/pods/o3/status",
        f"{events} o3",
        f"{events} o0",
        f"{events} o1",
        f"{events} o2",
    ]


async def test_superseded_retry_writes_no_stale_condition(
    api: ApiClient, reporter: Reporter, sim: SimServer
) -> None:
    """A condition waiting for its retry is not written over a newer report's."""
    pod = await create_pod(api, "rs")
    FailFirst(sim, "patch", 1, 503)
    reporter.unschedulable(pod, "old reason")
    async with asyncio.timeout(2):  # until its write failed and waits for the retry
        while not reporter.retried:  # noqa: ASYNC110 - a counter, not an event, to watch
            await asyncio.sleep(0.001)
    reporter.unschedulable(pod, "new reason")
    assert await reporter.drain(5.0)
    cond = await _condition(api, "rs")
    assert cond is not None
    assert cond["message"] == "new reason"
    assert reporter.patched == 1


async def test_written_reports_leave_nothing_behind(
    api: ApiClient, reporter: Reporter, sim: SimServer
) -> None:
    """Once its reports are written the reporter forgets a pod (a soak's bound pods grew it
    by 25 MB); a condition retry that a later Scheduled report overtook stays unwritten."""
    pods = [await create_pod(api, f"w{i}") for i in range(20)]
    for pod in pods[1:]:
        reporter.scheduled(pod, "node-1")
    FailFirst(sim, "patch", 1, 503)
    reporter.unschedulable(pods[0], "no room")
    async with asyncio.timeout(2):  # its condition waits for the retry
        while not reporter.retried:  # noqa: ASYNC110 - a counter, not an event, to watch
            await asyncio.sleep(0.001)
    reporter.scheduled(pods[0], "node-1")
    assert await reporter.drain(5.0)
    assert reporter.tracked == 0
    assert await _condition(api, "w0") is None
    assert reporter.patched == 0
    assert reporter.posted == 21  # 20 Scheduled, and the FailedScheduling Event


async def test_full_queue_drops_oldest_event(api: ApiClient, clock: FakeClock) -> None:
    """With the queue full, the oldest Event goes first and conditions are kept."""
    metrics = Metrics()
    rep = Reporter(
        api, identity="x", options=ReporterOptions(max_queue=3), clock=clock, metrics=metrics
    )
    pods = [await create_pod(api, f"q{i}") for i in range(4)]
    rep.unschedulable(pods[0], "no fit")
    rep.scheduled(pods[1], "node-0")
    rep.scheduled(pods[2], "node-0")
    rep.scheduled(pods[3], "node-0")
    assert rep.dropped == 1
    assert metrics.registry.get_sample_value("batch_scheduler_events_dropped_total") == 1
    assert rep.pending == 3
    task = asyncio.create_task(rep.run())
    try:
        assert await rep.drain(5.0)
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
    assert await _condition(api, "q0") is not None
    assert await _events(api, "q1") == []
    assert len(await _events(api, "q3")) == 1


async def test_queued_reports_do_not_keep_their_pods(api: ApiClient, clock: FakeClock) -> None:
    """A backlog holds what it writes (namespace, name, uid), not the pods: under load
    thousands of reports wait, many about pods deleted meanwhile (the soak's RSS peaks)."""
    rep = Reporter(api, identity="x", clock=clock)  # not running: every report stays queued
    pod = await create_pod(api, "kept")
    before = sys.getrefcount(pod)
    rep.scheduled(pod, "node-0")
    rep.unschedulable(pod, "no fit")
    assert rep.pending == 2
    assert sys.getrefcount(pod) == before


async def test_the_backlog_is_a_gauge(api: ApiClient, clock: FakeClock) -> None:
    """``batch_scheduler_report_queue`` reads the reports waiting at scrape time."""
    metrics = Metrics()
    rep = Reporter(api, identity="x", clock=clock, metrics=metrics)  # not running
    for name in ("g0", "g1", "g2"):
        rep.scheduled(await create_pod(api, name), "node-0")
    assert b"batch_scheduler_report_queue 3.0" in metrics.render()
