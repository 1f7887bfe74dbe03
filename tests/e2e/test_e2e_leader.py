"""Two replicas with --leader-elect: only the Lease holder binds; SIGTERM hands over cleanly."""

from __future__ import annotations

import contextlib
import json
from typing import TYPE_CHECKING, Any

import kubernetes
import pytest

from scheduler.sim import workload
from scheduler.sim.server import SimServer, run_in_thread
from tests.scheduler_process import SCHEDULER, SchedulerProc, wait_for

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

pytestmark = pytest.mark.e2e

CONFIG = """\
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
leaderElection:
  leaderElect: true
  leaseDuration: 3s
  renewDeadline: 2s
  retryPeriod: 500ms
  resourceNamespace: kube-system
  resourceName: batch-scheduler
"""


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[tuple[Path, kubernetes.client.ApiClient]]:
    """A fresh emulator with 2 nodes: its kubeconfig and an official API client."""
    server = SimServer(nodes=2, bookmark_interval=0.5)
    with run_in_thread(server) as url:
        config = kubernetes.client.Configuration(host=url)
        with kubernetes.client.ApiClient(config) as api:
            yield server.write_kubeconfig(tmp_path / "kubeconfig"), api


def _identity(proc: SchedulerProc) -> str:
    for line in proc.stderr().splitlines():
        with contextlib.suppress(ValueError):
            record: dict[str, Any] = json.loads(line)
            if record.get("event") == "scheduler_starting":
                return str(record["identity"])
    raise AssertionError(f"no scheduler_starting line:\n{proc.stderr()}")


def _holder(api: kubernetes.client.ApiClient) -> str:
    coordination = kubernetes.client.CoordinationV1Api(api)
    try:
        lease = coordination.read_namespaced_lease("batch-scheduler", "kube-system")
    except kubernetes.client.ApiException:
        return ""
    return str(lease.spec.holder_identity or "")


def _bound(core: kubernetes.client.CoreV1Api, prefix: str, count: int) -> bool:
    pods = [
        p for p in core.list_namespaced_pod("default").items if p.metadata.name.startswith(prefix)
    ]
    return len(pods) == count and all(p.spec.node_name for p in pods)


def _binds(proc: SchedulerProc) -> float:
    return proc.metric("batch_scheduler_binds_total", result="success")


def test_only_the_leader_binds_and_the_follower_takes_over_on_sigterm(
    cluster: tuple[Path, kubernetes.client.ApiClient], tmp_path: Path
) -> None:
    """The Lease holder binds, the follower does not; SIGTERM exits 0 and releases the Lease."""
    kubeconfig, api = cluster
    core = kubernetes.client.CoreV1Api(api)
    config = tmp_path / "config.yaml"
    config.write_text(CONFIG)
    args = ("--config", str(config), "--leader-elect")
    first = SchedulerProc(kubeconfig, tmp_path / "first.log", *args)
    second = SchedulerProc(kubeconfig, tmp_path / "second.log", *args)
    try:
        first.wait_ready()
        second.wait_ready()  # followers are ready too: they only wait for the Lease
        procs = {_identity(first): first, _identity(second): second}
        holder = wait_for(lambda: _holder(api) if _holder(api) in procs else "")
        assert holder, "nobody took the Lease"
        leader = procs[holder]
        follower = second if leader is first else first
        assert wait_for(lambda: leader.metric("batch_scheduler_is_leader") == 1)
        assert follower.metric("batch_scheduler_is_leader") == 0

        for pod in workload.make_pods(6, prefix="led-", scheduler_name=SCHEDULER):
            core.create_namespaced_pod("default", pod)
        assert wait_for(lambda: _bound(core, "led-", 6))
        assert wait_for(lambda: _binds(leader) == 6)
        assert _binds(follower) == 0

        assert leader.terminate() == 0
        assert "Traceback" not in leader.stderr()
        assert "lease_released" in leader.log_events()
        follower_id = next(i for i, p in procs.items() if p is follower)
        assert wait_for(lambda: _holder(api) == follower_id), _holder(api)
        assert wait_for(lambda: follower.metric("batch_scheduler_is_leader") == 1)

        for pod in workload.make_pods(4, prefix="after-", scheduler_name=SCHEDULER):
            core.create_namespaced_pod("default", pod)
        assert wait_for(lambda: _bound(core, "after-", 4))
        assert wait_for(lambda: _binds(follower) == 4), _binds(follower)
    finally:
        codes = [first.terminate(), second.terminate()]
    assert codes == [0, 0], (first.stderr()[-2000:], second.stderr()[-2000:])
    assert "Traceback" not in second.stderr()
