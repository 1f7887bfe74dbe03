"""bench.real_report's lead table: ours-on against kube-on and the ceiling."""

from __future__ import annotations

from typing import Any

from bench import real_report


def _record(scheduler: str, config: str, pods_per_s: float, hint_used: int) -> dict[str, Any]:
    return {
        "scenario": "one-pod-per-node",
        "nodes": 500,
        "pods": 500,
        "scheduler": scheduler,
        "config": config,
        "complete": True,
        "pods_per_s": pods_per_s,
        "latency_p50_s": 1.0,
        "latency_p99_s": 2.0,
        "cpu_ms_per_pod": {"ours-on": 2.5, "kube-on": 1.25}.get(scheduler, 0.5),
        "apiserver_cpu_s_per_1000_pods": 4.0,
        "peak_rss_mb": 100.0,
        "batch_attempts": {"hint_used": hint_used},
        "exact_batch": {"placed": 7} if scheduler == "ours-on" else {},
    }


def test_lead_table_gives_ours_on_against_kube_on_and_the_ceiling() -> None:
    records = [
        _record("ceiling", "default", 400, 0),
        _record("ours-on", "default", 300, 495),
        _record("kube-on", "default", 200, 0),
        _record("ours-on", "list", 250, 496),
        _record("kube-on", "list", 500, 497),
        _record("ours-off", "list", 100, 0),
    ]
    rows = real_report.side_by_side(real_report.medians(records))
    body = [line for line in rows if line.startswith("| one-pod")]
    assert body == [
        "| one-pod-per-node | 500 | default | 300 | 200 | 1.50x | 75% | 2.50 / 1.25 "
        "| 495 / 0 of 500 | 7 |",
        "| one-pod-per-node | 500 | list | 250 | 500 | 0.50x | 62% | 2.50 / 1.25 "
        "| 496 / 497 of 500 | 7 |",
    ]
