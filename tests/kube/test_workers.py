"""WorkerPool on virtual time (looptime): live-worker count, bound, lanes, errors, lifecycle."""

from __future__ import annotations

import asyncio

import pytest
import structlog

from scheduler.kube.workers import WorkerPool

pytestmark = pytest.mark.looptime


class Work:
    """``work`` taking ``latency`` virtual seconds per item; records when each one ended."""

    def __init__(self, latency: float = 1.0) -> None:
        self.latency = latency
        self.ended: list[tuple[str, float]] = []
        self.cancelled: list[str] = []
        self.busy = self.peak = 0
        self.changed = asyncio.Event()

    async def __call__(self, item: str) -> None:
        self.busy += 1
        self.peak = max(self.peak, self.busy)
        try:
            await asyncio.sleep(self.latency)
        except asyncio.CancelledError:
            self.cancelled.append(item)
            raise
        finally:
            self.busy -= 1
        self.ended.append((item, asyncio.get_running_loop().time()))
        self.changed.set()

    async def wait(self, n: int) -> None:
        while len(self.ended) < n:
            self.changed.clear()
            await self.changed.wait()


async def test_item_submitted_as_every_worker_ends_gets_a_worker() -> None:
    """Woken by the last item of a burst, before the finished workers' tasks are reaped, a
    submit starts a worker: the item ends one latency later, not never."""
    work = Work()
    pool = WorkerPool("test", work, limit=2)
    for item in ("a", "b", "c", "d"):
        pool.submit(item)
    await work.wait(4)
    assert pool.live == 0  # both workers saw the queue empty in the step that ended "d"
    pool.submit("late")
    assert pool.live == 1
    await work.wait(5)
    assert work.ended[-1][0] == "late"
    assert work.ended[-1][1] == pytest.approx(3.0)


async def test_at_most_limit_items_at_once() -> None:
    """Ten items with a limit of three: three at a time, in four rounds of virtual time."""
    work = Work()
    pool = WorkerPool("test", work, limit=3)
    for i in range(10):
        pool.submit(str(i))
    assert pool.live == 3
    assert await pool.drain(None)
    assert work.peak == 3
    assert asyncio.get_running_loop().time() == pytest.approx(4.0)
    assert [item for item, _ in work.ended] == [str(i) for i in range(10)]


async def test_unbounded_pool_runs_every_item_at_once() -> None:
    """``limit=None``: one worker per queued item."""
    work = Work()
    pool = WorkerPool("test", work, limit=None)
    for i in range(5):
        pool.submit(str(i))
    assert await pool.drain(None)
    assert work.peak == 5
    assert asyncio.get_running_loop().time() == pytest.approx(1.0)


async def test_lanes_first_and_capacity() -> None:
    """The first non-empty lane is served first, ``first`` goes to its lane's front, and
    beyond ``capacity`` the oldest item of the last non-empty lane is evicted."""
    work = Work()
    evicted: list[str] = []
    pool = WorkerPool(
        "test", work, limit=1, lanes=2, capacity=3, evicted=evicted.append, started=False
    )
    pool.submit("low-1", lane=1)
    pool.submit("low-2", lane=1)
    pool.submit("high-1")
    pool.submit("high-0", first=True)  # full: "low-1" goes
    assert evicted == ["low-1"]
    assert pool.pending == 3
    assert pool.live == 0  # not started: only queued
    pool.start()
    assert await pool.drain(None)
    assert [item for item, _ in work.ended] == ["high-0", "high-1", "low-2"]


async def test_exception_is_logged_and_the_next_item_runs() -> None:
    """A raising ``work`` is logged with the pool's name and the item's fields; the worker
    goes on with the next item."""
    done: list[str] = []

    async def work(item: str) -> None:
        await asyncio.sleep(0.1)
        if item == "bad":
            raise RuntimeError("owner bug")
        done.append(item)

    pool = WorkerPool("test", work, limit=1, describe=lambda item: {"item": item})
    with structlog.testing.capture_logs() as logs:
        pool.submit("bad")
        pool.submit("good")
        assert await pool.drain(None)
    assert done == ["good"]
    assert pool.crashed == 1
    crashes = [entry for entry in logs if entry["event"] == "worker_crashed"]
    assert len(crashes) == 1
    assert crashes[0]["pool"] == "test"
    assert crashes[0]["item"] == "bad"


async def test_submit_later_keeps_the_pool_busy_until_done() -> None:
    """A delayed submit counts as work: ``drain`` waits for it and for its item."""
    work = Work()
    pool = WorkerPool("test", work, limit=1)
    pool.submit_later(5.0, "retry")
    assert pool.waiting == 1
    assert not await pool.drain(2.0)
    assert await pool.drain(None)
    assert [item for item, _ in work.ended] == ["retry"]
    assert work.ended[0][1] == pytest.approx(6.0)
    assert pool.waiting == 0


async def test_stop_cancels_work_and_returns_what_never_started() -> None:
    """``stop`` cancels the items being worked on, returns the queued and delayed ones, and
    refuses new items."""
    work = Work(latency=10.0)
    pool = WorkerPool("test", work, limit=1)
    pool.submit("running")
    pool.submit("queued")
    pool.submit_later(1.0, "delayed")
    await asyncio.sleep(0.5)
    left = await pool.stop()
    assert sorted(left) == ["delayed", "queued"]
    assert work.cancelled == ["running"]
    assert work.ended == []
    assert pool.live == 0
    assert not pool.submit("after")
    assert not pool.submit_later(1.0, "after")
    assert await pool.drain(0.0)


async def test_stop_right_after_submit_returns_the_item_and_counts_no_worker() -> None:
    """A worker cancelled before it ever ran leaves no live count behind."""
    work = Work()
    pool = WorkerPool("test", work, limit=2)
    pool.submit("a")
    assert pool.live == 1
    assert await pool.stop() == ["a"]
    assert pool.live == 0
    assert work.cancelled == []


def test_limit_below_one_is_refused() -> None:
    """A limit of 0 would never run anything: refused, naming the pool."""

    async def work(item: str) -> None:
        return None

    with pytest.raises(ValueError, match="binds: worker limit must be >= 1, got 0"):
        WorkerPool("binds", work, limit=0)
