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
scheduler a bare client process (``python -m bench.e2e ceiling``, our
``kube.client.ApiClient``) watches pods and binds each new pending one to a pre-chosen
node (round robin) with the scheduler's bind concurrency (16): what the fastest possible
scheduler would achieve against this emulator on this machine, creation included.

Records (one per scenario x nodes x batching x repeat; keys in ``docs/performance.md``)
go to ``bench/results/latest.json``; medians per (scenario, nodes, batching) to
``latest.md``; plots to ``bench/results/throughput_<scenario>.png``.

Run: ``python -m bench.e2e [--quick] [--nodes 500,1000] [--scenarios a,b] [--repeats 3]``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import platform
import signal
import socket
import ssl
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import aiohttp

from scheduler.framework.config import DEFAULT_SCHEDULER_NAME
from scheduler.sim import workload
from scheduler.sim.process import SimProcess

if TYPE_CHECKING:
    from collections.abc import Callable

    from scheduler.kube.client import Credentials

SCHEDULER_NAME = DEFAULT_SCHEDULER_NAME
"""The scheduler's default profile name: the pods name it, the scheduler takes them."""
CREATE_CONCURRENCY = 32
"""Creates in flight during the burst."""
STALL_SECONDS = 30.0
"""A run in which no pod gets bound for this long after ready is abandoned (incomplete)."""
BIND_CONCURRENCY = 16
ROOT = Path(__file__).parent.parent
RESULTS = ROOT / "bench" / "results"
PODS_PATH = "/api/v1/pods"
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
    "batched_share",
    "flushes",
    "unschedulable_attempts",
    "bind_errors",
    "events_dropped",
    "peak_rss_mb",
    "scheduler_cpu_s",
    "sim_cpu_s",
)
"""Every record has exactly these keys (documented in docs/performance.md)."""


# -- scenarios ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Scenario:
    name: str
    description: str
    pods_per_node: int
    build: Callable[[int], list[dict[str, Any]]]
    """nodes → the pod objects, in creation order."""


def _pods(count: int, prefix: str = "p-", **kw: Any) -> list[dict[str, Any]]:
    return workload.make_pods(count, prefix=prefix, scheduler_name=SCHEDULER_NAME, **kw)


def _one_per_node(nodes: int) -> list[dict[str, Any]]:
    # scheduler_perf's batching ResourceSaturation: 3-CPU pods on 4-CPU nodes.
    return _pods(nodes, cpu="3", memory="1Gi", labels={"app": "saturate"})


def _host_port(nodes: int) -> list[dict[str, Any]]:
    # scheduler_perf's HostPortConflict pods: hostPort 80, 100m / 100Mi.
    return _pods(nodes, cpu="100m", memory="100Mi", host_port=80, labels={"app": "port"})


def _multi_per_node(nodes: int) -> list[dict[str, Any]]:
    # scheduler_perf's default pod (100m / 500Mi), four per node on average.
    return _pods(4 * nodes, cpu="100m", memory="500Mi", labels={"app": "web"})


_ANTI_AFFINITY = {
    "podAntiAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": [
            {
                "labelSelector": {"matchLabels": {"bench-avoid": "true"}},
                "topologyKey": "kubernetes.io/hostname",
            }
        ]
    }
}
"""Required anti-affinity against a label no pod carries: the pod cannot be signed (so it
is never batched) but the constraint never conflicts, so every pod fits anywhere."""


def _unsignable(nodes: int) -> list[dict[str, Any]]:
    return _pods(nodes, cpu="100m", memory="500Mi", labels={"app": "anti"}, affinity=_ANTI_AFFINITY)


def _mixed(nodes: int) -> list[dict[str, Any]]:
    # Three signatures round robin (job, web, unsignable), so consecutive pods differ:
    # batch state is flushed as pod_incompatible at almost every pod.
    per = (2 * nodes) // 3
    kinds = [
        _pods(per, "m-job-", cpu="3", memory="1Gi", labels={"app": "job"}),
        _pods(per, "m-web-", cpu="100m", memory="500Mi", labels={"app": "web"}),
        _pods(per, "m-anti-", cpu="100m", memory="500Mi", affinity=_ANTI_AFFINITY),
    ]
    out: list[dict[str, Any]] = []
    for trio in zip(*kinds, strict=True):
        out.extend(trio)
    return out


SCENARIOS: dict[str, Scenario] = {
    s.name: s
    for s in (
        Scenario("one-pod-per-node", "3-CPU pods on 4-CPU nodes, one per node", 1, _one_per_node),
        Scenario("host-port", "hostPort 80 (100m/100Mi), one per node", 1, _host_port),
        Scenario("multi-pod-per-node", "100m/500Mi pods, four per node", 4, _multi_per_node),
        Scenario("unsignable", "required anti-affinity (never conflicts)", 1, _unsignable),
        Scenario("mixed", "job / web / unsignable interleaved", 2, _mixed),
    )
}


# -- measurement helpers ------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def vm_hwm_mb(pid: int) -> float:
    """Peak resident set size (``VmHWM``) of a process, MB; 0.0 when unreadable."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def cpu_seconds(pid: int) -> float:
    """User+system CPU seconds of a live process (``/proc/PID/stat``); 0.0 when unreadable."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def parse_metrics(text: str) -> dict[str, list[tuple[dict[str, str], float]]]:
    """Prometheus text → name → [(labels, value)] (enough of the format for our own output)."""
    out: dict[str, list[tuple[dict[str, str], float]]] = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        head, _, value = line.rpartition(" ")
        name, _, rest = head.partition("{")
        labels: dict[str, str] = {}
        if rest:
            for part in rest.rstrip("}").split('",'):
                if "=" in part:
                    k, _, v = part.partition("=")
                    labels[k.strip()] = v.strip().strip('"')
        try:
            out.setdefault(name, []).append((labels, float(value)))
        except ValueError:
            continue
    return out


def metric_sum(
    metrics: dict[str, list[tuple[dict[str, str], float]]], name: str, **match: str
) -> float:
    return sum(
        v
        for labels, v in metrics.get(name, [])
        if all(labels.get(k) == want for k, want in match.items())
    )


def histogram_quantile(
    metrics: dict[str, list[tuple[dict[str, str], float]]], name: str, q: float
) -> float | None:
    """Prometheus' ``histogram_quantile`` over every label set of ``name`` summed together
    (linear interpolation inside the bucket); None when the histogram is empty."""
    buckets: dict[float, float] = {}
    for labels, v in metrics.get(name + "_bucket", []):
        le = float(labels["le"])
        buckets[le] = buckets.get(le, 0.0) + v
    if not buckets:
        return None
    bounds = sorted(buckets)
    total = buckets[bounds[-1]]
    if total <= 0:
        return None
    rank = q * total
    lower, below = 0.0, 0.0
    for le in bounds:
        count = buckets[le]
        if count >= rank:
            if le == float("inf"):
                return lower
            inside = count - below
            return lower + (le - lower) * ((rank - below) / inside if inside else 0.0)
        lower, below = le, count
    return lower


def percentile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))
    return ordered[index]


class BindWatch:
    """A pod watch that stamps, with the arrival time, each event carrying a ``nodeName``."""

    def __init__(self, url: str, expect: int) -> None:
        self.url = url
        self.expect = expect
        self.lines: list[tuple[float, bytes]] = []
        self.done = asyncio.Event()
        self.ready = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    async def start(self, resource_version: str) -> None:
        self._task = asyncio.create_task(self._run(resource_version))
        await self.ready.wait()

    async def _run(self, rv: str) -> None:
        params = {"watch": "true", "resourceVersion": rv}
        timeout = aiohttp.ClientTimeout(total=None, sock_read=None)
        async with (
            aiohttp.ClientSession(self.url, timeout=timeout) as session,
            session.get(PODS_PATH, params=params) as resp,
        ):
            self.ready.set()
            seen = 0
            while True:
                line = await resp.content.readline()
                if not line:
                    return
                if b'"nodeName"' in line:
                    self.lines.append((time.perf_counter(), line))
                    seen += 1
                    if seen >= self.expect:
                        self.done.set()

    async def wait(self, deadline: float, stall: float) -> None:
        """Until every pod is bound, the deadline, or ``stall`` s without a new bind."""
        last_count, last_change = -1, time.perf_counter()
        while not self.done.is_set():
            now = time.perf_counter()
            if len(self.lines) != last_count:
                last_count, last_change = len(self.lines), now
            if now >= deadline or now - last_change >= stall:
                return
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.done.wait(), 0.5)

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError, aiohttp.ClientError):
                await self._task

    def bind_times(self) -> dict[str, float]:
        """Pod name → arrival time of its first event with a node."""
        first: dict[str, float] = {}
        for t, line in self.lines:
            obj = json.loads(line)["object"]
            if obj.get("spec", {}).get("nodeName"):
                first.setdefault(obj["metadata"]["name"], t)
        return first


async def _get_json(session: aiohttp.ClientSession, path: str) -> Any:
    async with session.get(path) as resp:
        return await resp.json()


async def _wait_ready(
    port: int, proc: subprocess.Popen[bytes], deadline: float, ready_path: str = "/readyz"
) -> float:
    url = f"http://127.0.0.1:{port}{ready_path}"
    async with aiohttp.ClientSession() as session:
        while time.perf_counter() < deadline:
            if proc.poll() is not None:
                raise RuntimeError(f"scheduler exited with {proc.returncode} before ready")
            with contextlib.suppress(aiohttp.ClientError, OSError):
                async with session.get(url) as resp:
                    if resp.status == 200:
                        return time.perf_counter()
            await asyncio.sleep(0.01)
    raise RuntimeError("scheduler not ready in time")


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
                "--bind-concurrency",
                str(BIND_CONCURRENCY),
                *(extra_args or []),
            ]
            cmd = [*(profile_cmd or []), *cmd]
        started = time.perf_counter()
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, cwd=ROOT)  # noqa: ASYNC220
        text = ""
        try:
            t_ready = await _wait_ready(port, proc, started + 120.0)
            async with aiohttp.ClientSession(sim.url) as session:
                listed = await _get_json(session, f"{PODS_PATH}?limit=1")
            watch = BindWatch(sim.url, pods)
            await watch.start(listed["metadata"]["resourceVersion"])
            sim_cpu0 = cpu_seconds(sim.proc.pid)
            try:
                t_create = time.perf_counter()
                created = await create_timed(sim.url, objects, concurrency=CREATE_CONCURRENCY)
                t_created = time.perf_counter()
                del objects
                await watch.wait(t_created + run_timeout, STALL_SECONDS)
                t_end = time.perf_counter()
                pid = _measured_pid(proc)
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
        binds=watch.bind_times(),
        created=created,
        started=started,
        t_ready=t_ready,
        t_create=t_create,
        t_created=t_created,
        t_end=t_end,
        metrics=parse_metrics(text),
        peak_rss_mb=peak,
        scheduler_cpu_s=sched_cpu,
        sim_cpu_s=sim_cpu,
    )


async def create_timed(
    url: str, objects: list[dict[str, Any]], *, concurrency: int
) -> dict[str, float]:
    """POST every pod, ``concurrency`` in flight, in order; pod name → when its create
    returned. Raises RuntimeError with the server's message on the first failure."""
    todo = list(reversed(objects))
    created: dict[str, float] = {}
    async with aiohttp.ClientSession(url) as session:

        async def worker() -> None:
            while todo:
                obj = todo.pop()
                async with session.post(workload.collection_path(obj), json=obj) as resp:
                    if resp.status >= 300:
                        raise RuntimeError(f"create: {resp.status} {await resp.text()}")
                    await resp.read()
                created[obj["metadata"]["name"]] = time.perf_counter()

        async with asyncio.TaskGroup() as tg:
            for _ in range(concurrency):
                tg.create_task(worker())
    return created


def _measured_pid(proc: subprocess.Popen[bytes]) -> int:
    """The scheduler's pid: the child itself, or its child when a profiler wraps it."""
    try:
        with open(f"/proc/{proc.pid}/task/{proc.pid}/children") as f:
            children = [int(p) for p in f.read().split()]
    except OSError:
        children = []
    with open(f"/proc/{proc.pid}/cmdline", "rb") as f:
        cmdline = f.read()
    if b"py-spy" in cmdline and children:
        return children[0]
    return proc.pid


def _record(
    scenario: Scenario,
    nodes: int,
    pods: int,
    batching: str,
    repeat: int,
    *,
    binds: dict[str, float],
    created: dict[str, float],
    started: float,
    t_ready: float,
    t_create: float,
    t_created: float,
    t_end: float,
    metrics: dict[str, list[tuple[dict[str, str], float]]],
    peak_rss_mb: float,
    scheduler_cpu_s: float,
    sim_cpu_s: float,
) -> dict[str, Any]:
    times = sorted(binds.values())
    last = times[-1] if times else t_end
    span = max(last - t_create, 1e-9)
    latencies = [t - created[name] for name, t in binds.items() if name in created]
    decision = "batch_scheduler_decision_duration_seconds"
    p50 = histogram_quantile(metrics, decision, 0.5)
    p99 = histogram_quantile(metrics, decision, 0.99)
    count = metric_sum(metrics, decision + "_count")
    total = metric_sum(metrics, decision + "_sum")
    scheduled = metric_sum(metrics, "scheduler_schedule_attempts_total", result="scheduled")
    hinted = metric_sum(metrics, "scheduler_batch_attempts_total", result="hint_used")
    flushes: dict[str, int] = {}
    for labels, v in metrics.get("scheduler_batch_cache_flushed_total", []):
        if v:
            flushes[labels["reason"]] = flushes.get(labels["reason"], 0) + int(v)
    record: dict[str, Any] = {
        "scenario": scenario.name,
        "nodes": nodes,
        "pods": pods,
        "batching": batching,
        "repeat": repeat,
        "bound": len(binds),
        "complete": len(binds) >= pods,
        "pods_per_s": round(len(binds) / span, 1),
        "wall_s": round(last - started, 3),
        "startup_s": round(t_ready - started, 3),
        "create_s": round(t_created - t_create, 3),
        "first_create_to_last_bind_s": round(span, 3),
        "decision_p50_ms": _ms(p50),
        "decision_p99_ms": _ms(p99),
        "decision_mean_ms": _ms(total / count) if count else None,
        "latency_p50_s": _round(percentile(latencies, 0.5), 3),
        "latency_p99_s": _round(percentile(latencies, 0.99), 3),
        "scheduled": int(scheduled),
        "hint_used": int(hinted),
        "batched_share": round(hinted / scheduled, 4) if scheduled else None,
        "flushes": flushes,
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
        "sim_cpu_s": round(sim_cpu_s, 2),
    }
    assert tuple(record) == RECORD_KEYS
    return record


def _ms(seconds: float | None) -> float | None:
    return None if seconds is None else round(seconds * 1000, 4)


def _round(value: float | None, digits: int) -> float | None:
    return None if value is None else round(value, digits)


# -- the bare bind client (the ceiling) ---------------------------------------------------


async def ceiling_main(kubeconfig: str, concurrency: int, nodes: int, port: int) -> None:
    """Watch pods and bind each new pending one round robin over ``node-0..`` with
    ``concurrency`` binds in flight (a scheduler with free decisions, but the same watch and
    the same binds). Serves 200 on ``127.0.0.1:port/readyz`` once its watch is open."""
    from aiohttp import web

    from scheduler.kube.client import create_client

    api = await create_client(kubeconfig)
    todo: asyncio.Queue[tuple[str, str, str]] = asyncio.Queue()
    watching = asyncio.Event()
    try:
        listed = await api.request("GET", PODS_PATH, params={"limit": 1})
        rv = listed["metadata"]["resourceVersion"]

        async def watch_pending() -> None:
            creds = api.credentials()
            headers = {"Authorization": f"Bearer {creds.token}"} if creds.token else {}
            params = {"watch": "true", "resourceVersion": rv}
            connector = aiohttp.TCPConnector(ssl=_ssl_for(creds))
            async with (
                aiohttp.ClientSession(
                    creds.server, headers=headers, connector=connector
                ) as session,
                session.get(PODS_PATH, params=params) as resp,
            ):
                watching.set()
                async for line in resp.content:
                    event = json.loads(line)
                    pod = event["object"]
                    if event["type"] == "ADDED" and not pod["spec"].get("nodeName"):
                        meta = pod["metadata"]
                        todo.put_nowait((meta["namespace"], meta["name"], meta["uid"]))

        index = 0

        async def worker() -> None:
            nonlocal index
            while True:
                namespace, name, uid = await todo.get()
                node = f"node-{index % nodes}"
                index += 1
                body = {
                    "apiVersion": "v1",
                    "kind": "Binding",
                    "metadata": {"name": name, "namespace": namespace, "uid": uid},
                    "target": {"apiVersion": "v1", "kind": "Node", "name": node},
                }
                await api.request(
                    "POST",
                    f"/api/v1/namespaces/{namespace}/pods/{name}/binding",
                    body=body,
                    decode=False,
                )

        stop = asyncio.Event()
        asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
        async with asyncio.TaskGroup() as tg:
            tasks = [tg.create_task(watch_pending())]
            tasks += [tg.create_task(worker()) for _ in range(concurrency)]
            await watching.wait()
            app = web.Application()
            app.router.add_get("/readyz", lambda _: web.Response(text="ok"))
            runner = web.AppRunner(app)
            await runner.setup()
            await web.TCPSite(runner, "127.0.0.1", port).start()
            await stop.wait()
            for task in tasks:
                task.cancel()
        await runner.cleanup()
    finally:
        await api.close()


def _ssl_for(creds: Credentials) -> ssl.SSLContext | bool:
    """TLS for a watch beside the client (the real API server: our CA, maybe a client cert)."""
    if not creds.server.startswith("https"):
        return False
    context = ssl.create_default_context(cafile=creds.ca_path)
    if creds.cert_path:
        context.load_cert_chain(creds.cert_path, creds.key_path)
    if creds.insecure:
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    return context


# -- the matrix, the reports --------------------------------------------------------------


def median_fields(records: list[dict[str, Any]], *keys: str) -> dict[str, Any]:
    """The median of each of ``keys`` over ``records`` (None values left out; None if all)."""
    out: dict[str, Any] = {}
    for key in keys:
        values = [r[key] for r in records if r[key] is not None]
        out[key] = statistics.median(values) if values else None
    return out


def medians(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per (scenario, nodes, batching): the median of each numeric figure."""
    groups: dict[tuple[str, int, str], list[dict[str, Any]]] = {}
    for r in records:
        groups.setdefault((r["scenario"], r["nodes"], r["batching"]), []).append(r)
    rows = []
    for (scenario, nodes, batching), rs in groups.items():
        row: dict[str, Any] = {
            "scenario": scenario,
            "nodes": nodes,
            "batching": batching,
            "pods": rs[0]["pods"],
            "repeats": len(rs),
            "complete": all(r["complete"] for r in rs),
        }
        row.update(
            median_fields(
                rs,
                "pods_per_s",
                "decision_p50_ms",
                "decision_p99_ms",
                "latency_p50_s",
                "latency_p99_s",
                "batched_share",
                "peak_rss_mb",
                "startup_s",
                "scheduler_cpu_s",
            )
        )
        flushes: dict[str, list[int]] = {}
        for r in rs:
            for reason, n in r["flushes"].items():
                flushes.setdefault(reason, []).append(n)
        row["flushes"] = {k: int(statistics.median(v)) for k, v in sorted(flushes.items())}
        rows.append(row)
    return rows


def _fmt(value: Any, pattern: str = "{:.0f}") -> str:
    return "-" if value is None else pattern.format(value)


def markdown(records: list[dict[str, Any]], meta: dict[str, Any]) -> str:
    rows = medians(records)
    index = {(r["scenario"], r["nodes"], r["batching"]): r for r in rows}
    lines = [
        "# make bench: end to end, batching off vs on (medians)",
        "",
        f"{meta['date']}, {meta['machine']}, Python {meta['python']}, "
        f"repeats {meta['repeats']}. A burst into a running scheduler: pods/s from the first "
        "create to the last bind seen by a watch (the scheduler synced and idle before the "
        "burst, 32 creates in flight). Latency: each pod's create → bind. Decision: per-pod "
        "time from the hint/full pass to the assume "
        "(`batch_scheduler_decision_duration_seconds`). Ceiling: a bare client binding each "
        "new pod to a pre-chosen node as its watch sees it, same emulator, same burst, same "
        "bind concurrency (16).",
        "",
        "| scenario | nodes | pods | batching | pods/s | on/off | of ceiling | decision p50 / p99 "
        "ms | latency p50 / p99 s | batched | flushes | peak RSS MB |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for r in sorted(rows, key=lambda r: (r["scenario"], r["nodes"], r["batching"] != "off")):
        off = index.get((r["scenario"], r["nodes"], "off"))
        ceiling = index.get((r["scenario"], r["nodes"], "ceiling"))
        ratio = (
            r["pods_per_s"] / off["pods_per_s"]
            if off and off["pods_per_s"] and r["batching"] == "all"
            else None
        )
        of_ceiling = (
            r["pods_per_s"] / ceiling["pods_per_s"]
            if ceiling and ceiling["pods_per_s"] and r["batching"] != "ceiling"
            else None
        )
        flush = ", ".join(f"{k} {v}" for k, v in r["flushes"].items()) or "-"
        done = "" if r["complete"] else " (incomplete)"
        lines.append(
            f"| {r['scenario']} | {r['nodes']} | {r['pods']} | {r['batching']}{done} | "
            f"{_fmt(r['pods_per_s'])} | {_fmt(ratio, '{:.2f}x')} | "
            f"{_fmt(of_ceiling, '{:.0%}')} | {_fmt(r['decision_p50_ms'], '{:.3f}')} / "
            f"{_fmt(r['decision_p99_ms'], '{:.3f}')} | {_fmt(r['latency_p50_s'], '{:.2f}')} / "
            f"{_fmt(r['latency_p99_s'], '{:.2f}')} | {_fmt(r['batched_share'], '{:.0%}')} | "
            f"{flush} | {_fmt(r['peak_rss_mb'])} |"
        )
    lines.append("")
    return "\n".join(lines)


def plot(records: list[dict[str, Any]], out_dir: Path) -> list[Path]:
    """One PNG per scenario: pods/s vs nodes, batching off, on and the ceiling."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = medians(records)
    paths = []
    styles = {
        "off": ("batching off", "o-", "tab:red"),
        "all": ("batching on (all)", "s-", "tab:blue"),
        "ceiling": ("bind ceiling (bare client)", "^--", "tab:gray"),
    }
    for scenario in sorted({r["scenario"] for r in rows}):
        fig, ax = plt.subplots(figsize=(7, 4.5), dpi=100)
        for batching, (label, style, color) in styles.items():
            pts = sorted(
                (r["nodes"], r["pods_per_s"])
                for r in rows
                if r["scenario"] == scenario and r["batching"] == batching and r["pods_per_s"]
            )
            if pts:
                ax.plot([p[0] for p in pts], [p[1] for p in pts], style, color=color, label=label)
                for x, y in pts:
                    ax.annotate(
                        f"{y:.0f}", (x, y), textcoords="offset points", xytext=(4, 6), fontsize=8
                    )
        ax.set_xscale("log")
        node_counts = sorted({r["nodes"] for r in rows if r["scenario"] == scenario})
        ax.set_xticks(node_counts)
        ax.set_xticklabels([str(n) for n in node_counts])
        ax.set_ylim(bottom=0)
        ax.set_xlabel("nodes")
        ax.set_ylabel("pods/s (first create → last bind, median)")
        ax.set_title(f"{scenario}: {SCENARIOS[scenario].description}", fontsize=10)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8)
        fig.tight_layout()
        path = out_dir / f"throughput_{scenario}.png"
        fig.savefig(path)
        plt.close(fig)
        paths.append(path)
    return paths


def _print_record(r: dict[str, Any]) -> None:
    print(
        f"  {r['scenario']:>18} {r['nodes']:>5} nodes {r['pods']:>6} pods "
        f"{r['batching']:>7} #{r['repeat']}: {r['pods_per_s']:>7.0f} pods/s "
        f"({r['bound']}/{r['pods']} in {r['first_create_to_last_bind_s']:.2f} s, "
        f"start {r['startup_s']:.2f} s) decision p50 {_fmt(r['decision_p50_ms'], '{:.3f}')} ms "
        f"batched {_fmt(r['batched_share'], '{:.0%}')} RSS {r['peak_rss_mb']:.0f} MB",
        flush=True,
    )


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
                    _print_record(record)
                    records.append(record)
    return records


CEILING_SCENARIOS = ("one-pod-per-node", "multi-pod-per-node")
"""The bind ceiling is measured with these workloads (the others bind the same way)."""


def write_results(records: list[dict[str, Any]], meta: dict[str, Any], out_dir: Path) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "latest.json").write_text(
        json.dumps({"meta": meta, "records": records}, indent=1) + "\n"
    )
    (out_dir / "latest.md").write_text(markdown(records, meta))
    plot(records, out_dir)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args and args[0] == "ceiling":
        p = argparse.ArgumentParser(prog="python -m bench.e2e ceiling")
        p.add_argument("--kubeconfig", required=True)
        p.add_argument("--concurrency", type=int, default=BIND_CONCURRENCY)
        p.add_argument("--nodes", type=int, required=True)
        p.add_argument("--port", type=int, required=True)
        a = p.parse_args(args[1:])
        asyncio.run(ceiling_main(a.kubeconfig, a.concurrency, a.nodes, a.port))
        return 0
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
