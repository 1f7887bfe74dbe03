"""``batch-scheduler demo``: the emulator, a workload, the real ``run`` path and a report.

Steps, per batching mode (batching off, then ``--batching``'s mode, unless ``--no-compare``):

1. start the emulator in its own process (``sim.process.SimProcess``; it keeps the API
   server's CPU off our event loop) with ``--nodes`` default nodes (4 CPU, 32Gi);
2. create the workload over HTTP with ``sim.workload``: "job" pods, one per node (3 CPU on a
   4-CPU node), and "web" pods (100m / 500Mi, several per node), all annotated
   ``batch-scheduler.io/batching: "true"``; at most 8 web pods per node, so every pod fits
   whatever the order;
3. run ``app.runtime.Runtime`` in this process through the kubeconfig the emulator wrote —
   the same kopf watch, informers, queue, cycle, binder and reporter as ``run`` — until
   every pod is bound, with a progress bar;
4. stop it gracefully and report: pods scheduled, pods/s, the batched share of cycles, full
   passes, and batch-state flush reasons (``Scheduler.counts()``, read from the metrics).

The pods exist before the scheduler starts, so its initial LIST queues all of them at once
and the run measures scheduling and binding, not how fast the demo can create pods. The
report ends with two speedups: of a decision (the cycle's time per pod, what batching
changes) and end to end (pods bound per second, bind calls to the emulator included).

Output: one line per fact, within a terminal's 80 columns at the default sizes, printed
without rich's hard wrapping (``soft_wrap``), so no phrase is cut in two.
Neighbours: ``runtime``, ``sim.process``, ``sim.workload``, ``cli.main``.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from scheduler.app.runtime import Runtime
from scheduler.app.settings import SchedulerSettings
from scheduler.batching.signature import BatchingMode
from scheduler.cycle.schedule_one import BatchingSettings
from scheduler.framework.config import DEFAULT_SCHEDULER_NAME, default_config
from scheduler.model.pod import BATCHING_ANNOTATION
from scheduler.sim import workload
from scheduler.sim.process import SimProcess

if TYPE_CHECKING:
    from collections.abc import Mapping

    from scheduler.cycle.schedule_one import Scheduler
    from scheduler.framework.config import SchedulerConfig
    from scheduler.framework.profile import PluginFactory

DEFAULT_NODES = 500
DEFAULT_PODS = 1500
"""A full pass over 500 nodes costs enough for batching's gain to show; both runs take
about 20 s on 2 cores, the emulator's start and the pods' creation included."""
WEB_PER_NODE = 8
"""Web pods per node at most: 8 x 100m beside a 3-CPU job leaves room on a 4-CPU node."""
TIMEOUT = 120.0
"""Seconds one run may take before the demo gives up (and says so)."""


@dataclass(frozen=True, slots=True)
class Workload:
    nodes: int
    jobs: int
    web: int

    @property
    def pods(self) -> int:
        return self.jobs + self.web

    @classmethod
    def plan(cls, nodes: int, pods: int) -> Workload:
        """Half the pods are jobs (at most one per node), the rest web pods, all fitting."""
        if nodes < 1 or pods < 1:
            raise ValueError("--nodes and --pods must be >= 1")
        jobs = min(nodes, pods // 2)
        web = pods - jobs
        if web > WEB_PER_NODE * nodes:
            raise ValueError(
                f"--pods {pods} does not fit on {nodes} nodes; at most "
                f"{nodes + WEB_PER_NODE * nodes} pods"
            )
        return cls(nodes, jobs, web)

    def objects(self) -> list[dict[str, Any]]:
        jobs = workload.make_pods(
            self.jobs,
            prefix="job-",
            cpu="3",
            memory="1Gi",
            scheduler_name=DEFAULT_SCHEDULER_NAME,
            labels={"app": "job"},
            annotations={BATCHING_ANNOTATION: "true"},
        )
        web = workload.make_pods(
            self.web,
            prefix="web-",
            cpu="100m",
            memory="500Mi",
            scheduler_name=DEFAULT_SCHEDULER_NAME,
            labels={"app": "web"},
            annotations={BATCHING_ANNOTATION: "true"},
        )
        return jobs + web


@dataclass(slots=True)
class RunReport:
    mode: BatchingMode
    pods: int
    bound: int = 0
    seconds: float = 0.0
    cycles: int = 0
    batched: int = 0
    full_passes: int = 0
    unschedulable: int = 0
    decision_seconds: float = 0.0
    flushes: dict[str, int] = field(default_factory=dict)

    @property
    def rate(self) -> float:
        return self.bound / self.seconds if self.seconds else 0.0

    @property
    def batched_share(self) -> float:
        return self.batched / self.cycles if self.cycles else 0.0


def _bound(runtime: Runtime) -> int:
    value = runtime.metrics.registry.get_sample_value(
        "batch_scheduler_binds_total", {"result": "success"}
    )
    return int(value or 0)


async def _run_once(
    plan: Workload,
    mode: BatchingMode,
    console: Console,
    *,
    time_limit: float,
    config: SchedulerConfig | None = None,
    registry: Mapping[str, PluginFactory] | None = None,
) -> RunReport:
    report = RunReport(mode, plan.pods)
    with SimProcess(["--nodes", str(plan.nodes)]) as sim:
        await workload.create_all(sim.url, plan.objects(), concurrency=32)
        settings = SchedulerSettings(
            kubeconfig=sim.kubeconfig,
            batching=BatchingSettings(mode=mode),
            metrics_addr="",
            secure_port=0,  # in-process: no port of its own
        )
        runtime = Runtime(
            settings, config or default_config(), handle_signals=False, registry=registry
        )
        started = time.perf_counter()
        task = asyncio.create_task(runtime.run(), name="runtime")
        columns = (
            TextColumn(f"batching {mode:<9}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("pods bound"),
            TimeElapsedColumn(),
        )
        try:
            with Progress(*columns, console=console, transient=False) as progress:
                bar = progress.add_task("bind", total=plan.pods)
                deadline = started + time_limit
                while not task.done() and time.perf_counter() < deadline:
                    bound = _bound(runtime)
                    progress.update(bar, completed=bound)
                    if bound >= plan.pods:
                        break
                    await asyncio.sleep(0.1)
            report.seconds = time.perf_counter() - started
            report.bound = _bound(runtime)
        finally:
            runtime.stop()
            await asyncio.wait({task}, timeout=30)
        if task.done() and not task.cancelled() and task.exception() is not None:
            raise RuntimeError(f"the scheduler failed: {task.exception()!r}")
        if runtime.scheduler is not None:
            _collect(report, runtime.scheduler)
    return report


def _collect(report: RunReport, scheduler: Scheduler) -> None:
    counts = scheduler.counts()
    report.cycles = counts.cycles
    report.batched = counts.batched
    report.full_passes = counts.full_passes
    report.unschedulable = counts.unschedulable
    report.decision_seconds = counts.decision_seconds
    metrics = scheduler.metrics
    flushed = metrics.by_label(metrics.batch_cache_flushed, "reason")
    report.flushes = {reason: int(count) for reason, count in flushed.items() if count}


def _table(reports: list[RunReport]) -> Table:
    table = Table()
    table.add_column("")
    for r in reports:
        table.add_column(f"batching {r.mode}", justify="right")
    rows: list[tuple[str, list[str]]] = [
        ("pods scheduled", [f"{r.bound}/{r.pods}" for r in reports]),
        ("wall seconds", [f"{r.seconds:.2f}" for r in reports]),
        ("pods/s", [f"{r.rate:.0f}" for r in reports]),
        ("batched share", [f"{r.batched_share:.0%} ({r.batched}/{r.cycles})" for r in reports]),
        ("full passes", [str(r.full_passes) for r in reports]),
        ("decision ms/pod", [_per_pod_ms(r) for r in reports]),
        ("unschedulable attempts", [str(r.unschedulable) for r in reports]),
        ("flush reasons", [_flushes(r) for r in reports]),
    ]
    for label, cells in rows:
        table.add_row(label, *cells)
    return table


def _per_pod_ms(report: RunReport) -> str:
    return f"{report.decision_seconds * 1000 / report.cycles:.3f}" if report.cycles else "-"


def _flushes(report: RunReport) -> str:
    if not report.flushes:
        return "-"
    return ", ".join(f"{k} {v}" for k, v in sorted(report.flushes.items(), key=lambda kv: -kv[1]))


async def demo(
    *,
    nodes: int = DEFAULT_NODES,
    pods: int = DEFAULT_PODS,
    compare: bool = True,
    mode: BatchingMode = BatchingMode.ANNOTATED,
    console: Console | None = None,
    time_limit: float = TIMEOUT,
    config: SchedulerConfig | None = None,
    registry: Mapping[str, PluginFactory] | None = None,
) -> list[RunReport]:
    """Run the demo; prints progress and the report to ``console``; returns the reports.

    ``compare``: batching off, then ``mode`` (annotated when ``mode`` is off); otherwise
    ``mode`` alone. ``config`` None: the default profile; ``registry`` None: the in-tree
    plugins only."""
    out = console or Console()
    plan = Workload.plan(nodes, pods)
    if mode is BatchingMode.OFF and compare:
        mode = BatchingMode.ANNOTATED
    modes = [BatchingMode.OFF, mode] if compare else [mode]
    for line in _header(plan, modes):
        out.print(line, soft_wrap=True, highlight=False)
    reports = [
        await _run_once(plan, m, out, time_limit=time_limit, config=config, registry=registry)
        for m in modes
    ]
    out.print(_table(reports))
    if compare:
        for line in _speedups(*reports):
            out.print(line, soft_wrap=True, highlight=False)
    missing = [r for r in reports if r.bound < r.pods]
    if missing:
        raise RuntimeError(
            "not every pod was bound: "
            + ", ".join(f"batching {r.mode}: {r.bound}/{r.pods}" for r in missing)
        )
    return reports


def _header(plan: Workload, modes: list[BatchingMode]) -> list[str]:
    """What runs, one line per fact."""
    runs = ", then ".join(
        "batching off (a full pass per pod)" if m is BatchingMode.OFF else f"batching {m}"
        for m in modes
    )
    return [
        "[bold]batch-scheduler demo[/]: the real `run` path against the embedded API server",
        "  API server  the emulator (scheduler/sim), its own process, fresh for each run",
        f"  cluster     {plan.nodes} nodes of 4 CPU and 32Gi",
        f"  workload    {plan.jobs} job pods (3 CPU), {plan.web} web pods (100m, 500Mi), "
        "all opted in",
        f"  runs        {runs}",
    ]


def _speedups(off: RunReport, on: RunReport) -> list[str]:
    """Batching's gain: per decision (what it changes), and end to end (what a user sees,
    bind calls included)."""
    lines: list[str] = []
    if off.cycles and on.cycles and on.decision_seconds:
        per_off = off.decision_seconds / off.cycles
        per_on = on.decision_seconds / on.cycles
        lines.append(
            f"speedup per decision: [bold]{per_off / per_on:.2f}x[/] "
            "(decision ms/pod, what batching changes)"
        )
    if off.rate and on.rate:
        lines.append(
            f"speedup end to end:   [bold]{on.rate / off.rate:.2f}x[/] "
            "(pods/s, bind calls to the API server included)"
        )
    return lines
