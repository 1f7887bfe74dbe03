"""Fault injection: seeded errors, 429 Retry-After, rogue binder, kubelet, stats, CLI flags."""

from __future__ import annotations

import argparse
import asyncio
from typing import TYPE_CHECKING

import aiohttp
import pytest

from scheduler.sim import cli, workload
from scheduler.sim.faults import FaultConfig
from scheduler.sim.server import SimServer

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

PODS = "/api/v1/namespaces/default/pods"


@pytest.fixture
async def rogue_sim() -> AsyncIterator[SimServer]:
    """An emulator whose rogue binder takes half of the batch-scheduler's pods."""
    faults = FaultConfig(
        rogue_bind_fraction=0.5, rogue_scheduler_name="batch-scheduler", rogue_delay=30.0, seed=7
    )
    server = SimServer(nodes=3, faults=faults)
    await server.start()
    yield server
    await server.stop()


async def _statuses(url: str, verb_path: str, count: int) -> list[int]:
    async with aiohttp.ClientSession(url) as session:
        codes = []
        for _ in range(count):
            async with session.get(verb_path) as resp:
                codes.append(resp.status)
        return codes


async def test_seeded_error_rates_are_reproducible() -> None:
    """The same seed injects the same errors; counters report them by verb and code."""
    runs = []
    for _ in range(2):
        server = SimServer(faults=FaultConfig(fail_rates={"list": 0.3}, seed=3))
        url = await server.start()
        try:
            runs.append(await _statuses(url, PODS, 80))
            stats = server.faults.stats()
        finally:
            await server.stop()
    assert runs[0] == runs[1]
    assert set(runs[0]) <= {200, 500, 503, 429}
    assert len(set(runs[0])) >= 3
    assert stats["errors"] == sum(1 for c in runs[0] if c != 200)


async def test_429_carries_retry_after() -> None:
    """An injected 429 is a TooManyRequests Status with a Retry-After header."""
    server = SimServer(faults=FaultConfig(fail_rates={"get": 1.0}, fail_codes=(429,)))
    url = await server.start()
    try:
        async with (
            aiohttp.ClientSession(url) as session,
            session.get("/api/v1/nodes/node-0") as resp,
        ):
            body = await resp.json()
            assert resp.status == 429
            assert resp.headers["Retry-After"] == "1"
            assert body["reason"] == "TooManyRequests"
        async with aiohttp.ClientSession(url) as session, session.get("/sim/stats") as resp:
            assert (await resp.json())["error.get.429"] == 1
    finally:
        await server.stop()


async def test_rogue_binder_makes_binds_conflict(rogue_sim: SimServer) -> None:
    """Pods the rogue picked are bound first: our bind gets 409, the others succeed."""
    url = rogue_sim.url
    await workload.create_all(url, workload.make_pods(20, scheduler_name="batch-scheduler"))
    codes = []
    async with aiohttp.ClientSession(url) as session:
        for i in range(20):
            body = {"metadata": {"name": f"pod-{i}"}, "target": {"name": "node-0"}}
            async with session.post(f"{PODS}/pod-{i}/binding", json=body) as resp:
                codes.append(resp.status)
        async with session.get("/sim/stats") as resp:
            stats = await resp.json()
    assert 0 < codes.count(409) < 20
    assert codes.count(409) + codes.count(201) == 20
    assert stats["rogue_binds"] == codes.count(409)


async def test_kubelet_marks_bound_pods_running() -> None:
    """With the kubelet on, a bound pod reaches phase Running shortly after."""
    server = SimServer(nodes=1, kubelet=True, kubelet_delay=0.05)
    url = await server.start()
    try:
        await workload.create_all(url, workload.make_pods(1))
        async with aiohttp.ClientSession(url) as session:
            bind = {"metadata": {"name": "pod-0"}, "target": {"name": "node-0"}}
            await session.post(f"{PODS}/pod-0/binding", json=bind)
            await asyncio.sleep(0.3)
            async with session.get(f"{PODS}/pod-0") as resp:
                pod = await resp.json()
    finally:
        await server.stop()
    assert pod["status"]["phase"] == "Running"
    assert {c["type"] for c in pod["status"]["conditions"]} >= {"PodScheduled", "Ready"}


async def test_periodic_drop_and_compaction_are_counted() -> None:
    """drop_watches_every and compact_every, switched on at runtime, run and are counted."""
    server = SimServer()
    url = await server.start()
    server.faults.config = FaultConfig(drop_watches_every=0.1, compact_every=0.1, compact_gap=0.02)
    try:
        async with aiohttp.ClientSession(url) as session:
            async with session.get(PODS, params={"watch": "1", "resourceVersion": "0"}) as resp:
                assert await resp.read() == b""  # ended by the drop
            await asyncio.sleep(0.15)
    finally:
        await server.stop()
    assert server.faults.counters["watch_drops"] >= 1
    assert server.faults.counters["compactions"] >= 1


def test_cli_flags_build_faults() -> None:
    """serve's fault flags reach FaultConfig; a bad --fail-rate is refused as it is parsed."""
    parser = argparse.ArgumentParser()
    cli.add_arguments(parser)
    args = parser.parse_args(
        [
            "--fail-rate",
            "bind=0.2",
            "--fail-rate",
            "*=0.01",
            "--latency",
            "0.01",
            "--rogue-bind-fraction",
            "0.1",
            "--seed",
            "5",
        ]
    )
    server = cli.build_server(args)
    cfg = server.faults.config
    assert cfg.fail_rates == {"bind": 0.2, "*": 0.01}
    assert (cfg.latency, cfg.rogue_bind_fraction, cfg.seed) == (0.01, 0.1, 5)
    with pytest.raises(SystemExit):
        parser.parse_args(["--fail-rate", "bogus=1"])
