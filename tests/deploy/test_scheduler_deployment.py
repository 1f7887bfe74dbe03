"""The Deployment, its ConfigMap and Service against the code that reads them.

The configuration goes through our own loader and profile builder; the container args
through the CLI's parser and settings validation; the probe paths and port through the
endpoints the process serves. A drift on either side fails here.
"""

from __future__ import annotations

from pathlib import PurePosixPath
from typing import Any

import pytest
import yaml
from deploy_support import (
    DOCKERFILE,
    EXAMPLES,
    SCHEDULER_NAME,
    container,
    dockerfile_stages,
    documents,
    install_manifests,
    one,
    pods_from_template,
    project_version,
    replicas,
)

import scheduler
from scheduler.app.config_file import read_config
from scheduler.app.endpoints import Endpoints
from scheduler.app.settings import SchedulerSettings
from scheduler.batching.signature import BatchingMode, Signer
from scheduler.cli.main import build_parser
from scheduler.cycle.loop import OpenGate
from scheduler.framework.config import load_config
from scheduler.metrics.registry import Metrics
from scheduler.model.parse import pod_from_raw
from tests.builders import make_node
from tests.harness import drain, scheduler_for


def _config_text() -> str:
    data = one("ConfigMap")["data"]
    assert list(data) == ["config.yaml"]
    return str(data["config.yaml"])


def _args() -> Any:
    return build_parser().parse_args(container(one("Deployment"))["args"])


def _port(name: str) -> int:
    ports = {p["name"]: p["containerPort"] for p in container(one("Deployment"))["ports"]}
    return int(ports[name])


def test_configmap_config_loads_and_builds_a_batching_profile(tmp_path: Any) -> None:
    """The ConfigMap's file loads through read_config and builds a profile that can batch."""
    path = tmp_path / "config.yaml"
    path.write_text(_config_text())
    config = read_config(path)
    assert [p.scheduler_name for p in config.profiles] == [SCHEDULER_NAME]
    scheduler_, _, _ = scheduler_for([make_node("n0")], config=config)
    profile = scheduler_.profiles[SCHEDULER_NAME]
    assert Signer(profile, BatchingMode.ANNOTATED).enabled, "a plugin disables batching"
    assert scheduler_.batches.keys() == {SCHEDULER_NAME}
    assert load_config(yaml.safe_load(_config_text())) == config


def test_leader_election_lease_matches_the_role() -> None:
    """Leader election is on, and its Lease is the one the Role grants, in our namespace."""
    election = load_config(yaml.safe_load(_config_text())).leader_election
    assert election.leader_elect
    role = one("Role")
    assert election.resource_namespace == role["metadata"]["namespace"] == "batch-scheduler"
    names = {n for rule in role["rules"] for n in rule.get("resourceNames", [])}
    assert names == {election.resource_name} == {"batch-scheduler"}


def test_examples_place_one_job_pod_per_node_with_batching() -> None:
    """Offline, with this configuration: the Job's pods take a node each, all but one by hint."""
    config = load_config(yaml.safe_load(_config_text()))
    job = one("Job", documents(EXAMPLES / "job-one-per-node.yaml"))
    count = replicas(job)
    nodes = [make_node(f"n{i}", cpu="4", memory="32Gi") for i in range(count)]
    scheduler_, _, reporter = scheduler_for(nodes, config=config, mode=BatchingMode.ANNOTATED)
    for i, raw in enumerate(pods_from_template(job, count)):
        raw["metadata"]["uid"] = f"uid-{i}"
        raw["metadata"].setdefault("namespace", "default")
        scheduler_.enqueue(pod_from_raw(raw))
    placed = drain(scheduler_)
    assert len(placed) == count
    assert sorted(n for n in placed.values() if n) == sorted(f"n{i}" for i in range(count))
    assert not reporter.unschedulable_messages
    assert (scheduler_.counts().full_passes, scheduler_.counts().batched) == (1, count - 1)


def test_container_args_parse_and_validate() -> None:
    """The Deployment's args are a valid `run` command line with our config and election."""
    deployment = one("Deployment")
    args = _args()
    assert args.command == "run"
    assert args.leader_elect is True
    assert args.batching is BatchingMode.ANNOTATED
    settings = SchedulerSettings(
        secure_port=args.secure_port, metrics_addr="", leader_elect=args.leader_elect
    )
    settings.validate()
    pod = deployment["spec"]["template"]["spec"]
    mount = {m["name"]: m for m in container(deployment)["volumeMounts"]}["config"]
    volume = {v["name"]: v for v in pod["volumes"]}["config"]
    assert volume["configMap"]["name"] == one("ConfigMap")["metadata"]["name"]
    config_path = PurePosixPath(str(args.config))
    assert config_path.parent == PurePosixPath(mount["mountPath"])
    assert config_path.name in one("ConfigMap")["data"]
    assert "command" not in container(deployment), "args only: the image's ENTRYPOINT runs"


def test_metrics_port_probes_and_service_agree_with_the_endpoints() -> None:
    """Probes hit /healthz and /readyz over HTTPS on the --secure-port, which the Service
    exposes; no plain-HTTP port in a deployment."""
    args = _args()
    assert args.metrics_addr is None
    host, port = SchedulerSettings().bind_address, args.secure_port
    assert args.bind_address is None, "kubelet probes and Prometheus come from outside the pod"
    assert port == _port("metrics")
    c = container(one("Deployment"))
    for probe, path in (("livenessProbe", "/healthz"), ("readinessProbe", "/readyz")):
        assert c[probe]["httpGet"] == {"path": path, "port": "metrics", "scheme": "HTTPS"}
    app = Endpoints(metrics=Metrics(), synced=OpenGate(), host=host, port=port).app()
    served = {r.canonical for r in app.router.resources()}
    assert {"/healthz", "/readyz", "/metrics"} <= served
    service = one("Service")
    assert service["spec"]["ports"] == [
        {"name": "metrics", "port": port, "targetPort": "metrics", "protocol": "TCP"}
    ]
    labels = one("Deployment")["spec"]["template"]["metadata"]["labels"]
    assert service["spec"]["selector"].items() <= labels.items()
    annotations = one("Deployment")["spec"]["template"]["metadata"]["annotations"]
    assert annotations["prometheus.io/port"] == str(port)


def test_deployment_shape_and_hardening() -> None:
    """Two replicas, our image and account, requests and limits, a locked-down container."""
    deployment = one("Deployment")
    pod = deployment["spec"]["template"]["spec"]
    c = container(deployment)
    assert deployment["spec"]["replicas"] == 2
    assert c["image"] == f"batch-scheduler:{project_version()}"
    assert scheduler.__version__ == project_version()
    assert pod["serviceAccountName"] == one("ServiceAccount")["metadata"]["name"]
    assert pod["automountServiceAccountToken"] is True
    assert "schedulerName" not in pod, "the default scheduler places the scheduler itself"
    for kind in ("requests", "limits"):
        assert {"cpu", "memory"} <= c["resources"][kind].keys(), kind
    sc = c["securityContext"]
    assert sc["runAsNonRoot"] is True
    assert isinstance(sc["runAsUser"], int)
    assert sc["runAsUser"] > 0
    assert sc["readOnlyRootFilesystem"] is True
    assert sc["allowPrivilegeEscalation"] is False
    assert sc["capabilities"] == {"drop": ["ALL"]}
    assert sc["seccompProfile"] == {"type": "RuntimeDefault"}
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert pod["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}
    _, stages = dockerfile_stages(DOCKERFILE.read_text())
    user = stages[-1].all("USER")[-1].value
    assert user.split(":")[0] == str(sc["runAsUser"]), "the image's USER and runAsUser differ"


@pytest.mark.parametrize("kind", ["Role", "ClusterRole"])
def test_bindings_grant_roles_to_the_service_account(kind: str) -> None:
    """Each role is bound to the scheduler's ServiceAccount, and only to it."""
    binding = one(f"{kind}Binding")
    assert binding["roleRef"] == {
        "apiGroup": "rbac.authorization.k8s.io",
        "kind": kind,
        "name": one(kind)["metadata"]["name"],
    }
    account = one("ServiceAccount")["metadata"]
    assert binding["subjects"] == [
        {"kind": "ServiceAccount", "name": account["name"], "namespace": account["namespace"]}
    ]
    assert len(install_manifests()) == 10


def test_priority_class_and_disruption_budget() -> None:
    """system-cluster-critical, as kube-scheduler; a PodDisruptionBudget that keeps one of
    the replicas through a drain, selecting exactly the Deployment's pods in its namespace."""
    deployment = one("Deployment")
    assert deployment["spec"]["template"]["spec"]["priorityClassName"] == "system-cluster-critical"
    budget = one("PodDisruptionBudget")
    assert budget["apiVersion"] == "policy/v1"
    assert budget["spec"]["minAvailable"] == 1
    assert "maxUnavailable" not in budget["spec"]
    assert budget["spec"]["minAvailable"] < deployment["spec"]["replicas"], "a drain could stall"
    assert budget["metadata"]["namespace"] == deployment["metadata"]["namespace"]
    assert budget["spec"]["selector"] == deployment["spec"]["selector"]
    labels = deployment["spec"]["template"]["metadata"]["labels"]
    assert budget["spec"]["selector"]["matchLabels"].items() <= labels.items()
