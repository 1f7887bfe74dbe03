"""``python -m bench.chaos``: faults on the real control plane mid-burst, ours and
kube-scheduler v1.37.2 side by side (issue 37, item 2).

    python -m bench.chaos [--scenarios apiserver-kill,...] [--schedulers ours,kube]
        [--nodes 1000] [--pods 5000] [--timeout 600] [--settle 30]
        [--out bench/results/chaos] [--append]
    python -m bench.chaos --soak MINUTES [--nodes 1000] [--soak-rate 50] [--soak-live 3000]

Each scenario (:mod:`bench.chaos.scenarios`) runs once per scheduler, each on a fresh
control plane with the same nodes and the same burst (:mod:`bench.chaos.run`). The records
go to ``OUT/latest.json`` and ``OUT/latest.md`` after every run (``--append`` keeps the runs
already there). The exit code is 1 when a run failed, or a run of ours broke an invariant
(lost, bound twice, bound by a bind that started after its cache had dropped the node, a
deleted node its cache never dropped, overcommitted); kube-scheduler's breaks are in the
table. ``--soak`` runs the churn of :mod:`bench.chaos.soak`
instead (ours only; ``OUT/soak.json`` and ``OUT/soak.md``).

Neighbours: :mod:`bench.chaos.report`, docs/reliability.md ("Faults on the real control
plane").
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import sys
import tempfile
from pathlib import Path
from typing import Any

from bench.chaos import report, soak
from bench.chaos import run as chaos_run
from bench.chaos.scenarios import SCENARIOS
from bench.scheduler_perf.capability import KUBE, OURS
from bench.scheduler_perf.cli import meta_for

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "bench" / "results" / "chaos"


def parse_args(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m bench.chaos", description=__doc__)
    p.add_argument("--scenarios", default=",".join(SCENARIOS), help="comma-separated")
    p.add_argument("--schedulers", default=f"{OURS},{KUBE}", help="in this order, per scenario")
    p.add_argument("--nodes", type=int, default=1000)
    p.add_argument("--pods", type=int, default=5000)
    p.add_argument("--timeout", type=float, default=600.0, help="seconds to wait for binds")
    p.add_argument(
        "--settle", type=float, default=30.0, help="stop waiting after this long with no bind"
    )
    p.add_argument(
        "--soak", type=float, default=0.0, metavar="MINUTES", help="churn for MINUTES instead"
    )
    p.add_argument("--soak-rate", type=int, default=50, help="pods created (and deleted) per s")
    p.add_argument("--soak-live", type=int, default=3000, help="pods kept in the cluster")
    p.add_argument("--out", type=Path, default=RESULTS)
    p.add_argument("--append", action="store_true", help="keep OUT/latest.json's runs")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    chosen = [s for s in args.scenarios.split(",") if s]
    schedulers = [s for s in args.schedulers.split(",") if s]
    problems = [f"unknown scenario {s}" for s in chosen if s not in SCENARIOS]
    problems += [f"unknown scheduler {s}" for s in schedulers if s not in (KUBE, OURS)]
    if args.nodes < 10 or args.pods < 1:
        problems.append("--nodes must be at least 10 and --pods at least 1")
    if problems:
        print("error: " + "; ".join(problems), file=sys.stderr)
        return 2
    # SIGTERM as Ctrl-C: the run's task is cancelled and every control plane stopped.
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    if args.soak > 0:
        return asyncio.run(run_soak(args, argv))
    return asyncio.run(run_all(chosen, schedulers, args, argv))


async def run_soak(args: argparse.Namespace, argv: list[str] | None) -> int:
    """The soak (:mod:`bench.chaos.soak`): ``OUT/soak.json`` and ``OUT/soak.md``."""
    meta = _meta(argv)
    workdir = Path(tempfile.mkdtemp(prefix="chaos-soak-"))
    print(f"== soak {args.soak} min, {args.nodes} nodes, {args.soak_rate} pods/s", flush=True)
    record = await soak.soak(
        args.soak, nodes=args.nodes, rate=args.soak_rate, live=args.soak_live, workdir=workdir
    )
    report.write_soak(record, meta, args.out)
    print(report.soak_markdown(record, meta))
    return 0 if record.get("pending_at_end") == 0 else 1


def _meta(argv: list[str] | None) -> dict[str, Any]:
    meta = meta_for(argv)
    meta["command"] = meta["command"].replace("bench.scheduler_perf", "bench.chaos", 1)
    meta["loadavg_start"] = [round(x, 2) for x in os.getloadavg()]
    return meta


async def run_all(
    chosen: list[str], schedulers: list[str], args: argparse.Namespace, argv: list[str] | None
) -> int:
    meta = _meta(argv)
    records: list[dict[str, Any]] = []
    if args.append:
        try:
            before = json.loads((args.out / "latest.json").read_text())
        except (OSError, ValueError):
            before = {}
        records = before.get("runs", [])
        for record in records:  # each run keeps the commit and command it ran at
            record.setdefault("commit", before.get("meta", {}).get("commit"))
            record.setdefault("command", before.get("meta", {}).get("command"))
    broken = 0
    for name in chosen:
        for scheduler in schedulers:
            print(f"== {name} [{scheduler}] {args.nodes} nodes, {args.pods} pods", flush=True)
            workdir = Path(tempfile.mkdtemp(prefix=f"chaos-{name}-{scheduler}-"))
            record = await chaos_run.run(
                SCENARIOS[name],
                scheduler,
                nodes=args.nodes,
                pods=args.pods,
                workdir=workdir,
                wait_s=args.timeout,
                settle=args.settle,
            )
            record.update(commit=meta["commit"], command=meta["command"])
            detail, logs = record.get("failure_detail"), record.get("logs")
            bad = report.violations(record)
            # The reference's breaks are reported, not ours to fail on; its failed runs are.
            broken += bool(bad) and (scheduler == OURS or "failed" in record)
            print("   " + summary_line(record) + f"  (logs: {logs})", flush=True)
            if detail:
                print(detail, flush=True)
            records.append(record)
            report.write(records, meta, args.out)
    print(report.markdown(records, meta))
    print(f"written: {args.out / 'latest.json'}, {args.out / 'latest.md'}")
    return 1 if broken else 0


def summary_line(record: dict[str, Any]) -> str:
    if "failed" in record:
        return f"failed: {record['failed']}"
    keys: tuple[str, ...] = (
        "bound",
        "lost",
        "binds_already_bound",
        "on_deleted_nodes",
        "binds_after_deletion_seen",
        "overcommitted_nodes",
    )
    keys += ("recovery_s", "error_lines", "code_429", "code_410", "pod_lists", "wall_s")
    return ", ".join(f"{k} {record.get(k)}" for k in keys)
