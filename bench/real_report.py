"""The reports of ``bench.e2e --api real`` (:mod:`bench.real`): medians, the markdown table
and the plots of pods/s vs nodes with every scheduler on one chart.

The report reads what ran from the records and the run's ``meta`` (client qps, repeats) and
is told the schedulers' order, so that it imports nothing of the runner: :mod:`bench.real`
imports it, not the other way. Its neighbours: :mod:`bench.e2e_report` (shared formatting
and chart saving) and :mod:`bench.stats` (the medians).
"""

from __future__ import annotations

import statistics
from typing import TYPE_CHECKING, Any

from bench.burst import BIND_CONCURRENCY
from bench.configs import CONFIGS
from bench.e2e_report import fmt, save_chart
from bench.stats import grouped_medians

if TYPE_CHECKING:
    from collections.abc import Sequence
    from pathlib import Path


def medians(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per (scenario, nodes, scheduler, config), in that order: the medians."""
    by = ("scenario", "nodes", "scheduler", "config")
    rows = grouped_medians(
        records,
        by,
        (
            "pods_per_s",
            "latency_p50_s",
            "latency_p99_s",
            "cpu_ms_per_pod",
            "apiserver_cpu_s_per_1000_pods",
            "peak_rss_mb",
        ),
        _median_batched,
    )
    return sorted(rows, key=lambda row: tuple(row[key] for key in by))


def _median_batched(records: list[dict[str, Any]]) -> dict[str, Any]:
    """Pods placed from a hint, and (ours) on the exact path: medians over the repeats."""
    hinted = [r["batch_attempts"].get("hint_used", 0) for r in records]
    exact = [r.get("exact_batch", {}).get("placed", 0) for r in records]
    return {
        "hint_used": int(statistics.median(hinted)),
        "exact_used": int(statistics.median(exact)),
    }


def markdown(records: list[dict[str, Any]], meta: dict[str, Any]) -> str:
    """The run's report: ``meta`` as :func:`bench.real.main` writes it, then the tables."""
    rows = medians(records)
    qps = meta["client_qps_burst"]["kube-scheduler"]
    index = {(r["scenario"], r["nodes"], r["scheduler"], r["config"]): r for r in rows}
    lines = [
        "# bench.e2e --api real: ours vs kube-scheduler v1.37.2 on kube-apiserver (medians)",
        "",
        f"{meta['date']}, {meta['machine']}, repeats {meta['repeats']}, kube-scheduler client "
        f"qps/burst {qps}, ours and the ceiling unthrottled, {BIND_CONCURRENCY} binds "
        "in flight for ours and the ceiling. pods/s: first create → last bind seen by a watch.",
        "",
        *side_by_side(rows),
        "Every scheduler:",
        "",
        "| scenario | nodes | pods | config | scheduler | pods/s | vs kube-on | of ceiling | "
        "CPU ms/pod | API server CPU s/1000 pods | latency p50 / p99 s | hint_used | "
        "exact_used | RSS MB |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for r in rows:
        vs = _ratio(r, index.get((r["scenario"], r["nodes"], "kube-on", r["config"])))
        of = _ratio(r, index.get((r["scenario"], r["nodes"], "ceiling", CONFIGS[0])))
        done = "" if r["complete"] else " (incomplete)"
        lines.append(
            f"| {r['scenario']} | {r['nodes']} | {r['pods']} | {r['config']} | "
            f"{r['scheduler']}{done} | {fmt(r['pods_per_s'])} | {fmt(vs, '{:.2f}x')} | "
            f"{fmt(of, '{:.0%}')} | {fmt(r['cpu_ms_per_pod'], '{:.2f}')} | "
            f"{fmt(r['apiserver_cpu_s_per_1000_pods'], '{:.1f}')} | "
            f"{fmt(r['latency_p50_s'], '{:.2f}')} / {fmt(r['latency_p99_s'], '{:.2f}')} | "
            f"{r['hint_used']} | {r['exact_used']} | {fmt(r['peak_rss_mb'])} |"
        )
    lines.append("")
    return "\n".join(lines)


def side_by_side(rows: list[dict[str, Any]]) -> list[str]:
    """The lead table: ours-on against kube-on and the ceiling, per scenario, nodes, config."""
    index = {(r["scenario"], r["nodes"], r["scheduler"], r["config"]): r for r in rows}
    lines = [
        "Ours with batching (`ours-on`) against kube-scheduler with batching (`kube-on`):",
        "",
        "| scenario | nodes | config | ours-on pods/s | kube-on pods/s | ours-on / kube-on | "
        "ours-on / ceiling | CPU ms/pod ours-on / kube-on | hint_used ours / kube of pods | "
        "exact_used ours |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for (scenario, nodes, scheduler, config), ours in index.items():
        kube = index.get((scenario, nodes, "kube-on", config))
        if scheduler != "ours-on" or kube is None:
            continue
        ceiling = index.get((scenario, nodes, "ceiling", CONFIGS[0]))
        lines.append(
            f"| {scenario} | {nodes} | {config} | {fmt(ours['pods_per_s'])} | "
            f"{fmt(kube['pods_per_s'])} | {fmt(_ratio(ours, kube), '{:.2f}x')} | "
            f"{fmt(_ratio(ours, ceiling), '{:.0%}')} | "
            f"{fmt(ours['cpu_ms_per_pod'], '{:.2f}')} / {fmt(kube['cpu_ms_per_pod'], '{:.2f}')} | "
            f"{ours['hint_used']} / {kube['hint_used']} of {ours['pods']} | "
            f"{ours['exact_used']} |"
        )
    return [*lines, ""]


def _ratio(a: dict[str, Any], b: dict[str, Any] | None) -> float | None:
    return a["pods_per_s"] / b["pods_per_s"] if b and b["pods_per_s"] else None


def plot(records: list[dict[str, Any]], out_dir: Path, *, schedulers: Sequence[str]) -> None:
    """One PNG per (scenario, config): pods/s vs nodes, a line per scheduler in
    ``schedulers``' order (the legend's)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = medians(records)
    for scenario, config in sorted({(r["scenario"], r["config"]) for r in rows}):
        fig, ax = plt.subplots(figsize=(7, 4.5), dpi=100)
        for scheduler in schedulers:
            cfg = CONFIGS[0] if scheduler == "ceiling" else config
            pts = sorted(
                (r["nodes"], r["pods_per_s"])
                for r in rows
                if (r["scenario"], r["scheduler"], r["config"]) == (scenario, scheduler, cfg)
                and r["pods_per_s"]
            )
            if pts:
                style = "^--" if scheduler == "ceiling" else "o-"
                ax.plot([p[0] for p in pts], [p[1] for p in pts], style, label=scheduler)
        save_chart(
            fig,
            ax,
            out_dir / f"throughput_{scenario}_{config}.png",
            title=f"{scenario}, config {config}: real kube-apiserver v1.37.2",
            ylabel="pods/s (median)",
        )
