"""Side by side on the real API server: ours vs kube-scheduler v1.37.2 vs the bind ceiling.

``python -m bench.e2e --api real [--quick] [--nodes 500,1000] [--schedulers a,b] ...``

The control plane is the one ``make controlplane`` builds (controlplane/): etcd and
kube-apiserver v1.37.2 on loopback, one per node count; nodes are API objects (no kubelets,
no controller-manager: nothing else competes for the two cores). For every (scenario,
configuration, repeat) each scheduler in turn, interleaved so that drift touches all alike:

* ``ceiling``: the bare bind client of :mod:`bench.ceiling` (watch, bind round robin, 16 binds
  in flight), as our ServiceAccount;
* ``ours-off`` / ``ours-on``: ``python -m scheduler run --batching off|all`` as our
  ServiceAccount (its RBAC, its TokenRequest token), its default binds in flight
  (``burst.BIND_CONCURRENCY``);
* ``kube-on`` / ``kube-off``: the kube-scheduler binary, OpportunisticBatching as 1.37
  ships it (on) or ``--feature-gates=OpportunisticBatching=false``, as
  ``system:kube-scheduler`` (its bootstrap RBAC).

Client rate limits: kube-scheduler gets ``clientConnection.qps``/``burst`` of 10000 (its
defaults, 50/100, would throttle it far below the others); ours and the ceiling have no
client-side limiter. Configurations: ``default`` (kube's defaults: PodTopologySpread
``defaultingType: System``) and ``list`` (``defaultingType: List`` with no
``defaultConstraints``, what KEP-5598 tells admins to set), both given to both schedulers.

One run: start the scheduler and wait until it is ready, open a pod watch, create the
scenario's pods (32 in flight), wait until the watch saw every pod bound, read the
scheduler's ``/metrics``, CPU and peak RSS, stop it, force-delete the pods (no kubelet will
ever confirm a graceful deletion) and wait until they are gone.

``--kubelet-load [1|2]``: a simulated kubelet (``real_kubelet``) beside each run marks every
bound pod Running and Ready with two status updates (or one), as a real cluster's kubelets
do, so the intake cost of events a scheduler must read and skip is measured too.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import platform
import signal
import ssl
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import aiohttp
import yaml

from bench.burst import (
    BIND_CONCURRENCY,
    CREATE_CONCURRENCY,
    STALL_SECONDS,
    BindWatch,
    BurstBinds,
    create_timed,
)
from bench.configs import CONFIGS, scheduler_config
from bench.measure import by_label, cpu_seconds, metric_sum, parse_metrics, vm_hwm_mb
from bench.real_kubelet import SimulatedKubelet
from bench.real_report import markdown, plot
from bench.scenarios import SCENARIOS, SCHEDULER_NAME, ZONES, object_path
from bench.stats import percentile, rounded
from controlplane.launcher import ControlPlane
from controlplane.processes import free_port
from scheduler.sim import workload

if TYPE_CHECKING:
    from collections.abc import Callable

    from bench.scenarios import Scenario

ROOT = Path(__file__).parent.parent
RESULTS = ROOT / "bench" / "results" / "real"
SCHEDULERS = ("ceiling", "ours-off", "ours-on", "kube-on", "kube-off")
CLIENT_QPS = 10000
NAMESPACE = "bench"
PODS_PATH = f"/api/v1/namespaces/{NAMESPACE}/pods"


def _config(kind: str, *, kube: bool, kubeconfig: Path | None = None) -> dict[str, Any]:
    return scheduler_config(
        kind, scheduler_name=SCHEDULER_NAME, kube=kube, kubeconfig=kubeconfig, qps=CLIENT_QPS
    )


class Cluster:
    """One control plane with ``nodes`` nodes and the bench namespace."""

    def __init__(self, cp: ControlPlane, nodes: int, workdir: Path) -> None:
        self.cp = cp
        self.nodes = nodes
        self.workdir = workdir
        cert, key = cp.pki.client("admin")
        self.ssl = ssl.create_default_context(cafile=str(cp.pki.ca_cert))
        self.ssl.load_cert_chain(str(cert), str(key))

    def session(self, **kw: Any) -> aiohttp.ClientSession:
        return aiohttp.ClientSession(
            self.cp.api_url, connector=aiohttp.TCPConnector(ssl=self.ssl, limit=64), **kw
        )

    async def setup(self) -> None:
        async with self.session() as s:
            for body in (
                {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}},
            ):
                await _post(s, "/api/v1/namespaces", body)
            # The ServiceAccount admission plugin needs it; no controller-manager makes it.
            await _post(
                s,
                f"/api/v1/namespaces/{NAMESPACE}/serviceaccounts",
                {"metadata": {"name": "default"}},
            )
            nodes = workload.make_nodes(self.nodes, zones=ZONES)  # zone-spread reads them
            sem = asyncio.Semaphore(CREATE_CONCURRENCY)

            async def create(node: dict[str, Any]) -> None:
                async with sem:
                    await _post(s, "/api/v1/nodes", node)

            await asyncio.gather(*(create(n) for n in nodes))

    async def clear(self) -> None:
        """Force-delete every pod of the namespace and wait until the list is empty.

        One DELETE per pod, ``CREATE_CONCURRENCY`` at a time: the API server works a
        DELETE of the collection with one worker (``--delete-collection-workers`` 1), which
        took more than 300 s for 20000 pods on 2 cores."""
        async with self.session() as s:
            names: list[str] = []
            params: dict[str, str] = {"limit": "500"}
            while True:
                async with s.get(PODS_PATH, params=params) as r:
                    body = await r.json()
                names += [item["metadata"]["name"] for item in body["items"]]
                token = body["metadata"].get("continue")
                if not token:
                    break
                params = {"limit": "500", "continue": token}
            sem = asyncio.Semaphore(CREATE_CONCURRENCY)

            async def delete(name: str) -> None:
                async with (
                    sem,
                    s.delete(f"{PODS_PATH}/{name}", params={"gracePeriodSeconds": "0"}) as r,
                ):
                    await r.read()  # 404: gone already

            await asyncio.gather(*(delete(name) for name in names))
            deadline = time.monotonic() + 300
            while time.monotonic() < deadline:
                async with s.get(PODS_PATH, params={"limit": "1"}) as r:
                    body = await r.json()
                if not body["items"]:
                    return
                await asyncio.sleep(0.5)
        raise RuntimeError("pods of the previous run not gone in 300 s")


async def _post(session: aiohttp.ClientSession, path: str, body: Any) -> None:
    async with session.post(path, json=body) as r:
        if r.status >= 300:
            raise RuntimeError(f"POST {path}: {r.status} {await r.text()}")
        await r.read()


class Process:
    """A scheduler under measurement: its command, readiness and metrics URLs."""

    def __init__(self, cmd: list[str], ready_url: str, metrics_url: str | None, log: Path) -> None:
        self.cmd = cmd
        self.ready_url = ready_url
        self.metrics_url = metrics_url
        self.log = log
        self._out = log.open("wb")
        self.proc = subprocess.Popen(
            cmd, stdin=subprocess.DEVNULL, stdout=self._out, stderr=subprocess.STDOUT, cwd=ROOT
        )

    async def wait_ready(self, within: float = 120.0) -> None:
        insecure = aiohttp.TCPConnector(ssl=False)
        async with aiohttp.ClientSession(connector=insecure) as s:
            deadline = time.monotonic() + within
            while time.monotonic() < deadline:
                if self.proc.poll() is not None:
                    raise RuntimeError(f"{self.cmd[0]} exited: {self.log.read_text()[-2000:]}")
                with contextlib.suppress(aiohttp.ClientError, OSError):
                    async with s.get(self.ready_url) as r:
                        if r.status == 200:
                            return
                await asyncio.sleep(0.02)
        raise RuntimeError(f"not ready in {within} s: {self.log.read_text()[-2000:]}")

    async def metrics(self) -> str:
        if self.metrics_url is None:
            return ""
        async with (
            aiohttp.ClientSession(connector=aiohttp.TCPConnector(ssl=False)) as s,
            s.get(self.metrics_url) as r,
        ):
            return await r.text()

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._out.close()


def start_scheduler(cluster: Cluster, scheduler: str, config: str, run_dir: Path) -> Process:
    cp = cluster.cp
    port = free_port()
    log = run_dir / f"{scheduler}.log"
    if scheduler == "ceiling":
        cmd = [sys.executable, "-m", "bench.e2e", "ceiling"]
        cmd += ["--kubeconfig", str(cp.scheduler_kubeconfig), "--port", str(port)]
        cmd += ["--concurrency", str(BIND_CONCURRENCY), "--nodes", str(cluster.nodes)]
        return Process(cmd, f"http://127.0.0.1:{port}/readyz", None, log)
    if scheduler.startswith("ours-"):
        path = run_dir / "ours.yaml"
        path.write_text(yaml.safe_dump(_config(config, kube=False)))
        batching = "all" if scheduler == "ours-on" else "off"
        cmd = [sys.executable, "-m", "scheduler", "run", "--kubeconfig"]
        cmd += [str(cp.scheduler_kubeconfig), "--config", str(path), "--batching", batching]
        cmd += ["--log-level", "warning", "--metrics-addr", f"127.0.0.1:{port}"]
        cmd += ["--secure-port", "0"]
        cmd += ["--bind-concurrency", str(BIND_CONCURRENCY)]
        url = f"http://127.0.0.1:{port}"
        return Process(cmd, f"{url}/readyz", f"{url}/metrics", log)
    kubeconfig = cp.client_kubeconfig("scheduler", "system:kube-scheduler")
    path = run_dir / "kube.yaml"
    path.write_text(yaml.safe_dump(_config(config, kube=True, kubeconfig=kubeconfig)))
    cmd = [str(cp.bin / "kube-scheduler"), f"--config={path}", *cp.kube_scheduler_flags(port)]
    if scheduler == "kube-off":
        cmd.append("--feature-gates=OpportunisticBatching=false")
    url = f"https://127.0.0.1:{port}"
    return Process(cmd, f"{url}/readyz", f"{url}/metrics", log)


async def _resource_version(cluster: Cluster) -> str:
    async with cluster.session() as s, s.get(PODS_PATH, params={"limit": "1"}) as r:
        return str((await r.json())["metadata"]["resourceVersion"])


async def create_pods(cluster: Cluster, objects: list[dict[str, Any]]) -> dict[str, float]:
    for obj in objects:
        obj["metadata"]["namespace"] = NAMESPACE
    async with cluster.session() as s:
        return await create_timed(s, objects, concurrency=CREATE_CONCURRENCY)


async def create_objects(cluster: Cluster, objects: list[dict[str, Any]]) -> None:
    """A scenario's Service and ReplicaSet in the bench namespace; kept from an earlier run."""
    async with cluster.session() as s:
        for obj in objects:
            async with s.post(object_path(obj, NAMESPACE), json=obj) as r:
                if r.status >= 300 and r.status != 409:
                    raise RuntimeError(f"create {obj['kind']}: {r.status} {await r.text()}")
                await r.read()


async def run_one(
    cluster: Cluster,
    scenario: Scenario,
    scheduler: str,
    config: str,
    repeat: int,
    run_timeout: float,
    during_burst: Callable[[Process], contextlib.AbstractAsyncContextManager[None]] | None = None,
    kubelet_updates: int = 0,
) -> dict[str, Any]:
    """One measured run; ``during_burst`` (a profiler) wraps the burst, from the first create
    until the scheduler's CPU has been read after the last bind. ``kubelet_updates`` (1 or
    2; 0: none) runs a simulated kubelet beside it (``--kubelet-load``, ``real_kubelet``)."""
    objects = scenario.build(cluster.nodes)
    pods = len(objects)
    run_dir = Path(tempfile.mkdtemp(prefix=f"{scheduler}-", dir=cluster.workdir))
    started = time.perf_counter()
    await create_objects(cluster, scenario.objects(cluster.nodes))
    proc = start_scheduler(cluster, scheduler, config, run_dir)
    api_cpu0 = cpu_seconds(cluster.cp.process("kube-apiserver").proc.pid)
    try:
        await proc.wait_ready()
        t_ready = time.perf_counter()
        watch = BindWatch(cluster.cp.api_url, pods, path=PODS_PATH, tls=cluster.ssl)
        version = await _resource_version(cluster)
        await watch.start(version)
        kubelet = None
        if kubelet_updates:
            kubelet = SimulatedKubelet(
                cluster.cp.api_url, PODS_PATH, tls=cluster.ssl, updates=kubelet_updates
            )
            await kubelet.start(version)
        cpu0 = cpu_seconds(proc.proc.pid)
        try:
            async with contextlib.AsyncExitStack() as profiling:
                if during_burst is not None:
                    await profiling.enter_async_context(during_burst(proc))
                t_create = time.perf_counter()
                created = await create_pods(cluster, objects)
                t_created = time.perf_counter()
                await watch.wait(t_created + run_timeout, STALL_SECONDS)
                cpu = cpu_seconds(proc.proc.pid) - cpu0
            peak = vm_hwm_mb(proc.proc.pid)
            text = await proc.metrics()
        finally:
            await watch.stop()
            if kubelet is not None:
                await kubelet.stop()
    finally:
        proc.stop()
    api_cpu = cpu_seconds(cluster.cp.process("kube-apiserver").proc.pid) - api_cpu0
    await cluster.clear()
    burst = BurstBinds(watch.bind_times(), created, t_create, time.perf_counter())
    bound = max(len(burst.binds), 1)
    metrics = parse_metrics(text)
    cpu_per_pod_ms = round(cpu / bound * 1000, 3)
    return {
        "api": "real",
        "scenario": scenario.name,
        "nodes": cluster.nodes,
        "pods": pods,
        "scheduler": scheduler,
        "config": config,
        "repeat": repeat,
        **burst.counts(pods),
        "latency_p50_s": rounded(percentile(burst.latencies, 0.5), 3),
        "latency_p99_s": rounded(percentile(burst.latencies, 0.99), 3),
        # One figure under the two names the side-by-side and the per-pod-cost issues use.
        "cpu_s_per_1000_pods": cpu_per_pod_ms,
        "cpu_ms_per_pod": cpu_per_pod_ms,
        "apiserver_cpu_s_per_1000_pods": round(api_cpu / bound * 1000, 3),
        "peak_rss_mb": round(peak, 1),
        "startup_s": round(t_ready - started, 3),
        "create_s": round(t_created - t_create, 3),
        "first_create_to_last_bind_s": round(burst.span, 3),
        "scheduled": int(
            metric_sum(metrics, "scheduler_schedule_attempts_total", result="scheduled")
        ),
        "batch_attempts": by_label(metrics, "scheduler_batch_attempts_total", "result"),
        # Ours only: what the exact batch did (outcome "placed": the pods it placed).
        "exact_batch": by_label(metrics, "batch_scheduler_exact_batch_total", "outcome"),
        "batch_flushes": by_label(metrics, "scheduler_batch_cache_flushed_total", "reason"),
        # Status updates the simulated kubelet wrote by the last bind (--kubelet-load).
        "kubelet_updates": 0 if kubelet is None else kubelet.sent,
    }


async def run_matrix(
    schedulers: list[str],
    configs: list[str],
    scenarios: list[str],
    node_counts: list[int],
    repeats: int,
    run_timeout: float,
    on_record: Callable[[list[dict[str, Any]]], None],
    kubelet_updates: int = 0,
) -> list[dict[str, Any]]:
    """Every run's record; ``on_record`` gets the records so far after each run."""
    records: list[dict[str, Any]] = []
    for nodes in node_counts:
        workdir = Path(tempfile.mkdtemp(prefix=f"bench-real-{nodes}-"))
        with ControlPlane.start(workdir / "cp", controller_manager=False) as cp:
            cluster = Cluster(cp, nodes, workdir)
            await cluster.setup()
            # One unrecorded run first: a fresh API server and etcd warm up (caches,
            # compaction of the node creates) during their first burst, whoever runs it.
            await run_one(
                cluster,
                SCENARIOS[scenarios[0]],
                schedulers[0],
                configs[0],
                -1,
                run_timeout,
                kubelet_updates=kubelet_updates,
            )
            for repeat in range(repeats):
                for name in scenarios:
                    for config in configs:
                        # Interleaved, and rotated per repeat: drift touches every one alike.
                        shift = repeat % len(schedulers)
                        for scheduler in schedulers[shift:] + schedulers[:shift]:
                            if scheduler == "ceiling" and config != configs[0]:
                                continue  # the bare client has no configuration
                            record = await run_one(
                                cluster,
                                SCENARIOS[name],
                                scheduler,
                                config,
                                repeat,
                                run_timeout,
                                kubelet_updates=kubelet_updates,
                            )
                            _print(record)
                            records.append(record)
                            on_record(records)
    return records


def _print(r: dict[str, Any]) -> None:
    print(
        f"  {r['scenario']:>18} {r['nodes']:>5} nodes {r['pods']:>6} pods {r['scheduler']:>8} "
        f"{r['config']:>7} #{r['repeat']}: {r['pods_per_s']:>6.0f} pods/s "
        f"({r['bound']}/{r['pods']}) cpu {r['cpu_ms_per_pod']:.2f} ms/pod, "
        f"p50 {r['latency_p50_s']} s, batch {r['batch_attempts']} flushes {r['batch_flushes']}",
        flush=True,
    )


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.e2e --api real")
    parser.add_argument("--api", choices=("real",), default="real")
    parser.add_argument("--quick", action="store_true", help="500 nodes, 1 repeat")
    parser.add_argument("--nodes", default=None, help="comma-separated node counts")
    parser.add_argument("--scenarios", default=",".join(SCENARIOS))
    parser.add_argument("--schedulers", default=",".join(SCHEDULERS))
    parser.add_argument("--configs", default=",".join(CONFIGS))
    parser.add_argument("--repeats", type=int, default=None)
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds per run")
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument(
        "--kubelet-load",
        type=int,
        nargs="?",
        const=2,
        default=0,
        choices=(1, 2),
        help="a simulated kubelet marks each bound pod Running and Ready: 2 status updates "
        "per pod (the default), or 1",
    )
    a = parser.parse_args(argv)
    nodes = [int(n) for n in (a.nodes or ("500" if a.quick else "500,1000,5000")).split(",")]
    repeats = a.repeats or (1 if a.quick else 3)
    lists = {
        "scenarios": (a.scenarios, SCENARIOS),
        "schedulers": (a.schedulers, SCHEDULERS),
        "configs": (a.configs, CONFIGS),
    }
    chosen: dict[str, list[str]] = {}
    for what, (text, known) in lists.items():
        chosen[what] = [s for s in text.split(",") if s]
        unknown = set(chosen[what]) - set(known)
        if unknown:
            parser.error(f"unknown {what}: {', '.join(sorted(unknown))}")
    meta = {
        "api": "real",
        "date": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs, {platform.system()}",
        "python": platform.python_version(),
        "repeats": repeats,
        "nodes": nodes,
        "client_qps_burst": {"kube-scheduler": CLIENT_QPS, "ours": None, "ceiling": None},
        "bind_concurrency": BIND_CONCURRENCY,
        "kubelet_updates_per_pod": a.kubelet_load,
        **chosen,
    }
    a.out.mkdir(parents=True, exist_ok=True)

    def save(records: list[dict[str, Any]]) -> None:
        # After every run: a matrix of 5000 nodes takes over an hour, and a late failure
        # must not lose what was measured before it.
        (a.out / "latest.json").write_text(
            json.dumps({"meta": meta, "records": records}, indent=1) + "\n"
        )

    records = asyncio.run(
        run_matrix(
            chosen["schedulers"],
            chosen["configs"],
            chosen["scenarios"],
            nodes,
            repeats,
            a.timeout,
            save,
            kubelet_updates=a.kubelet_load,
        )
    )
    text = markdown(records, meta)
    (a.out / "latest.md").write_text(text)
    plot(records, a.out, schedulers=SCHEDULERS)
    print(text)
    print(f"written: {a.out}/latest.json, latest.md, throughput_*.png")
    return 0
