"""Deployments and Jobs in the emulator: discovery, defaulting, and the pods its controllers make.

The example manifests (manifests/examples/) go in through the official client and through
kubectl; their pods must carry the template's schedulerName and annotations. Scaling,
template changes, cascade and orphan deletion, Job limits, and the controllers switched
off are covered here too.
"""

from __future__ import annotations

import copy
import json
import re
import shutil
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import kubernetes
import pytest
import yaml
from kubernetes.client import ApiException, AppsV1Api, BatchV1Api, CoreV1Api

from scheduler.sim import podtemplates
from scheduler.sim.process import SimProcess
from scheduler.sim.server import SimServer, run_in_thread
from tests.sim.kubectl_helpers import kubectl

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

EXAMPLES = Path(__file__).resolve().parents[2] / "manifests" / "examples"
JOB = yaml.safe_load((EXAMPLES / "job-one-per-node.yaml").read_text())
WEB = yaml.safe_load((EXAMPLES / "deployment-many-per-node.yaml").read_text())
needs_kubectl = pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl not installed")


def _wait(cond: Callable[[], Any], timeout: float = 5.0) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        got = cond()
        if got or time.monotonic() > deadline:
            return got
        time.sleep(0.02)


def _settle(get: Callable[[], Any], timeout: float = 5.0) -> Any:
    """``get()`` once it returns the same value twice, 0.1 s apart."""
    last = get()
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        time.sleep(0.1)
        now = get()
        if now == last:
            return now
        last = now
    return last


@pytest.fixture
def apis(sim: SimServer) -> Iterator[tuple[CoreV1Api, AppsV1Api, BatchV1Api]]:
    """Core, apps and batch clients of the official package against ``sim``."""
    config = kubernetes.client.Configuration(host=sim.url)
    with kubernetes.client.ApiClient(config) as api:
        yield CoreV1Api(api), AppsV1Api(api), BatchV1Api(api)


def _pods(core: CoreV1Api, selector: str) -> list[Any]:
    return list(core.list_namespaced_pod("default", label_selector=selector).items)


def _count(core: CoreV1Api, selector: str, n: int) -> list[Any]:
    """The pods matching ``selector`` once there are ``n`` and no more are on the way."""
    assert _wait(lambda: len(_pods(core, selector)) == n), (
        f"want {n} pods for {selector}, have {len(_pods(core, selector))}"
    )
    pods: list[Any] = _settle(lambda: _pods(core, selector))
    assert len(pods) == n
    return pods


def test_discovery_serves_apps_and_batch(apis: tuple[CoreV1Api, AppsV1Api, BatchV1Api]) -> None:
    """/apis/apps/v1 and /apis/batch/v1 list the kinds with short names, verbs, scale."""
    _, apps, batch = apis
    deploy = {r.name: r for r in apps.get_api_resources().resources}
    jobs = {r.name: r for r in batch.get_api_resources().resources}
    assert deploy["deployments"].kind == "Deployment"
    assert deploy["deployments"].singular_name == "deployment"
    assert deploy["deployments"].short_names == ["deploy"]
    assert deploy["deployments"].namespaced
    assert {"create", "get", "list", "watch", "patch", "update", "delete"} <= set(
        deploy["deployments"].verbs
    )
    assert deploy["deployments/scale"].kind == "Scale"
    assert deploy["deployments/scale"].group == "autoscaling"
    assert jobs["jobs"].kind == "Job"
    assert jobs["jobs"].short_names == ["job"]
    assert {"list", "watch"} <= set(jobs["jobs"].verbs)


def test_examples_make_pods_from_their_templates(
    apis: tuple[CoreV1Api, AppsV1Api, BatchV1Api],
) -> None:
    """The example Job makes 8 pods, the Deployment 40: named, labelled, owned, opted in."""
    core, apps, batch = apis
    job = batch.create_namespaced_job("default", copy.deepcopy(JOB))
    assert job.spec.backoff_limit == 0
    assert job.spec.completion_mode == "NonIndexed"
    uid = job.metadata.uid
    assert job.spec.selector.match_labels == {"batch.kubernetes.io/controller-uid": uid}
    assert job.spec.template.metadata.labels["job-name"] == "batch-one-per-node"
    deploy = apps.create_namespaced_deployment("default", copy.deepcopy(WEB))
    assert deploy.spec.strategy.type == "RollingUpdate"
    job_pods = _count(core, "job-name=batch-one-per-node", 8)
    web_pods = _count(core, "app.kubernetes.io/name=web-many-per-node", 40)
    for pod in job_pods:
        assert re.fullmatch(r"batch-one-per-node-[a-z0-9]{5}", pod.metadata.name)
        assert pod.spec.scheduler_name == "batch-scheduler"
        assert pod.spec.restart_policy == "Never"
        assert pod.metadata.annotations == {"batch-scheduler.io/batching": "true"}
        labels = pod.metadata.labels
        assert labels["app.kubernetes.io/name"] == "batch-one-per-node"
        assert labels["batch.kubernetes.io/job-name"] == "batch-one-per-node"
        assert labels["controller-uid"] == labels["batch.kubernetes.io/controller-uid"] == uid
        (ref,) = pod.metadata.owner_references
        assert (ref.kind, ref.name, ref.uid, ref.controller) == (
            "Job",
            job.metadata.name,
            uid,
            True,
        )
        assert pod.status.phase == "Pending"
        assert pod.spec.node_name is None
    hashes = {p.metadata.labels["pod-template-hash"] for p in web_pods}
    assert len(hashes) == 1
    (pod_hash,) = hashes
    for pod in web_pods:
        assert re.fullmatch(rf"web-many-per-node-{pod_hash}-[a-z0-9]{{5}}", pod.metadata.name)
        assert pod.spec.scheduler_name == "batch-scheduler"
        assert pod.metadata.annotations == {"batch-scheduler.io/batching": "true"}
        (ref,) = pod.metadata.owner_references
        assert (ref.api_version, ref.kind, ref.name, ref.controller) == (
            "apps/v1",
            "ReplicaSet",
            f"web-many-per-node-{pod_hash}",
            True,
        )
    rs = apps.read_namespaced_replica_set(f"web-many-per-node-{pod_hash}", "default")
    (owner,) = rs.metadata.owner_references
    assert (owner.kind, owner.uid, owner.controller) == ("Deployment", deploy.metadata.uid, True)
    assert rs.spec.selector.match_labels["pod-template-hash"] == pod_hash
    assert rs.metadata.annotations["deployment.kubernetes.io/revision"] == "1"
    assert _wait(
        lambda: batch.read_namespaced_job_status("batch-one-per-node", "default").status.active == 8
    )
    job = batch.read_namespaced_job_status("batch-one-per-node", "default")
    assert job.status.start_time is not None
    assert _wait(
        lambda: (
            apps.read_namespaced_deployment("web-many-per-node", "default").status.replicas == 40
        )
    )
    deploy = apps.read_namespaced_deployment("web-many-per-node", "default")
    assert deploy.status.observed_generation == 1
    assert deploy.status.updated_replicas == 40


def test_deployment_scales_and_cascades(
    apis: tuple[CoreV1Api, AppsV1Api, BatchV1Api],
) -> None:
    """replicas via patch and /scale add or remove pods; unbound pods go first; delete cascades."""
    core, apps, _ = apis
    body = copy.deepcopy(WEB)
    body["spec"]["replicas"] = 3
    apps.create_namespaced_deployment("default", body)
    sel = "app.kubernetes.io/name=web-many-per-node"
    pods = _count(core, sel, 3)
    bound = pods[0].metadata.name
    core.create_namespaced_pod_binding(
        bound,
        "default",
        {"metadata": {"name": bound}, "target": {"kind": "Node", "name": "node-0"}},
        _preload_content=False,
    )
    apps.patch_namespaced_deployment("web-many-per-node", "default", {"spec": {"replicas": 5}})
    _count(core, sel, 5)
    scale = apps.patch_namespaced_deployment_scale(
        "web-many-per-node", "default", {"spec": {"replicas": 1}}
    )
    assert scale.spec.replicas == 1
    (left,) = _count(core, sel, 1)
    assert left.metadata.name == bound, "scale-down kept an unbound pod over the bound one"
    read = apps.read_namespaced_deployment_scale("web-many-per-node", "default")
    assert read.status.selector == "app.kubernetes.io/name=web-many-per-node"
    assert _wait(
        lambda: (
            apps.read_namespaced_deployment_scale("web-many-per-node", "default").status.replicas
            == 1
        )
    )
    apps.delete_namespaced_deployment("web-many-per-node", "default")
    assert _wait(lambda: not _pods(core, sel)), "pods outlived their Deployment"


def test_template_change_replaces_pods(apis: tuple[CoreV1Api, AppsV1Api, BatchV1Api]) -> None:
    """A new pod template (new pod-template-hash) replaces the old pods."""
    core, apps, _ = apis
    body = copy.deepcopy(WEB)
    body["spec"]["replicas"] = 2
    apps.create_namespaced_deployment("default", body)
    sel = "app.kubernetes.io/name=web-many-per-node"
    old = {p.metadata.labels["pod-template-hash"] for p in _count(core, sel, 2)}
    patch = {"spec": {"template": {"spec": {"containers": [{"name": "web", "image": "nginx:2"}]}}}}
    apps.patch_namespaced_deployment("web-many-per-node", "default", patch)
    new = _wait(
        lambda: (
            (p := _pods(core, sel))
            and len(p) == 2
            and {x.metadata.labels["pod-template-hash"] for x in p}.isdisjoint(old)
            and p
        )
    )
    assert new, [p.metadata.name for p in _pods(core, sel)]
    assert all(p.spec.containers[0].image == "nginx:2" for p in new)


def test_orphan_delete_keeps_pods(apis: tuple[CoreV1Api, AppsV1Api, BatchV1Api]) -> None:
    """propagationPolicy Orphan deletes the Job only; its pods lose the ownerReference."""
    core, _, batch = apis
    batch.create_namespaced_job("default", copy.deepcopy(JOB))
    _count(core, "job-name=batch-one-per-node", 8)
    batch.delete_namespaced_job("batch-one-per-node", "default", propagation_policy="Orphan")
    pods = _settle(lambda: _pods(core, "job-name=batch-one-per-node"))
    assert len(pods) == 8
    assert all(not p.metadata.owner_references for p in pods)


def test_job_limits_and_completion(apis: tuple[CoreV1Api, AppsV1Api, BatchV1Api]) -> None:
    """parallelism is capped by completions; succeeded pods count; the Job completes;
    defaults are 1/1/6; suspend deletes the active pods and resuming recreates them."""
    core, _, batch = apis
    body = copy.deepcopy(JOB)
    body["spec"].update(parallelism=5, completions=2)
    batch.create_namespaced_job("default", body)
    sel = "job-name=batch-one-per-node"
    pods = _count(core, sel, 2)
    for pod in pods:
        core.patch_namespaced_pod_status(
            pod.metadata.name, "default", {"status": {"phase": "Succeeded"}}
        )

    def read() -> Any:
        return batch.read_namespaced_job("batch-one-per-node", "default")

    assert _wait(lambda: read().status.conditions), "the Job never completed"
    job = read()
    assert [c.type for c in job.status.conditions] == ["Complete"]
    assert (job.status.succeeded, job.status.active) == (2, 0)
    assert len(_settle(lambda: _pods(core, sel))) == 2, "a completed Job made more pods"
    default = {
        "metadata": {"name": "one"},
        "spec": {"template": copy.deepcopy(JOB["spec"]["template"])},
    }
    made = batch.create_namespaced_job("default", default)
    assert (made.spec.parallelism, made.spec.completions, made.spec.backoff_limit) == (1, 1, 6)
    _count(core, "job-name=one", 1)
    batch.patch_namespaced_job("one", "default", {"spec": {"suspend": True}})
    _count(core, "job-name=one", 0)
    batch.patch_namespaced_job("one", "default", {"spec": {"suspend": False}})
    _count(core, "job-name=one", 1)


def test_invalid_workloads_are_rejected(apis: tuple[CoreV1Api, AppsV1Api, BatchV1Api]) -> None:
    """422 for a selector that misses the template and for a Job with restartPolicy Always."""
    _, apps, batch = apis
    body = copy.deepcopy(WEB)
    body["spec"]["selector"] = {"matchLabels": {"app": "other"}}
    with pytest.raises(ApiException) as exc:
        apps.create_namespaced_deployment("default", body)
    assert exc.value.status == 422
    job = copy.deepcopy(JOB)
    job["spec"]["template"]["spec"]["restartPolicy"] = "Always"
    with pytest.raises(ApiException) as exc:
        batch.create_namespaced_job("default", job)
    assert exc.value.status == 422
    assert "restartPolicy" in json.loads(exc.value.body)["message"]


def test_controllers_off_make_no_pods() -> None:
    """SimServer(controllers=False) stores workloads but makes no pods and collects nothing."""
    server = SimServer(nodes=1, controllers=False)
    with run_in_thread(server):
        config = kubernetes.client.Configuration(host=server.url)
        with kubernetes.client.ApiClient(config) as api:
            AppsV1Api(api).create_namespaced_deployment("default", copy.deepcopy(WEB))
            BatchV1Api(api).create_namespaced_job("default", copy.deepcopy(JOB))
            assert AppsV1Api(api).list_namespaced_deployment("default").items
            time.sleep(0.3)
            assert CoreV1Api(api).list_namespaced_pod("default").items == []


def test_template_hash_is_stable_and_safe() -> None:
    """Equal templates hash equally; the hash uses kube's safe alphabet only."""
    a = podtemplates.template_hash(WEB["spec"]["template"])
    assert a == podtemplates.template_hash(copy.deepcopy(WEB["spec"]["template"]))
    assert a != podtemplates.template_hash(JOB["spec"]["template"])
    assert re.fullmatch(r"[bcdfghjklmnpqrstvwxz2456789]{1,10}", a)


# -- kubectl --------------------------------------------------------------------------------


def _names(kc: Path, selector: str) -> list[str]:
    return kubectl(kc, "get", "pods", "-l", selector, "-o", "name").split()


def __kubectl_count(kc: Path, selector: str, n: int) -> list[str]:
    got = _wait(lambda: len(_names(kc, selector)) == n)
    assert got, f"want {n} pods for {selector}: {_names(kc, selector)}"
    return _names(kc, selector)


@pytest.fixture
def kubeconfig(tmp_path: Path) -> Iterator[Path]:
    """A running emulator (controllers on, 8 nodes) and a kubeconfig for it."""
    server = SimServer(nodes=8)
    with run_in_thread(server):
        yield server.write_kubeconfig(tmp_path / "kubeconfig")


@needs_kubectl
def test_kubectl_apply_examples_scale_delete(kubeconfig: Path) -> None:
    """apply -f manifests/examples/ makes the pods; get shows the workloads; scale; delete."""
    kc = kubeconfig
    out = kubectl(kc, "apply", "-f", str(EXAMPLES))
    assert "deployment.apps/web-many-per-node created" in out
    assert "job.batch/batch-one-per-node created" in out
    job_pods = __kubectl_count(kc, "job-name=batch-one-per-node", 8)
    __kubectl_count(kc, "app.kubernetes.io/name=web-many-per-node", 40)
    pod = json.loads(kubectl(kc, "get", job_pods[0], "-o", "json"))
    assert pod["spec"]["schedulerName"] == "batch-scheduler"
    assert pod["metadata"]["annotations"]["batch-scheduler.io/batching"] == "true"
    again = kubectl(kc, "apply", "-f", str(EXAMPLES))
    assert "deployment.apps/web-many-per-node unchanged" in again
    assert "job.batch/batch-one-per-node unchanged" in again
    table = _wait(
        lambda: (t := kubectl(kc, "get", "deploy", "web-many-per-node")) and "40" in t and t
    )
    assert table.split()[:5] == ["NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE"]
    assert table.split()[5:8] == ["web-many-per-node", "0/40", "40"]
    jobs = kubectl(kc, "get", "jobs").split()
    assert jobs[:5] == ["NAME", "STATUS", "COMPLETIONS", "DURATION", "AGE"]
    assert jobs[5:8] == ["batch-one-per-node", "Running", "0/8"]
    assert "scaled" in kubectl(kc, "scale", "deploy", "web-many-per-node", "--replicas=3")
    __kubectl_count(kc, "app.kubernetes.io/name=web-many-per-node", 3)
    smaller = WEB | {"spec": WEB["spec"] | {"replicas": 6}}
    assert "configured" in kubectl(kc, "apply", "-f", "-", stdin=yaml.safe_dump(smaller))
    __kubectl_count(kc, "app.kubernetes.io/name=web-many-per-node", 6)
    kubectl(kc, "delete", "-f", str(EXAMPLES))
    assert _wait(lambda: kubectl(kc, "get", "pods", "-o", "name").strip() == "")


@needs_kubectl
def test_kubectl_no_controllers_flag() -> None:
    """sim serve --no-controllers: the examples apply, and no pods appear."""
    with SimProcess(["--nodes", "1", "--no-controllers"]) as sim:
        out = kubectl(sim.kubeconfig, "apply", "-f", str(EXAMPLES))
        assert out.count(" created") == 2
        time.sleep(0.3)
        assert kubectl(sim.kubeconfig, "get", "pods", "-o", "name").strip() == ""
        assert kubectl(sim.kubeconfig, "get", "deploy", "-o", "name").split() == [
            "deployment.apps/web-many-per-node"
        ]
