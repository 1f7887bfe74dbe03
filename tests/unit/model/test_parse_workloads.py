"""parse_workloads: Services, pod controllers, Namespaces and a pod's controller reference;
bad input names the object and the field."""

from __future__ import annotations

from typing import Any

import pytest

from scheduler.model.errors import ModelError
from scheduler.model.labels import LabelSelector, Operator, Requirement
from scheduler.model.parse import (
    controller_from_raw,
    namespace_from_raw,
    pod_from_raw,
    service_from_raw,
)
from scheduler.model.workloads import ControllerKind, ControllerRef
from tests.builders import Raw, make_pod

RS = ControllerKind.REPLICA_SET
RC = ControllerKind.REPLICATION_CONTROLLER
SS = ControllerKind.STATEFUL_SET


def obj(name: str | None = "w", namespace: str | None = "ns", **spec: Any) -> Raw:
    meta: Raw = {"resourceVersion": "7"}
    if name is not None:
        meta["name"] = name
    if namespace is not None:
        meta["namespace"] = namespace
    return {"metadata": meta, "spec": spec}


def with_owners(*owners: Any) -> Raw:
    raw = make_pod("p", namespace="ns")
    raw["metadata"]["ownerReferences"] = list(owners)
    return raw


# -- records ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "selector"),
    [
        pytest.param(obj(), None, id="no-selector-is-nil"),
        pytest.param(obj(selector=None), None, id="null-selector-is-nil"),
        pytest.param(obj(selector={}), {}, id="empty-selector-is-kept-empty"),
        pytest.param(obj(selector={"app": "web"}), {"app": "web"}, id="label-map"),
    ],
)
def test_service_selector(raw: Raw, selector: dict[str, str] | None) -> None:
    """nil (selects nothing) and empty (selects the namespace) stay apart."""
    svc = service_from_raw(raw)
    assert (svc.namespace, svc.name, svc.resource_version) == ("ns", "w", "7")
    assert svc.selector == selector


def test_service_namespace_defaults_to_default() -> None:
    assert service_from_raw(obj(namespace=None)).namespace == "default"


@pytest.mark.parametrize(
    ("kind", "raw", "want"),
    [
        pytest.param(
            RC,
            obj(selector={"b": "2", "a": "1"}),
            LabelSelector(
                (Requirement("a", Operator.IN, ("1",)), Requirement("b", Operator.IN, ("2",)))
            ),
            id="replication-controller-map-becomes-equalities",
        ),
        pytest.param(RC, obj(), LabelSelector(), id="replication-controller-without-selector"),
        pytest.param(
            RS,
            obj(selector={"matchLabels": {"a": "1"}}),
            LabelSelector((Requirement("a", Operator.IN, ("1",)),)),
            id="replicaset-label-selector",
        ),
        pytest.param(RS, obj(), LabelSelector(), id="replicaset-nil-selector-is-empty"),
        pytest.param(
            SS,
            obj(selector={"matchExpressions": [{"key": "a", "operator": "Exists"}]}),
            LabelSelector((Requirement("a", Operator.EXISTS),)),
            id="statefulset-expressions",
        ),
    ],
)
def test_controller_selector(kind: ControllerKind, raw: Raw, want: LabelSelector) -> None:
    c = controller_from_raw(raw, kind)
    assert (c.kind, c.namespace, c.name, c.resource_version) == (kind, "ns", "w", "7")
    assert c.selector == want


def test_namespace_labels() -> None:
    ns = namespace_from_raw({"metadata": {"name": "team", "labels": {"env": "prod"}}})
    assert (ns.name, dict(ns.labels)) == ("team", {"env": "prod"})


@pytest.mark.parametrize(
    ("owners", "want"),
    [
        pytest.param([], None, id="no-owners"),
        pytest.param(
            [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs"}],
            None,
            id="owner-without-controller-flag",
        ),
        pytest.param(
            [
                {"apiVersion": "v1", "kind": "ConfigMap", "name": "cm", "controller": False},
                {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs", "controller": True},
            ],
            ControllerRef("apps/v1", "ReplicaSet", "rs"),
            id="the-controller-among-owners",
        ),
    ],
)
def test_controller_ref(owners: list[Raw], want: ControllerRef | None) -> None:
    """metav1.GetControllerOf: the owner reference with ``controller: true``."""
    assert pod_from_raw(with_owners(*owners)).controller_ref == want


@pytest.mark.parametrize(
    ("ref", "kind"),
    [
        pytest.param(ControllerRef("apps/v1", "ReplicaSet", "x"), RS, id="replicaset"),
        pytest.param(ControllerRef("apps/v1", "StatefulSet", "x"), SS, id="statefulset"),
        pytest.param(ControllerRef("v1", "ReplicationController", "x"), RC, id="rc"),
        pytest.param(ControllerRef("extensions/v1beta1", "ReplicaSet", "x"), None, id="old-rs"),
        pytest.param(ControllerRef("apps/v1", "Deployment", "x"), None, id="deployment"),
        pytest.param(ControllerRef("batch/v1", "Job", "x"), None, id="job"),
    ],
)
def test_controller_kind(ref: ControllerRef, kind: ControllerKind | None) -> None:
    """Only the group/version/kinds DefaultSelector reads are recognised."""
    assert ref.controller_kind == kind


# -- errors name object and field ---------------------------------------------------------


@pytest.mark.parametrize(
    ("parse", "raw", "obj_name", "field"),
    [
        pytest.param(service_from_raw, "svc", "Service <unnamed>", "", id="service-not-an-object"),
        pytest.param(service_from_raw, obj(name=None), "Service ns/<unnamed>", "metadata.name"),
        pytest.param(
            service_from_raw,
            obj(selector={"app": 1}),
            "Service ns/w",
            "spec.selector.app",
            id="service-selector-value-not-a-string",
        ),
        pytest.param(
            service_from_raw,
            obj(selector=["app"]),
            "Service ns/w",
            "spec.selector",
            id="service-selector-not-a-map",
        ),
        pytest.param(
            service_from_raw,
            {"metadata": {"name": "w", "namespace": "ns"}, "spec": "x"},
            "Service ns/w",
            "spec",
            id="service-spec-not-an-object",
        ),
        pytest.param(
            lambda raw: controller_from_raw(raw, RS),
            obj(selector={"matchExpressions": [{"key": "a", "operator": "Near"}]}),
            "ReplicaSet ns/w",
            "spec.selector.matchExpressions[0].operator",
            id="replicaset-bad-operator",
        ),
        pytest.param(
            lambda raw: controller_from_raw(raw, SS),
            obj(selector="app=web"),
            "StatefulSet ns/w",
            "spec.selector",
            id="statefulset-selector-not-an-object",
        ),
        pytest.param(
            lambda raw: controller_from_raw(raw, RC),
            obj(selector={"app": None}),
            "ReplicationController ns/w",
            "spec.selector.app",
            id="replication-controller-null-value",
        ),
        pytest.param(
            namespace_from_raw,
            {"metadata": {"name": "team", "labels": {"env": 3}}},
            "Namespace team",
            "metadata.labels.env",
            id="namespace-label-not-a-string",
        ),
        pytest.param(
            pod_from_raw,
            with_owners({"apiVersion": "v1", "kind": "X", "name": "x", "controller": "yes"}),
            "Pod ns/p",
            "metadata.ownerReferences[0].controller",
            id="owner-controller-not-a-boolean",
        ),
        pytest.param(
            pod_from_raw,
            with_owners("rs"),
            "Pod ns/p",
            "metadata.ownerReferences[0]",
            id="owner-not-an-object",
        ),
    ],
)
def test_errors_name_object_and_field(parse: Any, raw: Any, obj_name: str, field: str) -> None:
    with pytest.raises(ModelError) as caught:
        parse(raw)
    assert (caught.value.obj, caught.value.field) == (obj_name, field)
