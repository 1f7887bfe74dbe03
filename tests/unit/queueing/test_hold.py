"""The queue's ``hold`` (kube's PreEnqueue) and ``activate``."""

from __future__ import annotations

from scheduler.clock import FakeClock
from scheduler.framework.events import ClusterEvent
from scheduler.model.parse import pod_from_raw
from scheduler.queueing.queued_pod import Pool
from scheduler.queueing.scheduling_queue import SchedulingQueue
from tests.builders import make_pod


def test_held_pod_stays_unschedulable_until_activated() -> None:
    """A held pod never reaches the active pool: not on add, not on an event, not on a
    flush; once released, ``activate`` moves it there at once."""
    clock = FakeClock()
    queue = SchedulingQueue(clock=clock)
    pod = pod_from_raw(make_pod("held"))
    held = {pod.uid}
    queue.hold = lambda p: p.uid in held
    queue.add(pod, None)
    assert queue.try_pop() is None
    queue.on_cluster_event(ClusterEvent.NODE_ADD)
    clock.advance(1000)
    queue.flush()
    assert queue.try_pop() is None
    info = queue.get(pod.uid)
    assert info is not None
    assert info.pool is Pool.UNSCHEDULABLE
    assert not queue.activate(pod.uid)  # still held
    held.clear()
    assert queue.activate(pod.uid)
    run = queue.try_pop()
    assert run is not None
    assert [i.pod.uid for i in run] == [pod.uid]


def test_activate_leaves_other_pools_alone() -> None:
    """Only an unschedulable pod is activated; an active or unknown one is not moved."""
    queue = SchedulingQueue(clock=FakeClock())
    pod = pod_from_raw(make_pod("active"))
    queue.add(pod, None)
    assert not queue.activate(pod.uid)
    assert not queue.activate(pod_from_raw(make_pod("unknown")).uid)
    info = queue.get(pod.uid)
    assert info is not None
    assert info.pool is Pool.ACTIVE
