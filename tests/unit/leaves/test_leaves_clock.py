"""Clocks: the fake clock's arithmetic, the real clocks' sources, the Clock protocol."""

from __future__ import annotations

import asyncio
import time

import pytest

from scheduler import clock


@pytest.mark.parametrize(
    ("start", "steps", "expected"),
    [
        pytest.param(0.0, [], 0.0, id="starts-at-zero"),
        pytest.param(5.0, [], 5.0, id="starts-where-told"),
        pytest.param(0.0, [("advance", 1.5), ("advance", 2.0)], 3.5, id="advances-accumulate"),
        pytest.param(1.0, [("advance", 0.0)], 1.0, id="advance-zero-is-a-no-op"),
        pytest.param(0.0, [("set", 10.0), ("advance", 0.25)], 10.25, id="set-then-advance"),
        pytest.param(3.0, [("set", 3.0)], 3.0, id="set-to-now-is-allowed"),
    ],
)
def test_fake_clock_moves_as_told(
    start: float, steps: list[tuple[str, float]], expected: float
) -> None:
    """FakeClock reports its start plus every advance and set applied in order."""
    fake = clock.FakeClock(start)
    for op, value in steps:
        if op == "advance":
            assert fake.advance(value) == fake.now()
        else:
            fake.set(value)
    assert fake.now() == pytest.approx(expected)


@pytest.mark.parametrize(
    ("op", "value"),
    [
        pytest.param("advance", -0.001, id="negative-advance"),
        pytest.param("set", 9.999, id="set-into-the-past"),
    ],
)
def test_fake_clock_refuses_to_go_backwards(op: str, value: float) -> None:
    """Going backwards raises ValueError and leaves the time unchanged."""
    fake = clock.FakeClock(10.0)
    with pytest.raises(ValueError, match="backwards"):
        getattr(fake, op)(value)
    assert fake.now() == 10.0


@pytest.mark.parametrize(
    "instance",
    [
        pytest.param(clock.MonotonicClock(), id="monotonic"),
        pytest.param(clock.LoopClock(), id="loop"),
        pytest.param(clock.FakeClock(), id="fake"),
    ],
)
def test_every_clock_satisfies_the_protocol(instance: object) -> None:
    """Each clock class is a Clock by structure."""
    assert isinstance(instance, clock.Clock)


def test_monotonic_clock_reads_time_monotonic_outside_a_loop() -> None:
    """MonotonicClock works without a loop and reads time.monotonic()."""
    before = time.monotonic()
    now = clock.MonotonicClock().now()
    after = time.monotonic()
    assert before <= now <= after


def test_loop_clock_needs_a_running_loop() -> None:
    """LoopClock outside a running loop fails loudly instead of guessing."""
    with pytest.raises(RuntimeError):
        clock.LoopClock().now()


async def test_loop_clock_reads_the_running_loop() -> None:
    """LoopClock returns the running loop's time."""
    loop = asyncio.get_running_loop()
    before = loop.time()
    now = clock.LoopClock().now()
    assert before <= now <= loop.time()


@pytest.mark.looptime
async def test_loop_clock_fast_forwards_under_looptime() -> None:
    """Under looptime a 100 s sleep moves LoopClock by 100 s in almost no wall time."""
    loop_clock = clock.LoopClock()
    wall_start = time.monotonic()
    start = loop_clock.now()
    await asyncio.sleep(100)
    assert loop_clock.now() - start == pytest.approx(100.0)
    assert time.monotonic() - wall_start < 5.0
