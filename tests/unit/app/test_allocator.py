"""``app.allocator``: glibc's free pages handed back; the periodic task."""

from __future__ import annotations

import asyncio
import itertools
import platform

import pytest

from scheduler.app import allocator

GLIBC = platform.libc_ver()[0] == "glibc"


def _rss_kb() -> int:
    with open("/proc/self/status") as status:
        line = next(line for line in status if line.startswith("VmRSS:"))
    return int(line.split()[1])


@pytest.mark.skipif(not GLIBC, reason="malloc_trim is glibc's")
def test_trim_gives_back_the_pages_freed_below_the_heap_top() -> None:
    """64 MB of 4 kB blocks (malloc's heap, not pymalloc's arenas), every 64th kept: free()
    alone cannot give the rest back (a live block sits above it); the trim does."""
    trim = allocator.malloc_trim()
    assert trim is not None
    blocks = [bytes(4000) + bytes([i % 256]) for i in range(16_000)]
    kept = blocks[::64]
    del blocks
    before = _rss_kb()
    assert trim()
    released_mb = (before - _rss_kb()) / 1024
    assert released_mb > 30, f"{released_mb:.1f} MB given back"
    assert len(kept) == 250


async def test_the_task_trims_every_period_until_cancelled() -> None:
    calls: list[float] = []
    loop = asyncio.get_running_loop()
    task = asyncio.create_task(
        allocator.trim_periodically(0.01, lambda: calls.append(loop.time()) is None)
    )
    await asyncio.sleep(0.1)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert len(calls) >= 3
    assert all(b - a >= 0.009 for a, b in itertools.pairwise(calls))
