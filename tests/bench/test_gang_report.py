"""bench.gang.report: both schedulers side by side per shape, and issue 38's targets each
read met or MISSED from the records."""

from __future__ import annotations

from typing import Any

import pytest

from bench.gang import report


def run(shape: str, scheduler: str, **fields: Any) -> dict[str, Any]:
    return {"shape": shape, "scheduler": scheduler, "nodes": 5000, "labels": "gang", **fields}


RECORDS = [
    run("gangs-3x1000", "kube", pods_per_s=200.0, cpu_ms_per_pod=6.0, group_algorithm_s=10.0),
    run("gangs-3x1000", "ours", pods_per_s=500.0, cpu_ms_per_pod=1.5, group_algorithm_s=3.0),
    run("gangs-1000x3", "kube", pods_per_s=200.0),
    run("gangs-1000x3", "ours", pods_per_s=290.0),
    run("plain-3000", "ours", pods_per_s=300.0),
    run("infeasible", "ours", pods_per_s=280.0),
    run("infeasible", "kube", failed="control plane: etcd did not start"),
]
WORK = {
    "gang/5000": {
        "nodes": 5000,
        "pool": 500,
        "gang_size": 1000,
        "labels": "gang",
        "attempts": [{"placed": 0, "decisions": {"full": 2, "hint": 499}}],
    }
}


@pytest.mark.parametrize(
    ("target", "verdict"),
    [
        pytest.param("1000-pod gangs: ours / kube pods/s", "2.50 (≥ 2.00): met", id="rate-met"),
        pytest.param("1000-pod gangs: ours / kube CPU per pod", "0.25 (≤ 0.33): met", id="cpu-met"),
        pytest.param(
            "1000-pod gangs: ours / kube group algorithm seconds",
            "0.30 (≤ 0.20): MISSED",
            id="algorithm-missed",
        ),
        pytest.param("3-pod gangs: ours / kube pods/s", "1.45 (≥ 1.50): MISSED", id="small-gangs"),
        pytest.param(
            "3-pod gangs: ours with groups / ours without", "0.97 (≥ 0.90): met", id="own-plain"
        ),
        pytest.param(
            "pods beside the infeasible gang: ours with it / without",
            "0.93 (≥ 0.90): met",
            id="beside-infeasible",
        ),
        pytest.param(
            "infeasible gang: full passes per rejected attempt",
            "2 (≤ 2): met",
            id="infeasible-passes-from-work",
        ),
    ],
)
def test_targets_read_from_the_records(target: str, verdict: str) -> None:
    """Each target is computed from the runs it names, with its bound and verdict."""
    lines = report.targets(RECORDS, WORK)
    (line,) = [line for line in lines if line.startswith(f"- {target}")]
    assert line.endswith(verdict)


def test_lead_table_shows_a_failed_run() -> None:
    """A failed run reads 'failed' in its scheduler's column, not a number."""
    rows = [line for line in report.lead_table(RECORDS) if line.startswith("| infeasible")]
    assert rows == ["| infeasible | gang | 5000 | failed | 280.0 |  |  /  |  /  |  / 0.00→0.00 |"]


def test_the_pair_that_saw_the_lowest_load_is_shown() -> None:
    """Two pairs of one shape: the lead table takes the quieter one, whole."""
    loud = [
        run("plain-3000", s, pair="a", pods_per_s=100.0, loadavg_before=[4.0], loadavg_after=[3.0])
        for s in ("ours", "kube")
    ]
    quiet = [
        run("plain-3000", s, pair="b", pods_per_s=300.0, loadavg_before=[1.5], loadavg_after=[1.9])
        for s in ("ours", "kube")
    ]
    chosen = report.best([*loud, *quiet])
    assert [r["pair"] for r in chosen] == ["b", "b"]
    assert report.load(quiet[0]) == 1.5
