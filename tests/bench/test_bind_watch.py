"""bench.burst.BindWatch: the harness's count of bound pods survives a closed watch and
counts each pod once."""

from __future__ import annotations

import asyncio
import time

import aiohttp

from bench.burst import BindWatch
from scheduler.sim import workload
from scheduler.sim.faults import FaultConfig
from scheduler.sim.server import SimServer, run_in_thread

PODS = "/api/v1/namespaces/default/pods"


async def test_every_bind_is_seen_across_dropped_watches_and_counted_once() -> None:
    server = SimServer(nodes=2, faults=FaultConfig(drop_watches_every=0.1))
    with run_in_thread(server) as url:
        async with aiohttp.ClientSession(url) as api:
            pods = workload.make_pods(12, prefix="w-", cpu="10m", memory="10Mi")
            for pod in pods:
                async with api.post(PODS, json=pod) as r:
                    assert r.status == 201
            async with api.get(PODS) as r:
                rv = (await r.json())["metadata"]["resourceVersion"]
            watch = BindWatch(url, len(pods))
            await watch.start(rv)
            try:
                for index, pod in enumerate(pods):
                    name = pod["metadata"]["name"]
                    binding = {
                        "target": {"kind": "Node", "name": "node-0"},
                        "metadata": {"name": name},
                    }
                    async with api.post(f"{PODS}/{name}/binding", json=binding) as r:
                        assert r.status == 201
                    if index == 0:  # later events of a bound pod carry its node too
                        for value in "abcdefghijklmnop":
                            patch = {"metadata": {"labels": {"touched": value}}}
                            headers = {"Content-Type": "application/merge-patch+json"}
                            async with api.patch(
                                f"{PODS}/{name}", json=patch, headers=headers
                            ) as r:
                                assert r.status == 200
                        await asyncio.sleep(0.3)
                        assert not watch.done.is_set()
                    await asyncio.sleep(0.05)  # several watch drops over the binds
                await watch.wait(time.perf_counter() + 10, 5)
            finally:
                await watch.stop()
    assert watch.done.is_set()
    assert sorted(watch.bind_times()) == sorted(p["metadata"]["name"] for p in pods)
    assert server.faults.counters["watch_drops"] > 0  # the watch was resumed
