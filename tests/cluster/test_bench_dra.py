"""bench.dra end to end, shrunk: DRA pods from one ResourceClaimTemplate, their claims made
by kube-controller-manager before the scheduler starts; each scheduler binds every pod
with its claim allocated on the pod's node and reserved for it; ours batches them."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from bench.dra import backlog

if TYPE_CHECKING:
    from pathlib import Path

SHAPE = backlog.Shape(nodes=20, devices=4, pods=60)


pytestmark = pytest.mark.usefixtures("bench_prerequisites")


@pytest.mark.parametrize("scheduler", ["kube", "ours"])
async def test_dra_pods_on_a_backlog_bind_with_their_claims(scheduler: str, tmp_path: Path) -> None:
    """20 nodes × 4 devices, 60 pods: every pod bound, its claim allocated on its node and
    reserved for it, no device given twice; ours places all but the first on path exact."""
    record = await backlog.run(SHAPE, scheduler, workdir=tmp_path, wait_s=60)
    assert "failed" not in record, record.get("failure_detail")
    assert record["pods"] == 60
    assert record["pods_checked"] == 60
    assert record["claims_allocated_ok"] == 60, record["claims_bad"]
    assert record["devices_distinct"] == 60
    # This scheduler did it (kube's attempts metric is flushed once a second, so a scrape
    # right after the last bind may not count every one of them yet).
    assert record["pod_attempts"].get("scheduled", 0) > 0
    if scheduler == "ours":
        assert record["decisions"].get("exact", 0) >= 58
        assert record["batched_pct"] >= 95
