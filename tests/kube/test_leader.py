"""Leader election with two electors against one emulator: one leader, handovers, safety."""

from __future__ import annotations

import asyncio
import contextlib
import re
import time
from typing import TYPE_CHECKING, Any

import pytest

from scheduler.framework.config import LeaderElectionConfig
from scheduler.kube import errors
from scheduler.kube.client import ApiClient, create_client
from scheduler.kube.leader import LeaderElector

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Callable
    from pathlib import Path

CONFIG = LeaderElectionConfig(
    leader_elect=True,
    lease_duration=2.0,
    renew_deadline=1.0,
    retry_period=0.2,
    resource_name="batch-scheduler",
    resource_namespace="kube-system",
)
LEASE = "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/batch-scheduler"
MICRO = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$")


@pytest.fixture
async def clients(kubeconfig: Path) -> AsyncIterator[list[ApiClient]]:
    """Two independent clients (one per replica)."""
    made = [await create_client(str(kubeconfig), timeout=1.0) for _ in range(2)]
    yield made
    for c in made:
        await c.close()


class Watch:
    """Samples both electors every 5 ms; records overlaps and who led when."""

    def __init__(self, electors: list[LeaderElector]) -> None:
        self.electors = electors
        self.overlaps = 0
        self.samples = 0
        self._task = asyncio.create_task(self._run())

    async def _run(self) -> None:
        while True:
            if sum(e.is_open() for e in self.electors) > 1:
                self.overlaps += 1
            self.samples += 1
            await asyncio.sleep(0.005)

    async def until(self, cond: Callable[[], bool], limit: float) -> float:
        """Seconds until ``cond()`` holds (fails the test after ``limit``)."""
        start = time.monotonic()
        async with asyncio.timeout(limit):
            while not cond():  # noqa: ASYNC110 - polling a predicate is the point
                await asyncio.sleep(0.01)
        return time.monotonic() - start

    async def stop(self) -> None:
        self._task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._task


async def _stop(task: asyncio.Task[None]) -> None:
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task


def _leader(electors: list[LeaderElector]) -> LeaderElector | None:
    leading = [e for e in electors if e.is_open()]
    return leading[0] if len(leading) == 1 else None


async def test_exactly_one_leads(clients: list[ApiClient]) -> None:
    """Two electors: one leads, the Lease names it, and the other stays follower."""
    changes: list[bool] = []
    a = LeaderElector(clients[0], CONFIG, identity="a", leading_changed=changes.append)
    b = LeaderElector(clients[1], CONFIG, identity="b", leading_changed=changes.append)
    watch = Watch([a, b])
    tasks = [asyncio.create_task(a.run()), asyncio.create_task(b.run())]
    try:
        await watch.until(lambda: _leader([a, b]) is not None, 3.0)
        await asyncio.sleep(1.5)  # several renewals
        leader = _leader([a, b])
        assert leader is not None
        lease = await clients[0].request("GET", LEASE)
        spec: dict[str, Any] = lease["spec"]
        assert spec["holderIdentity"] == leader.identity
        assert spec["leaseDurationSeconds"] == 2
        assert spec["leaseTransitions"] == 0
        assert MICRO.match(spec["renewTime"])
        assert MICRO.match(spec["acquireTime"])
        assert spec["renewTime"] > spec["acquireTime"]  # renewed since acquiring
        assert changes == [True]
    finally:
        for t in tasks:
            await _stop(t)
        await watch.stop()
    assert watch.overlaps == 0
    assert watch.samples > 100


async def test_release_on_cancel_hands_over_fast(clients: list[ApiClient]) -> None:
    """Cancelling the leader releases the Lease; the follower leads well within the lease."""
    a = LeaderElector(clients[0], CONFIG, identity="a")
    b = LeaderElector(clients[1], CONFIG, identity="b")
    watch = Watch([a, b])
    tasks = {e.identity: asyncio.create_task(e.run()) for e in (a, b)}
    try:
        await watch.until(lambda: _leader([a, b]) is not None, 3.0)
        first = _leader([a, b])
        assert first is not None
        other = b if first is a else a
        await _stop(tasks[first.identity])
        assert first.lost.is_set()
        took = await watch.until(other.is_open, CONFIG.lease_duration)
        assert took < CONFIG.lease_duration
        lease = await clients[0].request("GET", LEASE)
        assert lease["spec"]["holderIdentity"] == other.identity
        assert lease["spec"]["leaseTransitions"] == 1
    finally:
        for t in tasks.values():
            await _stop(t)
        await watch.stop()
    assert watch.overlaps == 0


async def test_partitioned_leader_steps_down_before_takeover(
    clients: list[ApiClient], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A leader that cannot renew stops at renew_deadline; the other leads after expiry."""
    a = LeaderElector(clients[0], CONFIG, identity="a")
    b = LeaderElector(clients[1], CONFIG, identity="b")
    watch = Watch([a, b])
    tasks = [asyncio.create_task(e.run()) for e in (a, b)]
    try:
        await watch.until(lambda: _leader([a, b]) is not None, 3.0)
        first = _leader([a, b])
        assert first is not None
        other = b if first is a else a

        async def partitioned(*args: Any, **kw: Any) -> dict[str, Any]:
            raise errors.TransportError("partitioned", method=str(args[0]), path=str(args[1]))

        monkeypatch.setattr(first._api, "request", partitioned)
        stepped_down = await watch.until(lambda: not first.is_open(), 2.0)
        assert stepped_down <= CONFIG.renew_deadline + 0.1
        assert first.lost.is_set()
        took_over = await watch.until(other.is_open, CONFIG.lease_duration + 1.5)
        # The follower waits out the lease from when it last saw a renewal.
        assert took_over > 0.3
        assert stepped_down + took_over < CONFIG.lease_duration + 1.0
    finally:
        for t in tasks:
            await _stop(t)
        await watch.stop()
    assert watch.overlaps == 0


async def test_stale_lease_waits_observed_duration(clients: list[ApiClient]) -> None:
    """A lease held by a dead replica is taken only after its duration on OUR clock."""
    await clients[0].request(
        "POST",
        "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases",
        body={
            "apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease",
            "metadata": {"name": "batch-scheduler", "namespace": "kube-system"},
            "spec": {
                "holderIdentity": "ghost",
                "leaseDurationSeconds": 1,
                # Ancient by wall clock: client-go's rule ignores it, so must we.
                "renewTime": "2001-01-01T00:00:00.000000Z",
                "acquireTime": "2001-01-01T00:00:00.000000Z",
                "leaseTransitions": 4,
            },
        },
    )
    a = LeaderElector(clients[1], CONFIG, identity="a")
    start = time.monotonic()
    task = asyncio.create_task(a.run())
    try:
        await a.wait_open()
        waited = time.monotonic() - start
    finally:
        await _stop(task)
    assert waited >= 1.0
    assert waited < 1.0 + 3 * CONFIG.retry_period * 2.2
    lease = await clients[0].request("GET", LEASE)
    assert lease["spec"]["leaseTransitions"] == 5
    assert lease["spec"]["holderIdentity"] == ""  # released on cancel


def test_config_must_be_ordered(clients: list[ApiClient]) -> None:
    """lease_duration > renew_deadline > retry_period is required (else two leaders)."""
    bad = LeaderElectionConfig(lease_duration=1.0, renew_deadline=2.0, retry_period=0.5)
    with pytest.raises(ValueError, match="lease_duration > renew_deadline"):
        LeaderElector(clients[0], bad)
