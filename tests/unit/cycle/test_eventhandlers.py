"""The event handlers: one entry point decides what a cluster change does to cache and queue."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

import pytest

from scheduler.cycle.eventhandlers import EventHandlers
from scheduler.framework.events import ClusterEvent
from scheduler.model.parse import node_from_raw, pod_from_raw, service_from_raw
from scheduler.model.parse_disruption import pdb_from_raw
from scheduler.model.parse_volumes import storage_class_from_raw
from scheduler.queueing.queued_pod import Pool
from tests.builders import make_node, make_pod
from tests.harness import scheduler_for

if TYPE_CHECKING:
    from scheduler.cycle.schedule_one import Scheduler
    from scheduler.model.pod import Pod

Raw = dict[str, Any]


def _setup() -> tuple[Scheduler, EventHandlers, list[ClusterEvent]]:
    """A scheduler with one node, its handlers, and a record of the events they raise."""
    scheduler, _, _ = scheduler_for([make_node("n1")])
    handlers = EventHandlers(scheduler)
    raised: list[ClusterEvent] = []
    real = scheduler.queue.on_cluster_event

    def record(event: ClusterEvent) -> int:
        raised.append(event)
        return real(event)

    scheduler.queue.on_cluster_event = record  # type: ignore[method-assign]
    return scheduler, handlers, raised


def _pod(name: str, version: str = "1", **kw: Any) -> Pod:
    raw = make_pod(name, cpu="100m", **kw)
    raw["metadata"]["resourceVersion"] = version
    return pod_from_raw(raw)


def _park_unschedulable(scheduler: Scheduler, name: str, plugin: str) -> None:
    """A queued pod that was tried and rejected by ``plugin``."""
    scheduler.queue.add(_pod(name), None)
    run = scheduler.queue.try_pop()
    assert run is not None
    (info,) = run
    scheduler.queue.requeue_unschedulable(info, frozenset({plugin}))


def _incoming(scheduler: Scheduler) -> dict[str, int]:
    m = scheduler.metrics
    return {k: int(v) for k, v in m.by_label(m.queue_incoming_pods, "event").items() if v}


def test_a_pending_pod_of_ours_is_queued_and_held() -> None:
    scheduler, handlers, _ = _setup()
    assert handlers.on_pod(_pod("a")) is True
    assert scheduler.queue.get(_pod("a").uid) is not None
    assert _incoming(scheduler) == {"PodAdd": 1}


def test_a_pending_pod_of_another_scheduler_is_ignored() -> None:
    scheduler, handlers, _ = _setup()
    assert handlers.on_pod(_pod("a", scheduler_name="default-scheduler")) is False
    assert len(scheduler.queue) == 0


@pytest.mark.parametrize(
    "change",
    [
        pytest.param({"metadata": {"deletionTimestamp": "2026-01-01T00:00:00Z"}}, id="terminating"),
        pytest.param({"spec": {"schedulingGates": [{"name": "wait"}]}}, id="gated"),
        pytest.param({"status": {"phase": "Failed"}}, id="terminal"),
    ],
)
def test_a_pod_that_cannot_be_scheduled_now_leaves_the_queue(change: Raw) -> None:
    scheduler, handlers, _ = _setup()
    handlers.on_pod(_pod("a"))
    raw = make_pod("a", cpu="100m")
    for section, values in change.items():
        raw.setdefault(section, {}).update(values)
    assert handlers.on_pod(pod_from_raw(raw)) is False
    assert len(scheduler.queue) == 0


def test_the_update_that_removes_the_last_gate_queues_the_pod() -> None:
    scheduler, handlers, _ = _setup()
    gated = make_pod("a", cpu="100m")
    gated["spec"]["schedulingGates"] = [{"name": "quota"}]
    handlers.on_pod(pod_from_raw(gated))
    assert len(scheduler.queue) == 0
    handlers.on_pod(_pod("a", "2"))
    assert len(scheduler.queue) == 1


def test_an_update_that_changes_nothing_read_keeps_the_pod_unschedulable() -> None:
    """kube's isPodUpdated: a status-only update (our own condition patch) must not retry
    an unschedulable pod; a real change does."""
    scheduler, handlers, _ = _setup()
    handlers.on_pod(_pod("a"))
    _park_unschedulable(scheduler, "a", "NodeResourcesFit")
    handlers.on_pod(_pod("a", "2"))  # only the resourceVersion differs
    info = scheduler.queue.get(_pod("a").uid)
    assert info is not None
    assert info.pool is Pool.UNSCHEDULABLE
    assert info.pod.resource_version == "2"  # the newer copy is held
    handlers.on_pod(_pod("a", "3", labels={"tier": "web"}))
    info = scheduler.queue.get(_pod("a").uid)
    assert info is not None
    assert info.pool is Pool.ACTIVE
    assert _incoming(scheduler) == {"PodAdd": 1, "PodUpdate": 1}


def test_the_pending_event_of_a_pod_we_assumed_does_not_queue_it_again() -> None:
    scheduler, handlers, _ = _setup()
    pod = _pod("a")
    scheduler.cluster.assume(pod, "n1")
    assert handlers.on_pod(pod) is True  # held (assumed), not queued
    assert len(scheduler.queue) == 0
    bound = dataclasses.replace(pod, node_name="n1", resource_version="2")
    assert handlers.on_pod(bound) is True
    assert not scheduler.cluster.is_assumed(pod.uid)  # confirmed


def test_assigned_pods_raise_add_and_delete_events() -> None:
    scheduler, handlers, raised = _setup()
    _park_unschedulable(scheduler, "waiting", "InterPodAffinity")
    bound = _pod("b", node_name="n1")
    handlers.on_pod(bound)
    assert raised == [ClusterEvent.ASSIGNED_POD_ADD]
    _park_unschedulable(scheduler, "waiting2", "NodeResourcesFit")
    handlers.on_pod_deleted(bound.uid)
    assert raised[-1] is ClusterEvent.ASSIGNED_POD_DELETE
    assert scheduler.cluster.get_pod(bound.uid) is None


def test_no_event_is_raised_without_unschedulable_pods() -> None:
    """Only unschedulable pods can be woken: the scan is skipped when there are none."""
    _, handlers, raised = _setup()
    handlers.on_pod(_pod("b", node_name="n1"))
    handlers.on_node(node_from_raw(make_node("n2")))
    assert raised == []


def test_a_node_heartbeat_raises_nothing_a_real_change_an_update() -> None:
    scheduler, handlers, raised = _setup()
    _park_unschedulable(scheduler, "waiting", "NodeAffinity")
    raw = make_node("n1")
    raw["metadata"]["resourceVersion"] = "7"  # only the version differs from the cached one
    handlers.on_node(node_from_raw(raw))
    assert raised == []
    handlers.on_node(node_from_raw(make_node("n1", labels={"zone": "a"})))
    assert raised == [ClusterEvent.NODE_UPDATE]
    _park_unschedulable(scheduler, "waiting2", "NodeAffinity")  # the first one was woken
    handlers.on_node(node_from_raw(make_node("n9")))
    assert raised[-1] is ClusterEvent.NODE_ADD
    handlers.on_node_deleted("n9")
    assert scheduler.cluster.node_info("n9") is None


def test_objects_reach_the_cache_and_resign_or_wake_as_they_should() -> None:
    scheduler, handlers, raised = _setup()
    resigned: list[str] = []
    scheduler.resign = lambda namespace: resigned.append(namespace) or 0  # type: ignore[method-assign,func-returns-value]
    _park_unschedulable(scheduler, "waiting", "VolumeBinding")
    service = service_from_raw(
        {
            "metadata": {"name": "web", "namespace": "team", "resourceVersion": "1"},
            "spec": {"selector": {"app": "web"}},
        }
    )
    handlers.on_object(service, None)
    assert scheduler.cluster.workloads.service("team", "web") == service
    assert resigned == ["team"]
    handlers.on_object(dataclasses.replace(service, resource_version="2"), service)
    assert resigned == ["team"]  # nothing read changed: no re-signing
    storage = storage_class_from_raw(
        {"metadata": {"name": "fast", "resourceVersion": "1"}, "provisioner": "x"}
    )
    handlers.on_object(storage, None)
    assert raised == [ClusterEvent.STORAGE_CHANGE]
    budget = pdb_from_raw(
        {
            "metadata": {"name": "web", "namespace": "team", "resourceVersion": "1"},
            "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "web"}}},
            "status": {"disruptionsAllowed": 0},
        }
    )
    handlers.on_object(budget, None)
    assert len(scheduler.cluster.disruption_budgets) == 1
    assert raised == [ClusterEvent.STORAGE_CHANGE]  # budgets wake nobody (kube)
    handlers.on_object_deleted(service)
    assert scheduler.cluster.workloads.service("team", "web") is None
    assert resigned == ["team", "team"]
