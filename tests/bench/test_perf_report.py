"""bench.scheduler_perf.report: the table docs/performance.md includes, one row per
workload, every skip and failure with its reason."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from bench.scheduler_perf import report

if TYPE_CHECKING:
    from pathlib import Path


def record(scheduler: str, workload: str, **fields: Any) -> dict[str, Any]:
    return {
        "test": "SchedulingBasic",
        "workload": workload,
        "scheduler": scheduler,
        "overridden": {"initNodes": 500},
        "threshold": 680.0,
        **fields,
    }


THROUGHPUT = {"Average": 200.0, "Perc50": 190.0, "Perc90": 250.0, "Perc95": 260.0, "Perc99": 270.0}
RECORDS = [
    record("kube", "A", SchedulingThroughput=THROUGHPUT, cpu_s=1.5, wall_s=20.0),
    record("ours", "A", SchedulingThroughput={**THROUGHPUT, "Average": 300.0}, cpu_s=1.0),
    record("kube", "B", SchedulingThroughput=THROUGHPUT),
    record("ours", "B", skipped="needs X=true and ours has no --feature-gates flag yet"),
    record("kube", "C", failed="op 3 (Barrier): 0 of 10 pods attempted"),
    record("ours", "C", failed="op 3 (Barrier): 0 of 10 pods attempted"),
]
META = {"command": "python -m bench.scheduler_perf --test x", "commit": "abc1234"}


def lead_rows(text: str) -> list[str]:
    lead = text.split("Every run:")[0]
    return [line for line in lead.splitlines() if line.startswith("| SchedulingBasic/")]


def test_lead_table_rows_give_ratio_threshold_and_reasons() -> None:
    """kube, ours, ours/kube and the threshold; a skip or failure points to its reason."""
    text = report.markdown(RECORDS, META)
    assert lead_rows(text) == [
        "| SchedulingBasic/A (initNodes=500) | 200.0 | 300.0 | 1.50x | 680 |",
        "| SchedulingBasic/B (initNodes=500) | 200.0 | skipped [1] |  | 680 |",
        "| SchedulingBasic/C (initNodes=500) | failed [2] | failed [2] |  | 680 |",
    ]
    assert "[1] skipped: needs X=true and ours has no --feature-gates flag yet" in text
    assert "[2] failed: op 3 (Barrier): 0 of 10 pods attempted" in text
    assert "\npython -m bench.scheduler_perf --test x\n" in text
    assert "commit abc1234" in text


def test_details_list_every_run_but_the_skipped() -> None:
    """The second table has each run's figures; failed runs are marked, skipped ones absent."""
    rows = report.details(RECORDS)
    assert len(rows) == 2 + 5
    assert rows[2].startswith("| SchedulingBasic/A | kube | 200.0 | 190.0 | 250.0 | 270.0 |")
    assert any("| kube (failed) |" in row for row in rows)


def test_a_run_without_samples_says_so() -> None:
    """kube reports no SchedulingThroughput when scheduling took under a second."""
    text = report.markdown([record("kube", "D", SchedulingThroughput=None)], META)
    assert lead_rows(text) == [
        "| SchedulingBasic/D (initNodes=500) | no sample | not run |  | 680 |"
    ]


def test_write_keeps_the_records_under_workloads(tmp_path: Path) -> None:
    """OUT/latest.json lists the records under "workloads"; latest.md is the report."""
    report.write(RECORDS, META, tmp_path)
    doc = json.loads((tmp_path / "latest.json").read_text())
    assert doc["workloads"] == RECORDS
    assert doc["meta"] == META
    assert (tmp_path / "latest.md").read_text() == report.markdown(RECORDS, META)
