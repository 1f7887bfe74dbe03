"""Emulator throughput: binds/s with 4 concurrent clients, watch events/s to one watcher.

The emulator runs in its own process (SimProcess), as in the scheduler benchmarks, so
these figures are the ceiling any scheduler run against it can reach on this machine.
Run: ``python -m bench.sim_bench [--pods N] [--clients C]``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time

import aiohttp

from bench.measure import cpu_seconds
from scheduler.sim import workload
from scheduler.sim.process import SimProcess

PODS = "/api/v1/namespaces/default/pods"
JSON = {"Content-Type": "application/json"}


async def _watch_count(url: str, rv: str, want: int, ready: asyncio.Event) -> tuple[int, float]:
    """Count events after ``rv`` until ``want`` arrived; returns (count, seconds from first)."""
    count = 0
    first = 0.0
    async with (
        aiohttp.ClientSession(url) as session,
        session.get(PODS, params={"watch": "true", "resourceVersion": rv}) as resp,
    ):
        ready.set()
        async for _line in resp.content:
            if count == 0:
                first = time.perf_counter()
            count += 1
            if count >= want:
                break
    return count, time.perf_counter() - first


async def _bind_all(url: str, names: list[str], clients: int) -> float:
    """Bind every pod round-robin over nodes with ``clients`` concurrent sessions."""
    queue = list(reversed(names))

    async def client() -> None:
        async with aiohttp.ClientSession(url) as session:
            while queue:
                name = queue.pop()
                body = json.dumps(
                    {
                        "apiVersion": "v1",
                        "kind": "Binding",
                        "metadata": {"name": name},
                        "target": {"name": f"node-{len(queue) % 100}"},
                    }
                ).encode()
                async with session.post(f"{PODS}/{name}/binding", data=body, headers=JSON) as resp:
                    await resp.read()
                    if resp.status != 201:
                        raise RuntimeError(f"bind {name}: {resp.status}")

    start = time.perf_counter()
    async with asyncio.TaskGroup() as tg:
        for _ in range(clients):
            tg.create_task(client())
    return time.perf_counter() - start


async def run(pods: int, clients: int) -> dict[str, float]:
    """Start the emulator, create pods, then bind them all while one watcher counts events."""
    with SimProcess(["--nodes", "100", "--history", str(pods * 3)]) as sim:
        start = time.perf_counter()
        await workload.create_all(sim.url, workload.make_pods(pods), concurrency=clients)
        create_s = time.perf_counter() - start
        async with aiohttp.ClientSession(sim.url) as session, session.get(PODS) as resp:
            rv = (await resp.json())["metadata"]["resourceVersion"]
        ready = asyncio.Event()
        watch = asyncio.create_task(_watch_count(sim.url, rv, pods, ready))
        await ready.wait()
        assert sim.proc is not None
        cpu_before = cpu_seconds(sim.proc.pid)
        bind_s = await _bind_all(sim.url, [f"pod-{i}" for i in range(pods)], clients)
        events, watch_s = await asyncio.wait_for(watch, 60)
        server_cpu = cpu_seconds(sim.proc.pid) - cpu_before
        # replay: a fresh watcher from the same RV reads the whole history at once
        ready2 = asyncio.Event()
        replayed, replay_s = await _watch_count(sim.url, rv, pods, ready2)
    return {
        "pods": pods,
        "clients": clients,
        "creates_per_s": pods / create_s,
        "binds_per_s": pods / bind_s,
        "server_cpu_us_per_bind": server_cpu / pods * 1e6,
        "live_watch_events_per_s": events / max(watch_s, 1e-9),
        "replay_watch_events_per_s": replayed / max(replay_s, 1e-9),
    }


def main(argv: list[str] | None = None) -> int:
    """Parse flags, run once, print the figures."""
    parser = argparse.ArgumentParser(prog="python -m bench.sim_bench")
    parser.add_argument("--pods", type=int, default=5000)
    parser.add_argument("--clients", type=int, default=4)
    args = parser.parse_args(argv)
    result = asyncio.run(run(args.pods, args.clients))
    for key, value in result.items():
        print(f"{key:28s} {value:10.0f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
