"""A preemption in flight holds its preemptor back (kube's async preemption PreEnqueue), and
nominations are cleared where kube clears them (lower pods, failed binds, no nodes)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import pytest

from scheduler.app.core import build_scheduler
from scheduler.app.local_binder import LocalBinder
from scheduler.batching.signature import BatchingMode
from scheduler.clock import FakeClock
from scheduler.cycle.eventhandlers import EventHandlers
from scheduler.cycle.ports import BindResult, PreemptionFinished
from scheduler.cycle.schedule_one import BatchingSettings, Scheduler
from scheduler.framework.config import default_config
from scheduler.framework.events import ClusterEvent
from scheduler.model.keys import Uid
from scheduler.model.parse import node_from_raw, pod_from_raw
from scheduler.model.pod import Pod
from scheduler.queueing.queued_pod import Pool
from tests.builders import make_node, make_pod
from tests.harness import RecordingReporter, drain


@dataclass
class AsyncPreemptor:
    """A TrackedPreemptor whose evictions end when the test says so."""

    preempted: list[tuple[str, str, list[str]]] = field(default_factory=list)
    cleared: list[str] = field(default_factory=list)
    running: set[Uid] = field(default_factory=set)
    callback: PreemptionFinished | None = None

    def preempt(self, pod: Pod, node: str, victims: Sequence[Pod]) -> None:
        self.preempted.append((pod.key, node, [v.key for v in victims]))
        self.running.add(pod.uid)

    def clear_nominated_node(self, pods: Sequence[Pod]) -> None:
        self.cleared.extend(p.key for p in pods)

    def is_running(self, uid: Uid) -> bool:
        return uid in self.running

    def on_finished(self, callback: PreemptionFinished) -> None:
        self.callback = callback

    def finish(self, pod: Pod, *, ok: bool = True) -> None:
        self.running.discard(pod.uid)
        assert self.callback is not None
        self.callback(pod.uid, ok)


def _pod(name: str, priority: int, *, node: str | None = None, nominated: str = "") -> Pod:
    raw = make_pod(name, cpu="1", priority=priority, node_name=node)
    if node:
        raw["status"]["phase"] = "Running"
    if nominated:
        raw["status"]["nominatedNodeName"] = nominated
    return pod_from_raw(raw)


def _scheduler(
    nodes: Sequence[str], clock: FakeClock, *, auto_bind: bool = True, seed: int = 0
) -> tuple[Scheduler, LocalBinder, AsyncPreemptor]:
    binder, preemptor = LocalBinder(auto=auto_bind), AsyncPreemptor()
    scheduler = build_scheduler(
        default_config(),
        clock=clock,
        binder=binder,
        reporter=RecordingReporter(),
        batching=BatchingSettings(mode=BatchingMode.ALL),
        seed=seed,
        preemptor=preemptor,
    )
    binder.scheduler = scheduler
    for name in nodes:
        scheduler.cluster.add_node(node_from_raw(make_node(name, cpu="1")))
    return scheduler, binder, preemptor


def _retry(scheduler: Scheduler, clock: FakeClock, event: ClusterEvent) -> dict[str, str | None]:
    scheduler.queue.on_cluster_event(event)
    clock.advance(60)
    scheduler.queue.flush()
    return drain(scheduler)


@pytest.mark.parametrize("seed", range(10))
def test_preemptor_is_not_scheduled_again_while_its_preemption_runs(seed: int) -> None:
    """Review finding 2: an event before the victims' deletion must not let the preemptor
    preempt again (on the other node); it binds where its one victim was."""
    clock = FakeClock()
    scheduler, _, preemptor = _scheduler(["n1", "n2"], clock, seed=seed)
    low1, low2 = _pod("low-1", 0, node="n1"), _pod("low-2", 0, node="n2")
    scheduler.cluster.add_pod(low1)
    scheduler.cluster.add_pod(low2)
    high = _pod("high", 100)
    scheduler.enqueue(high)
    assert drain(scheduler) == {"default/high": None}
    assert len(preemptor.preempted) == 1
    node = preemptor.preempted[0][1]
    victim = low1 if node == "n1" else low2
    # A cluster event while the evictions are still being written: held back.
    assert _retry(scheduler, clock, ClusterEvent.NODE_UPDATE) == {}
    assert len(preemptor.preempted) == 1
    info = scheduler.queue.get(high.uid)
    assert info is not None
    assert info.pool is Pool.UNSCHEDULABLE
    # The DELETE was answered, but the watch has not shown the victim terminating yet.
    preemptor.finish(high)
    assert _retry(scheduler, clock, ClusterEvent.NODE_UPDATE) == {}
    # The watch shows it terminating: no second preemption (eligibility sees it) ...
    scheduler.cluster.add_pod(replace(victim, deleting=True, preempted=True))
    assert _retry(scheduler, clock, ClusterEvent.NODE_UPDATE) == {"default/high": None}
    assert len(preemptor.preempted) == 1
    # ... and once it is gone the preemptor binds to its nominated node.
    scheduler.cluster.remove_pod(victim.uid)
    assert _retry(scheduler, clock, ClusterEvent.ASSIGNED_POD_DELETE) == {"default/high": node}
    assert len(preemptor.preempted) == 1


def test_a_failed_preemption_lets_the_preemptor_go_at_once() -> None:
    """An eviction that failed will bring no deletion event: the pod is activated."""
    clock = FakeClock()
    scheduler, _, preemptor = _scheduler(["n1"], clock)
    scheduler.cluster.add_pod(_pod("low", 0, node="n1"))
    high = _pod("high", 100)
    scheduler.enqueue(high)
    drain(scheduler)
    preemptor.finish(high, ok=False)
    info = scheduler.queue.get(high.uid)
    assert info is not None
    assert info.pool is Pool.ACTIVE
    assert drain(scheduler) == {"default/high": None}
    assert len(preemptor.preempted) == 2  # decided again from what the cache shows


def test_lower_nominated_pods_lose_the_nomination_in_their_queued_copy() -> None:
    """Review finding 11: a cleared lower pod no longer carries the node, and is signed."""
    clock = FakeClock()
    scheduler, _, preemptor = _scheduler(["n1"], clock)
    scheduler.cluster.add_pod(_pod("low", 0, node="n1"))
    earlier = _pod("earlier", 2, nominated="n1")
    scheduler.enqueue(earlier)
    scheduler.enqueue(_pod("high", 100))
    run = scheduler.queue.try_pop()
    assert run is not None
    for info in run:
        assert info.pod.key == "default/high"
        scheduler.schedule_one(info)
    assert preemptor.cleared == ["default/earlier"]
    queued = scheduler.queue.get(earlier.uid)
    assert queued is not None
    assert queued.pod.nominated_node_name == ""
    assert queued.signature is not None
    assert scheduler.queue.nominator.node_of(earlier.uid) is None


def test_a_failed_bind_clears_the_nomination() -> None:
    """Review finding 12: after a bind error the requeued copy and the API lose the node."""
    clock = FakeClock()
    scheduler, binder, preemptor = _scheduler(["n1"], clock, auto_bind=False)
    pod = _pod("nominated", 100, nominated="n1")
    scheduler.enqueue(pod)
    drain(scheduler)
    request, done = binder.pending.pop()
    binder.finish(request, done, BindResult.ERROR, "boom")
    queued = scheduler.queue.get(pod.uid)
    assert queued is not None
    assert queued.pod.nominated_node_name == ""
    assert preemptor.cleared == ["default/nominated"]
    assert scheduler.queue.nominator.node_of(pod.uid) is None


def test_no_nodes_clears_the_nomination() -> None:
    """Review finding 12: kube clears the nomination when there are no nodes at all."""
    clock = FakeClock()
    scheduler, _, preemptor = _scheduler([], clock)
    pod = _pod("nominated", 100, nominated="gone")
    scheduler.enqueue(pod)
    drain(scheduler)
    queued = scheduler.queue.get(pod.uid)
    assert queued is not None
    assert queued.pod.nominated_node_name == ""
    assert preemptor.cleared == ["default/nominated"]
    assert scheduler.queue.nominator.node_of(pod.uid) is None


def test_a_preemptor_deleted_while_it_waits_for_its_victims_is_forgotten() -> None:
    """The victims a preemptor waits for are kept until it is popped again; deleted before
    that, it never is, so its DELETE lets them go (else one entry per such pod stays)."""
    clock = FakeClock()
    scheduler, _, preemptor = _scheduler(["n1"], clock)
    scheduler.cluster.add_pod(_pod("low", 0, node="n1"))
    high = _pod("high", 100)
    scheduler.enqueue(high)
    drain(scheduler)
    preemptor.finish(high)
    assert high.uid in scheduler.failures.preempting
    EventHandlers(scheduler).on_pod_deleted(high.uid)
    assert high.uid not in scheduler.failures.preempting
    assert scheduler.queue.get(high.uid) is None
