"""bench.gang end to end, shrunk: a backlog of gangs on a fresh control plane, each
scheduler started on it, places every member; the infeasible gang is rejected while the
pods beside it bind."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

import pytest

from bench.gang import backlog, shapes

if TYPE_CHECKING:
    from pathlib import Path

NODES = 30


pytestmark = pytest.mark.usefixtures("bench_prerequisites")


@pytest.mark.parametrize("scheduler", ["kube", "ours"])
async def test_gangs_on_a_backlog_bind_whole(scheduler: str, tmp_path: Path) -> None:
    """3 gangs of 6 at 30 nodes: every member bound by the scheduler under test, in 3
    successful group attempts, with the window's figures recorded."""
    shape = dataclasses.replace(shapes.SHAPES["gangs-3x1000"].scaled(NODES), labels="gang")
    record = await backlog.run(shape, scheduler, workdir=tmp_path, wait_s=60)
    assert "failed" not in record, record.get("failure_detail")
    assert record["pods"] == 18
    assert record["group_attempts"] == {"scheduled": 3}
    assert record["group_algorithm_count"] == 3
    assert record["pod_attempts"].get("scheduled", 0) >= 18  # this scheduler did it
    assert record["cpu_s_total"] > 0
    assert record["pods_per_s"] > 0
    assert record["loadavg_before"]
    assert record["loadavg_after"]


async def test_the_infeasible_gang_is_rejected_beside_plain_pods(tmp_path: Path) -> None:
    """Ours with the infeasible gang (pool 3 nodes, 6 members of 3 CPU) and 18 plain pods:
    the plain pods bind, the gang is attempted and found unschedulable, none of it bound."""
    shape = dataclasses.replace(shapes.SHAPES["infeasible"].scaled(NODES), labels="gang")
    record = await backlog.run(shape, "ours", workdir=tmp_path, wait_s=60)
    assert "failed" not in record, record.get("failure_detail")
    assert record["pods"] == 18
    assert record["group_attempts"].get("unschedulable", 0) >= 1
    assert "scheduled" not in record["group_attempts"]
    assert record["decisions"].get("full", 0) >= 2
