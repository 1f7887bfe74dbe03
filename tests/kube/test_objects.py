"""ObjectEvents: Namespaces, Services and pod controllers from watch events into the cache.

Driven with raw events as kopf hands them over (type ``None`` for listed objects); the
Scheduler is the real one (``tests.harness``), with ``resign`` recorded to see which changes
re-sign a namespace's queued pods.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from scheduler.batching.signature import is_exact
from scheduler.cycle.eventhandlers import EventHandlers
from scheduler.kube.controller.objects import PARSERS, ObjectEvents
from scheduler.kube.kinds import Kind, key_of
from scheduler.metrics.registry import Metrics
from scheduler.model.parse import pod_from_raw
from scheduler.model.workloads import ControllerKind
from tests.builders import make_pod
from tests.harness import scheduler_for

if TYPE_CHECKING:
    from scheduler.cycle.schedule_one import Scheduler

Raw = dict[str, Any]
CONTROLLERS = {
    Kind.REPLICATION_CONTROLLERS: ControllerKind.REPLICATION_CONTROLLER,
    Kind.REPLICA_SETS: ControllerKind.REPLICA_SET,
    Kind.STATEFUL_SETS: ControllerKind.STATEFUL_SET,
}


def _meta(name: str, version: str, namespace: str | None = "team") -> Raw:
    meta: Raw = {"name": name, "resourceVersion": version}
    if namespace is not None:
        meta["namespace"] = namespace
    return meta


def service(name: str, version: str, selector: object = None, **extra: Any) -> Raw:
    spec: Raw = {"type": "ClusterIP", **extra}
    if selector is not None:
        spec["selector"] = selector
    return {"apiVersion": "v1", "kind": "Service", "metadata": _meta(name, version), "spec": spec}


def controller(kind: Kind, name: str, version: str, app: str, **status: Any) -> Raw:
    selector: object = {"app": app}
    if kind is not Kind.REPLICATION_CONTROLLERS:
        selector = {"matchLabels": {"app": app}}
    return {
        "metadata": _meta(name, version),
        "spec": {"replicas": 3, "selector": selector},
        "status": status,
    }


def namespace(name: str, version: str, labels: dict[str, str]) -> Raw:
    return {"metadata": {**_meta(name, version, None), "labels": labels}}


class Resigns:
    """Stands in for ``Scheduler.resign``: records the namespaces re-signed."""

    def __init__(self, scheduler: Scheduler) -> None:
        self.calls: list[str] = []
        scheduler.resign = self  # type: ignore[method-assign]

    def __call__(self, namespace: str) -> int:
        self.calls.append(namespace)
        return 0


def _events(kind: Kind, metrics: Metrics | None = None) -> tuple[ObjectEvents, Scheduler, Resigns]:
    scheduler, _, _ = scheduler_for([])
    return (
        ObjectEvents(EventHandlers(scheduler), kind, metrics=metrics or scheduler.metrics),
        scheduler,
        Resigns(scheduler),
    )


def test_targets_cover_every_kind_but_pods_and_nodes() -> None:
    """One applier for the five kinds; pods and nodes keep appliers of their own."""
    assert set(PARSERS) == set(Kind) - {Kind.PODS, Kind.NODES}


def test_a_service_is_cached_and_its_namespace_resigned() -> None:
    """Add, selector change and delete each re-sign; the lookup follows."""
    events, scheduler, resigns = _events(Kind.SERVICES)
    workloads = scheduler.cluster.workloads
    events.apply(None, service("web", "10", {"app": "web"}))
    cached = workloads.service("team", "web")
    assert cached is not None
    assert cached.selector == {"app": "web"}
    events.apply("MODIFIED", service("web", "11", {"app": "api"}))
    cached = workloads.service("team", "web")
    assert cached is not None
    assert cached.selector == {"app": "api"}
    events.apply("DELETED", service("web", "12", {"app": "api"}))
    assert workloads.service("team", "web") is None
    assert resigns.calls == ["team", "team", "team"]
    assert events.held() == {}


def test_an_update_that_changes_nothing_read_refreshes_only_the_version() -> None:
    """A ReplicaSet's status moves on every replica change: no re-sign; the cached record
    takes the newest resourceVersion (writes that carry it must not meet 409)."""
    events, scheduler, resigns = _events(Kind.REPLICA_SETS)
    events.apply("ADDED", controller(Kind.REPLICA_SETS, "web-5d8", "20", "web"))
    for version, ready in (("21", 1), ("22", 2), ("23", 3)):
        raw = controller(Kind.REPLICA_SETS, "web-5d8", version, "web", readyReplicas=ready)
        events.apply("MODIFIED", raw)
    assert resigns.calls == ["team"]
    assert events.version("team/web-5d8") == "23"  # the Replace compares the newest
    cached = scheduler.cluster.workloads.controller(ControllerKind.REPLICA_SET, "team", "web-5d8")
    assert cached is not None
    assert cached.resource_version == "23"


def test_a_relisted_object_at_an_applied_version_is_skipped_unparsed() -> None:
    """kopf lists again after our LIST: the same version is not even parsed (a bad copy at
    that version would otherwise count as a bad object)."""
    metrics = Metrics()
    events, _, resigns = _events(Kind.SERVICES, metrics)
    events.apply(None, service("web", "10", {"app": "web"}))
    events.apply(None, service("web", "10", {"app": 7}))  # unreadable, but already applied
    assert (
        metrics.registry.get_sample_value("batch_scheduler_bad_objects_total", {"kind": "Service"})
        is None
    )
    assert resigns.calls == ["team"]


@pytest.mark.parametrize("kind", list(CONTROLLERS), ids=str)
def test_each_controller_kind_is_cached_under_its_kind(kind: Kind) -> None:
    """RC (a label map), ReplicaSet and StatefulSet (a LabelSelector) alike."""
    events, scheduler, resigns = _events(kind)
    events.apply(None, controller(kind, "db", "5", "db"))
    cached = scheduler.cluster.workloads.controller(CONTROLLERS[kind], "team", "db")
    assert cached is not None
    assert [(r.key, r.values) for r in cached.selector.requirements] == [("app", ("db",))]
    events.apply("MODIFIED", controller(kind, "db", "6", "db2"))
    events.remove("team/db")
    assert scheduler.cluster.workloads.controller(CONTROLLERS[kind], "team", "db") is None
    assert resigns.calls == ["team"] * 3


@pytest.mark.parametrize(
    ("kind", "raw", "field"),
    [
        pytest.param(
            Kind.SERVICES, service("web", "2", {"app": 7}), "spec.selector", id="service-selector"
        ),
        pytest.param(
            Kind.REPLICA_SETS,
            {
                "metadata": _meta("web", "2"),
                "spec": {"selector": {"matchExpressions": [{"key": "a", "operator": "Near"}]}},
            },
            "spec.selector",
            id="replicaset-selector-operator",
        ),
        pytest.param(
            Kind.NAMESPACES,
            {"metadata": {**_meta("web", "2", None), "labels": ["x"]}},
            "metadata.labels",
            id="namespace-labels",
        ),
    ],
)
def test_a_bad_object_is_counted_once_named_and_its_stale_copy_dropped(
    kind: Kind, raw: Raw, field: str, caplog: pytest.LogCaptureFixture
) -> None:
    """One warning naming object and field, one count by kind, the old copy leaves."""
    metrics = Metrics()
    events, scheduler, _ = _events(kind, metrics)
    good = {
        Kind.SERVICES: service("web", "1", {"app": "web"}),
        Kind.REPLICA_SETS: controller(Kind.REPLICA_SETS, "web", "1", "web"),
        Kind.NAMESPACES: namespace("web", "1", {"team": "a"}),
    }[kind]
    events.apply("ADDED", good)
    key = key_of(kind, good)
    assert events.version(key) == "1"
    events.apply("MODIFIED", raw)
    events.apply("MODIFIED", raw)  # the same problem again: no second count
    assert events.version(key) is None
    counted = metrics.registry.get_sample_value(
        "batch_scheduler_bad_objects_total", {"kind": kind.kind_name}
    )
    assert counted == 1
    warnings = [r for r in caplog.records if "bad_object_skipped" in r.getMessage()]
    assert len(warnings) == 1
    assert field in warnings[0].getMessage()
    assert kind.kind_name in warnings[0].getMessage()
    workloads = scheduler.cluster.workloads
    assert workloads.service("team", "web") is None
    assert workloads.controller(ControllerKind.REPLICA_SET, "team", "web") is None
    assert scheduler.cluster.snapshot.namespace_labels("web") == {}


def test_namespace_labels_reach_the_snapshot_and_resign_nothing() -> None:
    """namespaceSelector reads Namespace labels; no signature depends on them."""
    events, scheduler, resigns = _events(Kind.NAMESPACES)
    events.apply(None, namespace("prod", "1", {"env": "prod"}))
    assert scheduler.cluster.snapshot.namespace_labels("prod") == {"env": "prod"}
    events.apply("MODIFIED", namespace("prod", "2", {"env": "staging"}))
    assert scheduler.cluster.snapshot.namespace_labels("prod") == {"env": "staging"}
    events.apply("DELETED", namespace("prod", "3", {"env": "staging"}))
    assert scheduler.cluster.snapshot.namespace_labels("prod") == {}
    assert resigns.calls == []


def test_a_namespaced_object_without_a_namespace_is_in_default() -> None:
    """The key follows the parser: no namespace means ``default``."""
    events, scheduler, _ = _events(Kind.SERVICES)
    raw = service("web", "1", {"app": "web"})
    del raw["metadata"]["namespace"]
    events.apply(None, raw)
    assert set(events.held()) == {"default/web"}
    assert scheduler.cluster.workloads.service("default", "web") is not None


def test_a_controller_arriving_after_its_pod_re_signs_the_queued_pod_exact() -> None:
    """Watches of different kinds race: a pod queued before its ReplicaSet is known is
    re-signed when the ReplicaSet comes (kube's System defaults then apply: a signature only
    the exact batch serves), and again when it goes."""
    scheduler, _, _ = scheduler_for([])
    raw = make_pod("web-5d8-x", namespace="team", labels={"app": "web"}, batching=True)
    raw["metadata"]["ownerReferences"] = [
        {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-5d8", "controller": True}
    ]
    scheduler.enqueue(pod_from_raw(raw))
    [info] = scheduler.queue.queued()
    assert info.signature is not None
    events = ObjectEvents(EventHandlers(scheduler), Kind.REPLICA_SETS, metrics=scheduler.metrics)
    plain = info.signature
    assert not is_exact(plain)
    events.apply("ADDED", controller(Kind.REPLICA_SETS, "web-5d8", "1", "web"))
    assert info.signature is not None
    assert is_exact(info.signature)
    assert scheduler.default_spreading_unsignable() == 0  # the exact batch serves it
    events.apply("DELETED", controller(Kind.REPLICA_SETS, "web-5d8", "2", "web"))
    assert info.signature == plain


def test_a_claim_updated_in_metadata_only_keeps_the_newest_version_and_wakes_nothing() -> None:
    """A PVC whose annotations change (nothing we read): the cache holds the new
    resourceVersion, which PreBind's patch carries; no unschedulable pod is woken."""
    events, scheduler, _ = _events(Kind.PERSISTENT_VOLUME_CLAIMS)
    wakes: list[object] = []
    events.handlers._wake = wakes.append  # type: ignore[method-assign]

    def claim(version: str, volume: str = "", **annotations: str) -> Raw:
        meta = {**_meta("data", version), "annotations": annotations}
        spec: Raw = {"accessModes": ["ReadWriteOnce"]}
        spec["resources"] = {"requests": {"storage": "1Gi"}}
        if volume:
            spec["volumeName"] = volume
        return {"metadata": meta, "spec": spec, "status": {"phase": "Pending"}}

    events.apply("ADDED", claim("5"))
    events.apply("MODIFIED", claim("6", note="touched"))
    cached = scheduler.cluster.volumes.pvc("team", "data")
    assert cached is not None
    assert cached.resource_version == "6"
    assert len(wakes) == 1  # the add only
    events.apply("MODIFIED", claim("7", volume="pv-1", note="touched"))
    assert len(wakes) == 2
