"""Measure how late conditions and FailedScheduling Events arrive under a pod burst.

``python -m tests.reliability.measure_report_delay [--pods 2000] [--fail-rate 0.2]``

The emulator in its own process with ``--nodes`` 4-CPU nodes; the scheduler as a user runs
it (a subprocess, batching ``all``); once it is ready, a burst of ``--pods`` pods created
16 at a time, ``--unschedulable`` of them asking for 64 CPUs (they fit nowhere). With
``--fail-rate`` the emulator fails that share of status PATCHes and Event POSTs (500, 503,
429). Printed: the scheduler's ``batch_scheduler_report_delay_seconds`` quantiles (time
from the attempt's report to the write, retries included; Prometheus-style interpolation
within buckets), and what the API holds at the end: pods with ``PodScheduled=False`` and
with a FailedScheduling Event, out of the unschedulable ones. A measurement, not a test:
the figures go to docs/reliability.md.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
import time
from pathlib import Path
from typing import Any

import aiohttp

from scheduler.sim import workload
from scheduler.sim.process import SimProcess
from tests.scheduler_process import BATCHING, SCHEDULER, SchedulerProc, wait_for

METRIC = "batch_scheduler_report_delay_seconds"


async def _create(url: str, objects: list[dict[str, Any]], concurrency: int = 16) -> float:
    """POST every object, retrying injected faults; returns the seconds the burst took."""
    queue = list(objects)
    started = time.monotonic()
    async with aiohttp.ClientSession(url) as session:

        async def worker() -> None:
            while queue:
                obj = queue.pop(0)
                while True:
                    async with session.post(workload.collection_path(obj), json=obj) as resp:
                        if resp.status < 300 or resp.status == 409:
                            break
                        if resp.status not in (429, 500, 503):
                            raise RuntimeError(f"create: {resp.status} {await resp.text()}")
                    await asyncio.sleep(0.05)

        await asyncio.gather(*(worker() for _ in range(concurrency)))
    return time.monotonic() - started


def _get(url: str, path: str) -> dict[str, Any]:
    import urllib.request

    for _ in range(50):  # the emulator may fail GETs too: retry
        try:
            with urllib.request.urlopen(url + path, timeout=30) as resp:
                result: dict[str, Any] = json.loads(resp.read())
                return result
        except OSError:
            time.sleep(0.2)
    raise RuntimeError(f"GET {path} kept failing")


def _quantile(buckets: list[tuple[float, float]], q: float) -> float | None:
    """histogram_quantile over cumulative (le, count) pairs sorted by le."""
    total = buckets[-1][1] if buckets else 0.0
    if not total:
        return None
    rank = q * total
    low_le, low_count = 0.0, 0.0
    for le, count in buckets:
        if count >= rank:
            if le == float("inf"):
                return low_le
            span = count - low_count
            return low_le + (le - low_le) * ((rank - low_count) / span if span else 1.0)
        low_le, low_count = le, count
    return None


def _histogram(
    proc: SchedulerProc, kind: str, reason: str | None = None
) -> tuple[list[tuple[float, float]], float]:
    """Cumulative (le, count) buckets and the count of ``kind`` (and ``reason``), summed."""
    buckets: dict[float, float] = {}
    count = 0.0
    for (name, labels), value in proc.metrics().items():
        lab = dict(labels)
        if lab.get("kind") != kind or reason not in (None, lab.get("reason")):
            continue
        if name == f"{METRIC}_bucket":
            le = float(lab["le"])
            buckets[le] = buckets.get(le, 0.0) + value
        elif name == f"{METRIC}_count":
            count += value
    return sorted(buckets.items()), count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=200)
    parser.add_argument("--pods", type=int, default=2000)
    parser.add_argument("--unschedulable", type=float, default=0.5, help="share of the pods")
    parser.add_argument("--fail-rate", type=float, default=0.0)
    parser.add_argument("--timeout", type=float, default=300.0)
    args = parser.parse_args()

    bad = int(args.pods * args.unschedulable)
    good = args.pods - bad
    common: dict[str, Any] = {"scheduler_name": SCHEDULER, "annotations": BATCHING}
    pods = workload.make_pods(good, prefix="fit-", **common) + workload.make_pods(
        bad, prefix="nofit-", cpu="64", **common
    )
    pods.sort(key=lambda p: p["metadata"]["name"][-1])  # interleave the two kinds
    sim_args = ["--nodes", str(args.nodes)]
    if args.fail_rate:
        sim_args += ["--fail-rate", f"patch={args.fail_rate}", "--fail-rate"]
        sim_args += [f"create={args.fail_rate}"]
    with SimProcess(sim_args) as sim, tempfile.TemporaryDirectory() as tmp:
        proc = SchedulerProc(sim.kubeconfig, Path(tmp) / "scheduler.log", "--batching", "all")
        try:
            proc.wait_ready(60)
            t0 = time.monotonic()
            burst = asyncio.run(_create(sim.url, pods))
            bound_at: list[float] = []

            def reported() -> tuple[int, int]:
                listed = _get(sim.url, "/api/v1/namespaces/default/pods")["items"]
                with_condition = sum(
                    1
                    for p in listed
                    if p["metadata"]["name"].startswith("nofit-")
                    and any(
                        c.get("type") == "PodScheduled" and c.get("status") == "False"
                        for c in p.get("status", {}).get("conditions", [])
                    )
                )
                events = _get(sim.url, "/api/v1/namespaces/default/events")["items"]
                with_event = len(
                    {
                        e["involvedObject"]["name"]
                        for e in events
                        if e.get("reason") == "FailedScheduling"
                        and e["involvedObject"]["name"].startswith("nofit-")
                    }
                )
                return with_condition, with_event

            def written() -> bool:
                # The scheduler's own counts (cheap): listing 2000 pods every second would
                # load the emulator more than the scheduler does.
                _, conditions = _histogram(proc, "condition")
                _, events = _histogram(proc, "event")
                if (
                    not bound_at
                    and proc.metric("batch_scheduler_binds_total", result="success") >= good
                ):
                    bound_at.append(time.monotonic() - t0)
                return conditions >= bad and events >= args.pods and bool(bound_at)

            wait_for(written, args.timeout, 0.5)
            settled = time.monotonic() - t0
            conditions, events = reported()
            row: dict[str, Any] = {
                "nodes": args.nodes,
                "pods": args.pods,
                "unschedulable": bad,
                "fail_rate": args.fail_rate,
                "burst_seconds": round(burst, 1),
                "all_bound_seconds": round(bound_at[0], 1) if bound_at else None,
                "all_written_seconds": round(settled, 1),
                "with_condition": conditions,
                "with_failed_scheduling_event": events,
            }
            for label, kind, reason in (
                ("condition", "condition", None),
                ("failed_scheduling_event", "event", "FailedScheduling"),
                ("scheduled_event", "event", "Scheduled"),
            ):
                buckets, count = _histogram(proc, kind, reason)
                row[f"{label}_writes"] = int(count)
                for q in (0.5, 0.99, 1.0):
                    value = _quantile(buckets, q)
                    row[f"{label}_p{int(q * 100)}_s"] = None if value is None else round(value, 2)
            print(json.dumps(row))
        finally:
            proc.proc.terminate()
            proc.proc.wait(timeout=20)


if __name__ == "__main__":
    main()
