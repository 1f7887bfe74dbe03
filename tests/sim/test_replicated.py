"""Services, ReplicationControllers, ReplicaSets and StatefulSets in the emulator.

What default topology spreading reads (a Service's selector, a pod's controller
ownerReference) must come out as from kube-apiserver and kube-controller-manager:
discovery, defaulting and validation, selectors, watch, the Deployment -> ReplicaSet ->
pod ownership chain, StatefulSet pod names, garbage collection, and kubectl's tables.
"""

from __future__ import annotations

import copy
import ipaddress
import json
import shutil
import threading
import time
from typing import TYPE_CHECKING, Any

import kubernetes
import pytest
from kubernetes.client import ApiException, AppsV1Api, CoreV1Api

from scheduler.sim import patching, scale, services
from scheduler.sim.server import SimServer, run_in_thread
from tests.sim.kubectl_helpers import kubectl

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from pathlib import Path

TEMPLATE: dict[str, Any] = {
    "metadata": {"labels": {"app": "web"}},
    "spec": {"containers": [{"name": "c", "image": "nginx"}]},
}


def _wait(cond: Callable[[], Any], timeout: float = 5.0) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        got = cond()
        if got or time.monotonic() > deadline:
            return got
        time.sleep(0.02)


@pytest.fixture
def apis(sim: SimServer) -> Iterator[tuple[CoreV1Api, AppsV1Api]]:
    """Core and apps clients of the official package against ``sim``."""
    config = kubernetes.client.Configuration(host=sim.url)
    with kubernetes.client.ApiClient(config) as api:
        yield CoreV1Api(api), AppsV1Api(api)


def _workload(name: str, replicas: int = 2, **spec: Any) -> dict[str, Any]:
    return {
        "metadata": {"name": name},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": "web"}},
            "template": copy.deepcopy(TEMPLATE),
            **spec,
        },
    }


def _pods(core: CoreV1Api) -> list[Any]:
    return list(core.list_namespaced_pod("default").items)


def _pod_names(core: CoreV1Api, n: int) -> list[str]:
    """The pod names once there are ``n`` pods."""
    assert _wait(lambda: len(_pods(core)) == n), [p.metadata.name for p in _pods(core)]
    time.sleep(0.1)
    names = sorted(p.metadata.name for p in _pods(core))
    assert len(names) == n, names
    return names


def _invalid(call: Callable[[], Any]) -> str:
    with pytest.raises(ApiException) as exc:
        call()
    assert exc.value.status == 422, exc.value.body
    message: str = json.loads(exc.value.body)["message"]
    return message


# -- discovery --------------------------------------------------------------------------------


def test_discovery_lists_the_new_kinds(apis: tuple[CoreV1Api, AppsV1Api]) -> None:
    """svc and rc in v1, rs and sts in apps/v1: short names, category all, scale and status."""
    core, apps = apis
    v1 = {r.name: r for r in core.get_api_resources().resources}
    apps_v1 = {r.name: r for r in apps.get_api_resources().resources}
    for table, name, kind, short in (
        (v1, "services", "Service", "svc"),
        (v1, "replicationcontrollers", "ReplicationController", "rc"),
        (apps_v1, "replicasets", "ReplicaSet", "rs"),
        (apps_v1, "statefulsets", "StatefulSet", "sts"),
    ):
        entry = table[name]
        assert (entry.kind, entry.short_names, entry.categories) == (kind, [short], ["all"])
        assert {"list", "watch", "create", "patch", "delete"} <= set(entry.verbs)
        assert entry.namespaced
        assert f"{name}/status" in table
    for table, name in (
        (v1, "replicationcontrollers"),
        (apps_v1, "replicasets"),
        (apps_v1, "statefulsets"),
    ):
        assert table[f"{name}/scale"].kind == "Scale"
    assert "services/scale" not in v1


# -- Services ---------------------------------------------------------------------------------


def test_service_defaults_and_allocation(apis: tuple[CoreV1Api, AppsV1Api]) -> None:
    """type ClusterIP, a unique cluster IP in the range, TCP and targetPort defaulted; the boot
    kubernetes Service holds 10.96.0.1; NodePort gets a node port; headless gets None."""
    core, _ = apis
    boot = core.read_namespaced_service("kubernetes", "default")
    assert boot.spec.cluster_ip == services.KUBERNETES_IP
    assert boot.spec.selector is None
    body = {
        "metadata": {"name": "web"},
        "spec": {"selector": {"app": "web"}, "ports": [{"port": 80}]},
    }
    svc = core.create_namespaced_service("default", body)
    assert svc.spec.type == "ClusterIP"
    assert svc.spec.session_affinity == "None"
    assert (svc.spec.ports[0].protocol, svc.spec.ports[0].target_port) == ("TCP", 80)
    assert svc.spec.cluster_ips == [svc.spec.cluster_ip]
    assert ipaddress.ip_address(svc.spec.cluster_ip) in services.SERVICE_RANGE
    assert svc.spec.cluster_ip != services.KUBERNETES_IP
    assert (svc.spec.ip_families, svc.spec.ip_family_policy) == (["IPv4"], "SingleStack")
    other = core.create_namespaced_service("default", {**body, "metadata": {"name": "other"}})
    assert other.spec.cluster_ip != svc.spec.cluster_ip
    node_port = core.create_namespaced_service(
        "default",
        {"metadata": {"name": "np"}, "spec": {"type": "NodePort", "ports": [{"port": 80}]}},
    )
    assert node_port.spec.ports[0].node_port in services.NODE_PORTS
    assert node_port.spec.external_traffic_policy == "Cluster"
    headless = core.create_namespaced_service(
        "default",
        {"metadata": {"name": "hl"}, "spec": {"clusterIP": "None", "selector": {"a": "b"}}},
    )
    assert headless.spec.cluster_ips == ["None"]


def test_service_validation_and_updates(apis: tuple[CoreV1Api, AppsV1Api]) -> None:
    """Ports are required, a taken IP is refused; an update keeps the allocated IP it omits
    and may not change it; kubectl's strategic patch of ports merges by port."""
    core, _ = apis
    message = _invalid(
        lambda: core.create_namespaced_service("default", {"metadata": {"name": "x"}, "spec": {}})
    )
    assert message == 'Service "x" is invalid: spec.ports: Required value'
    taken = {
        "metadata": {"name": "y"},
        "spec": {"clusterIP": services.KUBERNETES_IP, "ports": [{"port": 1}]},
    }
    assert "provided IP is already allocated" in _invalid(
        lambda: core.create_namespaced_service("default", taken)
    )
    body = {
        "metadata": {"name": "web"},
        "spec": {"selector": {"app": "web"}, "ports": [{"port": 80}]},
    }
    ip = core.create_namespaced_service("default", body).spec.cluster_ip
    current = core.read_namespaced_service("web", "default").to_dict()
    put = {
        "metadata": {"name": "web", "resourceVersion": current["metadata"]["resource_version"]},
        "spec": {"selector": {"app": "api"}, "ports": [{"port": 80}]},
    }
    updated = core.replace_namespaced_service("web", "default", put)
    assert (updated.spec.cluster_ip, updated.spec.selector) == (ip, {"app": "api"})
    assert "may not change once set" in _invalid(
        lambda: core.patch_namespaced_service(
            "web", "default", {"spec": {"clusterIP": "10.96.9.9"}}
        )
    )
    patched = core.patch_namespaced_service(
        "web", "default", {"spec": {"ports": [{"port": 80, "targetPort": 8080}]}}
    )
    assert [(p.port, p.target_port) for p in patched.spec.ports] == [(80, 8080)]


def test_service_selectors_and_watch(sim: SimServer, apis: tuple[CoreV1Api, AppsV1Api]) -> None:
    """fieldSelector spec.type and labelSelector filter; a watch sees ADDED, MODIFIED, DELETED."""
    core, _ = apis
    seen: list[tuple[str, str]] = []
    rv = core.list_namespaced_service("default").metadata.resource_version

    def watch() -> None:
        for event in kubernetes.watch.Watch().stream(
            core.list_namespaced_service, "default", resource_version=rv, timeout_seconds=2
        ):
            seen.append((event["type"], event["object"].metadata.name))
            if event["type"] == "DELETED":
                return

    thread = threading.Thread(target=watch)
    thread.start()
    body = {
        "metadata": {"name": "web", "labels": {"tier": "front"}},
        "spec": {"type": "NodePort", "ports": [{"port": 80}]},
    }
    core.create_namespaced_service("default", body)
    found = core.list_namespaced_service("default", field_selector="spec.type=NodePort").items
    assert [s.metadata.name for s in found] == ["web"]
    assert [
        s.metadata.name
        for s in core.list_namespaced_service("default", label_selector="tier=front").items
    ] == ["web"]
    with pytest.raises(ApiException) as exc:
        core.list_namespaced_service("default", field_selector="spec.selector=x")
    assert exc.value.status == 400
    core.patch_namespaced_service("web", "default", {"metadata": {"labels": {"x": "1"}}})
    core.delete_namespaced_service("web", "default")
    thread.join(timeout=5)
    assert seen == [("ADDED", "web"), ("MODIFIED", "web"), ("DELETED", "web")]


# -- ReplicaSets and ReplicationControllers ----------------------------------------------------


def test_replica_set_owns_its_pods_and_scales(apis: tuple[CoreV1Api, AppsV1Api]) -> None:
    """A user's ReplicaSet makes pods <rs>-xxxxx owned by it; /scale resizes; status counts;
    a selector missing the template is refused; deleting it deletes its pods."""
    core, apps = apis
    rs = apps.create_namespaced_replica_set("default", _workload("web", 3))
    names = _pod_names(core, 3)
    assert all(n.startswith("web-") and len(n) == len("web-") + 5 for n in names)
    for pod in _pods(core):
        (ref,) = pod.metadata.owner_references
        assert (ref.api_version, ref.kind, ref.name, ref.uid, ref.controller) == (
            "apps/v1",
            "ReplicaSet",
            "web",
            rs.metadata.uid,
            True,
        )
        assert pod.metadata.labels == {"app": "web"}
    assert _wait(lambda: apps.read_namespaced_replica_set("web", "default").status.replicas == 3)
    read = apps.read_namespaced_replica_set_scale("web", "default")
    assert (read.spec.replicas, read.status.selector) == (3, "app=web")
    apps.patch_namespaced_replica_set_scale("web", "default", {"spec": {"replicas": 1}})
    _pod_names(core, 1)
    assert apps.list_namespaced_replica_set("default", field_selector="status.replicas=1").items
    bad = _workload("bad", selector={"matchLabels": {"app": "other"}})
    message = _invalid(lambda: apps.create_namespaced_replica_set("default", bad))
    assert message == (
        'ReplicaSet.apps "bad" is invalid: spec.template.metadata.labels: Invalid value: '
        '{"app":"web"}: `selector` does not match template `labels`'
    )
    apps.delete_namespaced_replica_set("web", "default")
    _pod_names(core, 0)


def test_replication_controller_defaults_selector(apis: tuple[CoreV1Api, AppsV1Api]) -> None:
    """An RC without a selector takes the template's labels; its pods are owned by it."""
    core, _ = apis
    body = {
        "metadata": {"name": "legacy"},
        "spec": {"replicas": 2, "template": copy.deepcopy(TEMPLATE)},
    }
    rc = core.create_namespaced_replication_controller("default", body)
    assert rc.spec.selector == {"app": "web"}
    assert rc.metadata.labels == {"app": "web"}
    _pod_names(core, 2)
    assert {p.metadata.owner_references[0].kind for p in _pods(core)} == {"ReplicationController"}
    assert (
        core.read_namespaced_replication_controller_scale("legacy", "default").status.selector
        == "app=web"
    )
    core.delete_namespaced_replication_controller("legacy", "default")
    _pod_names(core, 0)


# -- Deployments through ReplicaSets -----------------------------------------------------------


def test_deployment_runs_pods_through_replica_sets(apis: tuple[CoreV1Api, AppsV1Api]) -> None:
    """Deployment -> ReplicaSet <deploy>-<hash> -> pods; a template change makes a second
    ReplicaSet (revision 2) and scales the first to 0; delete cascades through both levels."""
    core, apps = apis
    deploy = apps.create_namespaced_deployment("default", _workload("web", 2))
    _pod_names(core, 2)
    (first,) = apps.list_namespaced_replica_set("default").items
    pod_hash = first.metadata.labels["pod-template-hash"]
    assert first.metadata.name == f"web-{pod_hash}"
    assert first.metadata.owner_references[0].uid == deploy.metadata.uid
    assert first.spec.selector.match_labels == {"app": "web", "pod-template-hash": pod_hash}
    assert first.spec.template.metadata.labels == {"app": "web", "pod-template-hash": pod_hash}
    assert {p.metadata.owner_references[0].name for p in _pods(core)} == {first.metadata.name}
    patch = {"spec": {"template": {"spec": {"containers": [{"name": "c", "image": "nginx:2"}]}}}}
    apps.patch_namespaced_deployment("web", "default", patch)

    def rolled() -> dict[str, tuple[int, str]]:
        sets = apps.list_namespaced_replica_set("default").items
        return {
            s.metadata.name: (
                s.spec.replicas,
                s.metadata.annotations["deployment.kubernetes.io/revision"],
            )
            for s in sets
        }

    assert _wait(lambda: len(rolled()) == 2 and rolled()[first.metadata.name] == (0, "1"))
    (second,) = set(rolled()) - {first.metadata.name}
    assert rolled()[second] == (2, "2")
    assert _wait(lambda: {p.metadata.owner_references[0].name for p in _pods(core)} == {second})
    _pod_names(core, 2)
    assert _wait(
        lambda: (
            (apps.read_namespaced_deployment("web", "default").metadata.annotations or {}).get(
                "deployment.kubernetes.io/revision"
            )
            == "2"
        )
    )
    status = apps.read_namespaced_deployment_status("web", "default").status
    assert (status.replicas, status.updated_replicas) == (2, 2)
    apps.delete_namespaced_deployment("web", "default")
    assert _wait(lambda: not apps.list_namespaced_replica_set("default").items)
    _pod_names(core, 0)


# -- StatefulSets ------------------------------------------------------------------------------


def test_stateful_set_pods_have_stable_names(apis: tuple[CoreV1Api, AppsV1Api]) -> None:
    """Pods <sts>-0..N-1 with pod-name and pod-index labels, hostname and subdomain; a deleted
    pod comes back under its name; scale-down removes the highest ordinals; delete cascades."""
    core, apps = apis
    sts = apps.create_namespaced_stateful_set("default", _workload("db", 3, serviceName="db"))
    assert sts.spec.pod_management_policy == "OrderedReady"
    assert sts.spec.update_strategy.rolling_update.partition == 0
    assert _pod_names(core, 3) == ["db-0", "db-1", "db-2"]
    pod = core.read_namespaced_pod("db-1", "default")
    assert pod.metadata.labels["statefulset.kubernetes.io/pod-name"] == "db-1"
    assert pod.metadata.labels["apps.kubernetes.io/pod-index"] == "1"
    assert pod.metadata.labels["controller-revision-hash"].startswith("db-")
    assert (pod.spec.hostname, pod.spec.subdomain) == ("db-1", "db")
    (ref,) = pod.metadata.owner_references
    assert (ref.kind, ref.uid, ref.controller) == ("StatefulSet", sts.metadata.uid, True)
    old_uid = pod.metadata.uid
    core.delete_namespaced_pod("db-1", "default")
    assert _wait(
        lambda: any(p.metadata.name == "db-1" and p.metadata.uid != old_uid for p in _pods(core))
    )
    apps.patch_namespaced_stateful_set_scale("db", "default", {"spec": {"replicas": 1}})
    assert _pod_names(core, 1) == ["db-0"]
    assert _wait(lambda: apps.read_namespaced_stateful_set("db", "default").status.replicas == 1)
    empty = _workload("e", selector={})
    assert "empty selector is invalid for statefulset" in _invalid(
        lambda: apps.create_namespaced_stateful_set("default", empty)
    )
    apps.delete_namespaced_stateful_set("db", "default")
    _pod_names(core, 0)


# -- pure functions ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("target", "patch", "expected"),
    [
        pytest.param(
            {"ports": [{"port": 80, "targetPort": 80}, {"port": 443}]},
            {"ports": [{"port": 80, "targetPort": 8080}]},
            [{"port": 80, "targetPort": 8080}, {"port": 443}],
            id="service-ports-merge-by-port",
        ),
        pytest.param(
            {"ports": [{"containerPort": 80, "port": 1}]},
            {"ports": [{"containerPort": 80, "name": "http"}]},
            [{"containerPort": 80, "port": 1, "name": "http"}],
            id="container-ports-merge-by-containerPort",
        ),
    ],
)
def test_ports_merge_key(
    target: dict[str, Any], patch: dict[str, Any], expected: list[Any]
) -> None:
    """A strategic merge patch merges a list named ports by the key its elements carry."""
    assert patching.strategic_merge_patch(target, patch)["ports"] == expected


def test_scale_selector_of_a_replication_controller() -> None:
    """An RC's plain label map reads as a selector string in its Scale."""
    rc = {"metadata": {"name": "r"}, "spec": {"replicas": 2, "selector": {"b": "2", "a": "1"}}}
    assert scale.to_scale(rc)["status"]["selector"] == "a=1,b=2"


# -- kubectl -----------------------------------------------------------------------------------


@pytest.fixture
def kubeconfig(tmp_path: Path) -> Iterator[Path]:
    """A running emulator (controllers on, 2 nodes) and a kubeconfig for it."""
    server = SimServer(nodes=2)
    with run_in_thread(server):
        yield server.write_kubeconfig(tmp_path / "kubeconfig")


MANIFESTS = """\
apiVersion: v1
kind: Service
metadata: {name: web}
spec:
  selector: {app: web}
  ports: [{port: 80}]
---
apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: web}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: c, image: nginx}]}
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db}
spec:
  replicas: 2
  serviceName: web
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec: {containers: [{name: c, image: postgres}]}
---
apiVersion: v1
kind: ReplicationController
metadata: {name: legacy}
spec:
  replicas: 1
  template:
    metadata: {labels: {app: legacy}}
    spec: {containers: [{name: c, image: nginx}]}
"""


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl not installed")
def test_kubectl_get_svc_rs_sts_rc(kubeconfig: Path) -> None:
    """kubectl apply creates all four; get svc,rs,sts,rc prints kube's columns; apply again
    changes nothing; delete -f removes them and their pods."""
    kc = kubeconfig
    out = kubectl(kc, "apply", "-f", "-", stdin=MANIFESTS)
    for made in (
        "service/web",
        "replicaset.apps/web",
        "statefulset.apps/db",
        "replicationcontroller/legacy",
    ):
        assert f"{made} created" in out
    assert _wait(lambda: len(kubectl(kc, "get", "pods", "-o", "name").split()) == 5)
    svc = kubectl(kc, "get", "svc", "web").splitlines()
    assert svc[0].split() == ["NAME", "TYPE", "CLUSTER-IP", "EXTERNAL-IP", "PORT(S)", "AGE"]
    assert svc[1].split()[:5] == ["web", "ClusterIP", svc[1].split()[2], "<none>", "80/TCP"]
    assert _wait(
        lambda: kubectl(kc, "get", "rs", "web").splitlines()[1].split()[:3] == ["web", "2", "2"]
    )
    rs = kubectl(kc, "get", "rs", "-o", "wide").splitlines()
    assert rs[0].split() == [
        "NAME",
        "DESIRED",
        "CURRENT",
        "READY",
        "AGE",
        "CONTAINERS",
        "IMAGES",
        "SELECTOR",
    ]
    assert rs[1].split()[5:] == ["c", "nginx", "app=web"]
    sts = kubectl(kc, "get", "sts").splitlines()
    assert sts[0].split() == ["NAME", "READY", "AGE"]
    assert sts[1].split()[:2] == ["db", "0/2"]
    rc = kubectl(kc, "get", "rc").splitlines()
    assert rc[0].split() == ["NAME", "DESIRED", "CURRENT", "READY", "AGE"]
    combined = kubectl(kc, "get", "svc,rs,sts,rc", "-o", "name").split()
    assert {
        "service/kubernetes",
        "service/web",
        "replicaset.apps/web",
        "statefulset.apps/db",
        "replicationcontroller/legacy",
    } <= set(combined)
    pods = kubectl(kc, "get", "pods", "-o", "name").split()
    assert {"pod/db-0", "pod/db-1"} <= set(pods)
    again = kubectl(kc, "apply", "-f", "-", stdin=MANIFESTS)
    assert again.count("unchanged") == 4, again
    kubectl(kc, "delete", "-f", "-", stdin=MANIFESTS)
    assert _wait(lambda: kubectl(kc, "get", "pods", "-o", "name").strip() == "")
