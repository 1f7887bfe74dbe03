"""Two replicas with ``--leader-elect`` on a real Lease, as our Deployment runs them."""

from __future__ import annotations

from typing import TYPE_CHECKING

import kubernetes

from tests.cluster.conftest import (
    assert_no_forbidden,
    bound_once,
    create_many,
    deployed_config,
    pod,
    start_scheduler,
)
from tests.scheduler_process import wait_for

if TYPE_CHECKING:
    from pathlib import Path

    from controlplane.launcher import ControlPlane

LEASE = ("batch-scheduler", "batch-scheduler")
"""(namespace, name) of the Lease in manifests/06-configmap.yaml, which the Role allows."""


def _holder(api: kubernetes.client.ApiClient) -> str:
    try:
        lease = kubernetes.client.CoordinationV1Api(api).read_namespaced_lease(LEASE[1], LEASE[0])
    except kubernetes.client.ApiException:
        return ""
    return str(lease.spec.holder_identity or "")


def _all_bound(core: kubernetes.client.CoreV1Api, namespace: str, count: int) -> bool:
    pods = core.list_namespaced_pod(namespace).items
    return len(pods) == count and all(p.spec.node_name for p in pods)


def test_one_leader_binds_and_the_follower_takes_over_after_a_kill(
    control_plane: ControlPlane,
    admin_api: kubernetes.client.ApiClient,
    core: kubernetes.client.CoreV1Api,
    namespace: str,
    nodes: list[str],
    tmp_path: Path,
) -> None:
    config = deployed_config(
        tmp_path / "config.yaml", leaseDuration="4s", renewDeadline="3s", retryPeriod="1s"
    )
    args = ("--config", str(config), "--leader-elect")
    first = start_scheduler(control_plane, tmp_path / "first.log", *args)
    second = start_scheduler(control_plane, tmp_path / "second.log", *args)
    procs = [first, second]
    try:
        by_id = {p.identity: p for p in procs}
        holder = wait_for(lambda: _holder(admin_api) if _holder(admin_api) in by_id else "", 30)
        assert holder, "nobody took the Lease"
        leader = by_id[holder]
        follower = second if leader is first else first

        create_many(core, namespace, [pod(f"led-{i}") for i in range(40)])
        assert wait_for(lambda: _all_bound(core, namespace, 40), 30)
        binds = "batch_scheduler_binds_total"
        assert wait_for(lambda: leader.metric(binds, result="success") >= 40)
        assert follower.metric(binds, result="success") == 0

        leader.kill()  # SIGKILL: the Lease is not released, it must expire
        create_many(core, namespace, [pod(f"after-{i}") for i in range(40)])
        assert wait_for(lambda: _holder(admin_api) == follower.identity, 30), _holder(admin_api)
        assert wait_for(lambda: _all_bound(core, namespace, 80), 30)
        counts = bound_once(procs)
        twice = {k: n for k, n in counts.items() if n > 1}
        assert not twice, twice
        assert {f"{namespace}/after-{i}" for i in range(40)} <= set(counts)
    finally:
        for proc in procs:
            proc.terminate()
    for proc in procs:
        assert "Traceback" not in proc.stderr(), proc.stderr()[-3000:]
        assert_no_forbidden(proc)
