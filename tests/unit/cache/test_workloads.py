"""Workloads.default_selector: kube's helper.DefaultSelector, cases from helper/spread_test.go
restated, plus the nil/empty selector and owner-reference rules it relies on."""

from __future__ import annotations

from typing import Any

import pytest

from scheduler.cache.workloads import Workloads
from scheduler.model.labels import LabelSelector, Operator, Requirement
from scheduler.model.parse import controller_from_raw, pod_from_raw, service_from_raw
from scheduler.model.parse_selectors import canonical
from scheduler.model.workloads import ControllerKind
from tests.builders import Raw, make_pod

NS = "test"
POD_LABELS = {"app": "web", "tier": "front"}


def service(name: str, selector: Any, *, namespace: str = NS) -> Raw:
    """A Service or controller dict: both keep their pod selector in ``spec.selector``."""
    spec: Raw = {} if selector is None else {"selector": selector}
    return {"metadata": {"name": name, "namespace": namespace}, "spec": spec}


controller = service


def owned(api_version: str, kind: str, name: str, *, is_controller: bool = True) -> Raw:
    raw = make_pod("p", namespace=NS, labels=POD_LABELS)
    raw["metadata"]["ownerReferences"] = [
        {"apiVersion": api_version, "kind": kind, "name": name, "controller": is_controller}
    ]
    return raw


def equals(**labels: str) -> LabelSelector:
    return LabelSelector(canonical(Requirement(k, Operator.IN, (v,)) for k, v in labels.items()))


RS = ControllerKind.REPLICA_SET
RC = ControllerKind.REPLICATION_CONTROLLER
SS = ControllerKind.STATEFUL_SET
PLAIN = make_pod("p", namespace=NS, labels=POD_LABELS)
RS_OWNED = owned("apps/v1", "ReplicaSet", "rs")
RS_SELECTOR = {"matchLabels": {"rs": "yes"}}


@pytest.mark.parametrize(
    ("services", "controllers", "pod", "want"),
    [
        pytest.param([], [], PLAIN, LabelSelector(), id="nothing-selects-the-pod"),
        pytest.param(
            [service("svc", {"app": "web"})], [], PLAIN, equals(app="web"), id="one-service"
        ),
        pytest.param(
            [service("svc", {"app": "web"}), service("svc2", {"tier": "front"})],
            [],
            PLAIN,
            equals(app="web", tier="front"),
            id="two-services-merge",
        ),
        pytest.param(
            [service("svc", {"app": "db"})], [], PLAIN, LabelSelector(), id="service-not-matching"
        ),
        pytest.param(
            [service("svc", {"app": "web", "extra": "x"})],
            [],
            PLAIN,
            LabelSelector(),
            id="service-needing-a-label-the-pod-lacks",
        ),
        pytest.param(
            [service("svc", None)], [], PLAIN, LabelSelector(), id="nil-service-selector-no-pod"
        ),
        pytest.param(
            [service("svc", {}), service("svc2", {"app": "web"})],
            [],
            PLAIN,
            equals(app="web"),
            id="empty-service-selector-selects-the-pod-but-adds-no-label",
        ),
        pytest.param(
            [service("svc", {"app": "web"}, namespace="other")],
            [],
            PLAIN,
            LabelSelector(),
            id="service-of-another-namespace-is-ignored",
        ),
        pytest.param(
            [service("svc", {"app": "web"})],
            [(RS, controller("rs", RS_SELECTOR))],
            RS_OWNED,
            equals(app="web", rs="yes"),
            id="service-and-owning-replicaset",
        ),
        pytest.param(
            [],
            [(RS, controller("rs", {"matchExpressions": [{"key": "x", "operator": "Exists"}]}))],
            RS_OWNED,
            LabelSelector((Requirement("x", Operator.EXISTS),)),
            id="replicaset-expressions-are-kept",
        ),
        pytest.param(
            [],
            [(RC, controller("rc", {"rc": "yes"}))],
            owned("v1", "ReplicationController", "rc"),
            equals(rc="yes"),
            id="owning-replication-controller",
        ),
        pytest.param(
            [service("svc", {"app": "web"})],
            [(SS, controller("ss", {"matchLabels": {"ss": "yes"}}))],
            owned("apps/v1", "StatefulSet", "ss"),
            equals(app="web", ss="yes"),
            id="service-and-owning-statefulset",
        ),
        pytest.param(
            [],
            [(RS, controller("rs", {"matchLabels": {"app": "web"}}))],
            PLAIN,
            LabelSelector(),
            id="replicaset-matching-the-labels-but-not-owning-is-ignored",
        ),
        pytest.param(
            [],
            [(RS, controller("rs", RS_SELECTOR))],
            owned("apps/v1", "ReplicaSet", "rs", is_controller=False),
            LabelSelector(),
            id="owner-reference-that-is-not-the-controller-is-ignored",
        ),
        pytest.param(
            [],
            [(RS, controller("rs", RS_SELECTOR))],
            owned("apps/v1", "ReplicaSet", "other-rs"),
            LabelSelector(),
            id="owning-replicaset-not-in-the-cache",
        ),
        pytest.param(
            [],
            [(RS, controller("rs", RS_SELECTOR, namespace="other"))],
            RS_OWNED,
            LabelSelector(),
            id="replicaset-of-the-same-name-in-another-namespace",
        ),
        pytest.param(
            [],
            [(RS, controller("rs", RS_SELECTOR))],
            owned("extensions/v1beta1", "ReplicaSet", "rs"),
            LabelSelector(),
            id="api-version-mismatch-is-ignored",
        ),
        pytest.param(
            [],
            [(RS, controller("rs", RS_SELECTOR))],
            owned("apps/v1", "StatefulSet", "rs"),
            LabelSelector(),
            id="kind-mismatch-is-ignored",
        ),
        pytest.param(
            [service("svc", {"app": "web"})],
            [],
            owned("batch/v1", "Job", "job"),
            equals(app="web"),
            id="job-owner-adds-nothing-services-still-count",
        ),
        pytest.param(
            [],
            [(RS, controller("rs", {}))],
            RS_OWNED,
            LabelSelector(),
            id="replicaset-with-empty-selector-adds-nothing",
        ),
        pytest.param(
            [],
            [(RS, controller("rs", None))],
            RS_OWNED,
            LabelSelector(),
            id="replicaset-with-nil-selector-adds-nothing",
        ),
        pytest.param(
            [],
            [(RC, controller("rc", {}))],
            owned("v1", "ReplicationController", "rc"),
            LabelSelector(),
            id="replication-controller-with-empty-selector-adds-nothing",
        ),
    ],
)
def test_default_selector(
    services: list[Raw],
    controllers: list[tuple[ControllerKind, Raw]],
    pod: Raw,
    want: LabelSelector,
) -> None:
    """The selector a pod's default spread constraints get; empty means none apply."""
    workloads = Workloads()
    for raw in services:
        workloads.set_service(service_from_raw(raw))
    for kind, raw in controllers:
        workloads.set_controller(controller_from_raw(raw, kind))
    got = workloads.default_selector(pod_from_raw(pod))
    assert got == want
    assert got.empty is want.empty


def test_removed_service_and_controller_no_longer_select() -> None:
    """Deletes from the watch take a Service or controller out of the DefaultSelector."""
    workloads = Workloads()
    workloads.set_service(service_from_raw(service("svc", {"app": "web"})))
    workloads.set_controller(controller_from_raw(controller("rs", RS_SELECTOR), RS))
    pod = pod_from_raw(RS_OWNED)
    assert workloads.default_selector(pod) == equals(app="web", rs="yes")
    workloads.remove_service(NS, "svc")
    assert workloads.default_selector(pod) == equals(rs="yes")
    workloads.remove_controller(RS, NS, "rs")
    assert workloads.default_selector(pod).empty
    workloads.remove_service(NS, "svc")  # removing twice is harmless
    assert workloads.service(NS, "svc") is None


def test_updated_service_replaces_the_old_selector() -> None:
    """A Service set again under its name replaces, not adds to, what it selected."""
    workloads = Workloads()
    workloads.set_service(service_from_raw(service("svc", {"app": "web"})))
    workloads.set_service(service_from_raw(service("svc", {"tier": "front"})))
    assert workloads.default_selector(pod_from_raw(PLAIN)) == equals(tier="front")
