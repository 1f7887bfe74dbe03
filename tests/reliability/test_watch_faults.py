"""Watches dropped every 2 s and the history compacted every 10 s while a burst is scheduled.

A dropped watch resumes from its last resourceVersion; before each compaction the emulator
holds watches off for half a second (a partition), so the resumes after it get 410 Gone and
kopf re-lists, without DELETED events for what vanished meanwhile. In those two gaps the
test deletes the pods another scheduler had bound (a quarter of the general pool) and the
spare nodes. The cache must reconcile:
no ghost pod may keep holding capacity (the fill pool must end exactly full), no ghost node
may keep attracting pods, and at the end the scheduler holds exactly the API's nodes and
assigned pods.
"""

from __future__ import annotations

import asyncio
import threading
import time
from typing import TYPE_CHECKING, Any

import pytest

from scheduler.sim import workload as simwork
from scheduler.sim.faults import FaultConfig
from tests.reliability import invariants
from tests.reliability.support import (
    Api,
    Figures,
    MakeSim,
    create_paced,
    mixed_workload,
    settle,
    verify,
)
from tests.scheduler_process import SchedulerProc, wait_for

if TYPE_CHECKING:
    from pathlib import Path

    from scheduler.sim.server import SimServer

pytestmark = [pytest.mark.reliability, pytest.mark.timeout(150)]

DROP_EVERY, COMPACT_EVERY = 2.0, 10.0
PACE = 20.0
"""Pods created per second: the burst spans several drops and at least two compactions."""
SPARE_NODES = 6
"""Nodes nobody selects, deleted mid-burst: a ghost of one would be a bind target."""


def _squatters(nodes: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One 1-CPU pod already bound (by another scheduler) to each general node."""
    general = [n["metadata"]["name"] for n in nodes if n["metadata"]["labels"]["pool"] == "general"]
    pods = simwork.make_pods(len(general), prefix="w-squat-", cpu="1", memory="256Mi")
    for pod, node in zip(pods, general, strict=True):
        pod["spec"]["nodeName"] = node
    return pods


def _delete_in_gaps(sim: SimServer, api: Api, paths: list[str], done: threading.Event) -> None:
    """Delete half of ``paths`` during each of the next two partitions before a compaction:
    the watchers resume after the compaction and get 410, so no DELETED ever reaches them."""
    for share in (paths[::2], paths[1::2]):
        while (
            sim.run_sync(lambda: sim.api.watches_held_until - asyncio.get_running_loop().time())
            <= 0.2
        ):
            time.sleep(0.02)
        for path in share:
            api.write("DELETE", path)
    done.set()


def test_dropped_and_compacted_watches_leave_no_ghosts(
    make_sim: MakeSim, tmp_path: Path, figures: Figures
) -> None:
    faults = FaultConfig(drop_watches_every=DROP_EVERY, compact_every=COMPACT_EVERY, seed=5)
    sim, api, kubeconfig = make_sim(faults)
    work = mixed_workload("w-", general=20, per_node=16, overflow=10, zone_pods=60)
    spares = simwork.make_nodes(SPARE_NODES, prefix="w-spare-", labels={"pool": "spare"})
    squatters = _squatters(work.nodes)
    create_paced(api, work.nodes + spares)
    create_paced(api, squatters)
    proc = SchedulerProc(kubeconfig, tmp_path / "scheduler.log")
    try:
        proc.wait_ready()
        assert wait_for(lambda: proc.metric("batch_scheduler_cache_pods") == len(squatters), 10)
        started = time.monotonic()
        doomed = [f"/api/v1/namespaces/default/pods/{p['metadata']['name']}" for p in squatters]
        doomed += [f"/api/v1/nodes/{n['metadata']['name']}" for n in spares]
        deleted = threading.Event()
        deleter = threading.Thread(
            target=_delete_in_gaps, args=(sim, api, doomed, deleted), daemon=True
        )
        deleter.start()
        create_paced(api, work.pods, per_second=PACE)
        deleter.join(2.5 * COMPACT_EVERY)
        assert deleted.is_set(), "the deletions did not finish"
        ok, _, pods = settle(api, work, [proc], timeout=60)
        seconds = round(time.monotonic() - started, 1)
        report = verify(api, work, pods)
        assert ok, "did not settle"

        # No ghosts: the scheduler holds exactly what the API has.
        nodes = api.nodes()
        assigned = sum(1 for p in api.pods() if (p.get("spec") or {}).get("nodeName"))
        assert wait_for(lambda: proc.metric("batch_scheduler_cache_nodes") == len(nodes), 10)
        assert wait_for(lambda: proc.metric("batch_scheduler_cache_pods") == assigned, 10)
        spare_names = {n["metadata"]["name"] for n in spares}
        on_spares = [
            invariants.pod_key(p)
            for p in pods
            if (p.get("spec") or {}).get("nodeName") in spare_names
        ]
        assert not on_spares, on_spares  # nothing selects them; a ghost would still not fit

        stats = api.stats()
        assert stats.get("watch_drops", 0) >= 8, stats
        assert stats.get("compactions", 0) >= 2, stats
        assert stats.get("watches_expired", 0) >= 1, stats
        removed = proc.events("reconcile_removed")
        reconciled_pods = sum(int(r.get("pods", 0)) for r in removed)
        reconciled_nodes = sum(len(r.get("nodes", [])) for r in removed)
        # Deleted while nobody watched: only the reconcile can have removed them.
        assert reconciled_pods == len(squatters), removed
        assert reconciled_nodes == SPARE_NODES, removed
        figures.record(
            **report.figures(),
            watch_drops=stats.get("watch_drops", 0),
            compactions=stats.get("compactions", 0),
            watches_expired_410=stats.get("watches_expired", 0),
            deleted_pods=len(squatters),
            deleted_nodes=SPARE_NODES,
            reconciled_pods=reconciled_pods,
            reconciled_nodes=reconciled_nodes,
            ghosts_at_end=0,
            settle_s=seconds,
        )
        left = {invariants.pod_key(p) for p in pods} & {invariants.pod_key(p) for p in squatters}
        assert not left, left
    finally:
        code = proc.terminate()
    proc.assert_clean_exit(code)
