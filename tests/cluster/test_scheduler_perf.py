"""bench.scheduler_perf end to end: one of kube's scheduler_perf workloads, shrunk, runs on
a fresh control plane for kube-scheduler and for ours, each scheduling its own pods."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from bench.scheduler_perf import runner
from bench.scheduler_perf.suite import load_suite, select

if TYPE_CHECKING:
    from pathlib import Path

# The control plane and kube's scheduler_perf files, or a skip (a failure when required).
pytestmark = pytest.mark.usefixtures("bench_prerequisites")

MEASURE = 60


def _workload(test: str, overrides: dict[str, int]) -> runner.WorkloadPlan:
    """The one workload ``test`` selects, shrunk by ``overrides``."""
    (selected,) = select(load_suite(), test=test, overrides=overrides)
    return runner.plan(selected)


@pytest.mark.parametrize("scheduler", ["kube", "ours"])
async def test_a_tiny_schedulingbasic_runs_for_each_scheduler(
    scheduler: str, tmp_path: Path
) -> None:
    """SchedulingBasic at 20 nodes: every measured pod is scheduled by the scheduler under
    test, and the record carries its CPU, memory and SLI figures."""
    workload = _workload(
        "^SchedulingBasic/5000Nodes_10000Pods$",
        {"initNodes": 20, "initPods": 10, "measurePods": MEASURE},
    )
    record = await runner.run(workload, scheduler, workdir=tmp_path, wait_timeout=120)
    assert "failed" not in record, record.get("failure_detail")
    assert "skipped" not in record
    assert record["pods_scheduled"] == MEASURE
    assert record["attempts"].get("scheduled", 0) >= MEASURE  # the scheduler did it
    assert record["SchedulingSLI_ms"] is not None
    assert record["rss_mb"] > 0
    assert record["cpu_s_total"] > 0
    assert record["overridden"] == {"initNodes": 20, "initPods": 10, "measurePods": MEASURE}


SPREAD = 40


@pytest.mark.parametrize("scheduler", ["kube", "ours"])
async def test_spread_pods_with_labels_of_their_own_take_ours_exact_path(
    scheduler: str, tmp_path: Path
) -> None:
    """TopologySpreading at 6 nodes: kube's runner gives each spread pod a ``signature``
    label of its own, which no term reads. Both schedulers schedule every measured pod;
    kube-scheduler batches none of them (it signs no spread pod), ours places all but the
    first of them on the exact path (a full pass's node, without the full pass)."""
    workload = _workload(
        "^TopologySpreading/5000Nodes_5000Pods$",
        {"initNodes": 6, "initPods": 6, "measurePods": SPREAD},
    )
    record = await runner.run(workload, scheduler, workdir=tmp_path, wait_timeout=120)
    assert "failed" not in record, record.get("failure_detail")
    assert record["pods_scheduled"] == SPREAD
    if scheduler == "kube":
        assert record["exact_batch"] == {}
    else:
        assert record["exact_batch"] == {"built": 1, "no_state": 1, "placed": SPREAD - 1}
