"""Client CPU per bind against the real API server: ``python -m bench.bind_client``.

    python -m bench.bind_client [--pods 3000] [--concurrency 64] [--repeats 3]
        [--clients binder,h2@uvloop,...] [--nodes 100] [--profile FILE]

A fresh etcd and kube-apiserver (``controlplane/``, no controller-manager), ``--nodes``
nodes; per candidate and repeat, ``--pods`` pending pods are created first (not timed), then
bound with ``--concurrency`` binds in flight, and this process's CPU time (user + system;
the API server is another process) and wall time over the binds are printed: µs of client
CPU per bind and binds/s. The candidates run in turn, round robin over the repeats, so a
change of the machine's load spreads over all of them. A candidate is ``client`` or
``client@loop``, the loop ``asyncio`` (default) or ``uvloop``; clients (:data:`CLIENTS`):

- ``binder``: :class:`scheduler.kube.binder.Binder` on :class:`scheduler.kube.client.ApiClient`
  (what the scheduler ships, workers and retry rules included);
- ``aiohttp-plain``: ``aiohttp.ClientSession.post`` with the body as JSON, nothing else
  (what the transport alone costs);
- ``h2``: one HTTP/2 connection (the ``h2`` package over an asyncio TLS transport), every bind
  a stream on it, as client-go binds (:mod:`bench.bind_client_h2`).

``--profile FILE``: py-spy over this process during each candidate's binds (raw format,
``FILE-<candidate>-<repeat>``). The figure for a design choice is the CPU per bind: binds/s
are bounded by the API server on these 2 cores (``bench.bind_ceiling``), which the client
shares.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bench.real import NAMESPACE, PODS_PATH, Cluster
from controlplane.launcher import ControlPlane
from scheduler.cycle.ports import BindRequest, BindResult
from scheduler.kube import client as kube_client
from scheduler.kube.binder import Binder, BinderOptions
from scheduler.model.parse import pod_from_raw
from scheduler.sim import workload

if TYPE_CHECKING:
    from collections.abc import Callable, Coroutine, Iterator

    from scheduler.model.pod import Pod

    Run = Callable[[Cluster, list["Pod"], int], Coroutine[Any, Any, int]]

CREATE_CONCURRENCY = 32


async def _create_pods(cluster: Cluster, count: int, prefix: str) -> list[Pod]:
    pods = workload.make_pods(count, prefix=prefix, namespace=NAMESPACE)
    out: list[Pod] = []
    sem = asyncio.Semaphore(CREATE_CONCURRENCY)
    async with cluster.session() as s:

        async def create(body: dict[str, Any]) -> None:
            async with sem, s.post(PODS_PATH, json=body) as r:
                created = await r.json()
                if r.status >= 300:
                    raise RuntimeError(f"create pod: {r.status} {created}")
                out.append(pod_from_raw(created))

        await asyncio.gather(*(create(p) for p in pods))
    return out


def _node(i: int) -> str:
    return f"node-{i}"


async def run_binder(cluster: Cluster, pods: list[Pod], concurrency: int) -> int:
    api = await kube_client.create_client(
        str(cluster.cp.scheduler_kubeconfig), pool_size=concurrency + 16
    )
    binder = Binder(api, BinderOptions(concurrency=concurrency))
    done = asyncio.get_running_loop().create_future()
    bound = 0
    left = len(pods)

    def finished(request: BindRequest, result: BindResult, message: str) -> None:
        nonlocal bound, left
        bound += result is BindResult.BOUND
        left -= 1
        if not left:
            done.set_result(None)

    for i, pod in enumerate(pods):
        request = BindRequest(
            info=None,  # type: ignore[arg-type]  # the binder reads only pod and node
            pod=pod,
            node=_node(i % cluster.nodes),
            profile="default-scheduler",
            cycle=i,
            started=0.0,
        )
        binder.dispatch(request, finished)
    await done
    await binder.close()
    await api.close()
    return bound


async def run_aiohttp_plain(cluster: Cluster, pods: list[Pod], concurrency: int) -> int:
    sem = asyncio.Semaphore(concurrency)
    bound = 0
    async with cluster.session() as s:

        async def bind(i: int, pod: Pod) -> None:
            nonlocal bound
            body = {
                "apiVersion": "v1",
                "kind": "Binding",
                "metadata": {"name": pod.name, "namespace": pod.namespace, "uid": str(pod.uid)},
                "target": {"apiVersion": "v1", "kind": "Node", "name": _node(i % cluster.nodes)},
            }
            async with sem, s.post(f"{PODS_PATH}/{pod.name}/binding", json=body) as r:
                await r.read()
                bound += r.status < 300

        await asyncio.gather(*(bind(i, p) for i, p in enumerate(pods)))
    return bound


CLIENTS: dict[str, Run] = {"binder": run_binder, "aiohttp-plain": run_aiohttp_plain}


def _register_h2() -> None:
    try:
        from bench.bind_client_h2 import run_h2
    except ImportError:
        return
    CLIENTS["h2"] = run_h2


def _measure(
    args: argparse.Namespace, workdir: Path
) -> dict[str, list[tuple[float, float, float]]]:
    """Every candidate (``client@loop``) once per repeat, round robin, each in an event
    loop of its own kind; the cluster's setup and the pods' creation in plain asyncio."""
    results: dict[str, list[tuple[float, float, float]]] = {name: [] for name in args.clients}
    with ControlPlane.start(workdir / "cp", controller_manager=False) as cp:
        cluster = Cluster(cp, args.nodes, workdir)
        asyncio.run(cluster.setup())
        for repeat in range(args.repeats):
            for name in args.clients:
                client, _, loop = name.partition("@")
                prefix = f"{client}-{loop or 'asyncio'}-{repeat}-".replace("_", "-")
                pods = asyncio.run(_create_pods(cluster, args.pods, prefix))
                time.sleep(1.0)  # let the API server settle after the creates
                with (
                    asyncio.Runner(loop_factory=_loop_factory(loop or "asyncio")) as runner,
                    _profiled(args.profile, name, repeat),
                ):
                    t0, wall0 = os.times(), time.perf_counter()
                    bound = runner.run(CLIENTS[client](cluster, pods, args.concurrency))
                    t1, wall = os.times(), time.perf_counter() - wall0
                user, system = t1.user - t0.user, t1.system - t0.system
                if bound != len(pods):
                    raise RuntimeError(f"{name}: bound {bound} of {len(pods)}")
                per_bind_us = (user + system) / bound * 1e6
                rate = bound / wall
                results[name].append((per_bind_us, rate, user / bound * 1e6))
                print(
                    f"{name:18} repeat {repeat}: {per_bind_us:6.1f} us CPU/bind "
                    f"({user / bound * 1e6:.1f} user), {rate:6.0f} binds/s",
                    flush=True,
                )
                asyncio.run(cluster.clear())
    return results


def _loop_factory(name: str) -> Callable[[], asyncio.AbstractEventLoop] | None:
    if name == "uvloop":
        import uvloop

        return uvloop.new_event_loop
    return None


@contextlib.contextmanager
def _profiled(out: Path | None, name: str, repeat: int) -> Iterator[None]:
    """py-spy over this process while the binds run (raw format, 250 Hz)."""
    if out is None:
        yield
        return
    target = out.with_name(f"{out.stem}-{name}-{repeat}{out.suffix}")
    spy = shutil.which("py-spy", path=str(Path(sys.executable).parent)) or "py-spy"
    proc = subprocess.Popen(
        [spy, "record", "--format", "raw", "-r", "250", "-o", str(target), "-p", str(os.getpid())],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    time.sleep(1.0)  # attached
    try:
        yield
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(30)


def main(argv: list[str] | None = None) -> int:
    _register_h2()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pods", type=int, default=3000)
    parser.add_argument("--nodes", type=int, default=100)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--clients", default=",".join(CLIENTS))
    parser.add_argument(
        "--profile", type=Path, help="py-spy raw profile of the binds, to this file"
    )
    args = parser.parse_args(argv)
    args.clients = [c for c in args.clients.split(",") if c]
    unknown = [
        c
        for c in args.clients
        if c.partition("@")[0] not in CLIENTS
        or c.partition("@")[2] not in ("", "asyncio", "uvloop")
    ]
    if unknown:
        parser.error(f"unknown client(s) {', '.join(unknown)}; known: {', '.join(CLIENTS)}")
    with tempfile.TemporaryDirectory(prefix="bind-client-") as tmp:
        results = _measure(args, Path(tmp))
    print(f"\n{'client':18} {'us CPU/bind':>12} {'of it user':>11} {'binds/s':>8}  (medians)")
    for name, runs in results.items():
        cpu = statistics.median(r[0] for r in runs)
        user = statistics.median(r[2] for r in runs)
        rate = statistics.median(r[1] for r in runs)
        print(f"{name:18} {cpu:12.1f} {user:11.1f} {rate:8.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
