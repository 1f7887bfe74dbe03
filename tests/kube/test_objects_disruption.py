"""ObjectEvents for PodDisruptionBudgets (into the cache preemption reads, waking no pod), and
the storage kinds' own cluster event (waking only pods a volume plugin rejected)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from scheduler.cycle.eventhandlers import EventHandlers
from scheduler.kube.controller.objects import ObjectEvents
from scheduler.kube.kinds import Kind
from scheduler.model.parse import pod_from_raw
from scheduler.queueing.queued_pod import Pool
from tests.builders import make_pod
from tests.harness import scheduler_for

if TYPE_CHECKING:
    from scheduler.cycle.schedule_one import Scheduler

Raw = dict[str, Any]


def budget(version: str, allowed: int) -> Raw:
    return {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": "web", "namespace": "team", "resourceVersion": version},
        "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "web"}}},
        "status": {"disruptionsAllowed": allowed},
    }


def _unschedulable(scheduler: Scheduler, name: str, plugin: str) -> None:
    scheduler.queue.add(pod_from_raw(make_pod(name)), None)
    group = scheduler.queue.try_pop()
    assert group is not None
    (info,) = group
    scheduler.queue.requeue_unschedulable(info, frozenset({plugin}))


def test_a_budget_and_its_status_reach_the_cache_and_wake_no_pod() -> None:
    """disruptionsAllowed is what preemption reads: a status change replaces the record;
    kube registers no scheduling event for budgets, so no pod moves and none is re-signed."""
    scheduler, _, _ = scheduler_for([])
    resigned: list[str] = []
    scheduler.resign = lambda namespace: resigned.append(namespace) or 0  # type: ignore[method-assign]
    _unschedulable(scheduler, "waiting", "NodeResourcesFit")
    events = ObjectEvents(
        EventHandlers(scheduler), Kind.POD_DISRUPTION_BUDGETS, metrics=scheduler.metrics
    )
    budgets = scheduler.cluster.disruption_budgets
    events.apply(None, budget("1", 0))
    (held,) = budgets.list()
    assert (held.key, held.disruptions_allowed) == ("team/web", 0)
    events.apply("MODIFIED", budget("2", 2))
    assert [b.disruptions_allowed for b in budgets.list()] == [2]
    events.apply("DELETED", budget("3", 2))
    assert len(budgets) == 0
    assert scheduler.queue.pending()[Pool.UNSCHEDULABLE] == 1
    assert resigned == []


def test_a_storage_change_wakes_only_pods_a_volume_plugin_rejected() -> None:
    scheduler, _, _ = scheduler_for([])
    _unschedulable(scheduler, "needs-cpu", "NodeResourcesFit")
    _unschedulable(scheduler, "needs-volume", "VolumeBinding")
    _unschedulable(scheduler, "needs-zone", "VolumeZone")
    events = ObjectEvents(EventHandlers(scheduler), Kind.STORAGE_CLASSES, metrics=scheduler.metrics)
    events.apply(
        "ADDED",
        {
            "apiVersion": "storage.k8s.io/v1",
            "kind": "StorageClass",
            "metadata": {"name": "fast", "resourceVersion": "1"},
            "provisioner": "x",
        },
    )
    pending = scheduler.queue.pending()
    assert pending[Pool.UNSCHEDULABLE] == 1
    waiting = scheduler.queue.get(pod_from_raw(make_pod("needs-cpu")).uid)
    assert waiting is not None
    assert waiting.pool is Pool.UNSCHEDULABLE
