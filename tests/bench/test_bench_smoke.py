"""Smoke test of the end-to-end benchmark harness (bench/e2e.py): one tiny run, no timing.

Not a performance test: it only checks that a run against the emulator produces a record
with the documented keys and sane values, and that the reports are written.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from bench import e2e

pytestmark = pytest.mark.e2e

DOC = Path(__file__).parents[2] / "docs" / "performance.md"


async def test_one_tiny_run_gives_a_complete_documented_record(tmp_path: Path) -> None:
    record = await e2e.run_one(e2e.SCENARIOS["one-pod-per-node"], 20, "all", run_timeout=30)
    assert tuple(record) == e2e.RECORD_KEYS
    assert record["complete"]
    assert record["bound"] == record["pods"] == record["scheduled"] == 20
    assert record["pods_per_s"] > 0
    assert record["startup_s"] > 0
    assert 0 < record["batched_share"] <= 1
    assert record["decision_p50_ms"] is not None
    assert record["decision_p50_ms"] <= record["decision_p99_ms"]
    assert 0 <= record["latency_p50_s"] <= record["latency_p99_s"]
    assert record["bind_errors"] == 0
    assert 10 < record["peak_rss_mb"] < 1000
    meta = {"date": "now", "machine": "here", "python": "3", "repeats": 1}
    e2e.write_results([record], meta, tmp_path)
    assert json.loads((tmp_path / "latest.json").read_text())["records"] == [record]
    assert "one-pod-per-node" in (tmp_path / "latest.md").read_text()
    assert (tmp_path / "throughput_one-pod-per-node.png").stat().st_size > 1000


@pytest.mark.skipif(
    shutil.which("go") is None
    and not (Path(__file__).parents[2] / "bench/bindceiling/bin").exists(),
    reason="the ceiling client is Go (bench/bindceiling) and there is no Go to build it",
)
async def test_the_bind_ceiling_binds_a_burst_as_it_is_created() -> None:
    record = await e2e.run_one(e2e.SCENARIOS["multi-pod-per-node"], 5, "ceiling", run_timeout=30)
    assert record["complete"]
    assert record["bound"] == record["pods"] == 20
    assert record["scheduled"] == 0  # no scheduler ran: the bare client bound them
    assert 0 <= record["latency_p50_s"] <= record["latency_p99_s"]


def test_every_record_key_is_documented() -> None:
    text = DOC.read_text()
    missing = [key for key in e2e.RECORD_KEYS if f"`{key}`" not in text]
    assert not missing, f"docs/performance.md does not document {missing}"
