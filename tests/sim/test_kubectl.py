"""The installed kubectl against the emulator: get, watch, apply, describe, delete."""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from typing import TYPE_CHECKING

import pytest

from scheduler.sim.server import SimServer, run_in_thread
from tests.sim.kubectl_helpers import kubectl

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

pytestmark = pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl not installed")

POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: web
  labels: {app: web}
spec:
  schedulerName: batch-scheduler
  containers:
  - name: c
    image: nginx
    resources: {requests: {cpu: 100m}}
"""


@pytest.fixture
def kubeconfig(tmp_path: Path) -> Iterator[tuple[SimServer, Path]]:
    """A running emulator with 2 nodes and a kubeconfig for it.

    No token: kubectl never sends bearer tokens over plain http.
    """
    server = SimServer(nodes=2)
    with run_in_thread(server):
        yield server, server.write_kubeconfig(tmp_path / "kubeconfig")


def test_get_apply_describe_delete(kubeconfig: tuple[SimServer, Path]) -> None:
    """kubectl lists nodes, applies twice (create, then patch), describes events, deletes."""
    _server, kc = kubeconfig
    nodes = kubectl(kc, "get", "nodes", "-o", "name").split()
    assert nodes == ["node/node-0", "node/node-1"]
    assert "pod/web created" in kubectl(kc, "apply", "-f", "-", stdin=POD)
    changed = POD.replace("100m", "200m")
    assert "pod/web configured" in kubectl(kc, "apply", "-f", "-", stdin=changed)
    pod = json.loads(kubectl(kc, "get", "po", "web", "-o", "json"))
    assert pod["spec"]["containers"][0]["resources"]["requests"]["cpu"] == "200m"
    event = {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": "web.1"},
        "involvedObject": {
            "kind": "Pod",
            "name": "web",
            "namespace": "default",
            "uid": pod["metadata"]["uid"],
        },
        "reason": "Scheduled",
        "message": "Successfully assigned default/web to node-0",
        "type": "Normal",
        "source": {"component": "batch-scheduler"},
        "firstTimestamp": pod["metadata"]["creationTimestamp"],
        "lastTimestamp": pod["metadata"]["creationTimestamp"],
        "count": 1,
    }
    kubectl(kc, "create", "-f", "-", stdin=json.dumps(event))
    described = kubectl(kc, "describe", "pod", "web")
    assert "Successfully assigned default/web to node-0" in described
    assert "batch-scheduler" in described
    table = kubectl(kc, "get", "pods", "-o", "wide").splitlines()
    assert table[0].split()[:6] == ["NAME", "READY", "STATUS", "RESTARTS", "AGE", "IP"]
    assert table[1].split()[:3] == ["web", "0/1", "Pending"]
    assert 'pod "web" deleted' in kubectl(kc, "delete", "pod", "web", "--wait=false")
    assert kubectl(kc, "get", "pods", "-o", "name").strip() == ""


def test_get_pods_watch_streams_changes(kubeconfig: tuple[SimServer, Path]) -> None:
    """kubectl get pods -w prints the pod again when it changes."""
    _, kc = kubeconfig
    kubectl(kc, "apply", "-f", "-", stdin=POD)
    watcher = subprocess.Popen(
        ["kubectl", "--kubeconfig", str(kc), "get", "pods", "-w", "--no-headers"],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert watcher.stdout is not None
        first = watcher.stdout.readline()
        time.sleep(0.2)
        kubectl(kc, "label", "pod", "web", "x=1")
        second = watcher.stdout.readline()
    finally:
        watcher.kill()
        watcher.wait()
        if watcher.stdout is not None:
            watcher.stdout.close()
    assert first.split()[0] == "web"
    assert second.split()[0] == "web"
