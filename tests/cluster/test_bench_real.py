"""The side-by-side benchmark on the real API server (``bench.e2e --api real``) and its
profiler (``bench.profile_real``), run small: the records and stages they are read for.

No timing is asserted (speed lives in the benchmarks); what is checked is that each
scheduler bound the burst through the real ``run`` path and the records say so.
"""

from __future__ import annotations

import asyncio
import os
from typing import TYPE_CHECKING, Any

import pytest

from bench import profile_real, real
from controlplane.launcher import missing_binaries

if TYPE_CHECKING:
    from pathlib import Path

NODES = 40
KEYS = [
    "api",
    "scenario",
    "nodes",
    "pods",
    "scheduler",
    "config",
    "repeat",
    "bound",
    "pods_per_s",
    "latency_p50_s",
    "latency_p99_s",
    "cpu_s_per_1000_pods",
    "peak_rss_mb",
    "batch_attempts",
]


@pytest.fixture(autouse=True)
def _binaries() -> None:
    reason = missing_binaries()
    if reason:
        if os.environ.get("BATCH_SCHEDULER_REQUIRE_CLUSTER"):
            pytest.fail(f"cluster tier required but {reason}")
        pytest.skip(f"cluster tier skipped: {reason}")


def test_every_scheduler_binds_the_burst_and_its_record_says_so() -> None:
    seen: list[int] = []
    records = asyncio.run(
        real.run_matrix(
            ["ceiling", "ours-on", "kube-on"],
            ["list"],
            ["one-pod-per-node"],
            [NODES],
            1,
            120.0,
            lambda so_far: seen.append(len(so_far)),
        )
    )
    assert seen == [1, 2, 3]  # saved after every run
    assert [r["scheduler"] for r in records] == ["ceiling", "ours-on", "kube-on"]
    for record in records:
        assert set(KEYS) <= set(record), record
        assert (record["api"], record["nodes"], record["config"]) == ("real", NODES, "list")
        assert record["bound"] == record["pods"] == NODES, record
        assert record["pods_per_s"] > 0
        assert record["cpu_s_per_1000_pods"] > 0
    ours, kube = records[1], records[2]
    # Both batch one-pod-per-node under defaultingType List: hints placed most pods.
    for record in (ours, kube):
        assert record["scheduled"] == NODES
        assert record["batch_attempts"].get("hint_used", 0) > NODES / 2, record


def test_profiles_of_both_schedulers_split_their_cpu_by_stage(tmp_path: Path) -> None:
    results = asyncio.run(
        profile_real.profile(NODES, "multi-pod-per-node", "list", ["ours-on", "kube-on"], tmp_path)
    )
    assert [r["scheduler"] for r in results] == ["ours-on", "kube-on"]
    for result in results:
        stages: dict[str, Any] = result["stages"]
        assert result["bound"] == 4 * NODES
        assert sum(s["share"] for s in stages.values()) == pytest.approx(1, abs=0.01)
        per_pod = sum(s["ms_per_pod"] for s in stages.values())
        assert per_pod == pytest.approx(result["cpu_ms_per_pod"], rel=0.02)
    assert list(tmp_path.glob("*.pyspy.txt"))
    assert list(tmp_path.glob("*kube-on*.pb.gz"))
    assert "| stage | ours-on" in profile_real.markdown(results)
