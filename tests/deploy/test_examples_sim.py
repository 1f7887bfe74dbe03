"""The examples against the emulator with the installed kubectl, scheduled by a real `run`.

The emulator (``scheduler.sim``) runs here with ``--no-controllers``: a Job or Deployment
applied to it creates no pods of its own. So the pods a Job or
ReplicaSet controller would create are made from each example's pod template (names
``<workload>-<i>``) and applied with kubectl; ``batch-scheduler run`` then starts with the
Deployment's own container args (the ConfigMap's file as ``--config``, ``--leader-elect``),
only the kubeconfig and a free loopback metrics port added, and must bind them all.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import urllib.error
import urllib.request
from typing import TYPE_CHECKING, Any

import pytest
import yaml
from deploy_support import (
    EXAMPLES,
    MANIFESTS,
    container,
    documents,
    free_port,
    one,
    pods_from_template,
    replicas,
    wait_for,
)
from prometheus_client.parser import text_string_to_metric_families

from scheduler.sim.process import SimProcess

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

pytestmark = pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl not installed")

JOB = one("Job", documents(EXAMPLES / "job-one-per-node.yaml"))
WEB = one("Deployment", documents(EXAMPLES / "deployment-many-per-node.yaml"))
NODES = replicas(JOB)  # one 4-CPU node per 3-CPU Job pod


def kubectl(kubeconfig: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(
        ["kubectl", "--kubeconfig", str(kubeconfig), *args],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    if check:
        assert proc.returncode == 0, f"kubectl {' '.join(args)}: {proc.stderr}"
    return proc


@pytest.fixture(scope="module")
def sim() -> Iterator[SimProcess]:
    """The emulator in its own process with one default node (4 CPU, 32Gi) per Job pod.

    No controllers: the applied examples must not add pods beside those made below.
    """
    with SimProcess(["--nodes", str(NODES), "--no-controllers"]) as process:
        yield process


def _pods(sim: SimProcess, prefix: str) -> list[dict[str, Any]]:
    with urllib.request.urlopen(f"{sim.url}/api/v1/namespaces/default/pods", timeout=5) as r:
        items = json.load(r)["items"]
    return [p for p in items if p["metadata"]["name"].startswith(prefix + "-")]


def _apply_pods(sim: SimProcess, workload: dict[str, Any], tmp_path: Path) -> list[str]:
    pods = pods_from_template(workload, replicas(workload))
    path = tmp_path / f"{workload['metadata']['name']}-pods.yaml"
    path.write_text(yaml.safe_dump_all(pods))
    out = kubectl(sim.kubeconfig, "apply", "-f", str(path)).stdout
    assert out.count(" created") == len(pods), out
    return [p["metadata"]["name"] for p in pods]


def _all_bound(sim: SimProcess, prefix: str, count: int) -> dict[str, str] | None:
    nodes = {p["metadata"]["name"]: p["spec"].get("nodeName") for p in _pods(sim, prefix)}
    if len(nodes) == count and all(nodes.values()):
        return nodes
    return None


def _get(port: int, path: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=2) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, ""
    except OSError:
        return 0, ""


def _metric(port: int, name: str, **labels: str) -> float:
    status, text = _get(port, "/metrics")
    assert status == 200
    return sum(
        s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
        if s.name == name and labels.items() <= s.labels.items()
    )


def _deployment_args(config: Path, port: int, kubeconfig: Path) -> list[str]:
    """The Deployment's args, with the config path and the metrics address made local."""
    args = []
    for arg in container(one("Deployment"))["args"]:
        if arg.startswith("--config="):
            arg = f"--config={config}"
        elif arg.startswith("--secure-port="):
            # The test reads plain HTTP: the secure port is off, --metrics-addr local.
            args += ["--secure-port=0", f"--metrics-addr=127.0.0.1:{port}"]
            continue
        args.append(arg)
    assert f"--config={config}" in args
    assert f"--metrics-addr=127.0.0.1:{port}" in args
    return [*args, "--kubeconfig", str(kubeconfig)]


def test_namespace_manifest_applies(sim: SimProcess) -> None:
    """kubectl applies manifests/00-namespace.yaml to the emulator (the Lease lives there)."""
    out = kubectl(sim.kubeconfig, "apply", "-f", str(MANIFESTS / "00-namespace.yaml")).stdout
    assert "namespace/batch-scheduler" in out
    assert kubectl(sim.kubeconfig, "get", "namespace", "batch-scheduler", "-o", "name").stdout


@pytest.mark.parametrize("name", ["job-one-per-node.yaml", "deployment-many-per-node.yaml"])
def test_example_file_applies_as_is(sim: SimProcess, name: str) -> None:
    """kubectl apply -f manifests/examples/<file> against the emulator."""
    kubectl(sim.kubeconfig, "apply", "-f", str(EXAMPLES / name))


def test_example_pods_get_scheduled_by_run(sim: SimProcess, tmp_path: Path) -> None:
    """run (Deployment args) binds the Job's pods one per node, then the web pods, batching."""
    kubectl(sim.kubeconfig, "apply", "-f", str(MANIFESTS / "00-namespace.yaml"))
    job_pods = _apply_pods(sim, JOB, tmp_path)
    config = tmp_path / "config.yaml"
    config.write_text(one("ConfigMap")["data"]["config.yaml"])
    port = free_port()
    log = (tmp_path / "scheduler.log").open("w")
    proc = subprocess.Popen(
        [sys.executable, "-m", "scheduler", *_deployment_args(config, port, sim.kubeconfig)],
        stdout=subprocess.DEVNULL,
        stderr=log,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    try:
        ready = wait_for(lambda: _get(port, "/readyz")[0] == 200 or proc.poll() is not None, 20)
        assert proc.poll() is None, (tmp_path / "scheduler.log").read_text()
        assert ready
        assert _get(port, "/healthz")[0] == 200
        placed = wait_for(lambda: _all_bound(sim, JOB["metadata"]["name"], len(job_pods)), 20)
        assert placed, f"not all bound: {_pods(sim, JOB['metadata']['name'])}"
        assert len(set(placed.values())) == NODES, f"two 3-CPU pods on one node: {placed}"
        web_pods = _apply_pods(sim, WEB, tmp_path)
        web = wait_for(lambda: _all_bound(sim, WEB["metadata"]["name"], len(web_pods)), 20)
        assert web, "not all web pods bound"
        hinted = _metric(port, "scheduler_batch_attempts_total", result="hint_used")
        assert hinted >= NODES - 1, f"batching placed only {hinted} pods"
        got = kubectl(sim.kubeconfig, "get", "lease", "-n", "batch-scheduler", "-o", "json")
        (lease,) = json.loads(got.stdout)["items"]
        assert lease["metadata"]["name"] == "batch-scheduler"
        assert lease["spec"]["holderIdentity"], "leader election did not take the Lease"
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
        try:
            code = proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            code = proc.wait()
        log.close()
    stderr = (tmp_path / "scheduler.log").read_text()
    assert code == 0, stderr
    assert "Traceback" not in stderr
