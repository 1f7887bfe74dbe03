"""Pod groups scheduled as kube-scheduler v1.37.2 schedules them with GenericWorkload
(cycle/schedule_group.py): the cases of kube's test/integration/scheduler/podgroup/
podgroup_test.go, on one node of 4 CPUs with 1-CPU pods, through the real cycle, queue and
event handlers."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from scheduler.clock import FakeClock
from scheduler.cycle.eventhandlers import EventHandlers
from scheduler.framework.feature_gates import parse_feature_gates
from scheduler.model.parse import node_from_raw, pod_from_raw
from scheduler.model.parse_pod_groups import coscheduling_group_from_raw, pod_group_from_raw
from scheduler.model.pod import Pod
from tests.builders import make_node, make_pod, make_pod_group
from tests.harness import drain, scheduler_for

GATES = parse_feature_gates("GenericWorkload=true")


NO_VICTIMS = "pod group preemption: No preemption victims found for incoming preemptor"


class Evictions:
    """A Preemptor that records what it is asked to evict (the test deletes the pods)."""

    def __init__(self) -> None:
        self.victims: list[str] = []
        self.nominated: dict[str, str] = {}

    def preempt(self, pod: Pod, node: str, victims: Sequence[Pod]) -> None:
        self.victims += [victim.name for victim in victims]
        self.nominated[pod.name] = node

    def clear_nominated_node(self, pods: Sequence[Pod]) -> None:
        return None


class Gangs:
    """One 4-CPU node, the scheduler with GenericWorkload, and the watch's way in."""

    def __init__(self, *, nodes: int = 1, cpu: str = "4") -> None:
        self.clock = FakeClock()
        self.evictions = Evictions()
        self.scheduler, self.binder, self.reporter = scheduler_for(
            [make_node(f"node-{i}", cpu=cpu) for i in range(nodes)],
            gates=GATES,
            clock=self.clock,
            preemptor=self.evictions,
        )
        self.events = EventHandlers(self.scheduler)
        self.placed: dict[str, str | None] = {}

    def group(self, name: str, *, min_count: int | None = 3, priority: int = 100) -> None:
        raw = make_pod_group(name, min_count=min_count, priority=priority)
        self.events.on_object(pod_group_from_raw(raw), None)

    def set_min_count(self, name: str, min_count: int) -> None:
        key = f"podgroup/default/{name}"
        old = self.scheduler.cluster.pod_groups.pod_group(key)  # type: ignore[arg-type]
        raw = make_pod_group(name, min_count=min_count, priority=100, generation=2)
        self.events.on_object(pod_group_from_raw(raw), old)

    def pod(self, name: str, group: str | None = "pg1", *, cpu: str = "1", **extra: Any) -> None:
        raw = make_pod(name, cpu=cpu, pod_group=group, priority=100, **extra)
        self.events.on_pod(pod_from_raw(raw))

    def bound(
        self, name: str, node: str = "node-0", *, cpu: str = "2", priority: int = 100
    ) -> None:
        raw = make_pod(name, cpu=cpu, node_name=node, priority=priority, phase="Running")
        self.events.on_pod(pod_from_raw(raw))

    def evict(self) -> None:
        """The API deletes what preemption evicted (a kubelet ends them at once)."""
        for name in self.evictions.victims:
            self.delete(name)
        self.evictions.victims.clear()

    def delete(self, name: str) -> None:
        self.events.on_pod_deleted(f"uid-default-{name}")  # type: ignore[arg-type]

    def run(self, seconds: float = 0.0) -> dict[str, str | None]:
        """Let ``seconds`` pass (backoffs end), then schedule what is queued."""
        self.clock.advance(seconds)
        self.scheduler.queue.flush()
        self.placed.update(drain(self.scheduler))
        return self.placed

    def on_node(self, name: str) -> str | None:
        pod = self.scheduler.cluster.get_pod(f"uid-default-{name}")
        return pod.node_name if pod is not None else None

    def scheduled(self) -> set[str]:
        return {name for name in self.placed if self.on_node(name.rpartition("/")[2]) is not None}


def test_gang_schedules_when_its_pod_group_and_resources_are_available() -> None:
    """Case 1: the PodGroup, then three members: all bound, the group True/Scheduled."""
    gangs = Gangs()
    gangs.group("pg1")
    for name in ("p1", "p2", "p3"):
        gangs.pod(name)
    gangs.run()
    assert gangs.scheduled() == {"default/p1", "default/p2", "default/p3"}
    condition = gangs.reporter.group_conditions["podgroup/default/pg1"]
    assert (condition.status, condition.reason, condition.message) == ("True", "Scheduled", "")


def test_a_late_member_of_a_placed_gang_is_scheduled() -> None:
    """Case 2: a fourth member after the gang is bound passes at once (3 already bound)."""
    gangs = Gangs()
    gangs.group("pg1")
    for name in ("p1", "p2", "p3"):
        gangs.pod(name)
    gangs.run()
    gangs.pod("p4")
    gangs.run()
    assert gangs.on_node("p4") == "node-0"


def test_a_gang_waits_for_quorum_then_schedules() -> None:
    """Case 3: two of three members are held back (GangScheduling's PreEnqueue), none
    tried; the third makes the quorum and all three are bound."""
    gangs = Gangs()
    gangs.group("pg1")
    gangs.pod("p1")
    gangs.pod("p2")
    assert gangs.run() == {}
    assert gangs.scheduler.queue.gated() == 2
    gangs.pod("p3")
    gangs.run()
    assert gangs.scheduled() == {"default/p1", "default/p2", "default/p3"}


def test_a_gang_waits_for_its_pod_group_then_resources() -> None:
    """Case 4: members before their PodGroup wait aside; then the group does not fit
    beside a 2-CPU blocker (none bound, none held); once the blocker goes, all bind."""
    gangs = Gangs()
    gangs.bound("blocker")
    for name in ("p1", "p2", "p3"):
        gangs.pod(name)
    assert gangs.scheduler.queue.groups.incomplete() == 3
    assert gangs.run() == {}
    gangs.group("pg1")
    gangs.run()
    assert gangs.scheduled() == set()
    assert gangs.scheduler.cluster.num_assumed == 0
    condition = gangs.reporter.group_conditions["podgroup/default/pg1"]
    assert (condition.status, condition.reason) == ("False", "Unschedulable")
    group_message = f"minCount (3) cannot be satisfied: 2 scheduled, 0 remaining, {NO_VICTIMS}"
    assert condition.message == group_message
    messages = gangs.reporter.unschedulable_messages
    assert messages["default/p1"] == f"pod group is unschedulable, {group_message}"
    assert messages["default/p3"] == "0/1 nodes are available: 1 Insufficient cpu."
    gangs.delete("blocker")
    gangs.run(seconds=20)
    assert gangs.scheduled() == {"default/p1", "default/p2", "default/p3"}


def test_min_count_placed_and_the_rest_waits_for_room() -> None:
    """Case 5: four members of a gang of three beside a 1-CPU blocker: three bound, one
    unschedulable; when the blocker goes the fourth binds too."""
    gangs = Gangs()
    gangs.bound("small-blocker", cpu="1")
    for name in ("p1", "p2", "p3", "p4"):
        gangs.pod(name)
    gangs.group("pg1")
    gangs.run()
    assert len(gangs.scheduled()) == 3
    gangs.delete("small-blocker")
    gangs.run(seconds=1)
    assert len(gangs.scheduled()) == 4


def test_a_member_left_over_from_a_placed_gang_does_not_take_true_back() -> None:
    """Case 5 on: the fourth member fails again before the watch brings the True just
    written back into the cache; the condition stays True/Scheduled (kube: terminal once
    True), and the next write is told the True it is judged against."""
    gangs = Gangs()
    gangs.bound("small-blocker", cpu="1")
    for name in ("p1", "p2", "p3", "p4"):
        gangs.pod(name)
    gangs.group("pg1")
    gangs.run()  # the gang, then p4 alone at once (a leftover of a placed group)
    metrics = gangs.scheduler.metrics
    attempts = metrics.by_label(metrics.podgroup_schedule_attempts, "result")
    assert attempts == {"scheduled": 1.0, "unschedulable": 1.0}
    condition = gangs.reporter.group_conditions["podgroup/default/pg1"]
    assert (condition.status, condition.reason, condition.message) == ("True", "Scheduled", "")
    groups = gangs.scheduler.cluster.pod_groups
    pod_group = groups.pod_group("podgroup/default/pg1")  # type: ignore[arg-type]
    assert pod_group is not None
    assert pod_group.condition is None  # the watch has not brought it back
    assert groups.condition(pod_group) == condition


def test_two_competing_gangs_do_not_deadlock() -> None:
    """Cases 6 and 7: two gangs of three on a 4-CPU node, members interleaved: the one that
    reaches its quorum first is bound whole, the other not at all (nothing held)."""
    for first, second in (("pg1", "pg2"), ("pg2", "pg1")):
        gangs = Gangs()
        gangs.group("pg1")
        gangs.group("pg2")
        for i in (1, 2, 3):
            gangs.pod(f"{first}-p{i}", first)
            gangs.pod(f"{second}-p{i}", second)
        gangs.run()
        assert gangs.scheduled() == {f"default/{first}-p{i}" for i in (1, 2, 3)}
        assert gangs.scheduler.cluster.num_assumed == 0


def test_an_individual_pod_and_a_gang_interleaved() -> None:
    """Case 8: a 2-CPU pod before a gang of three leaves too little room: the pod binds, the
    gang does not, and nothing is held for it."""
    gangs = Gangs()
    gangs.group("pg1")
    gangs.pod("blocker", None, cpu="2")
    for name in ("p1", "p2", "p3"):
        gangs.pod(name)
    gangs.run()
    assert gangs.scheduled() == {"default/blocker"}


def test_a_basic_group_places_its_pods_one_by_one() -> None:
    """Case 9: a basic group needs no quorum: each member binds as it comes."""
    gangs = Gangs()
    gangs.group("pg1", min_count=None)
    gangs.pod("p1")
    gangs.run()
    assert gangs.on_node("p1") == "node-0"
    gangs.pod("p2")
    gangs.pod("p3")
    gangs.run()
    assert gangs.scheduled() == {"default/p1", "default/p2", "default/p3"}


def test_a_basic_group_places_what_fits() -> None:
    """Case 10: a basic group beside a 2-CPU blocker: two bound, one unschedulable; all
    three once the blocker goes."""
    gangs = Gangs()
    gangs.bound("blocker")
    for name in ("p1", "p2", "p3"):
        gangs.pod(name)
    gangs.group("pg1", min_count=None)
    gangs.run()
    assert len(gangs.scheduled()) == 2
    gangs.delete("blocker")
    gangs.run(seconds=1)
    assert len(gangs.scheduled()) == 3


def test_lowering_min_count_releases_a_gated_gang() -> None:
    """Case 15: four members of a gang of five are held; minCount 4 lets them go."""
    gangs = Gangs()
    gangs.group("pg-mutable", min_count=5)
    for i in range(1, 5):
        gangs.pod(f"mut-p{i}", "pg-mutable")
    assert gangs.run() == {}
    gangs.set_min_count("pg-mutable", 4)
    gangs.run()
    assert len(gangs.scheduled()) == 4


def test_lowering_min_count_places_a_gang_too_big_for_the_node() -> None:
    """Case 16: five members of a gang of five cannot all fit 4 CPUs; minCount 4 places
    four and leaves the fifth unschedulable."""
    gangs = Gangs()
    gangs.group("pg-mutable", min_count=5)
    for i in range(1, 6):
        gangs.pod(f"mut-p{i}", "pg-mutable")
    gangs.run()
    assert gangs.scheduled() == set()
    gangs.set_min_count("pg-mutable", 4)
    gangs.run(seconds=20)
    assert len(gangs.scheduled()) == 4


def test_raising_min_count_does_not_try_a_gated_gang() -> None:
    """Case 17: minCount raised while the gang is held: still held, never attempted."""
    gangs = Gangs()
    gangs.group("pg-mutable", min_count=5)
    for i in range(1, 5):
        gangs.pod(f"mut-p{i}", "pg-mutable")
    gangs.set_min_count("pg-mutable", 6)
    gangs.run()
    group = gangs.scheduler.queue.groups.entities["podgroup/default/pg-mutable"]  # type: ignore[index]
    assert group.gated_by == "GangScheduling"
    assert group.attempts == 0


def test_a_member_with_a_scheduling_gate_holds_its_group() -> None:
    """One gated member gates the whole group until the gate goes (kube's queue)."""
    gangs = Gangs()
    gangs.group("pg1")
    gangs.pod("p1")
    gangs.pod("p2")
    gangs.pod("p3", scheduling_gates=["example.com/wait"])
    assert gangs.run() == {}
    gangs.pod("p3")
    gangs.run()
    assert gangs.scheduled() == {"default/p1", "default/p2", "default/p3"}


def test_members_of_another_scheduler_or_priority_fail_validation() -> None:
    """kube's validatePodGroup: a member whose priority is not the group's fails the whole
    group with kube's message, and nothing is tried."""
    gangs = Gangs()
    gangs.group("pg1", min_count=2)
    gangs.pod("p1")
    gangs.events.on_pod(pod_from_raw(make_pod("p2", cpu="1", pod_group="pg1", priority=5)))
    gangs.run()
    assert gangs.scheduled() == set()
    message = gangs.reporter.failures["default/p1"]
    assert message == (
        "all pods in a single pod group should have the same priority as the pod group's "
        "priority, got 5 and 100"
    )
    condition = gangs.reporter.group_conditions["podgroup/default/pg1"]
    assert (condition.status, condition.reason) == ("False", "SchedulerError")


def test_without_the_gate_members_are_plain_pods() -> None:
    """GenericWorkload off (kube's default): a pod naming a group is scheduled alone."""
    scheduler, _, _ = scheduler_for([make_node("node-0", cpu="4")])
    events = EventHandlers(scheduler)
    events.on_pod(pod_from_raw(make_pod("p1", cpu="1", pod_group="pg1")))
    placed = drain(scheduler)
    assert placed == {"default/p1": "node-0"}


def test_nodes_of_a_placed_gang_are_its_members_alone() -> None:
    """Two nodes of 2 CPUs, a gang of four 1-CPU pods: every CPU is used once."""
    gangs = Gangs(nodes=2, cpu="2")
    gangs.group("pg1", min_count=4)
    for i in range(1, 5):
        gangs.pod(f"p{i}")
    gangs.run()
    nodes = [gangs.on_node(f"p{i}") for i in range(1, 5)]
    assert sorted(n for n in nodes if n) == ["node-0", "node-0", "node-1", "node-1"]
    assert node_from_raw(make_node("node-0", cpu="2")).name == "node-0"


def test_a_gang_preempts_lower_priority_pods_as_a_whole() -> None:
    """Case 12: four priority-10 pods fill the node; a gang of three (four members,
    priority 100) evicts them all and binds whole once they are gone."""
    gangs = Gangs()
    for i in range(1, 5):
        gangs.bound(f"low-p{i}", cpu="1", priority=10)
    gangs.group("pg1")
    for i in range(1, 5):
        gangs.pod(f"p{i}")
    gangs.run()
    assert gangs.scheduled() == set()
    assert sorted(gangs.evictions.victims) == ["low-p1", "low-p2", "low-p3", "low-p4"]
    condition = gangs.reporter.group_conditions["podgroup/default/pg1"]
    assert condition.message.endswith(
        "pod group preemption: found a placement for podgroup, preempting 4 victims"
    )
    assert gangs.scheduler.metrics.by_label(
        gangs.scheduler.metrics.podgroup_schedule_attempts, "result"
    ) == {"waiting_on_preemption": 1.0}
    gangs.evict()
    gangs.run(seconds=20)
    assert len(gangs.scheduled()) == 4


def test_a_gang_preempts_only_what_it_needs_least_important_first() -> None:
    """Case 13: priority-5 and priority-10 pods fill the node; a gang of two at priority 50
    evicts the two priority-5 ones (the more important ones are given back first)."""
    gangs = Gangs()
    for i in (1, 2):
        gangs.bound(f"very-low-p{i}", cpu="1", priority=5)
        gangs.bound(f"low-p{i}", cpu="1", priority=10)
    gangs.group("mid-pg", min_count=2, priority=50)
    for i in (1, 2):
        raw = make_pod(f"mid-p{i}", cpu="1", pod_group="mid-pg", priority=50)
        gangs.events.on_pod(pod_from_raw(raw))
    gangs.run()
    assert sorted(gangs.evictions.victims) == ["very-low-p1", "very-low-p2"]
    gangs.evict()
    gangs.run(seconds=20)
    assert gangs.scheduled() == {"default/mid-p1", "default/mid-p2"}
    assert gangs.on_node("low-p1") == "node-0"


def _coscheduling_group(name: str, min_member: int, min_resources: dict[str, str]) -> Any:
    raw = {
        "apiVersion": "scheduling.x-k8s.io/v1alpha1",
        "kind": "PodGroup",
        "metadata": {"name": name, "namespace": "default", "uid": f"uid-cos-{name}"},
        "spec": {"minMember": min_member, "minResources": min_resources},
    }
    return coscheduling_group_from_raw(raw)


def test_coscheduling_pod_groups_gang_their_labelled_pods() -> None:
    """Coscheduling's PodGroup (scheduling.x-k8s.io) and its label make a gang of
    minMember, placed whole."""
    gangs = Gangs()
    gangs.scheduler.cluster.pod_groups.coscheduling = True
    gangs.events.on_object(_coscheduling_group("job", 3, {"cpu": "3"}), None)
    labels = {"scheduling.x-k8s.io/pod-group": "job"}
    for name in ("w1", "w2"):
        gangs.pod(name, None, labels=labels)
    assert gangs.run() == {}  # two of three: held back
    gangs.pod("w3", None, labels=labels)
    gangs.run()
    assert gangs.scheduled() == {"default/w1", "default/w2", "default/w3"}


def test_coscheduling_min_resources_the_cluster_lacks_rejects_the_group() -> None:
    """minResources above the cluster's free capacity: no member is tried."""
    gangs = Gangs()
    gangs.scheduler.cluster.pod_groups.coscheduling = True
    gangs.events.on_object(_coscheduling_group("job", 2, {"cpu": "6"}), None)
    labels = {"scheduling.x-k8s.io/pod-group": "job"}
    for name in ("w1", "w2"):
        gangs.pod(name, None, labels=labels)
    gangs.run()
    assert gangs.scheduled() == set()
    assert gangs.reporter.unschedulable_messages["default/w1"] == (
        "pod group is unschedulable, resource gap: cpu 2000"
    )
