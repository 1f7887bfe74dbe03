"""SchedulingQueue: priority order, signature runs, backoff and unschedulable wakeups."""

from __future__ import annotations

import asyncio

import pytest

from scheduler.clock import FakeClock
from scheduler.framework import wakes
from scheduler.framework.events import ClusterEvent
from scheduler.model.parse import pod_from_raw
from scheduler.model.pod import Pod
from scheduler.queueing.queued_pod import QueuedPodInfo
from scheduler.queueing.scheduling_queue import SchedulingQueue
from tests.builders import make_pod


def _pod(name: str, priority: int = 0) -> Pod:
    return pod_from_raw(make_pod(name, priority=priority))


WAKES = wakes.WakeTable(
    {
        ClusterEvent.NODE_ADD: frozenset({"Fit", "Affinity"}),
        ClusterEvent.ASSIGNED_POD_ADD: frozenset({"Affinity"}),
    },
    frozenset({"Fit", "Affinity", "Deaf"}),
)
"""Fit wakes on node additions, Affinity also on assigned pods, Deaf on nothing."""


def _groups(queue: SchedulingQueue) -> list[list[QueuedPodInfo]]:
    return [list(group) for group in iter(queue.try_pop, None)]


def _keys(queue: SchedulingQueue) -> list[list[str]]:
    groups = []
    while group := queue.try_pop():
        groups.append([info.pod.name for info in group])
    return groups


def test_priority_then_arrival_order() -> None:
    """Higher priority first; equal priority in the order pods arrived."""
    clock = FakeClock()
    queue = SchedulingQueue(clock=clock)
    for name, priority in [("low1", 0), ("high", 10), ("low2", 0), ("mid", 5)]:
        queue.add(_pod(name, priority), None)
        clock.advance(1)
    assert _keys(queue) == [["high"], ["mid"], ["low1"], ["low2"]]


@pytest.mark.parametrize(
    ("signatures", "groups"),
    [
        pytest.param("AAAA", [["p0", "p1", "p2", "p3"]], id="one-run"),
        pytest.param("AABA", [["p0", "p1"], ["p2"], ["p3"]], id="runs-never-reorder"),
        pytest.param("A-AA", [["p0"], ["p1"], ["p2", "p3"]], id="unsignable-pods-alone"),
    ],
)
def test_groups_are_consecutive_runs(signatures: str, groups: list[list[str]]) -> None:
    """A group is the head plus the pods right behind it with its signature and priority."""
    clock = FakeClock()
    queue = SchedulingQueue(clock=clock)
    for i, sig in enumerate(signatures):
        queue.add(_pod(f"p{i}"), None if sig == "-" else sig.encode())
        clock.advance(1)
    assert _keys(queue) == groups


def test_higher_priority_arrival_is_popped_before_the_rest_of_a_run() -> None:
    """A run pops its next pod only when asked: a higher-priority pod that arrived while the
    previous one was being scheduled ends the run and goes next (kube pops one pod a cycle)."""
    clock = FakeClock()
    queue = SchedulingQueue(clock=clock)
    for i in range(3):
        queue.add(_pod(f"p{i}"), b"A")
        clock.advance(1)
    run = queue.try_pop()
    assert run is not None
    pods = iter(run)
    assert next(pods).pod.name == "p0"
    assert queue.get(_pod("p1").uid) is not None  # not popped yet: still queued
    queue.add(_pod("urgent", priority=100), b"A")
    assert list(pods) == []
    assert run.taken == 1
    assert _keys(queue) == [["urgent"], ["p1", "p2"]]


def test_equal_priority_arrival_waits_for_the_run() -> None:
    """A same-priority pod arriving during a run entered later: it stays behind the run."""
    clock = FakeClock()
    queue = SchedulingQueue(clock=clock)
    for i in range(2):
        queue.add(_pod(f"p{i}"), b"A")
        clock.advance(1)
    run = queue.try_pop()
    assert run is not None
    names = []
    for info in run:
        names.append(info.pod.name)
        if info.pod.name == "p0":
            queue.add(_pod("late"), b"A")
    assert names == ["p0", "p1", "late"]


def test_attempts_are_counted_when_a_pod_is_popped() -> None:
    """A pod's attempt starts when it is popped, not when the run it belongs to starts."""
    clock = FakeClock()
    queue = SchedulingQueue(clock=clock)
    queue.add(_pod("p0"), b"A")
    queue.add(_pod("p1"), b"A")
    run = queue.try_pop()
    assert run is not None
    pods = iter(run)
    next(pods)
    second = queue.get(_pod("p1").uid)
    assert second is not None
    assert (second.attempts, second.initial_attempt) == (0, None)
    clock.advance(5)
    assert next(pods) is second
    assert (second.attempts, second.initial_attempt) == (1, 5.0)


def test_group_size_is_bounded() -> None:
    """max_group caps a run."""
    queue = SchedulingQueue(clock=FakeClock(), max_group=2)
    for i in range(5):
        queue.add(_pod(f"p{i}"), b"A")
    assert [len(list(g)) for g in iter(queue.try_pop, None)] == [2, 2, 1]


def test_backoff_doubles_to_the_cap_and_expires() -> None:
    """Backoff is initial * 2^(attempts-1), capped; flush moves expired pods back."""
    clock = FakeClock()
    queue = SchedulingQueue(clock=clock, initial_backoff=1, max_backoff=4)
    assert [queue.backoff_duration(n) for n in (1, 2, 3, 4)] == [1, 2, 4, 4]
    queue.add(_pod("p"), None)
    (info,) = queue.try_pop()
    queue.requeue_backoff(info)
    assert queue.pending()["backoff"] == 1
    clock.advance(0.5)
    queue.flush()
    assert queue.try_pop() is None
    clock.advance(0.6)
    queue.flush()
    assert [i.pod.name for i in queue.try_pop()] == ["p"]


def test_idle_pop_takes_a_woken_pod_before_its_backoff_ends() -> None:
    """kube's SchedulerPopFromBackoffQ: with nothing active, a pod an event moved into the
    backoff is popped at once (the one whose backoff ends first, then the higher priority);
    an erred pod waits its backoff out, and an active pod still comes first."""
    clock = FakeClock()
    queue = SchedulingQueue(clock=clock, initial_backoff=1, max_backoff=8)
    queue.wakes = WAKES
    for name, priority in (("first", 0), ("second", 0), ("urgent", 9), ("erred", 99)):
        queue.add(_pod(name, priority), None)
    infos = {info.pod.name: info for run in iter(queue.try_pop, None) for info in run}
    queue.requeue_backoff(infos["erred"])
    clock.advance(0.1)
    queue.requeue_unschedulable(infos["first"], frozenset({"Fit"}))
    clock.advance(0.1)
    for name in ("second", "urgent"):
        queue.requeue_unschedulable(infos[name], frozenset({"Fit"}))
    assert queue.on_cluster_event(ClusterEvent.NODE_ADD) == 3
    assert queue.pending()["backoff"] == 4
    assert queue.try_pop(early=False) is None  # an offline pass keeps to what is active
    queue.add(_pod("new"), None)
    assert _keys(queue) == [["new"], ["first"], ["urgent"], ["second"]]
    clock.advance(1)
    queue.flush()
    assert _keys(queue) == [["erred"]]


def test_unschedulable_pods_wait_for_a_helpful_event() -> None:
    """A pod wakes only on an event a plugin that rejected it registered."""
    clock = FakeClock()
    queue = SchedulingQueue(clock=clock, initial_backoff=1)
    queue.wakes = WAKES
    queue.add(_pod("p"), None)
    (info,) = queue.try_pop()
    queue.requeue_unschedulable(info, frozenset({"Fit"}))
    assert queue.on_cluster_event(ClusterEvent.ASSIGNED_POD_ADD) == 0
    clock.advance(2)  # past its backoff
    assert queue.on_cluster_event(ClusterEvent.NODE_ADD) == 1
    assert [i.pod.name for i in queue.try_pop()] == ["p"]


@pytest.mark.parametrize(
    ("rejected_by", "moved"),
    [
        pytest.param({"Affinity"}, 1, id="registered"),
        pytest.param({"Fit", "Affinity"}, 1, id="one-rejector-registered"),
        pytest.param({"Fit"}, 0, id="not-registered"),
        pytest.param({"Deaf"}, 0, id="declared-no-event"),
        pytest.param({"Undeclared"}, 1, id="undeclared-plugin"),
        pytest.param(set(), 1, id="no-plugin"),
    ],
)
def test_an_event_wakes_the_pods_it_may_help(rejected_by: set[str], moved: int) -> None:
    """kube's rule: the rejectors' registered events, or every event when a rejector
    declared none (or no plugin was named)."""
    queue = SchedulingQueue(clock=FakeClock())
    queue.wakes = WAKES
    queue.add(_pod("p"), None)
    (info,) = queue.try_pop()
    queue.requeue_unschedulable(info, frozenset(rejected_by))
    assert queue.on_cluster_event(ClusterEvent.ASSIGNED_POD_ADD) == moved
    assert queue.pending()["unschedulable"] == 1 - moved


@pytest.mark.parametrize("event", list(ClusterEvent))
def test_by_default_every_event_wakes_every_pod(event: ClusterEvent) -> None:
    """Until the Scheduler sets its profiles' table, no event is ignored."""
    queue = SchedulingQueue(clock=FakeClock())
    queue.add(_pod("p"), None)
    (info,) = queue.try_pop()
    queue.requeue_unschedulable(info, frozenset({"Deaf"}))
    assert queue.on_cluster_event(event) == 1


def test_unschedulable_pods_are_flushed_after_the_interval() -> None:
    """After max_unschedulable_seconds a pod is retried even without an event."""
    clock = FakeClock()
    queue = SchedulingQueue(clock=clock, max_unschedulable_seconds=300)
    queue.add(_pod("p"), None)
    (info,) = queue.try_pop()
    queue.requeue_unschedulable(info, frozenset({"NodeResourcesFit"}))
    clock.advance(299)
    queue.flush()
    assert queue.pending()["unschedulable"] == 1
    clock.advance(20)
    queue.flush()
    assert queue.pending()["unschedulable"] == 0


def test_update_and_delete_while_queued() -> None:
    """An updated pod keeps one entry with the new version; a deleted pod is gone."""
    queue = SchedulingQueue(clock=FakeClock())
    queue.add(_pod("p"), None)
    queue.add(_pod("q"), None)
    newer = pod_from_raw(make_pod("p", labels={"v": "2"}))
    queue.add(newer, None)
    queue.delete(_pod("q").uid)
    groups = list(iter(queue.try_pop, None))
    assert [[i.pod.labels.get("v") for i in g] for g in groups] == [["2"]]
    assert len(queue) == 0


def test_refresh_keeps_place_and_pool() -> None:
    """A refreshed pod holds the newer copy but stays where it was: an unschedulable pod is
    not retried because of a status patch, and an active one keeps its turn."""
    clock = FakeClock()
    queue = SchedulingQueue(clock=clock)
    queue.add(_pod("stuck"), None)
    (info,) = queue.try_pop()
    queue.requeue_unschedulable(info, frozenset({"Fit"}))
    for name in ("first", "second"):
        queue.add(_pod(name), None)
        clock.advance(1)
    assert queue.refresh(pod_from_raw(make_pod("stuck", labels={"v": "2"})))
    assert queue.refresh(pod_from_raw(make_pod("first", labels={"v": "2"})))
    assert not queue.refresh(_pod("absent"))
    assert queue.pending()["unschedulable"] == 1
    assert [[(i.pod.name, i.pod.labels.get("v")) for i in g] for g in _groups(queue)] == [
        [("first", "2")],
        [("second", None)],
    ]
    stuck = queue.get(_pod("stuck").uid)
    assert stuck is not None
    assert stuck.pod.labels.get("v") == "2"


async def test_pop_group_waits_for_a_pod() -> None:
    """pop_group blocks until a pod is added."""
    queue = SchedulingQueue(clock=FakeClock())
    waiter = asyncio.create_task(queue.pop())
    await asyncio.sleep(0)
    assert not waiter.done()
    queue.add(_pod("p"), None)
    group = await asyncio.wait_for(waiter, timeout=1)
    assert group.taken == 0
    assert [i.pod.name for i in group] == ["p"]
