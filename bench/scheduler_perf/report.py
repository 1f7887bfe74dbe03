"""The suite's records as ``OUT/latest.json`` and a Markdown report for docs/performance.md.

The lead table has one row per workload: kube-scheduler's and ours' SchedulingThroughput
Average (pods/s, kube's definition), ours / kube, and upstream's threshold (the minimum
kube's CI accepts on its own machines; a reference, not a target here). A workload one of
them did not run shows why (skipped or failed, the reasons listed under the table). A
second table gives the percentiles, the SLI duration, CPU and memory of every run.

Neighbours: :mod:`bench.scheduler_perf.runner` makes the records;
:mod:`bench.scheduler_perf.cli` writes the files.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from bench.scheduler_perf.capability import KUBE, OURS

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from pathlib import Path

Record = dict[str, Any]


def write(records: Sequence[Record], meta: Mapping[str, Any], out: Path) -> None:
    """``out/latest.json`` and ``out/latest.md`` (after every run: a late failure keeps
    what was measured before it)."""
    out.mkdir(parents=True, exist_ok=True)
    doc = {"meta": dict(meta), "workloads": list(records)}
    (out / "latest.json").write_text(json.dumps(doc, indent=1) + "\n")
    (out / "latest.md").write_text(markdown(records, meta))


def workload_id(record: Mapping[str, Any]) -> str:
    return f"{record['test']}/{record['workload']}"


def average(record: Mapping[str, Any] | None) -> float | None:
    if record is None or "skipped" in record or "failed" in record:
        return None
    throughput = record.get("SchedulingThroughput")
    return None if not throughput else float(throughput["Average"])


def _overrides(record: Mapping[str, Any]) -> str:
    changed = record.get("overridden") or {}
    return ", ".join(f"{k}={v}" for k, v in changed.items())


class _Reasons:
    """Skip and failure reasons, numbered once each, for the notes under the table."""

    def __init__(self) -> None:
        self.numbers: dict[str, int] = {}

    def cell(self, record: Mapping[str, Any] | None) -> str:
        if record is None:
            return "not run"
        for key in ("skipped", "failed"):
            if key in record:
                reason = str(record[key])
                number = self.numbers.setdefault(f"{key}: {reason}", len(self.numbers) + 1)
                return f"{key} [{number}]"
        value = average(record)
        return "no sample" if value is None else f"{value:.1f}"

    def notes(self) -> list[str]:
        return [f"[{n}] {reason}" for reason, n in self.numbers.items()]


def markdown(records: Sequence[Record], meta: Mapping[str, Any]) -> str:
    by_workload: dict[str, dict[str, Record]] = {}
    for record in records:
        by_workload.setdefault(workload_id(record), {})[record["scheduler"]] = record
    reasons = _Reasons()
    lines = [
        "| workload | kube pods/s | ours pods/s | ours / kube | upstream threshold |",
        "| --- | ---: | ---: | ---: | ---: |",
    ]
    for name, runs in by_workload.items():
        kube, ours = runs.get(KUBE), runs.get(OURS)
        first = kube or ours
        assert first is not None
        label = name
        if _overrides(first):
            label += f" ({_overrides(first)})"
        a, b = average(kube), average(ours)
        ratio = f"{b / a:.2f}x" if a and b else ""
        threshold = first.get("threshold")
        lines.append(
            f"| {label} | {reasons.cell(kube)} | {reasons.cell(ours)} | {ratio} | "
            f"{'' if threshold is None else f'{threshold:g}'} |"
        )
    out = [_header(meta), "", *lines, ""]
    notes = reasons.notes()
    if notes:
        out += [*(f"{note}  " for note in notes), ""]
    out += ["Every run:", "", *details(records), ""]
    return "\n".join(out)


def _header(meta: Mapping[str, Any]) -> str:
    """What was measured, when and where, and the commands that measured it."""
    facts = [f"{key} {meta[key]}" for key in ("commit", "date", "machine") if meta.get(key)]
    commands = [c for c in meta.get("commands") or [meta.get("command", "")] if c]
    lines = [
        "SchedulingThroughput Average in pods/s (kube's throughputCollector); "
        + "; ".join(facts)
        + ".",
    ]
    if commands:
        lines += ["", "```", *commands, "```"]
    return "\n".join(lines)


def details(records: Sequence[Record]) -> list[str]:
    lines = [
        "| workload | scheduler | Avg | P50 | P90 | P99 | SLI p50 ms | SLI p99 ms | "
        "CPU s | CPU ms/pod | API server CPU s | peak RSS MB | wall s |",
        "| --- | --- |" + " ---: |" * 11,
    ]
    for r in records:
        if "skipped" in r:
            continue
        t = r.get("SchedulingThroughput") or {}
        sli = r.get("SchedulingSLI_ms") or {}
        cells = [
            workload_id(r),
            r["scheduler"] + (" (failed)" if "failed" in r else ""),
            *(_num(t.get(k)) for k in ("Average", "Perc50", "Perc90", "Perc99")),
            _num(sli.get("Perc50")),
            _num(sli.get("Perc99")),
            _num(r.get("cpu_s")),
            _num(r.get("cpu_ms_per_pod")),
            _num(r.get("apiserver_cpu_s")),
            _num(r.get("rss_mb")),
            _num(r.get("wall_s")),
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def _num(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, int | float):
        return f"{value:.1f}" if abs(value) >= 10 else f"{value:.2f}"
    return str(value)
