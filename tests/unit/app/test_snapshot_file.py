"""``app.snapshot_file``: a snapshot as kubectl prints it or as written by hand, read whole."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest
import yaml

from scheduler.app.snapshot_file import (
    NAMESPACE_NAME_LABEL,
    InputError,
    read_snapshot_file,
    snapshot_from_documents,
)
from scheduler.model.workloads import ControllerKind
from tests.builders import make_node, make_pod

if TYPE_CHECKING:
    from pathlib import Path

    from scheduler.app.snapshot_file import Snapshot

OURS = {"batch-scheduler"}


def _service(name: str, selector: object, namespace: str = "default") -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"selector": selector, "ports": [{"port": 80}]},
    }


def _controller(
    kind: str, name: str, selector: object, api_version: str = "apps/v1"
) -> dict[str, Any]:
    return {
        "apiVersion": api_version,
        "kind": kind,
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"replicas": 2, "selector": selector},
    }


def _namespace(name: str, **labels: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": labels}}


def _other(kind: str, name: str = "x", api_version: str = "v1") -> dict[str, Any]:
    return {"apiVersion": api_version, "kind": kind, "metadata": {"name": name}}


def _kubectl_list(*items: object) -> dict[str, Any]:
    """What ``kubectl get a,b,c -A -o yaml`` prints: one v1 List."""
    return {"apiVersion": "v1", "kind": "List", "items": list(items), "metadata": {}}


def _everything() -> list[dict[str, Any]]:
    return [
        _namespace("default", team="blue"),
        make_node("n1"),
        make_pod("running", node_name="n1"),
        make_pod("pending", labels={"app": "web"}),
        make_pod("theirs", scheduler_name="default-scheduler"),
        _service("web", {"app": "web"}),
        _controller("ReplicaSet", "web-1", {"matchLabels": {"app": "web"}}),
        _controller("StatefulSet", "db", {"matchLabels": {"app": "db"}}),
        _controller("ReplicationController", "old", {"app": "old"}, api_version="v1"),
        _other("ConfigMap", "a"),
        _other("ConfigMap", "b"),
        _other("Deployment", api_version="apps/v1"),
    ]


def _summary(snapshot: Snapshot) -> dict[str, object]:
    return {
        "nodes": [n.name for n in snapshot.nodes],
        "running": [p.key for p in snapshot.running],
        "pending": [p.key for p in snapshot.pending],
        "namespaces": {ns.name: dict(ns.labels) for ns in snapshot.namespaces},
        "services": [(s.namespace, s.name) for s in snapshot.services],
        "controllers": [(c.kind, c.name) for c in snapshot.controllers],
        "ignored": snapshot.ignored,
    }


EXPECTED = {
    "nodes": ["n1"],
    "running": ["default/running"],
    "pending": ["default/pending"],
    "namespaces": {"default": {"team": "blue", NAMESPACE_NAME_LABEL: "default"}},
    "services": [("default", "web")],
    "controllers": [
        (ControllerKind.REPLICA_SET, "web-1"),
        (ControllerKind.STATEFUL_SET, "db"),
        (ControllerKind.REPLICATION_CONTROLLER, "old"),
    ],
    "ignored": {"ConfigMap": 2, "Deployment": 1},
}


@pytest.mark.parametrize(
    "docs",
    [
        pytest.param(_everything(), id="multi-document"),
        pytest.param([_kubectl_list(*_everything())], id="kubectl-List"),
        pytest.param(
            [_kubectl_list(*_everything()[:5]), None, *_everything()[5:]], id="List-and-documents"
        ),
        pytest.param(
            [_kubectl_list(_kubectl_list(*_everything()[:6]), *_everything()[6:])],
            id="List-in-List",
        ),
    ],
)
def test_list_and_multi_document_read_the_same(docs: list[object]) -> None:
    """A kubectl List, plain documents, or a mix: the same records, the same ignored counts."""
    assert _summary(snapshot_from_documents(docs, OURS)) == EXPECTED


def test_typed_list_items_may_leave_out_their_kind() -> None:
    """The API server's PodList/ReplicaSetList items carry no kind; the list's is theirs."""
    pods = [make_pod("a", node_name="n1"), make_pod("b")]
    replica_sets = [_controller("ReplicaSet", "rs", {"matchLabels": {"app": "x"}})]
    for item in (*pods, *replica_sets):
        del item["kind"], item["apiVersion"]
    docs: list[object] = [
        {"apiVersion": "v1", "kind": "PodList", "items": pods},
        {"apiVersion": "apps/v1", "kind": "ReplicaSetList", "items": replica_sets},
        {"apiVersion": "v1", "kind": "ConfigMapList", "items": [{"metadata": {"name": "c"}}]},
        {"apiVersion": "v1", "kind": "List", "items": None},
    ]
    snapshot = snapshot_from_documents(docs, OURS)
    assert [p.key for p in snapshot.running] == ["default/a"]
    assert [p.key for p in snapshot.pending] == ["default/b"]
    assert [c.name for c in snapshot.controllers] == ["rs"]
    assert snapshot.ignored == {"ConfigMap": 1}


def test_future_kinds_and_other_groups_are_ignored_by_name() -> None:
    """Kinds not used are counted (PriorityClasses: admission already wrote spec.priority);
    a same-named kind of another group is not ours."""
    docs: list[object] = [
        _other("PriorityClass", api_version="scheduling.k8s.io/v1"),
        _other("PodDisruptionBudget", api_version="example.com/v1"),
        _other("Event"),
        _other("Event", api_version="events.k8s.io/v1"),
        {**_service("ksvc", "not a selector"), "apiVersion": "serving.knative.dev/v1"},
    ]
    snapshot = snapshot_from_documents(docs, OURS)
    assert snapshot.services == []
    assert snapshot.ignored == {
        "PriorityClass": 1,
        "PodDisruptionBudget.example.com": 1,
        "Event": 2,
        "Service.serving.knative.dev": 1,
    }


def test_namespaces_get_what_the_api_server_would_give_them() -> None:
    """The metadata.name label on every Namespace; a Namespace for every namespace in use."""
    docs: list[object] = [
        _namespace("team-a", **{NAMESPACE_NAME_LABEL: "wrong", "tier": "1"}),
        make_pod("p", namespace="team-b"),
        _service("s", {"app": "x"}, namespace="team-c"),
        make_pod("other", namespace="team-d", scheduler_name="default-scheduler"),
    ]
    snapshot = snapshot_from_documents(docs, OURS)
    assert {ns.name: dict(ns.labels) for ns in snapshot.namespaces} == {
        "team-a": {NAMESPACE_NAME_LABEL: "team-a", "tier": "1"},
        "team-b": {NAMESPACE_NAME_LABEL: "team-b"},
        "team-c": {NAMESPACE_NAME_LABEL: "team-c"},
    }


def test_hand_written_objects_get_distinct_uids() -> None:
    """Items of a List get a uid from their place, so two pods never share one."""
    snapshot = snapshot_from_documents(
        [make_node("n1"), _kubectl_list(_strip(make_pod("a")), _strip(make_pod("b")))], OURS
    )
    assert sorted(p.uid for p in snapshot.pending) == ["simulate-1-0", "simulate-1-1"]


def _strip(doc: dict[str, Any]) -> dict[str, Any]:
    doc["metadata"].pop("uid", None)
    return doc


@pytest.mark.parametrize(
    ("docs", "message"),
    [
        pytest.param(
            [_kubectl_list(make_node("n"), _service("s", "app=web"))],
            "document 0, items[1]: Service default/s: spec.selector: expected an object, "
            "got a string",
            id="service-selector-a-string",
        ),
        pytest.param(
            [
                _controller(
                    "ReplicaSet",
                    "rs",
                    {"matchExpressions": [{"key": "app", "operator": "Near", "values": ["x"]}]},
                )
            ],
            "document 0: ReplicaSet default/rs: spec.selector.matchExpressions[0].operator: ",
            id="replicaset-bad-operator",
        ),
        pytest.param(
            [_kubectl_list(_controller("ReplicationController", "rc", ["app"], "v1"))],
            "document 0, items[0]: ReplicationController default/rc: spec.selector: ",
            id="rc-selector-a-list",
        ),
        pytest.param(
            [_kubectl_list(_kubectl_list(make_pod("p", cpu="lots")))],
            "document 0, items[0].items[0]: Pod default/p: spec.containers[0].resources."
            "requests.cpu: ",
            id="pod-in-nested-list",
        ),
        pytest.param(
            [{"kind": "Namespace", "metadata": {"name": "n", "labels": {"a": 1}}}],
            "document 0: Namespace n: metadata.labels.a: expected a string, got ",
            id="namespace-label-a-number",
        ),
        pytest.param(
            [_kubectl_list(make_pod("a"), make_pod("a", uid="other"))],
            "document 0, items[0] and document 0, items[1]: both are Pod default/a",
            id="same-pod-twice-in-a-list",
        ),
        pytest.param(
            [_service("s", {}), _kubectl_list(_service("s", {"a": "b"}))],
            "document 0 and document 1, items[0]: both are Service default/s",
            id="same-service-twice",
        ),
        pytest.param(
            [_namespace("x"), _namespace("x")],
            "documents 0 and 1: both are Namespace x",
            id="same-namespace-twice",
        ),
        pytest.param(
            [_controller("StatefulSet", "s", None), _controller("StatefulSet", "s", None)],
            "documents 0 and 1: both are StatefulSet default/s",
            id="same-statefulset-twice",
        ),
        pytest.param(
            [{"apiVersion": "v1", "kind": "List", "items": {"a": 1}}],
            "document 0: items: expected a list, got dict",
            id="items-not-a-list",
        ),
        pytest.param(
            [_kubectl_list(make_node("n"), "pod")],
            "document 0, items[1]: must be a mapping, got str",
            id="item-not-a-mapping",
        ),
        pytest.param(
            [_kubectl_list({"metadata": {"name": "x"}})],
            "document 0, items[0]: kind: must be a non-empty string, got None",
            id="List-item-without-kind",
        ),
        pytest.param(
            [{"apiVersion": 1, "kind": "Pod"}],
            "document 0: apiVersion: must be a string, got 1",
            id="apiVersion-a-number",
        ),
        pytest.param(["just text"], "document 0: must be a mapping, got str", id="text"),
    ],
)
def test_bad_objects_name_document_item_object_and_field(docs: list[object], message: str) -> None:
    with pytest.raises(InputError) as caught:
        snapshot_from_documents(docs, OURS)
    assert str(caught.value).startswith(message), str(caught.value)


def test_file_errors_name_the_file(tmp_path: Path) -> None:
    path = tmp_path / "snap.yaml"
    path.write_text(yaml.safe_dump(_kubectl_list(_service("s", "x"))))
    with pytest.raises(InputError, match=r"snap\.yaml: document 0, items\[0\]: Service default/s"):
        read_snapshot_file(path, OURS)
