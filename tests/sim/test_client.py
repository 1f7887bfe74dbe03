"""Conformance with the official ``kubernetes`` client: CRUD, watch, selectors, binding."""

from __future__ import annotations

import json
from typing import Any

import kubernetes
import pytest
from kubernetes import watch
from kubernetes.client import ApiException, CoreV1Api

from scheduler.sim import workload
from scheduler.sim.server import SimServer


def _create_pods(core: CoreV1Api, count: int, **kwargs: Any) -> list[str]:
    names = []
    for pod in workload.make_pods(count, **kwargs):
        created = core.create_namespaced_pod(pod["metadata"]["namespace"], pod)
        names.append(created.metadata.name)
    return names


def _bind(core: CoreV1Api, name: str, node: str, uid: str | None = None) -> Any:
    body = {
        "apiVersion": "v1",
        "kind": "Binding",
        "metadata": {"name": name, "uid": uid},
        "target": {"apiVersion": "v1", "kind": "Node", "name": node},
    }
    # The reply is a Status, not a Binding: read it raw (kubernetes 37 raises otherwise).
    resp = core.create_namespaced_pod_binding(name, "default", body, _preload_content=False)
    return json.loads(resp.data)


def test_discovery_lists_what_kopf_and_kubectl_need(core: CoreV1Api) -> None:
    """/api/v1 lists pods/binding and short names; /apis has apps, batch, leases, events,
    policy, resource (DRA), scheduling, storage."""
    resources = {r.name: r for r in core.get_api_resources().resources}
    assert {
        "pods",
        "pods/binding",
        "pods/status",
        "nodes",
        "nodes/status",
        "namespaces",
        "events",
    } <= set(resources)
    assert resources["pods"].short_names == ["po"]
    assert {"list", "watch"} <= set(resources["events"].verbs)
    assert resources["namespaces"].singular_name == "namespace"
    groups = kubernetes.client.ApisApi(core.api_client).get_api_versions()
    assert {g.name for g in groups.groups} == {
        "apps",
        "batch",
        "coordination.k8s.io",
        "events.k8s.io",
        "policy",
        "resource.k8s.io",
        "scheduling.k8s.io",
        "storage.k8s.io",
    }


def test_create_sets_server_metadata_and_defaults(core: CoreV1Api) -> None:
    """Server fills uid, RFC3339 timestamps, string RV, generateName and pod defaults."""
    pod = workload.make_pods(1)[0]
    pod["metadata"] = {"generateName": "gen-"}
    created = core.create_namespaced_pod("default", pod)
    assert created.metadata.name.startswith("gen-")
    assert len(created.metadata.name) == 9
    assert created.metadata.uid
    assert int(created.metadata.resource_version) > 0
    assert created.spec.scheduler_name == "default-scheduler"
    assert created.spec.priority == 0
    assert created.status.phase == "Pending"
    node = core.read_node("node-0")
    assert node.status.allocatable["cpu"] == "4"


def test_namespace_missing_and_duplicates(core: CoreV1Api) -> None:
    """Creating into a missing namespace is 404; a duplicate name is 409 AlreadyExists."""
    pod = workload.make_pods(1, namespace="nope")[0]
    with pytest.raises(ApiException) as exc:
        core.create_namespaced_pod("nope", pod)
    assert exc.value.status == 404
    assert json.loads(exc.value.body)["message"] == 'namespaces "nope" not found'
    _create_pods(core, 1)
    with pytest.raises(ApiException) as exc:
        _create_pods(core, 1)
    assert exc.value.status == 409
    assert json.loads(exc.value.body)["message"] == 'pods "pod-0" already exists'
    with pytest.raises(ApiException) as exc:
        core.read_namespaced_pod("ghost", "default")
    assert json.loads(exc.value.body)["message"] == 'pods "ghost" not found'


def test_stale_put_is_409(core: CoreV1Api) -> None:
    """PUT with an old resourceVersion fails with Conflict; with the current one it succeeds."""
    _create_pods(core, 1)
    first = core.read_namespaced_pod("pod-0", "default")
    first.metadata.labels = {"v": "1"}
    core.replace_namespaced_pod("pod-0", "default", first)
    first.metadata.labels = {"v": "2"}
    with pytest.raises(ApiException) as exc:
        core.replace_namespaced_pod("pod-0", "default", first)
    assert exc.value.status == 409
    assert "the object has been modified" in json.loads(exc.value.body)["message"]
    fresh = core.read_namespaced_pod("pod-0", "default")
    assert fresh.metadata.labels == {"v": "1"}


def test_binding_sets_node_and_conflicts(core: CoreV1Api) -> None:
    """Bind sets nodeName + PodScheduled; again is 409 with kube's message; gone pod is 404."""
    _create_pods(core, 2)
    status = _bind(core, "pod-0", "node-1")
    assert status["kind"] == "Status"
    assert status["status"] == "Success"
    pod = core.read_namespaced_pod("pod-0", "default")
    assert pod.spec.node_name == "node-1"
    assert [(c.type, c.status) for c in pod.status.conditions] == [("PodScheduled", "True")]
    with pytest.raises(ApiException) as exc:
        _bind(core, "pod-0", "node-2")
    assert exc.value.status == 409
    assert json.loads(exc.value.body)["message"] == (
        'Operation cannot be fulfilled on pods/binding "pod-0": '
        'pod pod-0 is already assigned to node "node-1"'
    )
    with pytest.raises(ApiException) as exc:
        _bind(core, "pod-1", "node-1", uid="not-the-uid")
    assert exc.value.status == 409
    with pytest.raises(ApiException) as exc:
        _bind(core, "gone", "node-1")
    assert exc.value.status == 404


def test_patch_types_and_status_subresource(core: CoreV1Api) -> None:
    """Strategic, merge and JSON patches apply; pod status patch merges conditions by type."""
    _create_pods(core, 1)
    core.patch_namespaced_pod("pod-0", "default", {"metadata": {"labels": {"a": "1"}}})
    core.api_client.set_default_header("Content-Type", "application/merge-patch+json")
    core.patch_namespaced_pod("pod-0", "default", {"metadata": {"labels": {"b": "2"}}})
    core.api_client.default_headers.pop("Content-Type")
    ops = [{"op": "add", "path": "/metadata/annotations", "value": {"x": "y"}}]
    core.patch_namespaced_pod("pod-0", "default", ops)
    cond = {"type": "PodScheduled", "status": "False", "reason": "Unschedulable"}
    core.patch_namespaced_pod_status("pod-0", "default", {"status": {"conditions": [cond]}})
    other = {"type": "Ready", "status": "False"}
    core.patch_namespaced_pod_status("pod-0", "default", {"status": {"conditions": [other]}})
    pod = core.read_namespaced_pod("pod-0", "default")
    assert pod.metadata.labels == {"a": "1", "b": "2"}
    assert pod.metadata.annotations == {"x": "y"}
    assert [(c.type, c.reason) for c in pod.status.conditions] == [
        ("PodScheduled", "Unschedulable"),
        ("Ready", None),
    ]
    # the main resource ignores status, as kube-apiserver's pod strategy does
    core.patch_namespaced_pod("pod-0", "default", {"status": {"phase": "Running"}})
    assert core.read_namespaced_pod("pod-0", "default").status.phase == "Pending"


def test_label_and_field_selectors_on_list(core: CoreV1Api) -> None:
    """List filters by label selector, by empty spec.nodeName, and across namespaces."""
    _create_pods(core, 3, labels={"app": "a"})
    _create_pods(core, 2, prefix="other-", labels={"app": "b"})
    _bind(core, "pod-0", "node-0")
    assert len(core.list_namespaced_pod("default", label_selector="app=a").items) == 3
    assert len(core.list_namespaced_pod("default", label_selector="app in (a,b)").items) == 5
    unassigned = core.list_pod_for_all_namespaces(field_selector="spec.nodeName=")
    assert sorted(p.metadata.name for p in unassigned.items) == [
        "other-0",
        "other-1",
        "pod-1",
        "pod-2",
    ]
    on_node = core.list_pod_for_all_namespaces(field_selector="spec.nodeName=node-0")
    assert [p.metadata.name for p in on_node.items] == ["pod-0"]


def test_watch_resumes_from_resource_version(core: CoreV1Api) -> None:
    """A watch from a list's RV sees exactly the later changes, in order."""
    _create_pods(core, 1)
    rv = core.list_namespaced_pod("default").metadata.resource_version
    _create_pods(core, 1, start=1)
    _bind(core, "pod-0", "node-0")
    core.delete_namespaced_pod("pod-1", "default")
    seen = []
    w = watch.Watch()
    for ev in w.stream(core.list_namespaced_pod, "default", resource_version=rv, timeout_seconds=1):
        seen.append((ev["type"], ev["object"].metadata.name))
        if len(seen) == 3:
            w.stop()
    assert seen == [("ADDED", "pod-1"), ("MODIFIED", "pod-0"), ("DELETED", "pod-1")]


def test_watch_after_compaction_is_410(sim: SimServer, core: CoreV1Api) -> None:
    """Resuming from a compacted RV yields ERROR 410 Expired, which the client raises."""
    _create_pods(core, 1)
    rv = core.list_namespaced_pod("default").metadata.resource_version
    _create_pods(core, 1, start=1)
    sim.run_sync(sim.store.compact)
    with pytest.raises(ApiException) as exc:
        list(
            watch.Watch().stream(
                core.list_namespaced_pod, "default", resource_version=rv, timeout_seconds=1
            )
        )
    assert exc.value.status == 410
    assert "Expired" in str(exc.value.reason)


def test_events_in_both_api_versions(core: CoreV1Api) -> None:
    """An events.k8s.io/v1 event is listed as a core event with the fields mapped."""
    events_v1 = kubernetes.client.EventsV1Api(core.api_client)
    body = {
        "metadata": {"name": "e1"},
        # Non-zero microseconds: the client re-serializes the time with isoformat(), which
        # drops a zero fraction, and kube (like the emulator) wants exactly six digits.
        "eventTime": "2024-01-01T00:00:00.123456Z",
        "reason": "Scheduled",
        "note": "Successfully assigned default/p to node-0",
        "type": "Normal",
        "action": "Binding",
        "reportingController": "batch-scheduler",
        "reportingInstance": "batch-scheduler-1",
        "regarding": {"kind": "Pod", "name": "p", "namespace": "default"},
    }
    events_v1.create_namespaced_event("default", body)
    core_events = core.list_event_for_all_namespaces(field_selector="involvedObject.name=p")
    assert [(e.reason, e.message) for e in core_events.items] == [
        ("Scheduled", "Successfully assigned default/p to node-0")
    ]
    again = events_v1.list_namespaced_event("default", field_selector="regarding.name=p")
    assert again.items[0].note.startswith("Successfully")


def test_leases_crud(core: CoreV1Api) -> None:
    """Leases can be created, read and updated with optimistic concurrency."""
    coord = kubernetes.client.CoordinationV1Api(core.api_client)
    body = {
        "metadata": {"name": "lock"},
        "spec": {"holderIdentity": "a", "leaseDurationSeconds": 15},
    }
    coord.create_namespaced_lease("kube-system", body)
    lease = coord.read_namespaced_lease("lock", "kube-system")
    lease.spec.holder_identity = "b"
    coord.replace_namespaced_lease("lock", "kube-system", lease)
    assert coord.read_namespaced_lease("lock", "kube-system").spec.holder_identity == "b"
    with pytest.raises(ApiException) as exc:
        coord.replace_namespaced_lease("lock", "kube-system", lease)
    assert exc.value.status == 409


def test_token_required_when_set() -> None:
    """With a token, requests without it get 401 and requests with it succeed."""
    from scheduler.sim.server import run_in_thread

    with run_in_thread(SimServer(token="s3cret")) as url:
        anon = CoreV1Api(kubernetes.client.ApiClient(kubernetes.client.Configuration(host=url)))
        with pytest.raises(ApiException) as exc:
            anon.list_namespace()
        assert exc.value.status == 401
        config = kubernetes.client.Configuration(
            host=url,
            api_key={"authorization": "s3cret"},
            api_key_prefix={"authorization": "Bearer"},
        )
        authed = CoreV1Api(kubernetes.client.ApiClient(config))
        names = {n.metadata.name for n in authed.list_namespace().items}
        assert {"default", "kube-system"} <= names
        anon.api_client.close()
        authed.api_client.close()


def test_kubeconfig_loads_in_the_client(sim: SimServer, tmp_path: Any) -> None:
    """The written kubeconfig is accepted by kubernetes.config and reaches the server."""
    path = sim.write_kubeconfig(tmp_path / "kc")
    api = kubernetes.config.new_client_from_config(config_file=str(path))
    with api:
        assert len(CoreV1Api(api).list_node().items) == 3


def test_node_status_subresource(core: CoreV1Api) -> None:
    """nodes/status patches conditions by type; a patch of the main node ignores status."""
    cond = {"type": "Ready", "status": "False", "reason": "KubeletNotReady"}
    core.patch_node_status("node-0", {"status": {"conditions": [cond]}})
    core.patch_node(
        "node-0", {"status": {"allocatable": {"cpu": "1"}}, "spec": {"unschedulable": True}}
    )
    node = core.read_node("node-0")
    assert [(c.type, c.status) for c in node.status.conditions] == [("Ready", "False")]
    assert node.status.allocatable["cpu"] == "4"
    assert node.spec.unschedulable is True


def test_workload_templates(core: CoreV1Api) -> None:
    """Node zones/taints and pod hostPort/affinity/annotations survive a round trip."""
    taint = {"key": "dedicated", "value": "batch", "effect": "NoSchedule"}
    for node in workload.make_nodes(2, prefix="z-", zones=["a", "b"], taints=[taint]):
        core.create_node(node)
    affinity = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {
                        "matchExpressions": [
                            {"key": workload.ZONE_LABEL, "operator": "In", "values": ["b"]}
                        ]
                    }
                ]
            }
        }
    }
    pod = workload.make_pods(
        1,
        host_port=8080,
        affinity=affinity,
        scheduler_name="batch-scheduler",
        annotations={"batch-scheduler.io/batching": "true"},
    )[0]
    created = core.create_namespaced_pod("default", pod)
    zones = {
        n.metadata.name: n.metadata.labels[workload.ZONE_LABEL]
        for n in core.list_node(label_selector=workload.ZONE_LABEL).items
    }
    assert zones == {"z-0": "a", "z-1": "b"}
    assert core.read_node("z-1").spec.taints[0].key == "dedicated"
    assert created.spec.containers[0].ports[0].host_port == 8080
    assert created.spec.affinity.node_affinity is not None
    assert created.metadata.annotations == {"batch-scheduler.io/batching": "true"}
    assert created.status.qos_class == "Burstable"
