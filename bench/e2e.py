"""End-to-end throughput, per-pod cost and memory: batching on vs off, and the bind ceiling.

Every run is three processes on this machine: the emulator (``SimProcess``), the scheduler
(``python -m scheduler run --kubeconfig ... --batching all|off --log-level warning
--metrics-addr 127.0.0.1:PORT``, the real ``run`` path: kopf watch, binder, reporter) and
this harness, which creates the workload, watches pods and reads the scheduler's
``/metrics`` and ``/proc/PID/status``.

One run, in order (a burst into a running scheduler, as scheduler_perf creates pods for a
scheduler that is already up):

1. a fresh emulator with ``nodes`` default nodes (4 CPU, 32Gi, 110 pods);
2. the scheduler process starts and lists the cluster; ``/readyz`` turning 200 (its own
   LIST applied and kopf's listing delivered: it is synced and idle) ends ``startup_s``;
3. the harness opens a pod watch and stamps every event that carries a ``nodeName`` with
   its arrival time (lines are kept raw and parsed after the run, so the harness spends
   almost nothing on them while the scheduler runs);
4. every pod of the scenario is created in one burst (32 creates in flight); each pod's
   creation time is when its create returned. The run ends when every pod is bound
   (watch), or at the timeout;
5. ``/metrics`` is scraped, ``VmHWM`` of the scheduler read, the scheduler stopped.

So the scheduler pays per pod what it pays in a cluster: the ADDED event through kopf, the
decision, the bind, the MODIFIED event of the bind, the Scheduled Event. pods/s runs from
the first create to the last bind; latency is each pod's create → bind.

The bind ceiling (``batching="ceiling"``): the same emulator and burst, but instead of the
scheduler a bare client process (``python -m bench.e2e ceiling``: ``bench/bindceiling``,
Go and client-go, :mod:`bench.ceiling`) watches pods and binds each new pending one to a
pre-chosen node (round robin) with the scheduler's bind concurrency: what the fastest
possible scheduler would achieve against this emulator on this machine, creation
included. The API server's limit with binds only is :mod:`bench.bind_ceiling`.

Records (one per scenario x nodes x batching x repeat; keys in ``docs/performance.md``)
go to ``bench/results/latest.json``; medians per (scenario, nodes, batching) to
``latest.md``; plots to ``bench/results/throughput_<scenario>.png``.

Run: ``python -m bench.e2e [--quick] [--nodes 500,1000] [--scenarios a,b] [--repeats 3]``.

This module runs the matrix and makes the records; the workloads are in
:mod:`bench.scenarios`, the burst (creates and the bind watch) in :mod:`bench.burst`, the
readings of a process in :mod:`bench.measure`, the ceiling client in :mod:`bench.ceiling`
and the reports in :mod:`bench.e2e_report`.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import aiohttp

from bench.burst import (
    BIND_CONCURRENCY,
    CREATE_CONCURRENCY,
    PODS_PATH,
    STALL_SECONDS,
    BindWatch,
    BurstBinds,
    create_timed,
)
from bench.e2e_report import markdown, print_record, write_results
from bench.measure import (
    by_label,
    cpu_seconds,
    histogram_quantile,
    measured_pid,
    metric_sum,
    parse_metrics,
    vm_hwm_mb,
    wait_ready,
)
from bench.scenarios import CEILING_SCENARIOS, SCENARIOS, ZONES, object_path
from bench.stats import percentile, rounded
from controlplane.processes import free_port
from scheduler.sim.process import SimProcess
from scheduler.sim.workload import ZONE_LABEL

if TYPE_CHECKING:
    from bench.measure import Metrics
    from bench.scenarios import Scenario

ROOT = Path(__file__).parent.parent
RESULTS = ROOT / "bench" / "results"
MODES = ("off", "all")
"""Batching modes of the scheduler runs; "ceiling" is the bare bind client."""

RECORD_KEYS = (
    "scenario",
    "nodes",
    "pods",
    "batching",
    "repeat",
    "bound",
    "complete",
    "pods_per_s",
    "wall_s",
    "startup_s",
    "create_s",
    "first_create_to_last_bind_s",
    "decision_p50_ms",
    "decision_p99_ms",
    "decision_mean_ms",
    "latency_p50_s",
    "latency_p99_s",
    "scheduled",
    "hint_used",
    "exact_used",
    "batched_share",
    "flushes",
    "unschedulable_attempts",
    "bind_errors",
    "events_dropped",
    "peak_rss_mb",
    "scheduler_cpu_s",
    "cpu_ms_per_pod",
    "sim_cpu_s",
)
"""Every record has exactly these keys (documented in docs/performance.md)."""


# -- one run ------------------------------------------------------------------------------


async def run_one(
    scenario: Scenario,
    nodes: int,
    batching: str,
    *,
    repeat: int = 0,
    run_timeout: float = 600.0,
    extra_args: list[str] | None = None,
    profile_cmd: list[str] | None = None,
) -> dict[str, Any]:
    """One record: see the module docstring. ``profile_cmd`` prefixes the scheduler command
    (``py-spy record -o F --``) to profile the scheduler process under the scenario."""
    objects = scenario.build(nodes)
    pods = len(objects)
    history = max(20_000, 6 * pods)
    with SimProcess(["--nodes", str(nodes), "--history", str(history)]) as sim:
        assert sim.proc is not None
        await prepare(sim.url, scenario, nodes)
        port = free_port()
        if batching == "ceiling":
            cmd = [
                sys.executable,
                "-m",
                "bench.e2e",
                "ceiling",
                "--kubeconfig",
                str(sim.kubeconfig),
                "--concurrency",
                str(BIND_CONCURRENCY),
                "--nodes",
                str(nodes),
                "--port",
                str(port),
            ]
        else:
            cmd = [
                sys.executable,
                "-m",
                "scheduler",
                "run",
                "--kubeconfig",
                str(sim.kubeconfig),
                "--batching",
                batching,
                "--log-level",
                "warning",
                "--metrics-addr",
                f"127.0.0.1:{port}",
                "--secure-port",
                "0",
                "--bind-concurrency",
                str(BIND_CONCURRENCY),
                *(extra_args or []),
            ]
            cmd = [*(profile_cmd or []), *cmd]
        started = time.perf_counter()
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, cwd=ROOT)  # noqa: ASYNC220
        text = ""
        try:
            t_ready = await wait_ready(port, proc, started + 120.0)
            async with (
                aiohttp.ClientSession(sim.url) as session,
                session.get(f"{PODS_PATH}?limit=1") as resp,
            ):
                listed = await resp.json()
            watch = BindWatch(sim.url, pods)
            await watch.start(listed["metadata"]["resourceVersion"])
            sim_cpu0 = cpu_seconds(sim.proc.pid)
            sched_cpu0 = cpu_seconds(measured_pid(proc))
            try:
                t_create = time.perf_counter()
                async with aiohttp.ClientSession(sim.url) as session:
                    created = await create_timed(session, objects, concurrency=CREATE_CONCURRENCY)
                t_created = time.perf_counter()
                del objects
                await watch.wait(t_created + run_timeout, STALL_SECONDS)
                t_end = time.perf_counter()
                pid = measured_pid(proc)
                burst_cpu = cpu_seconds(pid) - sched_cpu0  # before the scrape below
                if batching != "ceiling":
                    async with (
                        aiohttp.ClientSession() as session,
                        session.get(f"http://127.0.0.1:{port}/metrics") as resp,
                    ):
                        text = await resp.text()
                peak = vm_hwm_mb(pid)
                sched_cpu = cpu_seconds(pid)
                sim_cpu = cpu_seconds(sim.proc.pid) - sim_cpu0
            finally:
                await watch.stop()
        finally:
            proc.send_signal(signal.SIGINT if profile_cmd else signal.SIGTERM)
            try:
                proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
    return _record(
        scenario,
        nodes,
        pods,
        batching,
        repeat,
        burst=BurstBinds(watch.bind_times(), created, t_create, t_end),
        started=started,
        t_ready=t_ready,
        t_created=t_created,
        metrics=parse_metrics(text),
        peak_rss_mb=peak,
        scheduler_cpu_s=sched_cpu,
        burst_cpu_s=burst_cpu,
        sim_cpu_s=sim_cpu,
    )


async def prepare(url: str, scenario: Scenario, nodes: int) -> None:
    """Before the scheduler starts: the zone labels a ``zoned`` scenario needs on the
    emulator's nodes (round robin over ZONES), and the scenario's objects (its Service and
    ReplicaSet) in the pods' namespace."""
    async with aiohttp.ClientSession(url) as session:
        if scenario.zoned:
            headers = {"Content-Type": "application/merge-patch+json"}
            for i in range(nodes):
                labels = {ZONE_LABEL: ZONES[i % len(ZONES)]}
                body = {"metadata": {"labels": labels}}
                async with session.patch(
                    f"/api/v1/nodes/node-{i}", json=body, headers=headers
                ) as resp:
                    if resp.status >= 300:
                        raise RuntimeError(f"label node-{i}: {resp.status} {await resp.text()}")
        for obj in scenario.objects(nodes):
            async with session.post(object_path(obj, "default"), json=obj) as resp:
                if resp.status >= 300:
                    raise RuntimeError(f"create {obj['kind']}: {resp.status} {await resp.text()}")


def _record(
    scenario: Scenario,
    nodes: int,
    pods: int,
    batching: str,
    repeat: int,
    *,
    burst: BurstBinds,
    started: float,
    t_ready: float,
    t_created: float,
    metrics: Metrics,
    peak_rss_mb: float,
    scheduler_cpu_s: float,
    burst_cpu_s: float,
    sim_cpu_s: float,
) -> dict[str, Any]:
    decision = "batch_scheduler_decision_duration_seconds"
    p50 = histogram_quantile(metrics, decision, 0.5)
    p99 = histogram_quantile(metrics, decision, 0.99)
    count = metric_sum(metrics, decision + "_count")
    total = metric_sum(metrics, decision + "_sum")
    scheduled = metric_sum(metrics, "scheduler_schedule_attempts_total", result="scheduled")
    hinted = metric_sum(metrics, "scheduler_batch_attempts_total", result="hint_used")
    exact = metric_sum(metrics, "batch_scheduler_exact_batch_total", outcome="placed")
    record: dict[str, Any] = {
        "scenario": scenario.name,
        "nodes": nodes,
        "pods": pods,
        "batching": batching,
        "repeat": repeat,
        **burst.counts(pods),
        "wall_s": round(burst.last - started, 3),
        "startup_s": round(t_ready - started, 3),
        "create_s": round(t_created - burst.t_create, 3),
        "first_create_to_last_bind_s": round(burst.span, 3),
        "decision_p50_ms": _ms(p50),
        "decision_p99_ms": _ms(p99),
        "decision_mean_ms": _ms(total / count) if count else None,
        "latency_p50_s": rounded(percentile(burst.latencies, 0.5), 3),
        "latency_p99_s": rounded(percentile(burst.latencies, 0.99), 3),
        "scheduled": int(scheduled),
        "hint_used": int(hinted),
        "exact_used": int(exact),
        "batched_share": round((hinted + exact) / scheduled, 4) if scheduled else None,
        "flushes": by_label(metrics, "scheduler_batch_cache_flushed_total", "reason"),
        "unschedulable_attempts": int(
            metric_sum(metrics, "scheduler_schedule_attempts_total", result="unschedulable")
        ),
        "bind_errors": int(
            metric_sum(metrics, "batch_scheduler_binds_total")
            - metric_sum(metrics, "batch_scheduler_binds_total", result="success")
        ),
        "events_dropped": int(metric_sum(metrics, "batch_scheduler_events_dropped_total")),
        "peak_rss_mb": round(peak_rss_mb, 1),
        "scheduler_cpu_s": round(scheduler_cpu_s, 2),
        "cpu_ms_per_pod": _per_pod_ms(burst_cpu_s, len(burst.binds)),
        "sim_cpu_s": round(sim_cpu_s, 2),
    }
    assert tuple(record) == RECORD_KEYS
    return record


def _per_pod_ms(cpu_s: float, bound: int) -> float | None:
    """The scheduler's CPU during the burst (first create to last bind), per bound pod."""
    return round(cpu_s * 1000 / bound, 3) if bound else None


def _ms(seconds: float | None) -> float | None:
    return rounded(None if seconds is None else seconds * 1000, 4)


async def run_matrix(
    scenarios: list[str],
    node_counts: list[int],
    repeats: int,
    *,
    ceiling: bool = True,
    run_timeout: float = 600.0,
) -> list[dict[str, Any]]:
    records = []
    modes = [*MODES, "ceiling"] if ceiling else list(MODES)
    for nodes in node_counts:
        for name in scenarios:
            scenario = SCENARIOS[name]
            for repeat in range(repeats):
                # Interleaved per repeat, so drift touches every mode alike.
                for batching in modes:
                    if batching == "ceiling" and name not in CEILING_SCENARIOS:
                        continue
                    record = await run_one(
                        scenario, nodes, batching, repeat=repeat, run_timeout=run_timeout
                    )
                    print_record(record)
                    records.append(record)
    return records


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args and args[0] == "ceiling":
        from bench import ceiling

        return ceiling.main(args[1:])
    if "--api" in args and args[args.index("--api") + 1 :][:1] == ["real"]:
        from bench.real import main as real_main

        return real_main(args)
    parser = argparse.ArgumentParser(prog="python -m bench.e2e")
    parser.add_argument(
        "--api", choices=("sim", "real"), default="sim", help="real: see bench/real.py"
    )
    parser.add_argument("--quick", action="store_true", help="100 and 500 nodes, 1 repeat")
    parser.add_argument("--nodes", default=None, help="comma-separated node counts")
    parser.add_argument("--scenarios", default=",".join(SCENARIOS))
    parser.add_argument("--repeats", type=int, default=None)
    parser.add_argument("--no-ceiling", action="store_true")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds per run")
    parser.add_argument("--out", type=Path, default=RESULTS)
    a = parser.parse_args(args)
    nodes = [int(n) for n in (a.nodes or ("100,500" if a.quick else "500,1000,5000")).split(",")]
    repeats = a.repeats or (1 if a.quick else 3)
    scenarios = [s for s in a.scenarios.split(",") if s]
    unknown = set(scenarios) - set(SCENARIOS)
    if unknown:
        parser.error(f"unknown scenarios: {', '.join(sorted(unknown))}")
    meta = {
        "date": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs, {platform.system()}",
        "python": platform.python_version(),
        "repeats": repeats,
        "nodes": nodes,
        "scenarios": scenarios,
        "bind_concurrency": BIND_CONCURRENCY,
    }
    records = asyncio.run(
        run_matrix(scenarios, nodes, repeats, ceiling=not a.no_ceiling, run_timeout=a.timeout)
    )
    write_results(records, meta, a.out)
    print(markdown(records, meta))
    print(f"written: {a.out / 'latest.json'}, {a.out / 'latest.md'}, {a.out}/throughput_*.png")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
