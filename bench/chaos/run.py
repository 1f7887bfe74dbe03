"""One scenario, one scheduler: a fresh control plane, a burst, the fault mid-burst, figures.

The same for both schedulers: a fresh etcd and kube-apiserver (kube's scheduler_perf flags
with ``GenericWorkload`` on, as :mod:`bench.gang` runs them, plus an audit log of the
schedulers' requests and the scenario's own flags); ``nodes`` nodes; the scheduler (one or
two replicas) started and ready; the runner's pod watch and a simulated kubelet that marks
each bound pod Running, then Ready (:mod:`bench.real_kubelet`); then the burst of ``pods``
pods, created 30 at a time with retries through the fault. The fault starts at the
scenario's trigger and ends when its coroutine returns. The run then waits until every pod
still there is bound (or ``settle`` seconds with no bind and none left to come) and lists
the final state.

Recovery is the time from the fault's end to the last bind the watch saw (negative: every
pod was bound before the fault ended). Neighbours: :mod:`bench.chaos.scenarios`,
:mod:`bench.chaos.figures`, :mod:`bench.chaos.cli`.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import time
import traceback
from typing import TYPE_CHECKING, Any

from bench.chaos import figures, workload
from bench.chaos.fleet import Fleet
from bench.chaos.scenarios import Context
from bench.chaos.watch import BindWatch
from bench.gang import shapes
from bench.real_kubelet import SimulatedKubelet
from bench.scheduler_perf import runner, schedulers
from bench.scheduler_perf.api import CREATE_WORKERS, Api, ApiError, parallel, tls_for
from bench.scheduler_perf.capability import OURS
from controlplane.launcher import ControlPlane, ControlPlaneError

if TYPE_CHECKING:
    from pathlib import Path

    from bench.chaos.scenarios import Scenario

Record = dict[str, Any]
NODE_WORKERS = 16
POLL = 0.2


async def run(
    scenario: Scenario,
    scheduler: str,
    *,
    nodes: int,
    pods: int,
    workdir: Path,
    wait_s: float = 600.0,
    settle: float = 30.0,
) -> Record:
    """``scenario`` with ``scheduler`` (kube or ours): the record (a failed one says why)."""
    record: Record = {"scenario": scenario.name, "scheduler": scheduler, "nodes": nodes}
    record.update(pods=pods, fault=scenario.fault)
    selected = shapes.gang_selected()
    args = [*runner.apiserver_args(selected.feature_gates), *figures.audit_args(workdir)]
    args += scenario.apiserver_args
    record["apiserver_args"] = list(scenario.apiserver_args)
    started = time.monotonic()
    try:
        cp = await asyncio.to_thread(
            ControlPlane.start, workdir / "cp", controller_manager=False, apiserver_args=args
        )
    except ControlPlaneError as exc:
        return {**record, "failed": f"control plane: {exc}"}
    fleet: Fleet | None = None
    deleted_nodes: dict[str, int] = {}
    try:
        fleet = Fleet(scheduler, cp, selected, workdir, replicas=scenario.replicas)
        name = schedulers.pod_scheduler_name(scheduler, selected)
        async with Api(cp.api_url, tls_for(cp)) as api:
            await _cluster(api, nodes)
            watch = BindWatch(api)
            await watch.start()
            kubelet = SimulatedKubelet(cp.api_url, workload.PODS, tls=tls_for(cp))
            await kubelet.start(str(await workload.resource_version(api, workload.PODS)))
            try:
                await fleet.start()
                ctx = Context(cp, api, fleet, watch, nodes, pods, asyncio.Event())
                deleted_nodes = ctx.deleted_nodes  # filled by the scenario
                record.update(await _burst(scenario, ctx, name, wait_s=wait_s, settle=settle))
                final_pods = await workload.list_retrying(api, workload.PODS)
                final_nodes = await workload.list_retrying(api, "/api/v1/nodes")
                record.update(
                    figures.state_figures(
                        final_pods,
                        final_nodes,
                        deleted_nodes=ctx.deleted_nodes,
                        binds=watch.binds,
                    ),
                    deleted_nodes=len(ctx.deleted_nodes),
                    deleted_pods=len(ctx.deleted_pods),
                    kubelet_updates=kubelet.sent,
                    kubelet_failed=kubelet.failed,
                    scheduler_starts=fleet.starts,
                    **{k: v for k, v in ctx.notes.items() if not k.endswith("_at")},
                )
                if "services_at" in ctx.notes:
                    record["spread"] = _spread(watch, ctx.notes["services_at"])
            finally:
                try:
                    await kubelet.stop()
                finally:
                    await watch.stop()
        record["loadavg_after"] = [round(x, 2) for x in os.getloadavg()]
    except (RuntimeError, OSError, ApiError, TimeoutError) as exc:
        record["failed"] = str(exc).splitlines()[0][:400] if str(exc) else repr(exc)
        record["failure_detail"] = "".join(traceback.format_exception(exc))[-3000:]
    finally:
        if fleet is not None:
            await asyncio.to_thread(fleet.stop)
            record.update(figures.log_figures(fleet.logs()))
            record["logs"] = [str(p) for p in fleet.logs()]
        await asyncio.to_thread(cp.stop)
        record.update(figures.audit_figures(workdir / "audit.log"))
        if fleet is not None and scheduler == OURS:
            record.update(figures.late_binds(fleet.logs(), workdir / "audit.log", deleted_nodes))
        shutil.rmtree(workdir / "cp" / "etcd", ignore_errors=True)
    record["wall_s"] = round(time.monotonic() - started, 1)
    return record


async def _cluster(api: Api, nodes: int) -> None:
    await parallel(nodes, NODE_WORKERS, lambda i: api.create("/api/v1/nodes", workload.node(i)))
    body = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": workload.NAMESPACE}}
    await api.create("/api/v1/namespaces", body, ok=(409,))


async def _burst(
    scenario: Scenario, ctx: Context, scheduler_name: str, *, wait_s: float, settle: float
) -> Record:
    """Create the pods, inject the fault at its trigger, wait for the binds; the timings."""
    created = 0

    async def create(i: int) -> None:
        nonlocal created
        pod = workload.pod(i, scheduler_name=scheduler_name, gang=scenario.gang)
        await workload.create_retrying(ctx.api, workload.PODS, pod)
        created += 1

    async def burst() -> None:
        await parallel(ctx.pods, CREATE_WORKERS, create)
        ctx.burst_done.set()

    record: Record = {"loadavg_before": [round(x, 2) for x in os.getloadavg()]}
    began = time.monotonic()
    creating = asyncio.create_task(burst())
    want = int(ctx.pods * scenario.share)
    while scenario.trigger != "start" and not creating.done():
        reached = len(ctx.watch.binds) if scenario.trigger == "bound" else created
        if reached >= want:
            break
        await asyncio.sleep(0.05)
    fault_start = time.monotonic()
    record.update(fault_at_bound=len(ctx.watch.binds), fault_at_created=created)
    await scenario.inject(ctx)
    fault_end = time.monotonic()
    await creating
    record["burst_s"] = round(time.monotonic() - began, 2)
    await _settle(ctx, wait_s=wait_s, settle=settle)
    last = ctx.watch.last_bind()
    record.update(
        fault_s=round(fault_end - fault_start, 2),
        fault_start_s=round(fault_start - began, 2),
        recovery_s=None if last is None else round(last - fault_end, 2),
        last_bind_s=None if last is None else round(last - began, 2),
    )
    return record


async def _settle(ctx: Context, *, wait_s: float, settle: float) -> None:
    """Until every pod still there is bound, or no bind came for ``settle`` seconds."""
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        pods = ctx.watch.pods.values()
        if pods and all(p.node_name for p in pods if p.name not in ctx.deleted_pods):
            return
        last = ctx.watch.last_bind() or 0.0
        if time.monotonic() - last > settle:
            return
        await asyncio.sleep(POLL)


def _spread(watch: BindWatch, since: float) -> Record:
    """Pods of one app per node, among the binds seen a second or more after the Services."""
    per: dict[tuple[str, str], int] = {}
    by_name = {p.name: p for p in watch.pods.values()}
    for name, bind in watch.binds.items():
        info = by_name.get(name)
        if info is None or bind.seen < since + 1.0:
            continue
        key = (info.labels.get("app", ""), bind.node)
        per[key] = per.get(key, 0) + 1
    counts = list(per.values())
    return {
        "pods": sum(counts),
        "max_per_node": max(counts, default=0),
        "nodes_with_2_or_more": sum(1 for c in counts if c >= 2),
    }
