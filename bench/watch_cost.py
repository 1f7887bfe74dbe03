"""What one pod watch event costs a process, before any scheduling: kopf against a bare watch.

``python -m bench.watch_cost [--pods 5000] [--repeats 3] [--out DIR]``: against the emulator,
the harness creates ``--pods`` pods (32 creates in flight) and binds each one (16 binds in
flight), so every consumer sees the two events per pod a scheduler sees (ADDED, and the
MODIFIED of its bind). Consumers, interleaved per repeat, each its own process:

* ``bare``: one aiohttp watch, ``json.loads`` per line (the bind ceiling's watch);
* ``kopf``: ``kopf.operator`` with the scheduler's settings (``kube.controller.settings``)
  and one ``on.event`` handler for pods that does nothing;
* ``kopf-parse``: the same handler parsing each pod as the scheduler does
  (``model.parse.pod_from_raw``).

Each consumer reports its CPU time (user + system) from the first event of the burst to the
last; ``cpu_us_per_event`` is that over the events it received. The difference between
``kopf`` and ``bare`` is kopf's own per-event machinery (issue 19: what a scheduler on kopf
cannot go below). Writes ``DIR/watch_cost.json`` (default ``bench/results/``).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import ssl
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import aiohttp

from bench.burst import BIND_CONCURRENCY, CREATE_CONCURRENCY, PODS_PATH, create_timed
from bench.measure import wait_ready
from bench.scenarios import SCENARIOS
from controlplane.processes import free_port
from scheduler.sim.process import SimProcess

if TYPE_CHECKING:
    from collections.abc import Mapping

    from scheduler.kube.client import Credentials

RESULTS = Path(__file__).parent / "results"
CONSUMERS = ("bare", "kopf", "kopf-parse")
PROBE = "watch-cost-probe"
"""A pod created before the burst: a consumer is ready once it has seen it."""


# -- the consumer process -----------------------------------------------------------------


class _Counter:
    """Counts the burst's events; ready at the probe; done when every burst pod was seen
    bound. CPU is counted from the burst's first event (the watch already open, idle)."""

    def __init__(self, pods: int) -> None:
        self.pods = pods
        self.events = 0
        self.bound: set[str] = set()
        self.ready = asyncio.Event()
        self.done = asyncio.Event()
        self.cpu0 = 0.0

    def saw(self, raw: Mapping[str, Any]) -> None:
        name = raw["metadata"]["name"]
        if name == PROBE:
            self.ready.set()
            return
        if not self.events:  # the burst's first event: its CPU is counted from here
            self.cpu0 = time.process_time()
        self.events += 1
        if raw["spec"].get("nodeName"):
            self.bound.add(name)
            if len(self.bound) >= self.pods:
                self.done.set()


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


async def _bare(kubeconfig: str, counter: _Counter) -> None:
    from scheduler.kube.client import create_client

    api = await create_client(kubeconfig)
    creds = api.credentials()
    headers = {"Authorization": f"Bearer {creds.token}"} if creds.token else {}
    connector = aiohttp.TCPConnector(ssl=_ssl_for(creds))
    try:
        async with (
            aiohttp.ClientSession(creds.server, headers=headers, connector=connector) as session,
            session.get(PODS_PATH, params={"watch": "true"}) as resp,
        ):
            async for line in resp.content:
                counter.saw(json.loads(line)["object"])
                if counter.done.is_set():
                    return
    finally:
        await api.close()


async def _kopf(kubeconfig: str, counter: _Counter, *, parse: bool) -> None:
    import kopf

    from scheduler.kube.client import create_client
    from scheduler.kube.controller.settings import ControllerOptions, operator_settings
    from scheduler.model.parse import pod_from_raw

    api = await create_client(kubeconfig)
    registry = kopf.OperatorRegistry()

    @kopf.on.login(registry=registry)
    async def login(**_: Any) -> kopf.ConnectionInfo:
        return api.credentials().as_kopf()

    @kopf.on.event("v1", "pods", registry=registry)
    async def event(event: kopf.RawEvent, **_: Any) -> None:
        raw = event["object"]
        if parse:
            pod_from_raw(raw)
        counter.saw(raw)

    stop = asyncio.Event()
    operator = asyncio.create_task(
        kopf.operator(
            registry=registry,
            settings=operator_settings(ControllerOptions()),
            clusterwide=True,
            standalone=True,
            stop_flag=stop,
        )
    )
    await counter.done.wait()
    stop.set()
    await operator
    await api.close()


async def _consume(mode: str, kubeconfig: str, pods: int, port: int) -> dict[str, Any]:
    from aiohttp import web

    counter = _Counter(pods)

    async def readyz(_: web.Request) -> web.Response:
        return web.Response(status=200 if counter.ready.is_set() else 503)

    app = web.Application()
    app.router.add_get("/readyz", readyz)
    runner = web.AppRunner(app)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    if mode == "bare":
        watch = _bare(kubeconfig, counter)
    else:
        watch = _kopf(kubeconfig, counter, parse=mode == "kopf-parse")
    task = asyncio.create_task(watch)
    await counter.done.wait()
    cpu = time.process_time() - counter.cpu0
    await task
    await runner.cleanup()
    return {"events": counter.events, "cpu_s": cpu}


# -- the harness --------------------------------------------------------------------------


async def _bind_all(session: aiohttp.ClientSession, objects: list[dict[str, Any]]) -> None:
    todo = list(reversed(objects))

    async def worker() -> None:
        while todo:
            meta = todo.pop()["metadata"]
            path = f"/api/v1/namespaces/{meta['namespace']}/pods/{meta['name']}/binding"
            body = {"metadata": {"name": meta["name"]}, "target": {"name": "node-0"}}
            async with session.post(path, json=body) as resp:
                if resp.status >= 300:
                    raise RuntimeError(f"bind: {resp.status} {await resp.text()}")
                await resp.read()

    async with asyncio.TaskGroup() as tg:
        for _ in range(BIND_CONCURRENCY):
            tg.create_task(worker())


def _pods(count: int) -> list[dict[str, Any]]:
    """The e2e one-pod-per-node pods; no scheduler runs, so they stay pending until bound."""
    return SCENARIOS["one-pod-per-node"].build(count)


async def run_one(consumer: str, pods: int, repeat: int = 0) -> dict[str, Any]:
    """One consumer process under one burst: its CPU per watch event."""
    objects = _pods(pods)
    with SimProcess(["--nodes", "1", "--history", str(max(20_000, 4 * pods))]) as sim:
        port = free_port()
        cmd = [sys.executable, "-m", "bench.watch_cost", "consume", "--mode", consumer]
        cmd += ["--kubeconfig", str(sim.kubeconfig), "--pods", str(pods), "--port", str(port)]
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stdin=subprocess.DEVNULL)  # noqa: ASYNC220
        try:
            async with aiohttp.ClientSession(sim.url) as session:
                probe = _pods(1)[0]
                probe["metadata"]["name"] = PROBE
                await create_timed(session, [probe], concurrency=1)
                await wait_ready(port, proc, time.perf_counter() + 60.0)
                await create_timed(session, objects, concurrency=CREATE_CONCURRENCY)
                await _bind_all(session, objects)
            out, _ = proc.communicate(timeout=300)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    result = json.loads(out.decode().strip().splitlines()[-1])
    return {
        "consumer": consumer,
        "pods": pods,
        "repeat": repeat,
        "events": result["events"],
        "cpu_s": round(result["cpu_s"], 3),
        "cpu_us_per_event": round(result["cpu_s"] * 1e6 / result["events"], 1),
    }


async def run_matrix(pods: int, repeats: int, consumers: list[str]) -> list[dict[str, Any]]:
    records = []
    for repeat in range(repeats):
        for consumer in consumers:  # interleaved, so that drift touches every consumer alike
            record = await run_one(consumer, pods, repeat)
            print(json.dumps(record), flush=True)
            records.append(record)
    return records


def summary(records: list[dict[str, Any]]) -> dict[str, float]:
    """Median CPU µs per event of each consumer."""
    out: dict[str, float] = {}
    for consumer in dict.fromkeys(r["consumer"] for r in records):
        values = [r["cpu_us_per_event"] for r in records if r["consumer"] == consumer]
        out[consumer] = statistics.median(values)
    return out


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args and args[0] == "consume":
        p = argparse.ArgumentParser(prog="python -m bench.watch_cost consume")
        p.add_argument("--mode", choices=CONSUMERS, required=True)
        p.add_argument("--kubeconfig", required=True)
        p.add_argument("--pods", type=int, required=True)
        p.add_argument("--port", type=int, required=True)
        a = p.parse_args(args[1:])
        print(json.dumps(asyncio.run(_consume(a.mode, a.kubeconfig, a.pods, a.port))))
        return 0
    p = argparse.ArgumentParser(prog="python -m bench.watch_cost", description=__doc__)
    p.add_argument("--pods", type=int, default=5000)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--consumers", default=",".join(CONSUMERS))
    p.add_argument("--out", type=Path, default=RESULTS)
    a = p.parse_args(args)
    records = asyncio.run(run_matrix(a.pods, a.repeats, a.consumers.split(",")))
    medians = summary(records)
    for consumer, value in medians.items():
        print(f"{consumer}: {value:.1f} µs CPU per watch event (median of {a.repeats})")
    a.out.mkdir(parents=True, exist_ok=True)
    (a.out / "watch_cost.json").write_text(
        json.dumps({"records": records, "median_cpu_us_per_event": medians}, indent=2) + "\n"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
