"""Cluster events kube requeues on: a pod a plugin rejected leaves the unschedulable pool at
the event that may undo the rejection (kube v1.37's EventsToRegister), not at the flush.

Each case schedules a pod for real (the harness's Scheduler, the default profile), sees it
rejected by the plugin named, sends one change through the event handlers with the clock
standing still, and checks that the pod left the unschedulable pool; then, past its backoff,
that it is placed where the change made room.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pytest

from scheduler.clock import FakeClock
from scheduler.cycle.eventhandlers import EventHandlers, assigned_pod_update_events
from scheduler.framework.events import ClusterEvent
from scheduler.model.parse import node_from_raw, pod_from_raw
from scheduler.plugins import names
from scheduler.queueing.queued_pod import Pool
from tests.builders import make_node, make_pod, taint
from tests.harness import drain, scheduler_for

if TYPE_CHECKING:
    from collections.abc import Callable

    from scheduler.cycle.schedule_one import Scheduler

Raw = dict[str, Any]
ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"


def _node(name: str, zone: str, **kw: Any) -> Raw:
    return make_node(name, labels={ZONE: zone, HOST: name}, **kw)


def _assigned(name: str, node: str, version: str = "1", **kw: Any) -> Raw:
    raw = make_pod(name, node_name=node, phase="Running", **kw)
    raw["metadata"]["resourceVersion"] = version
    return raw


def _spread(max_skew: int, key: str, app: str) -> list[Raw]:
    return [
        {
            "maxSkew": max_skew,
            "topologyKey": key,
            "whenUnsatisfiable": "DoNotSchedule",
            "labelSelector": {"matchLabels": {"app": app}},
        }
    ]


def _affinity_to(app: str) -> Raw:
    term = {"labelSelector": {"matchLabels": {"app": app}}, "topologyKey": HOST}
    return {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}


def _anti_affinity_to(app: str) -> Raw:
    term = {"labelSelector": {"matchLabels": {"app": app}}, "topologyKey": HOST}
    return {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}


@dataclass(frozen=True)
class Case:
    nodes: list[Raw]
    assigned: list[Raw]
    pending: Raw
    rejected_by: str
    change: Callable[[EventHandlers], object]
    event: ClusterEvent
    lands_on: str


def _spread_pod(max_skew: int) -> Raw:
    spread = _spread(max_skew, ZONE, "web")
    return make_pod("spread", cpu="100m", labels={"app": "web"}, topology_spread=spread)


CASES = [
    pytest.param(
        # Zone b (its only node tainted) holds no web pod, so zone a's two are a skew of 3.
        # Without zone b the minimum is zone a's own count: skew 1.
        Case(
            nodes=[_node("n-a", "a"), _node("n-b", "b", taints=[taint("gpu")])],
            assigned=[_assigned(f"web-{i}", "n-a", labels={"app": "web"}) for i in range(2)],
            pending=_spread_pod(1),
            rejected_by=names.POD_TOPOLOGY_SPREAD,
            change=lambda handlers: handlers.on_node_deleted("n-b"),
            event=ClusterEvent.NODE_DELETE,
            lands_on="n-a",
        ),
        id="node-deleted-PodTopologySpread",
    ),
    pytest.param(
        # Two web pods in zone a and none in zone b (tainted): skew 3 > maxSkew 2. One of
        # them relabelled leaves a skew of 2.
        Case(
            nodes=[_node("n-a", "a"), _node("n-b", "b", taints=[taint("gpu")])],
            assigned=[_assigned(f"web-{i}", "n-a", labels={"app": "web"}) for i in range(2)],
            pending=_spread_pod(2),
            rejected_by=names.POD_TOPOLOGY_SPREAD,
            change=lambda handlers: handlers.on_pod(
                pod_from_raw(_assigned("web-0", "n-a", "2", labels={"app": "batch"}))
            ),
            event=ClusterEvent.ASSIGNED_POD_LABEL_UPDATE,
            lands_on="n-a",
        ),
        id="assigned-pod-label-update-PodTopologySpread",
    ),
    pytest.param(
        # Required affinity to an app=db pod; the only candidate is labelled app=web until
        # it is relabelled.
        Case(
            nodes=[_node("n-a", "a"), _node("n-b", "b")],
            assigned=[_assigned("peer", "n-b", labels={"app": "web"})],
            pending=make_pod("follower", cpu="100m", affinity=_affinity_to("db")),
            rejected_by=names.INTER_POD_AFFINITY,
            change=lambda handlers: handlers.on_pod(
                pod_from_raw(_assigned("peer", "n-b", "2", labels={"app": "db"}))
            ),
            event=ClusterEvent.ASSIGNED_POD_LABEL_UPDATE,
            lands_on="n-b",
        ),
        id="assigned-pod-label-update-InterPodAffinity",
    ),
    pytest.param(
        # The only node is full with one 2-CPU pod; resized in place to 500m, it frees 1.5.
        Case(
            nodes=[_node("n-a", "a", cpu="2")],
            assigned=[_assigned("big", "n-a", cpu="2")],
            pending=make_pod("small", cpu="1"),
            rejected_by=names.NODE_RESOURCES_FIT,
            change=lambda handlers: handlers.on_pod(
                pod_from_raw(_assigned("big", "n-a", "2", cpu="500m"))
            ),
            event=ClusterEvent.ASSIGNED_POD_SCALE_DOWN,
            lands_on="n-a",
        ),
        id="assigned-pod-scale-down-NodeResourcesFit",
    ),
    pytest.param(
        # The same full node; the 2-CPU pod deleted.
        Case(
            nodes=[_node("n-a", "a", cpu="2")],
            assigned=[_assigned("big", "n-a", cpu="2")],
            pending=make_pod("small", cpu="1"),
            rejected_by=names.NODE_RESOURCES_FIT,
            change=lambda handlers: handlers.on_pod_deleted(
                pod_from_raw(_assigned("big", "n-a")).uid
            ),
            event=ClusterEvent.ASSIGNED_POD_DELETE,
            lands_on="n-a",
        ),
        id="assigned-pod-deleted-NodeResourcesFit",
    ),
    pytest.param(
        # As the relabelling above: one of zone a's two web pods goes, a skew of 2 is left.
        Case(
            nodes=[_node("n-a", "a"), _node("n-b", "b", taints=[taint("gpu")])],
            assigned=[_assigned(f"web-{i}", "n-a", labels={"app": "web"}) for i in range(2)],
            pending=_spread_pod(2),
            rejected_by=names.POD_TOPOLOGY_SPREAD,
            change=lambda handlers: handlers.on_pod_deleted(
                pod_from_raw(_assigned("web-0", "n-a", labels={"app": "web"})).uid
            ),
            event=ClusterEvent.ASSIGNED_POD_DELETE,
            lands_on="n-a",
        ),
        id="assigned-pod-deleted-PodTopologySpread",
    ),
    pytest.param(
        # An existing pod's anti-affinity keeps app=web pods off its node, the only one.
        Case(
            nodes=[_node("n-a", "a")],
            assigned=[_assigned("loner", "n-a", affinity=_anti_affinity_to("web"))],
            pending=make_pod("web", cpu="100m", labels={"app": "web"}),
            rejected_by=names.INTER_POD_AFFINITY,
            change=lambda handlers: handlers.on_pod_deleted(
                pod_from_raw(_assigned("loner", "n-a")).uid
            ),
            event=ClusterEvent.ASSIGNED_POD_DELETE,
            lands_on="n-a",
        ),
        id="assigned-pod-deleted-InterPodAffinity",
    ),
]


def _rejected(case: Case) -> tuple[Scheduler, EventHandlers, FakeClock, list[ClusterEvent]]:
    """A scheduler holding ``case.pending`` unschedulable, rejected by ``case.rejected_by``."""
    clock = FakeClock()
    scheduler, _, _ = scheduler_for(case.nodes, clock=clock)
    handlers = EventHandlers(scheduler)
    for raw in case.assigned:
        handlers.on_pod(pod_from_raw(raw))
    pending = pod_from_raw(case.pending)
    handlers.on_pod(pending)
    assert drain(scheduler) == {pending.key: None}
    info = scheduler.queue.get(pending.uid)
    assert info is not None
    assert info.pool is Pool.UNSCHEDULABLE
    assert case.rejected_by in info.unschedulable_plugins
    raised: list[ClusterEvent] = []
    real = scheduler.queue.on_cluster_event

    def record(event: ClusterEvent) -> int:
        raised.append(event)
        return real(event)

    scheduler.queue.on_cluster_event = record  # type: ignore[method-assign]
    return scheduler, handlers, clock, raised


@pytest.mark.parametrize("case", CASES)
def test_the_event_moves_the_rejected_pod_out_of_the_unschedulable_pool_at_once(
    case: Case,
) -> None:
    """The change raises the event its plugin registers; the pod leaves the unschedulable
    pool with the clock still at the rejection, and lands where the change made room."""
    scheduler, handlers, clock, raised = _rejected(case)
    pending = pod_from_raw(case.pending)
    case.change(handlers)
    assert raised == [case.event]
    info = scheduler.queue.get(pending.uid)
    assert info is not None
    assert info.pool is not Pool.UNSCHEDULABLE
    clock.advance(scheduler.queue.max_backoff)  # its backoff, far below the 300 s flush
    scheduler.queue.flush()
    assert drain(scheduler) == {pending.key: case.lands_on}


def test_an_event_no_rejecting_plugin_registered_leaves_the_pod_where_it_is() -> None:
    """NodeResourcesFit does not register a node's deletion: a pod only it rejected stays."""
    case = Case(
        nodes=[_node("n-a", "a", cpu="2"), _node("n-b", "b", cpu="2")],
        assigned=[_assigned("big-a", "n-a", cpu="2"), _assigned("big-b", "n-b", cpu="2")],
        pending=make_pod("small", cpu="1"),
        rejected_by=names.NODE_RESOURCES_FIT,
        change=lambda handlers: handlers.on_node_deleted("n-b"),
        event=ClusterEvent.NODE_DELETE,
        lands_on="",
    )
    scheduler, handlers, _, raised = _rejected(case)
    case.change(handlers)
    assert raised == [ClusterEvent.NODE_DELETE]
    info = scheduler.queue.get(pod_from_raw(case.pending).uid)
    assert info is not None
    assert info.pool is Pool.UNSCHEDULABLE


def test_updates_that_change_no_label_nor_shrink_a_request_raise_nothing() -> None:
    """A status update, a scale-up or a deleted node nobody knew wake nobody."""
    case = CASES[3].values[0]
    assert isinstance(case, Case)
    scheduler, handlers, _, raised = _rejected(case)
    running = _assigned("big", "n-a", "2", cpu="2")
    running["status"]["podIP"] = "10.0.0.7"
    handlers.on_pod(pod_from_raw(running))
    handlers.on_pod(pod_from_raw(_assigned("big", "n-a", "3", cpu="3")))
    handlers.on_node_deleted("never-seen")
    handlers.on_node(node_from_raw(_node("n-a", "a", cpu="2")))  # unchanged: a heartbeat
    assert raised == []
    info = scheduler.queue.get(pod_from_raw(case.pending).uid)
    assert info is not None
    assert info.pool is Pool.UNSCHEDULABLE


@pytest.mark.parametrize(
    ("old", "new", "events"),
    [
        pytest.param({"labels": {"a": "1"}}, {"labels": {"a": "2"}}, ("label",), id="label-value"),
        pytest.param({"labels": {"a": "1"}}, {}, ("label",), id="label-removed"),
        pytest.param({"cpu": "1"}, {"cpu": "500m"}, ("scale-down",), id="cpu-shrank"),
        pytest.param({"memory": "1Gi"}, {"cpu": "1"}, ("scale-down",), id="memory-request-removed"),
        pytest.param({"cpu": "1"}, {"cpu": "2"}, (), id="scale-up"),
        pytest.param(
            {"cpu": "1", "labels": {"a": "1"}},
            {"cpu": "100m", "labels": {"a": "2"}},
            ("label", "scale-down"),
            id="both",
        ),
        pytest.param({"cpu": "1"}, {"cpu": "1"}, (), id="nothing-read"),
    ],
)
def test_assigned_pod_update_events_as_kube_extracts_them(
    old: Raw, new: Raw, events: tuple[str, ...]
) -> None:
    """kube's PodSchedulingPropertiesChange, for the two changes in-tree plugins register."""
    names_of = {
        ClusterEvent.ASSIGNED_POD_LABEL_UPDATE: "label",
        ClusterEvent.ASSIGNED_POD_SCALE_DOWN: "scale-down",
    }
    raised = assigned_pod_update_events(
        pod_from_raw(_assigned("p", "n", "1", **old)), pod_from_raw(_assigned("p", "n", "2", **new))
    )
    assert tuple(names_of[e] for e in raised) == events
