"""bench.decision writes decision.json where --out says, with the issue-19 figures (no timing
is asserted: only that the run completes and the record is whole and consistent)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench import decision


def test_tiny_run_writes_the_populated_cluster_figures(tmp_path: Path) -> None:
    report = decision.main(
        [
            *("--nodes", "20", "--repeats", "1", "--cluster", "30x120"),
            *("--filling", "40", "--exact", "30x120x10", "--out", str(tmp_path)),
        ]
    )
    written = json.loads((tmp_path / "decision.json").read_text())
    assert written == report
    assert [row["nodes"] for row in written["rows"]] == [20]
    assert (written["cluster_nodes"], written["running_pods"]) == (30, 120)
    full, unsignable = written["full_pass_ms"], written["unsignable_full_pass_ms"]
    assert full > 0
    assert unsignable > 0
    assert written["unsignable_ratio"] == pytest.approx(unsignable / full)
    assert written["filling_nodes"] == 40
    assert written["filling_full_pass_p50_ms"] > 0
    assert written["filling_full_pass_mean_ms"] > 0
    assert (written["exact_nodes"], written["exact_running_pods"]) == (30, 120)
    rows = {(row["family"], row["percentage"]): row for row in written["exact"]}
    assert set(rows) == {(f, p) for f in decision.EXACT_FAMILIES for p in (100, 0)}
    for row in rows.values():
        assert row["off_full_ms"] > 0
        # Every pod but the first (which builds the batch's state) takes path exact.
        assert 0 < row["exact_pods"] < 10
        assert row["ratio"] == pytest.approx(row["exact_ms"] / row["off_full_ms"])


def test_the_unsignable_probe_cannot_batch_and_reads_both_plugins() -> None:
    """The probe has required pod anti-affinity and a DoNotSchedule spread constraint."""
    pod = decision._unsignable_pod("app-7")
    assert pod.required_pod_anti_affinity
    assert [c.when_unsatisfiable for c in pod.topology_spread_constraints] == ["DoNotSchedule"]


def test_cluster_can_be_skipped(tmp_path: Path) -> None:
    report = decision.main(
        ["--nodes", "", "--cluster", "", "--filling", "0", "--exact", "", "--out", str(tmp_path)]
    )
    assert report["rows"] == []
    assert "full_pass_ms" not in report
    assert "filling_full_pass_p50_ms" not in report
    assert "exact" not in report
