"""``python -m bench.scheduler_perf``: kube's scheduler_perf suite, both schedulers.

    python -m bench.scheduler_perf [--labels performance[,short]] [--test REGEX]
        [--param name=value ...] [--schedulers kube,ours] [--out OUT] [--list]

Selects workloads from the pinned module's ``*/performance-config.yaml`` (labels as
kube's ``-perf-scheduling-label-filter``; ``--test`` searched in ``Test/Workload``),
overrides params (``--param initNodes=500``: the report names every override), and runs
each workload once per scheduler on a fresh control plane, kube-scheduler first.
``--list`` runs nothing: it prints every selected workload with what each scheduler would
do (run, or skipped and why) and, from ``OUT/latest.json`` when there is one, how its last
run ended. Records go to ``OUT/latest.json`` and ``OUT/latest.md`` after every run.

Neighbours: :mod:`bench.scheduler_perf.suite` (selection), :mod:`bench.scheduler_perf.runner`
(one run), :mod:`bench.scheduler_perf.report` (the files).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bench.scheduler_perf import report, runner
from bench.scheduler_perf.capability import SCHEDULERS
from bench.scheduler_perf.suite import SuiteError, load_suite, parse_param, select

if TYPE_CHECKING:
    from bench.scheduler_perf.suite import ParamValue

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "bench" / "results" / "scheduler_perf"


def parse_args(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m bench.scheduler_perf", description=__doc__)
    p.add_argument("--labels", default="performance", help="label filter, as kube's (a,+b,-c)")
    p.add_argument("--test", default=None, help="regex searched in Test/Workload")
    p.add_argument(
        "--param", action="append", default=[], metavar="NAME=VALUE", help="override a param"
    )
    p.add_argument("--schedulers", default=",".join(SCHEDULERS), help="kube,ours")
    p.add_argument("--out", type=Path, default=RESULTS)
    p.add_argument("--list", action="store_true", help="print the plan, run nothing")
    p.add_argument(
        "--append",
        action="store_true",
        help="keep OUT/latest.json's records (a rerun replaces its own): one report from "
        "several invocations, e.g. with different --param overrides",
    )
    p.add_argument(
        "--timeout", type=float, default=600.0, help="seconds a wait for pods may take (kube: 600)"
    )
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    chosen = [s for s in args.schedulers.split(",") if s]
    unknown = set(chosen) - set(SCHEDULERS)
    if unknown:
        print(f"unknown schedulers: {', '.join(sorted(unknown))}", file=sys.stderr)
        return 2
    try:
        overrides: dict[str, ParamValue] = dict(parse_param(p) for p in args.param)
        selected = select(
            load_suite(), labels=args.labels.split(","), test=args.test, overrides=overrides
        )
    except (SuiteError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if not selected:
        print("no workload matches the selection", file=sys.stderr)
        return 2
    unused = set(overrides) - {name for s in selected for name in s.workload.params}
    if unused:
        print(f"error: no selected workload has param(s) {sorted(unused)}", file=sys.stderr)
        return 2
    plans = [runner.plan(s) for s in selected]
    if args.list:
        print_plan(plans, chosen, args.out)
        return 0
    return asyncio.run(run_all(plans, chosen, args, argv))


def print_plan(plans: list[runner.WorkloadPlan], chosen: list[str], out: Path) -> None:
    """Every selected workload: per scheduler, the plan and the last recorded outcome."""
    last = _last_records(out)
    runs = 0
    for workload in plans:
        selected = workload.selected
        overridden = ", ".join(f"{k}={v}" for k, v in selected.overridden.items())
        print(f"{selected.test_id}" + (f"  ({overridden})" if overridden else ""))
        for scheduler in chosen:
            scheduler_plan = workload.plans[scheduler]
            status = (
                "run " + " ".join(scheduler_plan.args)
                if not scheduler_plan.skip
                else (f"skipped: {scheduler_plan.skip}")
            )
            runs += not scheduler_plan.skip
            previous = last.get((selected.test_id, scheduler))
            print(
                f"  {scheduler:>4}: {status.strip()}"
                + (f"  [last: {previous}]" if previous else "")
            )
    print(f"{len(plans)} workloads, {runs} runs of {len(plans) * len(chosen)}")


def _last_records(out: Path) -> dict[tuple[str, str], str]:
    try:
        doc = json.loads((out / "latest.json").read_text())
    except (OSError, ValueError):
        return {}
    found: dict[tuple[str, str], str] = {}
    for r in doc.get("workloads", []):
        key = (report.workload_id(r), r["scheduler"])
        changed = ", ".join(f"{k}={v}" for k, v in (r.get("overridden") or {}).items())
        at = f" with {changed}" if changed else ""
        if "failed" in r:
            found[key] = f"failed{at}: {r['failed']}"
        elif "skipped" not in r:
            found[key] = f"{report.average(r) or 0:.1f} pods/s{at}"
    return found


def _previous(out: Path, meta: dict[str, Any]) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The records and commands of ``out/latest.json`` with this invocation's command added."""
    try:
        doc = json.loads((out / "latest.json").read_text())
    except (OSError, ValueError):
        return [], meta
    before = doc.get("meta", {})
    commands = [*before.get("commands", [before.get("command", "")]), meta["command"]]
    merged = {**meta, "commands": [c for c in commands if c]}
    return list(doc.get("workloads", [])), merged


def meta_for(argv: list[str] | None) -> dict[str, Any]:
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    ).stdout.strip()
    shown = sys.argv[1:] if argv is None else argv
    return {
        "command": "python -m bench.scheduler_perf " + shlex.join(shown),
        "commit": commit,
        "date": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs, {platform.system()}",
        "python": platform.python_version(),
    }


async def run_all(
    plans: list[runner.WorkloadPlan],
    chosen: list[str],
    args: argparse.Namespace,
    argv: list[str] | None,
) -> int:
    meta = meta_for(argv)
    records: list[dict[str, Any]] = []
    if args.append:
        records, meta = _previous(args.out, meta)
    for workload in plans:
        for scheduler in chosen:
            workdir = Path(tempfile.mkdtemp(prefix=f"perf-{scheduler}-"))
            print(f"== {workload.selected.test_id} [{scheduler}]", flush=True)
            record = await runner.run(
                workload, scheduler, workdir=workdir, wait_timeout=args.timeout
            )
            # Where the logs are and the traceback: for the console, not for the records.
            log, detail = record.pop("log", None), record.pop("failure_detail", None)
            print("   " + summary_line(record), flush=True)
            if "failed" in record:
                print(f"   log: {log}\n{detail or ''}", flush=True)
            key = (report.workload_id(record), scheduler)
            records = [r for r in records if (report.workload_id(r), r["scheduler"]) != key]
            records.append(record)
            report.write(records, meta, args.out)
    print(report.markdown(records, meta))
    print(f"written: {args.out / 'latest.json'}, {args.out / 'latest.md'}")
    return 0


def summary_line(record: dict[str, Any]) -> str:
    if "skipped" in record:
        return f"skipped: {record['skipped']}"
    if "failed" in record:
        return f"failed: {record['failed']}"
    throughput = record.get("SchedulingThroughput")
    sli = record.get("SchedulingSLI_ms") or {}
    pace = (
        f"{throughput['Average']:.1f} pods/s (p50 {throughput['Perc50']:.0f})"
        if throughput
        else "no SchedulingThroughput sample (under a second)"
    )
    return (
        f"{pace}, "
        f"{record.get('pods_scheduled')} pods in {record.get('measure_s')} s "
        f"(created {record.get('created')} in {record.get('create_s')} s), "
        f"SLI p50 {sli.get('Perc50', 0):.0f} ms, cpu {record.get('cpu_s')} s "
        f"({record.get('cpu_ms_per_pod')} ms/pod), rss {record.get('rss_mb')} MB, "
        f"wall {record.get('wall_s')} s"
    )
