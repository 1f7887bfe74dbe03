"""Informer semantics on the real API server: nodes and pods deleted while the scheduler is
cut off, then history compacted, so that its watches resume into 410 Gone and kopf re-lists
(which reports nothing about what vanished). The cache must equal the API right after that
re-list — not at the next periodic reconcile, which these schedulers run every 600 s.

kube-apiserver runs here with ``--watch-cache=false`` and a 1 s etcd compaction interval:
with its watch cache on, a resume within the cache's window is replayed from memory and
never sees 410, so the re-list path would go unexercised.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

import kubernetes
import pytest

from controlplane.launcher import ControlPlane
from scheduler.sim import workload
from tests.cluster.conftest import assert_no_forbidden, create_many, placements, pod
from tests.cluster.partition import Partition
from tests.scheduler_process import SchedulerProc, wait_for

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

NODES = 10
KEEP = 2
SLOTS = 10
"""Pods per node: the kept nodes are filled, so ghost pods would leave no room."""
NO_RESYNC = ("--resync-interval", "600")


@pytest.fixture(scope="module")
def compacting(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ControlPlane]:
    with ControlPlane.start(
        tmp_path_factory.mktemp("compacting"),
        controller_manager=False,
        apiserver_args=("--watch-cache=false", "--etcd-compaction-interval=1s"),
    ) as cp:
        cp.request(
            "POST",
            "/api/v1/namespaces/default/serviceaccounts",
            {"metadata": {"name": "default"}},
        )
        yield cp


def _cache(proc: SchedulerProc, what: str) -> float:
    return proc.metric(f"batch_scheduler_cache_{what}")


def test_nodes_and_pods_deleted_across_a_compaction_leave_no_ghosts(
    compacting: ControlPlane, tmp_path: Path
) -> None:
    api = kubernetes.config.new_client_from_config(config_file=str(compacting.admin_kubeconfig))
    core = kubernetes.client.CoreV1Api(api)
    made = workload.make_nodes(NODES, prefix="ghost-", pods=str(SLOTS))
    for node in made:
        core.create_node(node)
    names = [n["metadata"]["name"] for n in made]
    kept, doomed = names[:KEEP], names[KEEP:]
    running: list[dict[str, Any]] = []
    for node in kept:
        for i in range(SLOTS):
            body = pod(f"old-{node}-{i}")
            body["spec"]["nodeName"] = node
            running.append(body)
    create_many(core, "default", running)

    port = int(compacting.api_url.rsplit(":", 1)[1])
    with Partition(port) as partition:
        kubeconfig = partition.rewrite(compacting.scheduler_kubeconfig, tmp_path / "kc")
        proc = SchedulerProc(kubeconfig, tmp_path / "scheduler.log", *NO_RESYNC)
        try:
            proc.wait_ready(60)
            assert wait_for(lambda: _cache(proc, "nodes") == NODES, 15)
            assert wait_for(lambda: _cache(proc, "pods") == KEEP * SLOTS, 15)
            # No early reconcile any more: the safety net first runs after 600 s (NO_RESYNC).

            partition.cut()
            for name in doomed:
                core.delete_node(name)
            for body in running:
                core.delete_namespaced_pod(
                    body["metadata"]["name"], "default", grace_period_seconds=0
                )
            time.sleep(4)  # several compactions: the watches' versions are history now
            partition.heal()
            healed = time.monotonic()

            # Only the re-list can fix the cache within this bound (the reconcile is 600 s off).
            assert wait_for(lambda: _cache(proc, "nodes") == KEEP, 20), _cache(proc, "nodes")
            assert wait_for(lambda: _cache(proc, "pods") == 0, 20), _cache(proc, "pods")
            caught_up = time.monotonic() - healed

            fresh = [pod(f"new-{i}") for i in range(KEEP * SLOTS)]
            create_many(core, "default", fresh)

            def bound() -> dict[str, str | None]:
                seen = placements(core, "default")
                return {p["metadata"]["name"]: seen.get(p["metadata"]["name"]) for p in fresh}

            assert wait_for(lambda: all(bound().values()), 30), bound()
            assert set(bound().values()) <= set(kept), bound()
            assert proc.metric("scheduler_schedule_attempts_total", result="unschedulable") == 0
            assert proc.metric("batch_scheduler_cache_repairs_total") == 0
        finally:
            code = proc.terminate()
    assert code == 0, proc.stderr()[-3000:]
    assert "Traceback" not in proc.stderr()
    assert_no_forbidden(proc)
    print(f"cache equal to the API {caught_up:.1f} s after the partition healed")
