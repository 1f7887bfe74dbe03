"""``python -m bench.chaos --soak MINUTES``: churn on the real API server for a long while,
ours' memory and CPU per pod sampled each minute (issue 37, item 4).

A fresh control plane, ``nodes`` nodes, ours started and the simulated kubelet running;
then every second ``rate`` pods are created and, once ``live`` pods exist, as many of the
oldest are deleted (``gracePeriodSeconds=0``: no kubelet is there to confirm a graceful
deletion); every 30 s a node is added, or the last one added removed with its pods (as the
pod garbage collector would). Each minute: ours' resident memory (``VmRSS``), its CPU
seconds over the minute and per pod bound in it, the pods pending and the oldest one's
age. At the end the churn stops and the run waits (up to a minute) for the queue to empty;
the record says how many pods were left pending and the longest any pod waited for its bind
(a pod left for the 5-minute flush would show there).

Neighbours: :mod:`bench.chaos.cli` (the flag), :mod:`bench.chaos.run` (the same cluster
and processes).
"""

from __future__ import annotations

import asyncio
import os
import shutil
import time
from typing import TYPE_CHECKING, Any

from prometheus_client.parser import text_string_to_metric_families

from bench.chaos import workload
from bench.chaos.fleet import Fleet
from bench.chaos.run import NODE_WORKERS
from bench.chaos.watch import BindWatch
from bench.gang import shapes
from bench.real_kubelet import SimulatedKubelet
from bench.scheduler_perf import runner, schedulers
from bench.scheduler_perf.api import Api, parallel, tls_for
from bench.scheduler_perf.capability import OURS
from controlplane.launcher import ControlPlane

if TYPE_CHECKING:
    from pathlib import Path

    from bench.scheduler_perf.schedulers import SchedulerProcess

Record = dict[str, Any]
NODE_EVERY = 30.0
SAMPLE_EVERY = 60.0
DRAIN_S = 60.0
FORCE = {"gracePeriodSeconds": "0"}


def rss_mb(pid: int) -> float:
    """Resident memory now (``VmRSS``), MB; 0.0 when unreadable."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def sockets(pid: int) -> int:
    """Sockets the process holds open now (its API connections and listeners); 0 when
    unreadable. Each TLS connection keeps buffers of its own: a pool that grows over the
    run grows the resident memory with it."""
    try:
        fds = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return 0
    count = 0
    for fd in fds:
        try:
            count += os.readlink(f"/proc/{pid}/fd/{fd}").startswith("socket:")
        except OSError:
            continue  # closed meanwhile
    return count


class Churn:
    """The pods and nodes the soak made, and their churn."""

    def __init__(self, api: Api, scheduler_name: str, *, nodes: int) -> None:
        self.api = api
        self.scheduler_name = scheduler_name
        self.made = 0
        self.live: list[str] = []
        self.created_at: dict[str, float] = {}
        self.next_node = nodes
        self.extra: list[str] = []
        self.deleted = 0

    async def create(self, count: int) -> None:
        bodies = [
            workload.pod(self.made + i, scheduler_name=self.scheduler_name) for i in range(count)
        ]
        self.made += count
        now = time.monotonic()
        for body in bodies:
            name = body["metadata"]["name"]
            self.created_at[name] = now
            self.live.append(name)
        await asyncio.gather(
            *(workload.create_retrying(self.api, workload.PODS, body) for body in bodies)
        )

    async def trim(self, live: int) -> None:
        """Delete the oldest pods beyond ``live``."""
        doomed, self.live = self.live[: max(0, len(self.live) - live)], self.live[-live:]
        await asyncio.gather(*(self._delete_pod(name) for name in doomed))

    async def _delete_pod(self, name: str) -> None:
        await self.api.request("DELETE", f"{workload.PODS}/{name}", params=FORCE, ok=(404,))
        self.deleted += 1

    async def flip_node(self, watch: BindWatch) -> None:
        """Add a node, or remove the last one added with the pods bound to it."""
        if not self.extra:
            body = workload.node(self.next_node)
            self.next_node += 1
            await workload.create_retrying(self.api, "/api/v1/nodes", body)
            self.extra.append(body["metadata"]["name"])
            return
        name = self.extra.pop()
        await workload.delete_retrying(self.api, f"/api/v1/nodes/{name}")
        on_it = {p.name for p in watch.pods.values() if p.node_name == name}
        self.live = [n for n in self.live if n not in on_it]
        await asyncio.gather(*(self._delete_pod(n) for n in on_it))


async def soak(minutes: float, *, nodes: int, rate: int, live: int, workdir: Path) -> Record:
    """The soak's record (per-minute samples and the end state)."""
    selected = shapes.gang_selected()
    args = runner.apiserver_args(selected.feature_gates)
    cp = await asyncio.to_thread(
        ControlPlane.start, workdir / "cp", controller_manager=False, apiserver_args=args
    )
    record: Record = {"minutes": minutes, "nodes": nodes, "rate": rate, "live": live}
    fleet = Fleet(OURS, cp, selected, workdir)
    try:
        async with Api(cp.api_url, tls_for(cp)) as api:
            await parallel(
                nodes, NODE_WORKERS, lambda i: api.create("/api/v1/nodes", workload.node(i))
            )
            body = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "chaos"}}
            await api.create("/api/v1/namespaces", body, ok=(409,))
            watch = BindWatch(api)
            await watch.start()
            kubelet = SimulatedKubelet(cp.api_url, workload.PODS, tls=tls_for(cp))
            await kubelet.start(str(await workload.resource_version(api, workload.PODS)))
            try:
                await fleet.start()
                name = schedulers.pod_scheduler_name(OURS, selected)
                churn = Churn(api, name, nodes=nodes)
                record["samples"] = await _churn(churn, watch, fleet.live[0], minutes, rate, live)
                record.update(await _drain(churn, watch))
            finally:
                await kubelet.stop()
                await watch.stop()
    finally:
        await asyncio.to_thread(fleet.stop)
        await asyncio.to_thread(cp.stop)
        shutil.rmtree(workdir / "cp" / "etcd", ignore_errors=True)
    record["log"] = str(fleet.logs()[0])
    return record


async def _churn(
    churn: Churn,
    watch: BindWatch,
    process: SchedulerProcess,
    minutes: float,
    rate: int,
    live: int,
) -> list[Record]:
    began = time.monotonic()
    end = began + minutes * 60
    next_node, next_sample = began + NODE_EVERY, began + SAMPLE_EVERY
    cpu0, bound0 = process.cpu_seconds(), len(watch.binds)
    samples: list[Record] = []
    peak = 0.0  # RSS read every second: one reading a minute can land anywhere in a swing
    while (now := time.monotonic()) < end:
        tick = asyncio.create_task(asyncio.sleep(1.0))
        peak = max(peak, rss_mb(process.proc.pid))
        await churn.create(rate)
        await churn.trim(live)
        if now >= next_node:
            await churn.flip_node(watch)
            next_node += NODE_EVERY
        if now >= next_sample:
            cpu, bound = process.cpu_seconds(), len(watch.binds)
            reports = await _reports(process)
            sample = _sample(churn, watch, process, now - began, cpu - cpu0, bound - bound0)
            peak = max(peak, sample["rss_mb"])  # the sample's own reading is the minute's too
            samples.append({**sample, "rss_peak_mb": round(peak, 1), **reports})
            peak = 0.0
            print(f"   soak {samples[-1]}", flush=True)
            cpu0, bound0 = cpu, bound
            next_sample += SAMPLE_EVERY
        await tick
    return samples


async def _reports(process: SchedulerProcess) -> Record:
    """The reporter's backlog from ``/metrics``: reports waiting to be written, and the
    mean delay of the Events written so far (a backlog holds memory while it lasts)."""
    found: dict[str, float] = {}
    for family in text_string_to_metric_families(await process.scrape()):
        for s in family.samples:
            if s.name == "batch_scheduler_report_queue":
                found["queued"] = s.value
            elif s.name.startswith("batch_scheduler_report_delay_seconds_") and (
                s.labels.get("kind") == "event"
            ):
                suffix = s.name.rsplit("_", 1)[1]
                found[suffix] = found.get(suffix, 0.0) + s.value
    count = found.get("count", 0.0)
    return {
        "reports_queued": int(found.get("queued", 0.0)),
        "event_delay_s": round(found.get("sum", 0.0) / count, 2) if count else None,
    }


def _pending(churn: Churn, watch: BindWatch) -> list[str]:
    live = set(churn.live)
    return [name for name in live if name not in watch.binds]


def _sample(
    churn: Churn,
    watch: BindWatch,
    process: SchedulerProcess,
    at: float,
    cpu: float,
    bound: int,
) -> Record:
    now = time.monotonic()
    pending = _pending(churn, watch)
    oldest = max((now - churn.created_at[n] for n in pending), default=0.0)
    return {
        "minute": round(at / 60, 1),
        "rss_mb": round(rss_mb(process.proc.pid), 1),
        "sockets": sockets(process.proc.pid),
        "cpu_s": round(cpu, 2),
        "bound": bound,
        "cpu_ms_per_pod": round(cpu * 1000 / bound, 3) if bound else None,
        "pending": len(pending),
        "oldest_pending_s": round(oldest, 1),
        "loadavg": [round(x, 2) for x in os.getloadavg()],
    }


async def _drain(churn: Churn, watch: BindWatch) -> Record:
    deadline = time.monotonic() + DRAIN_S
    while _pending(churn, watch) and time.monotonic() < deadline:  # noqa: ASYNC110 - a poll
        await asyncio.sleep(0.5)
    waits = [
        bind.seen - churn.created_at[name]
        for name, bind in watch.binds.items()
        if name in churn.created_at
    ]
    return {
        "pending_at_end": len(_pending(churn, watch)),
        "pods_created": churn.made,
        "pods_deleted": churn.deleted,
        "longest_wait_s": round(max(waits, default=0.0), 2),
    }
