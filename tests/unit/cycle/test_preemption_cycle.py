"""The cycle with DefaultPreemption: nominate, evict through the port, report, requeue, and
bind the preemptor where its victims were, without a lower pod stealing the room."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from scheduler.app.core import build_scheduler
from scheduler.app.local_binder import LocalBinder
from scheduler.batching.signature import BatchingMode
from scheduler.clock import FakeClock
from scheduler.cycle.schedule_one import BatchingSettings, Scheduler
from scheduler.framework.config import default_config
from scheduler.framework.events import ClusterEvent
from scheduler.metrics.registry import Metrics
from scheduler.model.parse import node_from_raw, pod_from_raw
from scheduler.model.pod import Pod
from scheduler.queueing.queued_pod import Pool
from tests.builders import make_node, make_pod
from tests.harness import RecordingReporter, drain, scheduler_for
from tests.scheduler_process import SCHEDULER


@dataclass
class RecordingPreemptor:
    """An in-memory Preemptor."""

    preempted: list[tuple[str, str, list[str]]] = field(default_factory=list)
    cleared: list[str] = field(default_factory=list)

    def preempt(self, pod: Pod, node: str, victims: Sequence[Pod]) -> None:
        self.preempted.append((pod.key, node, [v.key for v in victims]))

    def clear_nominated_node(self, pods: Sequence[Pod]) -> None:
        self.cleared.extend(p.key for p in pods)


def _pod(name: str, priority: int, *, node: str | None = None, **kw: object) -> Pod:
    raw = make_pod(name, cpu="1", priority=priority, node_name=node, **kw)  # type: ignore[arg-type]
    if node:
        raw["status"]["phase"] = "Running"
    return pod_from_raw(raw)


def _cluster(
    clock: FakeClock | None = None, metrics: Metrics | None = None
) -> tuple[Scheduler, LocalBinder, RecordingReporter, RecordingPreemptor]:
    """n1 holds a (0) and b (5), n2 holds c (1) and d (5); every pod asks 1 of 2 cpus."""
    binder, reporter, preemptor = LocalBinder(), RecordingReporter(), RecordingPreemptor()
    scheduler = build_scheduler(
        default_config(),
        clock=clock or FakeClock(),
        binder=binder,
        reporter=reporter,
        batching=BatchingSettings(mode=BatchingMode.ALL),
        metrics=metrics,
        seed=0,
        preemptor=preemptor,
    )
    binder.scheduler = scheduler
    for name in ("n1", "n2"):
        scheduler.cluster.add_node(node_from_raw(make_node(name, cpu="2")))
    for name, priority, node in (("a", 0, "n1"), ("b", 5, "n1"), ("c", 1, "n2"), ("d", 5, "n2")):
        scheduler.cluster.add_pod(_pod(name, priority, node=node))
    return scheduler, binder, reporter, preemptor


def test_preemption_nominates_evicts_reports_and_requeues() -> None:
    """The node whose victims matter least is nominated; the victims go to the port; the
    FailedScheduling message ends with PostFilter's; the pod waits, unsignable."""
    metrics = Metrics()
    scheduler, _, reporter, preemptor = _cluster(metrics=metrics)
    scheduler.enqueue(_pod("high", 100))
    assert drain(scheduler) == {"default/high": None}
    assert preemptor.preempted == [("default/high", "n1", ["default/a"])]
    assert reporter.unschedulable_messages["default/high"] == (
        "0/2 nodes are available: 2 Insufficient cpu. preemption: found a potential "
        "placement for pod on node n1, preempting 1 victims"
    )
    queued = scheduler.queue.get(_pod("high", 100).uid)
    assert queued is not None
    assert queued.pod.nominated_node_name == "n1"
    assert (queued.signature, queued.refused_by) == (None, "NominatedNode")
    assert scheduler.queue.pending()[Pool.UNSCHEDULABLE] == 1
    assert metrics.registry.get_sample_value("scheduler_preemption_attempts_total") == 1
    assert metrics.registry.get_sample_value("scheduler_preemption_victims_sum") == 1
    post_filter = {"extension_point": "PostFilter", "status": "Success", "profile": SCHEDULER}
    assert (
        metrics.registry.get_sample_value(
            "scheduler_framework_extension_point_duration_seconds_count", post_filter
        )
        == 1
    )


def test_victims_room_goes_to_the_preemptor_not_to_a_lower_pod() -> None:
    """After the victim leaves, a lower-priority pod that comes first cannot take its room;
    the preemptor then binds to its nominated node."""
    clock = FakeClock()
    scheduler, _, reporter, preemptor = _cluster(clock)
    high = _pod("high", 100)
    scheduler.enqueue(high)
    drain(scheduler)
    scheduler.cluster.remove_pod(_pod("a", 0).uid)  # the victim's deletion, as the watch
    scheduler.queue.on_cluster_event(ClusterEvent.ASSIGNED_POD_DELETE)
    scheduler.enqueue(_pod("thief", 50))
    placed = drain(scheduler)  # high is backing off: the thief goes first
    assert placed == {"default/thief": None}
    assert preemptor.preempted[-1] == ("default/thief", "n2", ["default/c"])
    clock.advance(10)
    scheduler.queue.flush()
    assert drain(scheduler)["default/high"] == "n1"
    assert ("default/high", "n1") in reporter.bound
    assert scheduler.queue.nominator.node_of(high.uid) is None


def test_preemption_policy_never_evicts_nothing() -> None:
    """``preemptionPolicy: Never``: no victims, kube's message."""
    scheduler, _, reporter, preemptor = _cluster()
    raw = make_pod("polite", cpu="1", priority=100)
    raw["spec"]["preemptionPolicy"] = "Never"
    scheduler.enqueue(pod_from_raw(raw))
    drain(scheduler)
    assert preemptor.preempted == []
    assert reporter.unschedulable_messages["default/polite"].endswith(
        " preemption: not eligible due to preemptionPolicy=Never."
    )


def test_equal_priority_finds_no_victims() -> None:
    """Nothing of lower priority anywhere: kube's per-node message after the fit message."""
    scheduler, _, reporter, preemptor = _cluster()
    scheduler.enqueue(_pod("peer", 0))
    drain(scheduler)
    assert preemptor.preempted == []
    assert reporter.unschedulable_messages["default/peer"] == (
        "0/2 nodes are available: 2 Insufficient cpu. preemption: 0/2 nodes are available: "
        "2 No preemption victims found for incoming pod."
    )


def test_lower_priority_nominations_on_the_node_are_cleared() -> None:
    """A pod nominated to the node with a lower priority than the preemptor's loses its
    nomination (kube: it may no longer fit there)."""
    scheduler, _, _, preemptor = _cluster()
    raw = make_pod("earlier", cpu="1", priority=2)
    raw["status"]["nominatedNodeName"] = "n1"
    earlier = pod_from_raw(raw)
    scheduler.queue.nominator.update(earlier)
    scheduler.enqueue(_pod("high", 100))
    drain(scheduler)
    assert preemptor.preempted[0][1] == "n1"
    assert preemptor.cleared == ["default/earlier"]
    assert scheduler.queue.nominator.node_of(earlier.uid) is None


def test_pod_with_a_nomination_from_the_api_is_unsignable() -> None:
    """``status.nominatedNodeName`` makes the pod unsignable (KEP-5598) and nominated."""
    scheduler, _, _, _ = _cluster()
    raw = make_pod("waiting", cpu="1", priority=100)
    raw["status"]["nominatedNodeName"] = "n2"
    pod = pod_from_raw(raw)
    scheduler.enqueue(pod)
    queued = scheduler.queue.get(pod.uid)
    assert queued is not None
    assert (queued.signature, queued.refused_by) == (None, "NominatedNode")
    assert scheduler.queue.nominator.node_of(pod.uid) == "n2"


def test_no_nodes_runs_no_post_filter() -> None:
    """With no nodes at all kube reports that alone; PostFilter does not run."""
    scheduler, _, reporter = scheduler_for([])
    scheduler.enqueue(_pod("lonely", 100))
    drain(scheduler)
    assert reporter.unschedulable_messages["default/lonely"] == (
        "0/0 nodes are available: no nodes available to schedule pods."
    )
