"""CacheSync for the kinds besides pods and nodes (namespaces, services, pod controllers),
against the emulator: the initial LIST in ``Kind`` order, the Replace and the safety net.

As in ``test_sync``, no watch runs: an object deleted in the emulator after a LIST is an event
lost in a gap, which only a reconciling LIST can bring back.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from scheduler.cycle.eventhandlers import EventHandlers
from scheduler.kube.controller.nodes import NodeEvents
from scheduler.kube.controller.objects import PARSERS, ObjectEvents
from scheduler.kube.controller.pods import PodEvents
from scheduler.kube.controller.sync import CacheSync, Synced
from scheduler.kube.kinds import Kind
from scheduler.kube.listing import Cause
from scheduler.metrics.registry import Metrics
from scheduler.model.workloads import ControllerKind
from scheduler.sim.discovery import REPLICA_SETS, SERVICES
from tests.harness import scheduler_for
from tests.kube.kube_helpers import create_pod

if TYPE_CHECKING:
    from collections.abc import Mapping

    from scheduler.cycle.schedule_one import Scheduler
    from scheduler.kube.client import ApiClient
    from scheduler.sim.server import SimServer

LABELS = {"app": "web"}
TEMPLATE = {
    "metadata": {"labels": LABELS},
    "spec": {
        "schedulerName": "nobody",  # pods the sim's controllers make stay pending, not ours
        "containers": [{"name": "main", "image": "registry.k8s.io/pause:3.10"}],
    },
}


SERVED = [kind for kind in Kind if kind is not Kind.COSCHEDULING_POD_GROUPS]
"""The kinds the emulator serves: all but Coscheduling's CRD."""


def _sync(api: ApiClient, scheduler: Scheduler, metrics: Metrics | None = None) -> CacheSync:
    return CacheSync(
        api,
        pods=PodEvents(
            EventHandlers(scheduler), metrics=scheduler.metrics, reporter=scheduler.reporter
        ),
        nodes=NodeEvents(EventHandlers(scheduler), metrics=scheduler.metrics),
        objects=[
            ObjectEvents(EventHandlers(scheduler), kind, metrics=metrics or scheduler.metrics)
            for kind in PARSERS
            if kind in SERVED
        ],
        synced=Synced(),
        interval=60.0,
        metrics=metrics or scheduler.metrics,
    )


async def _create_workloads(api: ApiClient) -> None:
    """A labelled namespace, and in it a Service, an RC, a ReplicaSet, a StatefulSet; one
    object of each storage kind; a PodGroup; a PodDisruptionBudget; one object of each DRA
    kind."""
    await api.request(
        "POST", "/api/v1/namespaces", body={"metadata": {"name": "team", "labels": {"env": "a"}}}
    )
    ns = "/api/v1/namespaces/team"
    apps = "/apis/apps/v1/namespaces/team"
    selector = {"matchLabels": LABELS}
    bodies: list[tuple[str, dict[str, Any]]] = [
        (f"{ns}/services", {"spec": {"selector": LABELS, "ports": [{"port": 80}]}}),
        (
            f"{ns}/replicationcontrollers",
            {"spec": {"replicas": 1, "selector": LABELS, "template": TEMPLATE}},
        ),
        (
            f"{apps}/replicasets",
            {"spec": {"replicas": 1, "selector": selector, "template": TEMPLATE}},
        ),
        (
            f"{apps}/statefulsets",
            {
                "spec": {
                    "replicas": 1,
                    "serviceName": "web",
                    "selector": selector,
                    "template": TEMPLATE,
                }
            },
        ),
    ]
    storage = "/apis/storage.k8s.io/v1"
    bodies += [
        (f"{storage}/storageclasses", {"provisioner": "kubernetes.io/no-provisioner"}),
        ("/api/v1/persistentvolumes", {"spec": {"capacity": {"storage": "1Gi"}}}),
        (f"{ns}/persistentvolumeclaims", {"spec": {"accessModes": ["ReadWriteOnce"]}}),
        (f"{storage}/csinodes", {"spec": {"drivers": []}}),
        (
            "/apis/scheduling.k8s.io/v1beta1/namespaces/team/podgroups",
            {"spec": {"schedulingPolicy": {"gang": {"minCount": 2}}}},
        ),
        (
            "/apis/policy/v1/namespaces/team/poddisruptionbudgets",
            {"spec": {"minAvailable": 1, "selector": selector}},
        ),
    ]
    dra = "/apis/resource.k8s.io/v1"
    request = {"name": "r", "exactly": {"deviceClassName": "web"}}
    pool = {"name": "p", "generation": 1, "resourceSliceCount": 1}
    bodies += [
        (f"{dra}/deviceclasses", {"spec": {}}),
        (f"{dra}/resourceslices", {"spec": {"driver": "d", "allNodes": True, "pool": pool}}),
        (f"{dra}/namespaces/team/resourceclaims", {"spec": {"devices": {"requests": [request]}}}),
    ]
    for path, body in bodies:
        await api.request("POST", path, body={"metadata": {"name": "web"}, **body})


class Order:
    """Wraps each applier's ``apply`` to record the kinds in the order they were applied."""

    def __init__(self, sync: CacheSync) -> None:
        self.kinds: list[Kind] = []
        for kind, applier in sync.appliers.items():
            inner = applier.apply

            def apply(
                event_type: str | None,
                raw: Mapping[str, object],
                kind: Kind = kind,
                inner: Any = inner,
            ) -> None:
                if not self.kinds or self.kinds[-1] is not kind:
                    self.kinds.append(kind)
                inner(event_type, raw)

            applier.apply = apply  # type: ignore[method-assign]


async def test_the_initial_list_covers_every_kind_nodes_first_pods_last(
    sim: SimServer, api: ApiClient
) -> None:
    """Every informer of kube's is listed before the gate; workloads before pods, so pods are
    signed with the Services and controllers that select them already known."""
    scheduler, _, _ = scheduler_for([])
    sync = _sync(api, scheduler)
    await _create_workloads(api)
    await create_pod(api, "listed", cpu="1")  # the emulator's controllers may not have yet
    order = Order(sync)
    await sync.initial()
    assert order.kinds == SERVED
    assert set(sync.expected) == set(SERVED)
    assert all(sync.expected[kind] >= 1 for kind in SERVED)
    workloads = scheduler.cluster.workloads
    assert workloads.service("team", "web") is not None
    for kind in ControllerKind:
        assert workloads.controller(kind, "team", "web") is not None, kind
    assert scheduler.cluster.snapshot.namespace_labels("team")["env"] == "a"
    assert scheduler.cluster.disruption_budgets.keys() == {"team/web"}


async def test_replace_drops_workloads_deleted_during_a_gap(sim: SimServer, api: ApiClient) -> None:
    """A Service and a ReplicaSet deleted while no watch ran leave with the Replace, which
    re-signs their namespace's queued pods."""
    scheduler, _, _ = scheduler_for([])
    sync = _sync(api, scheduler)
    await _create_workloads(api)
    await sync.initial()
    resigned: list[str] = []
    resign = scheduler.resign

    def recording(namespace: str) -> int:
        resigned.append(namespace)
        return resign(namespace)

    scheduler.resign = recording  # type: ignore[method-assign]
    sim.run_sync(lambda: sim.store.delete(SERVICES, "team", "web"))
    sim.run_sync(lambda: sim.store.delete(REPLICA_SETS, "team", "web"))

    assert await sync.replace(Kind.SERVICES, cause=Cause.LISTED) == 1
    assert await sync.replace(Kind.REPLICA_SETS, cause=Cause.WATCH_RESTART) == 1
    assert await sync.replace(Kind.STATEFUL_SETS, cause=Cause.LISTED) == 0
    workloads = scheduler.cluster.workloads
    assert workloads.service("team", "web") is None
    assert workloads.controller(ControllerKind.REPLICA_SET, "team", "web") is None
    assert workloads.controller(ControllerKind.STATEFUL_SET, "team", "web") is not None
    assert resigned == ["team", "team"]


async def test_the_safety_net_counts_missed_workloads_by_kind(
    sim: SimServer, api: ApiClient
) -> None:
    """batch_scheduler_cache_repairs_total{kind="service"}: the new kinds are repaired too."""
    scheduler, _, _ = scheduler_for([])
    metrics = Metrics()
    sync = _sync(api, scheduler, metrics)
    await _create_workloads(api)
    await sync.initial()
    sim.run_sync(lambda: sim.store.delete(SERVICES, "team", "web"))
    repaired = await sync.repair(grace=0.0)
    assert repaired[Kind.SERVICES] == 1
    assert sum(repaired.values()) == 1
    value = metrics.registry.get_sample_value
    assert value("batch_scheduler_cache_repairs_total", {"kind": "service"}) == 1
    assert scheduler.cluster.workloads.service("team", "web") is None
