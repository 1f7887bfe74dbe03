"""``python -m bench.dra``: DRA pods from one ResourceClaimTemplate, kube-scheduler v1.37.2
and ours, on the real API server (issue 40, Targets).

    python -m bench.dra [--nodes 1000] [--devices 8] [--pods 2000] [--schedulers ours,kube]
        [--profile] [--max-load 2] [--wait-load 180] [--out bench/results/dra]
        [--timeout 600] [--ours-log-level warning]

Each scheduler runs once, on a fresh control plane with the backlog and its claims made
before it starts (:mod:`bench.dra.backlog`). Before each run the runner waits (up to
``--wait-load`` s) for the 1-minute load average to fall to ``--max-load``; the record
keeps the load before and after. ``--profile`` runs py-spy over ours (raw stacks beside
its log). Records go to ``OUT/latest.json`` and ``OUT/latest.md`` after every run, with
the targets: ours ≥ 2× kube's pods/s, CPU per pod ≤ 1/4 of kube's, ≥ 95 % of ours' DRA
pods batched.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from bench.dra import backlog
from bench.gang.cli import _quiet
from bench.scheduler_perf.capability import KUBE, OURS
from bench.scheduler_perf.cli import meta_for
from bench.scheduler_perf.suite import SuiteError

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "bench" / "results" / "dra"
Record = dict[str, Any]


def parse_args(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m bench.dra", description=__doc__)
    p.add_argument("--nodes", type=int, default=1000)
    p.add_argument("--devices", type=int, default=8, help="devices per node (one slice)")
    p.add_argument("--pods", type=int, default=2000)
    p.add_argument("--schedulers", default=f"{OURS},{KUBE}", help="in this order")
    p.add_argument("--profile", action="store_true", help="py-spy over ours")
    p.add_argument("--max-load", type=float, default=2.0)
    p.add_argument("--wait-load", type=float, default=180.0)
    p.add_argument("--out", type=Path, default=RESULTS)
    p.add_argument("--timeout", type=float, default=600.0, help="seconds to wait for binds")
    p.add_argument("--ours-log-level", default="warning")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    chosen = [s for s in args.schedulers.split(",") if s]
    unknown = [s for s in chosen if s not in (KUBE, OURS)]
    if unknown:
        print(f"error: unknown scheduler {unknown[0]}", file=sys.stderr)
        return 2
    try:
        backlog.selected()
    except SuiteError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    shape = backlog.Shape(nodes=args.nodes, devices=args.devices, pods=args.pods)
    return asyncio.run(run_all(shape, chosen, args, argv))


async def run_all(
    shape: backlog.Shape, chosen: list[str], args: argparse.Namespace, argv: list[str] | None
) -> int:
    meta = meta_for(argv)
    meta["command"] = meta["command"].replace("bench.scheduler_perf", "bench.dra", 1)
    records: list[Record] = []
    for scheduler in chosen:
        await _quiet(args.max_load, args.wait_load)
        workdir = Path(tempfile.mkdtemp(prefix=f"dra-{scheduler}-"))
        print(f"== {shape} [{scheduler}]", flush=True)
        record = await backlog.run(
            shape,
            scheduler,
            workdir=workdir,
            wait_s=args.timeout,
            profile=args.profile,
            ours_log_level=args.ours_log_level,
        )
        detail = record.pop("failure_detail", None)
        log = record.pop("log", None)  # machine paths stay out of the record
        if "profile" in record:
            record["profile"] = Path(record["profile"]).name
        print("   " + summary_line(record) + f"  (log: {log})", flush=True)
        if detail:
            print(detail, flush=True)
        records.append(record)
        write(records, meta, args.out)
    return 1 if any("failed" in r for r in records) else 0


def summary_line(record: Record) -> str:
    if "failed" in record:
        return f"failed: {record['failed']}"
    batched = f", batched {record['batched_pct']} %" if "batched_pct" in record else ""
    return (
        f"{record['pods_per_s']} pods/s ({record['pods']} pods in {record['measure_s']} s "
        f"after ready at {record['ready_s']} s), cpu {record['cpu_s']} s "
        f"({record['cpu_ms_per_pod']} ms/pod){batched}, claims ok "
        f"{record.get('claims_allocated_ok')}/{record.get('pods_checked')}, load "
        f"{record['loadavg_before']} → {record['loadavg_after']}"
    )


def write(records: list[Record], meta: dict[str, Any], out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    (out / "latest.json").write_text(json.dumps({"meta": meta, "runs": records}, indent=1) + "\n")
    (out / "latest.md").write_text(markdown(records, meta))


def _get(records: list[Record], scheduler: str) -> Record | None:
    for record in records:
        if record["scheduler"] == scheduler and "failed" not in record:
            return record
    return None


def targets(records: list[Record]) -> list[tuple[str, float | None, float, str]]:
    """(what, measured, bound, comparison) for issue 40's three targets."""
    ours, kube = _get(records, OURS), _get(records, KUBE)

    def ratio(field: str) -> float | None:
        if ours is None or kube is None or not kube.get(field):
            return None
        return round(float(ours[field]) / float(kube[field]), 3)

    batched = None if ours is None else ours.get("batched_pct")
    return [
        ("ours / kube pods/s", ratio("pods_per_s"), 2.0, "≥"),
        ("ours / kube CPU ms per pod", ratio("cpu_ms_per_pod"), 0.25, "≤"),
        ("ours' DRA pods batched, %", batched, 95.0, "≥"),
    ]


def markdown(records: list[Record], meta: dict[str, Any]) -> str:
    facts = [f"{k} {meta[k]}" for k in ("commit", "date", "machine", "python") if meta.get(k)]
    out = [
        "DRA pods from one ResourceClaimTemplate on the real API server, claims made by "
        "kube-controller-manager before the scheduler starts, scheduler ready → last bind; "
        + "; ".join(facts)
        + ".",
        "",
        "```",
        meta.get("command", ""),
        "```",
        "",
        "| scheduler | nodes × devices | pods | pods/s | CPU s | CPU ms/pod | API server CPU s "
        "| batched | claims allocated on the pod's node | load before → after |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for r in records:
        if "failed" in r:
            out.append(
                f"| {r['scheduler']} | {r['nodes']} × {r['devices']} | {r['pods']} | "
                f"failed: {r['failed']} | | | | | | |"
            )
            continue
        out.append(
            f"| {r['scheduler']} | {r['nodes']} × {r['devices']} | {r['pods']} | "
            f"{r['pods_per_s']} | {r['cpu_s']} | {r['cpu_ms_per_pod']} | {r['apiserver_cpu_s']} "
            f"| {str(r['batched_pct']) + ' %' if 'batched_pct' in r else '–'} | "
            f"{r.get('claims_allocated_ok')}/{r.get('pods_checked')} | "
            f"{r['loadavg_before']} → {r['loadavg_after']} |"
        )
    out += ["", "Targets (issue 40):", ""]
    for name, value, bound, op in targets(records):
        met = value is not None and (value >= bound if op == "≥" else value <= bound)
        shown = "not measured" if value is None else f"{value}"
        out.append(f"- {name}: {shown} (target {op} {bound}) — {'met' if met else 'MISSED'}")
    ours = _get(records, OURS)
    if ours is not None:
        out += [
            "",
            f"Ours' decisions by path: {ours.get('decisions')}; exact batch outcomes: "
            f"{ours.get('exact_outcomes')}.",
        ]
    out += profile_lines(records)
    return "\n".join(out) + "\n"


def profile_lines(records: list[Record]) -> list[str]:
    """Ours' CPU by stage, for a run py-spy sampled (:mod:`bench.dra.profile`)."""
    out: list[str] = []
    for r in records:
        found = r.get("profile_stages")
        if not found:
            continue
        pods = r.get("pods") or 1
        out += [
            "",
            f"Ours' CPU by stage (py-spy, {found['samples']} samples, spawn to last bind, "
            f"{r.get('cpu_s_at_last')} s of CPU):",
            "",
            "| stage | share | CPU s | ms per pod |",
            "| --- | ---: | ---: | ---: |",
        ]
        for stage, share in found["stages"].items():
            seconds = found["seconds"][stage]
            out.append(f"| {stage} | {share:.1%} | {seconds:.2f} | {seconds * 1000 / pods:.3f} |")
    return out
