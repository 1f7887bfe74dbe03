"""The scheduling loop: one pod popped per cycle, as kube's ScheduleOne pops."""

from __future__ import annotations

import asyncio

from scheduler.cycle.loop import OpenGate, run_loop
from scheduler.cycle.ports import BindDone, BindRequest
from scheduler.model.parse import pod_from_raw
from tests.builders import make_node, make_pod
from tests.harness import scheduler_for


class _Gate:
    """A leadership gate a test closes (and never reopens)."""

    def __init__(self) -> None:
        self._open = asyncio.Event()
        self._open.set()

    def close(self) -> None:
        self._open.clear()

    def is_open(self) -> bool:
        return self._open.is_set()

    async def wait_open(self) -> None:
        await self._open.wait()


async def _settle(condition: object, rounds: int = 200) -> None:
    for _ in range(rounds):
        if callable(condition) and condition():
            return
        await asyncio.sleep(0)


async def test_higher_priority_arrival_is_scheduled_before_the_rest_of_a_run() -> None:
    """Three same-signature pods queued; while the first is scheduled an urgent pod arrives:
    it is bound second, not after the run (kube would pop it next)."""
    scheduler, binder, reporter = scheduler_for([make_node(f"n{i}", cpu="64") for i in range(3)])
    for i in range(3):
        scheduler.enqueue(pod_from_raw(make_pod(f"p{i}", cpu="100m")))
    urgent = pod_from_raw(make_pod("urgent", cpu="100m", priority=1000))
    dispatch = binder.dispatch

    def dispatch_then_arrive(request: BindRequest, done: BindDone) -> None:
        dispatch(request, done)
        if request.pod.name == "p0":
            scheduler.enqueue(urgent)

    binder.dispatch = dispatch_then_arrive  # type: ignore[method-assign]
    loop = asyncio.create_task(run_loop(scheduler, synced=OpenGate(), leading=OpenGate()))
    await _settle(lambda: len(reporter.bound) == 4)
    loop.cancel()
    order = [key for key, _ in reporter.bound]
    assert order == ["default/p0", "default/urgent", "default/p1", "default/p2"]


async def test_lost_leadership_puts_the_popped_pod_back() -> None:
    """Leadership lost after the first pod: the next popped pod is requeued, none is bound."""
    scheduler, binder, reporter = scheduler_for([make_node("n0", cpu="64")])
    for i in range(3):
        scheduler.enqueue(pod_from_raw(make_pod(f"p{i}", cpu="100m")))
    leading = _Gate()
    dispatch = binder.dispatch

    def dispatch_then_lose(request: BindRequest, done: BindDone) -> None:
        dispatch(request, done)
        leading.close()

    binder.dispatch = dispatch_then_lose  # type: ignore[method-assign]
    loop = asyncio.create_task(run_loop(scheduler, synced=OpenGate(), leading=leading))
    await _settle(lambda: scheduler.queue.pending()["backoff"] == 1)
    loop.cancel()
    assert [key for key, _ in reporter.bound] == ["default/p0"]
    assert scheduler.queue.pending() == {"active": 1, "backoff": 1, "unschedulable": 0}
    assert scheduler.queue.in_flight == 0
