"""``python -m bench.gang``: gang scheduling, kube-scheduler v1.37.2 and ours, on the real
API server (issue 38, item 7).

    python -m bench.gang [--shapes gangs-3x1000,gangs-1000x3,plain-3000,infeasible]
        [--nodes 5000] [--labels pod,gang] [--schedulers ours,kube] [--work] [--profile]
        [--max-load 2] [--tries 3] [--wait-load 180] [--out bench/results/gang] [--append]
        [--timeout 600] [--ours-log-level info]

Each shape (:mod:`bench.gang.shapes`) runs once per scheduler, back to back (ours then
kube, or ``--schedulers``' order), each on a fresh control plane with the backlog made
before the scheduler starts (:mod:`bench.gang.backlog`). ``--labels`` chooses the pods'
signature labels (``pod``: kube's runner, a label per pod; ``gang``: one per gang); each
value is a full pass over the shapes. ``--work`` also counts, in-process, the full passes
one rejection of the infeasible gang takes (:mod:`bench.gang.work`). ``--profile`` runs
py-spy over ours (its raw stacks beside its log; the record names the file).

Load: the machine is shared. Before each run the runner waits (up to ``--wait-load`` s)
for the 1-minute load average to fall to ``--max-load``; a pair (ours, then kube) where
either run started above it is run again, up to ``--tries`` pairs. Every run is kept; the report's
lead table and targets take, per shape, the pair that started at the lowest load. Records go to
``OUT/latest.json`` and ``OUT/latest.md`` after every run (``--append``: the runs already
there are kept, and count among the pairs to choose from).

Neighbours: :mod:`bench.gang.report` (tables and targets), docs/performance.md ("Gang
scheduling").
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.gang import backlog, report, shapes
from bench.scheduler_perf.capability import KUBE, OURS
from bench.scheduler_perf.cli import meta_for
from bench.scheduler_perf.suite import SuiteError

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "bench" / "results" / "gang"


def parse_args(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m bench.gang", description=__doc__)
    p.add_argument("--shapes", default=",".join(shapes.SHAPES), help="comma-separated")
    p.add_argument("--nodes", type=int, default=5000, help="scale the shapes to this many")
    p.add_argument("--labels", default="pod,gang", help="signature labels: pod, gang or both")
    p.add_argument("--schedulers", default=f"{OURS},{KUBE}", help="in this order, per shape")
    p.add_argument(
        "--max-load",
        type=float,
        default=2.0,
        help="a pair (ours then kube) where a run started while the 1-minute load average was "
        "above this is run again, up to --tries pairs; each run waits up to --wait-load s "
        "for it first",
    )
    p.add_argument("--tries", type=int, default=3)
    p.add_argument("--wait-load", type=float, default=180.0)
    p.add_argument("--work", action="store_true", help="count the infeasible gang's passes")
    p.add_argument("--profile", action="store_true", help="py-spy over ours")
    p.add_argument(
        "--ours-log-level",
        default="info",
        help="info: ours' caches_synced line marks its readiness; warning: its /readyz does",
    )
    p.add_argument("--out", type=Path, default=RESULTS)
    p.add_argument("--append", action="store_true", help="keep OUT/latest.json's records")
    p.add_argument("--timeout", type=float, default=600.0, help="seconds to wait for binds")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    chosen = [s for s in args.shapes.split(",") if s]
    labels = [label for label in args.labels.split(",") if label]
    schedulers = [s for s in args.schedulers.split(",") if s]
    problems = [f"unknown shape {s}" for s in chosen if s not in shapes.SHAPES]
    problems += [f"unknown labels {label}" for label in labels if label not in shapes.LABELS]
    problems += [f"unknown scheduler {s}" for s in schedulers if s not in (KUBE, OURS)]
    if problems:
        print("error: " + "; ".join(problems), file=sys.stderr)
        return 2
    try:
        shapes.gang_selected()
    except SuiteError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    plan = [
        dataclasses.replace(shapes.SHAPES[name].scaled(args.nodes), labels=label)
        for label in labels
        for name in chosen
    ]
    return asyncio.run(run_all(plan, schedulers, args, argv))


def _meta(argv: list[str] | None, out: Path, *, append: bool) -> tuple[dict[str, Any], list[Any]]:
    """This invocation's facts and command; with ``append``, the earlier records, commands
    and in-process counts of ``out/latest.json`` too."""
    meta = meta_for(argv)
    command = meta.pop("command").replace("bench.scheduler_perf", "bench.gang", 1)
    meta.update(commands=[command], work={})
    if not append:
        return meta, []
    try:
        doc = json.loads((out / "latest.json").read_text())
    except (OSError, ValueError):
        return meta, []
    before = doc.get("meta", {})
    meta.update(commands=[*before.get("commands", []), command], work=before.get("work", {}))
    return meta, list(doc.get("runs", []))


async def run_all(
    plan: list[shapes.Shape],
    schedulers: list[str],
    args: argparse.Namespace,
    argv: list[str] | None,
) -> int:
    meta, records = _meta(argv, args.out, append=args.append)
    if args.work:
        for shape in plan:
            if shape.infeasible:
                found = await asyncio.to_thread(_work, shape)
                meta["work"][report.work_key(shape.labels, shape.nodes)] = found
                fulls = [a["decisions"].get("full", 0) for a in found["attempts"]]
                print(f"== work {shape.labels}/{shape.nodes}: full passes {fulls}", flush=True)
    for shape in plan:
        for attempt in range(1, args.tries + 1):
            pair = f"{time.strftime('%Y%m%dT%H%M%S')}-{shape.name}-{shape.labels}"
            runs = []
            for scheduler in schedulers:
                # The run before raises the 1-minute average itself (a scheduler, the API
                # server and etcd busy on two cores): each run waits for the quiet.
                await _quiet(args.max_load, args.wait_load)
                record = await _one(shape, scheduler, args)
                record.update(labels=shape.labels, pair=pair, attempt=attempt)
                runs.append(record)
                records.append(record)
                report.write(records, meta, args.out)
            worst = max(report.load(r) for r in runs)
            if worst <= args.max_load:
                break
            if attempt < args.tries:
                print(f"   load {worst:.2f} > {args.max_load}: the pair again", flush=True)
    print(report.markdown(records, meta))
    print(f"written: {args.out / 'latest.json'}, {args.out / 'latest.md'}")
    return 0


async def _one(shape: shapes.Shape, scheduler: str, args: argparse.Namespace) -> dict[str, Any]:
    workdir = Path(tempfile.mkdtemp(prefix=f"gang-{scheduler}-"))
    print(f"== {shape.name} labels={shape.labels} nodes={shape.nodes} [{scheduler}]", flush=True)
    record = await backlog.run(
        shape,
        scheduler,
        workdir=workdir,
        wait_s=args.timeout,
        profile=args.profile,
        ours_log_level=args.ours_log_level,
    )
    log, detail = record.pop("log", None), record.pop("failure_detail", None)
    print("   " + summary_line(record) + f"  (log: {log})", flush=True)
    if detail:
        print(detail, flush=True)
    return record


async def _quiet(max_load: float, wait_s: float) -> None:
    """Wait up to ``wait_s`` for the 1-minute load average to fall to ``max_load``."""
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        if os.getloadavg()[0] <= max_load:
            return
        await asyncio.sleep(5)


def _work(shape: shapes.Shape) -> dict[str, Any]:
    from bench.gang import work
    from scheduler.logs.setup import configure_logging

    configure_logging(level="warning")
    return work.infeasible_work(shape)


def summary_line(record: dict[str, Any]) -> str:
    if "failed" in record:
        return f"failed: {record['failed']}"
    return (
        f"{record['pods_per_s']} pods/s ({record['pods']} pods in {record['measure_s']} s "
        f"after ready at {record['ready_s']} s), cpu {record['cpu_s']} s "
        f"({record['cpu_ms_per_pod']} ms/pod), group attempts {record['group_attempts']}, "
        f"group algorithm {record['group_algorithm_s']} s, load {record['loadavg_before']} → "
        f"{record['loadavg_after']}"
    )
