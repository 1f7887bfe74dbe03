"""One shape, one scheduler: the backlog made first, then the scheduler started on it.

As the issue's kube-scheduler figures were taken: a fresh etcd and kube-apiserver with
``GenericWorkload`` (kube's scheduler_perf flags: :func:`bench.scheduler_perf.runner.
apiserver_args`), the shape's nodes, PodGroups and pods created (the gang's pods before the
plain ones), a pod watch listing them; only then the scheduler starts — kube-scheduler
v1.37.2 or ours, each with ``--feature-gates=GenericWorkload=true`` and the flags
:mod:`bench.scheduler_perf.schedulers` gives it (ours: ``--batching all``, as kube's
``OpportunisticBatching`` default).

Measured from the scheduler's readiness (``/readyz`` 200: both report ready once their
informers synced) to the last of the shape's expected pods seen bound by the watch:
pods/s, the scheduler's CPU in that window (and per pod), the API server's; from
``/metrics`` at the end (a fresh process: its counters are the run's) the pod-group
attempts by result, the group algorithm's seconds (``scheduler_podgroup_scheduling_
algorithm_duration_seconds``, the same name in both), the attempt durations, and ours'
decisions by path. ``os.getloadavg()`` is recorded before the scheduler starts and after
the last bind. ``profile``: py-spy over ours from readiness to the last bind.

Neighbours: :mod:`bench.gang.shapes` (the objects), :mod:`bench.gang.cli` (the loop and the
files), :mod:`bench.scheduler_perf` (the control plane flags, the processes, the watch).
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import traceback
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bench.gang import profile as gang_profile
from bench.gang import shapes
from bench.measure import Metrics, by_label, cpu_seconds, metric_sum, parse_metrics
from bench.scheduler_perf import runner, schedulers
from bench.scheduler_perf.api import CREATE_WORKERS, Api, ApiError, parallel, tls_for
from bench.scheduler_perf.capability import OURS
from bench.scheduler_perf.podwatch import PodInfo, PodWatch, became_scheduled
from controlplane.launcher import ControlPlane, ControlPlaneError

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from bench.gang.shapes import Shape
    from bench.scheduler_perf.capability import Plan
    from bench.scheduler_perf.suite import Selected

Record = dict[str, Any]
NODE_WORKERS = 16
GROUP_ALGORITHM = "scheduler_podgroup_scheduling_algorithm_duration_seconds"
GROUP_ATTEMPT = "scheduler_podgroup_scheduling_attempt_duration_seconds"
GROUP_ATTEMPTS = "scheduler_podgroup_schedule_attempts_total"
POD_ATTEMPTS = "scheduler_schedule_attempts_total"
DECISIONS = "batch_scheduler_decision_duration_seconds"
KUBE_ALGORITHM = "scheduler_scheduling_algorithm_duration_seconds"


class _Binds:
    """Counts the expected namespace's pods as the watch sees them bound; notes the first
    and last bind and the scheduler's CPU at the last."""

    def __init__(self, namespace: str, want: int, cpu: Any) -> None:
        self.namespace = namespace
        self.want = want
        self.cpu = cpu
        self.bound = 0
        self.first: float | None = None
        self.last: float | None = None
        self.cpu_at_last = 0.0
        self.apiserver_at_last = 0.0
        self.apiserver: Any = lambda: 0.0
        self.done = asyncio.Event()

    def __call__(self, old: PodInfo | None, new: PodInfo) -> None:
        if new.namespace != self.namespace or not became_scheduled(old, new):
            return
        now = time.monotonic()
        self.bound += 1
        self.first = self.first or now
        if self.bound == self.want:
            self.last = now
            self.cpu_at_last = self.cpu()
            self.apiserver_at_last = self.apiserver()
            self.done.set()


async def create_backlog(api: Api, shape: Shape, *, scheduler_name: str, run: str) -> float:
    """Nodes, namespaces, PodGroups, the gang's pods, then the plain pods; the seconds."""
    began = time.monotonic()
    await parallel(
        shape.nodes,
        NODE_WORKERS,
        lambda i: api.create("/api/v1/nodes", shapes.node(shape, i, scheduler_run=run)),
    )
    for namespace in (shapes.GANG_NS, shapes.PLAIN_NS):
        body = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}}
        await api.create("/api/v1/namespaces", body, ok=(409,))
    groups = f"/apis/scheduling.k8s.io/v1beta1/namespaces/{shapes.GANG_NS}/podgroups"
    await parallel(
        shape.gangs, CREATE_WORKERS, lambda i: api.create(groups, shapes.pod_group(shape, i))
    )
    gang_pods = f"/api/v1/namespaces/{shapes.GANG_NS}/pods"
    await parallel(
        shape.gangs * shape.gang_size,
        CREATE_WORKERS,
        lambda i: api.create(gang_pods, shapes.gang_pod(shape, i, scheduler_name=scheduler_name)),
    )
    plain_pods = f"/api/v1/namespaces/{shapes.PLAIN_NS}/pods"
    await parallel(
        shape.plain,
        CREATE_WORKERS,
        lambda i: api.create(plain_pods, shapes.plain_pod(shape, i, scheduler_name=scheduler_name)),
    )
    return time.monotonic() - began


async def run(
    shape: Shape,
    scheduler: str,
    *,
    workdir: Path,
    wait_s: float,
    profile: bool = False,
    ours_log_level: str = "info",
) -> Record:
    """``shape`` with ``scheduler`` (kube or ours): the record (a failed one says why).
    Ours logs at ``ours_log_level``: at info its ``caches_synced`` line marks its
    readiness (:func:`_synced_at`); otherwise its /readyz does, which answers late when a
    group's cycle holds the event loop it is served on."""
    selected = shapes.gang_selected()
    plan = runner.plan(selected).plans[scheduler]
    if scheduler == OURS:
        plan = dataclasses.replace(plan, args=(*plan.args, "--log-level", ours_log_level))
    record: Record = {
        "shape": shape.name,
        "scheduler": scheduler,
        "nodes": shape.nodes,
        "gangs": shape.gangs,
        "gang_size": shape.gang_size,
        "plain": shape.plain,
        "args": list(plan.args),
    }
    if plan.skip is not None:
        return {**record, "failed": f"skipped: {plan.skip}"}

    async def create(api: Api, name: str) -> None:
        record["create_s"] = round(
            await create_backlog(api, shape, scheduler_name=name, run=scheduler), 1
        )

    async def figures(api: Api, process: schedulers.SchedulerProcess, binds: _Binds) -> Record:
        return _figures(await _final_metrics(process, binds.bound), scheduler)

    return await run_on_backlog(
        record,
        BacklogRun(scheduler, selected, plan, workdir, wait_s=wait_s, profile=profile),
        create=create,
        expected=shape.expected,
        summarize=gang_profile.summarize,
        figures=figures,
    )


@dataclasses.dataclass(frozen=True)
class BacklogRun:
    """One scheduler on one backlog: what :func:`run_on_backlog` starts and how."""

    scheduler: str
    selected: Selected
    plan: Plan
    workdir: Path
    wait_s: float
    profile: bool = False
    controller_manager_args: tuple[str, ...] | None = None
    """kube-controller-manager's flags (None: it does not run)."""


async def run_on_backlog(
    record: Record,
    run: BacklogRun,
    *,
    create: Callable[[Api, str], Awaitable[None]],
    expected: tuple[str, int],
    summarize: Callable[[Path, float], dict[str, Any]],
    figures: Callable[[Api, schedulers.SchedulerProcess, _Binds], Awaitable[Record]],
) -> Record:
    """A fresh control plane, the backlog ``create`` makes (told the pods' scheduler name),
    then the scheduler started on it and measured until ``expected`` (namespace, pods) are
    bound; ``figures`` adds what the run reads at the end. Shared by the gang and DRA
    benchmarks; the record says why when it failed."""
    started = time.monotonic()
    managed = run.controller_manager_args is not None
    try:
        cp = await asyncio.to_thread(
            ControlPlane.start,
            run.workdir / "cp",
            controller_manager=managed,
            controller_manager_args=run.controller_manager_args or (),
            apiserver_args=runner.apiserver_args(run.selected.feature_gates),
        )
    except ControlPlaneError as exc:
        return {**record, "failed": f"control plane: {exc}"}
    process = None
    try:
        async with Api(cp.api_url, tls_for(cp)) as api:
            await create(api, schedulers.pod_scheduler_name(run.scheduler, run.selected))
            watch = PodWatch(api)
            await watch.start()
            try:
                record["loadavg_before"] = [round(x, 2) for x in os.getloadavg()]
                process = schedulers.start(run.scheduler, cp, run.selected, run.plan, run.workdir)
                apiserver_pid = cp.process("kube-apiserver").proc.pid
                namespace, want = expected
                binds = _Binds(namespace, want, process.cpu_seconds)
                binds.apiserver = lambda: cpu_seconds(apiserver_pid)
                watch.add_handler(binds)
                await _measure(process, binds, record, wait_s=run.wait_s, profile=run.profile)
                if "profile" in record:
                    record["profile_stages"] = summarize(
                        Path(record["profile"]), record["cpu_s_at_last"]
                    )
                record["loadavg_after"] = [round(x, 2) for x in os.getloadavg()]
                record.update(await figures(api, process, binds))
            finally:
                await watch.stop()
    except (RuntimeError, OSError, ApiError, TimeoutError) as exc:
        record["failed"] = str(exc).splitlines()[0][:400] if str(exc) else repr(exc)
        record["failure_detail"] = "".join(traceback.format_exception(exc))[-3000:]
    finally:
        if process is not None:
            await asyncio.to_thread(process.stop)
            record["cpu_s_total"] = round(process.cpu_at_exit or 0.0, 2)
            record["rss_mb"] = round(process.rss_mb, 1)
            record["log"] = str(process.log)
        await asyncio.to_thread(cp.stop)
        shutil.rmtree(run.workdir / "cp" / "etcd", ignore_errors=True)
    record["wall_s"] = round(time.monotonic() - started, 1)
    return record


async def _measure(
    process: schedulers.SchedulerProcess,
    binds: _Binds,
    record: Record,
    *,
    wait_s: float,
    profile: bool,
) -> None:
    """From the spawn to the last bind: readiness, the window's pods/s and CPU."""
    spawned, spawned_wall = time.monotonic(), time.time()
    spy = _pyspy(process, Path(process.log).with_suffix(".pyspy.txt")) if profile else None
    samples = _CpuSamples(process.cpu_seconds, binds.apiserver)
    sampler = asyncio.create_task(samples.run())
    try:
        await process.wait_ready()
        readyz = time.monotonic()
        await asyncio.wait_for(binds.done.wait(), wait_s)
    except TimeoutError:
        raise TimeoutError(
            f"{binds.bound} of {binds.want} pods bound after {wait_s:.0f} s"
        ) from None
    finally:
        sampler.cancel()
        if spy is not None:
            spy.send_signal(signal.SIGINT)
            await asyncio.to_thread(spy.wait, 60)
            record["profile"] = str(Path(process.log).with_suffix(".pyspy.txt"))
    assert binds.last is not None
    assert binds.first is not None
    synced = _synced_at(Path(process.log))
    ready = readyz if synced is None else spawned + (synced - spawned_wall)
    cpu0, apiserver0 = samples.at(ready)
    seconds = binds.last - ready
    cpu = binds.cpu_at_last - cpu0
    record.update(
        ready_s=round(ready - spawned, 2),
        readyz_s=round(readyz - spawned, 2),
        first_bind_s=round(binds.first - ready, 2),
        measure_s=round(seconds, 2),
        pods=binds.want,
        pods_per_s=round(binds.want / seconds, 1),
        cpu_s=round(cpu, 2),
        cpu_ms_per_pod=round(cpu * 1000 / binds.want, 3),
        apiserver_cpu_s=round(binds.apiserver_at_last - apiserver0, 2),
        start_to_last_s=round(binds.last - spawned, 2),
        start_pods_per_s=round(binds.want / (binds.last - spawned), 1),
        cpu_s_at_last=round(binds.cpu_at_last, 2),
    )


class _CpuSamples:
    """The scheduler's and the API server's CPU seconds every 20 ms, to read either at a
    moment known only afterwards (ours' readiness, from its log)."""

    def __init__(self, cpu: Any, apiserver: Any) -> None:
        self.cpu = cpu
        self.apiserver = apiserver
        self.samples: list[tuple[float, float, float]] = []

    async def run(self) -> None:
        while True:
            self.samples.append((time.monotonic(), self.cpu(), self.apiserver()))
            await asyncio.sleep(0.02)

    def at(self, moment: float) -> tuple[float, float]:
        """Both CPU figures at ``moment``, interpolated between the samples around it."""
        before = [s for s in self.samples if s[0] <= moment] or self.samples[:1]
        after = [s for s in self.samples if s[0] >= moment] or self.samples[-1:]
        (t0, c0, a0), (t1, c1, a1) = before[-1], after[0]
        share = 0.0 if t1 <= t0 else (moment - t0) / (t1 - t0)
        return c0 + share * (c1 - c0), a0 + share * (a1 - a0)


def _synced_at(log: Path) -> float | None:
    """The wall time of ours' ``caches_synced`` line (its JSON log at info level), or None
    (kube-scheduler: its /readyz answers while it schedules, and turns ready only once its
    handlers have taken the initial list in, when its scheduling starts)."""
    try:
        text = log.read_text(errors="replace")
    except OSError:
        return None
    for line in text.splitlines():
        if '"caches_synced"' not in line:
            continue
        try:
            stamp = json.loads(line)["timestamp"]
        except (ValueError, KeyError):
            return None
        return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()
    return None


def _pyspy(process: schedulers.SchedulerProcess, output: Path) -> subprocess.Popen[bytes] | None:
    """py-spy on ours (raw stacks, 100 Hz) until SIGINT; None for kube-scheduler."""
    if process.name != OURS:
        return None
    cmd = [str(Path(sys.executable).parent / "py-spy"), "record", "--pid", str(process.proc.pid)]
    cmd += ["--rate", "100", "--format", "raw", "--output", str(output)]
    return subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


async def _final_metrics(process: schedulers.SchedulerProcess, bound: int) -> Metrics:
    """The scheduler's /metrics once its scheduled attempts count the binds the watch saw:
    kube-scheduler counts an attempt after its bind call returns, so a scrape at the last
    bind can miss the last one (up to 5 s, then what it has)."""
    deadline = time.monotonic() + 5.0
    while True:
        metrics = parse_metrics(await process.scrape())
        scheduled = by_label(metrics, POD_ATTEMPTS, "result").get("scheduled", 0)
        if scheduled >= bound or time.monotonic() > deadline:
            return metrics
        await asyncio.sleep(0.1)


def _figures(metrics: Metrics, scheduler: str) -> Record:
    """The run's pod-group and decision figures from the scheduler's final /metrics."""
    attempts = by_label(metrics, GROUP_ATTEMPTS, "result")
    figures: Record = {
        "group_attempts": attempts,
        "group_algorithm_s": round(metric_sum(metrics, GROUP_ALGORITHM + "_sum"), 4),
        "group_algorithm_count": int(metric_sum(metrics, GROUP_ALGORITHM + "_count")),
        "group_attempt_s": {
            result: round(metric_sum(metrics, GROUP_ATTEMPT + "_sum", result=result), 4)
            for result in attempts
        },
        "pod_attempts": by_label(metrics, POD_ATTEMPTS, "result"),
    }
    if scheduler == OURS:
        figures["decisions"] = by_label(metrics, DECISIONS + "_count", "path")
        figures["decision_s"] = {
            path: round(metric_sum(metrics, DECISIONS + "_sum", path=path), 4)
            for path in figures["decisions"]
        }
    else:
        figures["pod_algorithm_s"] = round(metric_sum(metrics, KUBE_ALGORITHM + "_sum"), 4)
        figures["pod_algorithm_count"] = int(metric_sum(metrics, KUBE_ALGORITHM + "_count"))
    return figures
