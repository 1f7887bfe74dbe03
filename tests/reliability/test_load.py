"""Load: 20000 pods on 1000 nodes created in one burst: all bound, memory bounded, no queue or
task left behind.

The pods come from 32 concurrent clients as fast as the emulator takes them (about a minute
of work for the emulator and the scheduler on this 2-core machine). Before the burst and
after it has settled the scheduler's own gauges are read: asyncio tasks (a leak grows with
every pod), queued pods, assumed pods; its peak resident memory (VmHWM) must stay under a
bound that holds the cache of 20000 pods with room to spare but not a copy per event.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

import pytest

from scheduler.sim import workload as simwork
from tests.reliability.support import Figures, MakeSim, create_concurrently
from tests.scheduler_process import BATCHING, SCHEDULER, SchedulerProc, wait_for

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

pytestmark = [pytest.mark.reliability, pytest.mark.timeout(400)]

NODES, PODS = 1000, 20000
PEAK_RSS_MB = 600
"""Peak RSS bound. Measured about half of it (docs/reliability.md); a per-event leak or an
unbounded queue of 20000 items with their objects would cross it."""
TASK_SLACK = 5
"""Tasks that may come and go at any moment (a bind or report in flight, a reconcile)."""


def _vm_kb(pid: int, key: str) -> int:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    return 0


def _wait_quiet(version: Callable[[], int], quiet_s: float, timeout: float) -> bool:
    """Wait until ``version()`` has not changed for ``quiet_s`` seconds."""
    deadline = time.monotonic() + timeout
    last, since = version(), time.monotonic()
    while time.monotonic() < deadline:
        time.sleep(0.5)
        now = version()
        if now != last:
            last, since = now, time.monotonic()
        elif time.monotonic() - since >= quiet_s:
            return True
    return False


def test_twenty_thousand_pods_on_a_thousand_nodes(
    make_sim: MakeSim, tmp_path: Path, figures: Figures
) -> None:
    sim, api, kubeconfig = make_sim(nodes=0)
    create_concurrently(api, simwork.make_nodes(NODES, cpu="32", pods="110"))
    proc = SchedulerProc(kubeconfig, tmp_path / "scheduler.log")
    try:
        proc.wait_ready(60)
        assert wait_for(lambda: proc.metric("batch_scheduler_cache_nodes") == NODES, 10)
        time.sleep(1.5)  # gauges refresh every second
        tasks_before = proc.metric("batch_scheduler_asyncio_tasks")
        rss_before = _vm_kb(proc.proc.pid, "VmRSS") / 1024

        pods = simwork.make_pods(
            PODS,
            prefix="load-",
            scheduler_name=SCHEDULER,
            cpu="500m",
            memory="1Gi",
            annotations=BATCHING,
        )
        started = time.monotonic()
        created = create_concurrently(api, pods, concurrency=32)
        create_s = time.monotonic() - started
        assert created == PODS

        def bound() -> int:
            return sum(1 for p in api.pods() if (p.get("spec") or {}).get("nodeName"))

        assert wait_for(lambda: bound() == PODS, 300, 2.0), f"{bound()} of {PODS} bound"
        settle_s = time.monotonic() - started
        # Idle afterwards: nothing queued, nothing assumed, every pod in the cache.
        assert wait_for(
            lambda: (
                proc.metric("scheduler_pending_pods") == 0
                and proc.metric("batch_scheduler_cache_pods") == PODS
            ),
            20,
        )
        # The emulator's kubelet goes on starting pods (MODIFIED events, each a short-lived
        # kopf worker task); once the API is quiet the tasks must be back where they were.
        quiet = _wait_quiet(lambda: sim.store.rv, quiet_s=3.0, timeout=60)
        assert quiet, "the API never went quiet"
        assert wait_for(
            lambda: proc.metric("batch_scheduler_asyncio_tasks") <= tasks_before + TASK_SLACK, 15
        )
        tasks_after = proc.metric("batch_scheduler_asyncio_tasks")
        peak_mb = _vm_kb(proc.proc.pid, "VmHWM") / 1024
        rss_after = _vm_kb(proc.proc.pid, "VmRSS") / 1024
        assert tasks_after <= tasks_before + TASK_SLACK, (tasks_before, tasks_after)
        assert peak_mb < PEAK_RSS_MB, peak_mb

        binds = proc.metric("batch_scheduler_binds_total", result="success")
        batched = proc.metric("scheduler_batch_attempts_total", result="hint_used")
        per_node: dict[str, int] = {}
        for p in api.pods():
            node = p["spec"]["nodeName"]
            per_node[node] = per_node.get(node, 0) + 1
        assert binds == PODS  # each pod bound once, by us
        assert max(per_node.values()) <= 64  # 32 CPU / 500m: never over-committed
        dropped = proc.metric("batch_scheduler_events_dropped_total")
        figures.record(
            pods=PODS,
            nodes=NODES,
            bound=PODS,
            lost=0,
            overcommits=0,
            create_s=round(create_s, 1),
            settle_s=round(settle_s, 1),
            pods_per_s=round(PODS / settle_s),
            batched=int(batched),
            tasks_before=int(tasks_before),
            tasks_after=int(tasks_after),
            rss_before_mb=round(rss_before),
            rss_after_mb=round(rss_after),
            peak_rss_mb=round(peak_mb),
            scheduled_events_dropped=int(dropped),
            watch_events_sim=sim.store.rv,
        )
    finally:
        code = proc.terminate(60)
    proc.assert_clean_exit(code)
