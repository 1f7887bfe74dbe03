"""The reports of ``bench.e2e`` (:mod:`bench.e2e`): medians per (scenario, nodes,
batching), the markdown table, the plots of pods/s vs nodes, and the line per record."""

from __future__ import annotations

import json
import statistics
from typing import TYPE_CHECKING, Any

from bench.scenarios import SCENARIOS
from bench.stats import grouped_medians

if TYPE_CHECKING:
    from pathlib import Path

    from matplotlib.axes import Axes
    from matplotlib.figure import Figure


def medians(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per (scenario, nodes, batching): the median of each numeric figure."""
    return grouped_medians(
        records,
        ("scenario", "nodes", "batching"),
        (
            "pods_per_s",
            "decision_p50_ms",
            "decision_p99_ms",
            "latency_p50_s",
            "latency_p99_s",
            "batched_share",
            "peak_rss_mb",
            "startup_s",
            "scheduler_cpu_s",
            "cpu_ms_per_pod",
        ),
        _median_flushes,
    )


def _median_flushes(records: list[dict[str, Any]]) -> dict[str, Any]:
    flushes: dict[str, list[int]] = {}
    for r in records:
        for reason, n in r["flushes"].items():
            flushes.setdefault(reason, []).append(n)
    return {"flushes": {k: int(statistics.median(v)) for k, v in sorted(flushes.items())}}


def fmt(value: Any, pattern: str = "{:.0f}") -> str:
    """``value`` formatted, or ``-`` when there is none."""
    return "-" if value is None else pattern.format(value)


def markdown(records: list[dict[str, Any]], meta: dict[str, Any]) -> str:
    rows = medians(records)
    index = {(r["scenario"], r["nodes"], r["batching"]): r for r in rows}
    lines = [
        "# make bench: end to end, batching off vs on (medians)",
        "",
        f"{meta['date']}, {meta['machine']}, Python {meta['python']}, "
        f"repeats {meta['repeats']}. A burst into a running scheduler: pods/s from the first "
        "create to the last bind seen by a watch (the scheduler synced and idle before the "
        "burst, 32 creates in flight). Latency: each pod's create → bind. Decision: per-pod "
        "time from the hint/full pass to the assume "
        "(`batch_scheduler_decision_duration_seconds`). CPU ms/pod: the scheduler process's "
        "CPU from the first create to the last bind, per bound pod. Ceiling: a bare client "
        "binding each new pod to a pre-chosen node as its watch sees it, same emulator, same "
        "burst, same bind concurrency (16).",
        "",
        "| scenario | nodes | pods | batching | pods/s | on/off | of ceiling | decision p50 / p99 "
        "ms | CPU ms/pod | latency p50 / p99 s | batched | flushes | peak RSS MB |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for r in sorted(rows, key=lambda r: (r["scenario"], r["nodes"], r["batching"] != "off")):
        off = index.get((r["scenario"], r["nodes"], "off"))
        ceiling = index.get((r["scenario"], r["nodes"], "ceiling"))
        ratio = (
            r["pods_per_s"] / off["pods_per_s"]
            if off and off["pods_per_s"] and r["batching"] == "all"
            else None
        )
        of_ceiling = (
            r["pods_per_s"] / ceiling["pods_per_s"]
            if ceiling and ceiling["pods_per_s"] and r["batching"] != "ceiling"
            else None
        )
        flush = ", ".join(f"{k} {v}" for k, v in r["flushes"].items()) or "-"
        done = "" if r["complete"] else " (incomplete)"
        lines.append(
            f"| {r['scenario']} | {r['nodes']} | {r['pods']} | {r['batching']}{done} | "
            f"{fmt(r['pods_per_s'])} | {fmt(ratio, '{:.2f}x')} | "
            f"{fmt(of_ceiling, '{:.0%}')} | {fmt(r['decision_p50_ms'], '{:.3f}')} / "
            f"{fmt(r['decision_p99_ms'], '{:.3f}')} | {fmt(r['cpu_ms_per_pod'], '{:.2f}')} | "
            f"{fmt(r['latency_p50_s'], '{:.2f}')} / "
            f"{fmt(r['latency_p99_s'], '{:.2f}')} | {fmt(r['batched_share'], '{:.0%}')} | "
            f"{flush} | {fmt(r['peak_rss_mb'])} |"
        )
    lines.append("")
    return "\n".join(lines)


def plot(records: list[dict[str, Any]], out_dir: Path) -> list[Path]:
    """One PNG per scenario: pods/s vs nodes, batching off, on and the ceiling."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = medians(records)
    paths = []
    styles = {
        "off": ("batching off", "o-", "tab:red"),
        "all": ("batching on (all)", "s-", "tab:blue"),
        "ceiling": ("bind ceiling (bare client)", "^--", "tab:gray"),
    }
    for scenario in sorted({r["scenario"] for r in rows}):
        fig, ax = plt.subplots(figsize=(7, 4.5), dpi=100)
        for batching, (label, style, color) in styles.items():
            pts = sorted(
                (r["nodes"], r["pods_per_s"])
                for r in rows
                if r["scenario"] == scenario and r["batching"] == batching and r["pods_per_s"]
            )
            if pts:
                ax.plot([p[0] for p in pts], [p[1] for p in pts], style, color=color, label=label)
                for x, y in pts:
                    ax.annotate(
                        f"{y:.0f}", (x, y), textcoords="offset points", xytext=(4, 6), fontsize=8
                    )
        path = out_dir / f"throughput_{scenario}.png"
        save_chart(
            fig,
            ax,
            path,
            title=f"{scenario}: {SCENARIOS[scenario].description}",
            ylabel="pods/s (first create → last bind, median)",
            xticks=sorted({r["nodes"] for r in rows if r["scenario"] == scenario}),
        )
        paths.append(path)
    return paths


def save_chart(
    fig: Figure,
    ax: Axes,
    path: Path,
    *,
    title: str,
    ylabel: str,
    xticks: list[int] | None = None,
) -> None:
    """Finish a chart of pods/s over nodes (log scale, ticks at ``xticks`` when given) and
    write it to ``path``."""
    import matplotlib.pyplot as plt

    ax.set_xscale("log")
    if xticks:
        ax.set_xticks(xticks)
        ax.set_xticklabels([str(n) for n in xticks])
    ax.set_ylim(bottom=0)
    ax.set_xlabel("nodes")
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=10)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def print_record(r: dict[str, Any]) -> None:
    print(
        f"  {r['scenario']:>18} {r['nodes']:>5} nodes {r['pods']:>6} pods "
        f"{r['batching']:>7} #{r['repeat']}: {r['pods_per_s']:>7.0f} pods/s "
        f"({r['bound']}/{r['pods']} in {r['first_create_to_last_bind_s']:.2f} s, "
        f"start {r['startup_s']:.2f} s) decision p50 {fmt(r['decision_p50_ms'], '{:.3f}')} ms "
        f"batched {fmt(r['batched_share'], '{:.0%}')} RSS {r['peak_rss_mb']:.0f} MB",
        flush=True,
    )


def write_results(records: list[dict[str, Any]], meta: dict[str, Any], out_dir: Path) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "latest.json").write_text(
        json.dumps({"meta": meta, "records": records}, indent=1) + "\n"
    )
    (out_dir / "latest.md").write_text(markdown(records, meta))
    plot(records, out_dir)
