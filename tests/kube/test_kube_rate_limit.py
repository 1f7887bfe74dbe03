"""clientConnection.qps/burst: the client-side token bucket, alone and in ApiClient."""

from __future__ import annotations

import time

import pytest

from scheduler.kube.client import ApiClient
from scheduler.kube.rate_limit import TokenBucket


class _Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_burst_goes_at_once_then_qps_spaces_the_rest() -> None:
    clock = _Clock()
    bucket = TokenBucket(qps=2.0, burst=3, clock=clock)
    # Three at once, then each reservation waits half a second more than the one before.
    assert [bucket.reserve() for _ in range(5)] == [0.0, 0.0, 0.0, 0.5, 1.0]


def test_quiet_time_refills_up_to_burst_only() -> None:
    clock = _Clock()
    bucket = TokenBucket(qps=10.0, burst=2, clock=clock)
    assert [bucket.reserve() for _ in range(2)] == [0.0, 0.0]
    clock.now += 60.0  # far longer than burst/qps: the bucket holds 2, not 600
    assert [bucket.reserve() for _ in range(3)] == [0.0, 0.0, pytest.approx(0.1)]


def test_waits_already_reserved_are_paid_back_by_time() -> None:
    clock = _Clock()
    bucket = TokenBucket(qps=4.0, burst=1, clock=clock)
    assert bucket.reserve() == 0.0
    assert bucket.reserve() == pytest.approx(0.25)
    clock.now += 0.25  # the second caller's slot has come: the third waits one interval
    assert bucket.reserve() == pytest.approx(0.25)


@pytest.mark.parametrize(("qps", "burst"), [(0.0, 1), (-1.0, 1), (1.0, 0)])
def test_unusable_bucket_is_refused(qps: float, burst: int) -> None:
    with pytest.raises(ValueError, match=r"qps|burst"):
        TokenBucket(qps=qps, burst=burst)


async def test_client_requests_wait_for_tokens(api: ApiClient) -> None:
    """Six GETs at 20 qps with a burst of 2: the last four wait 50 ms each in turn."""
    api.rate_limit = TokenBucket(qps=20.0, burst=2)
    started = time.monotonic()
    for _ in range(6):
        await api.request("GET", "/api/v1/nodes")
    assert time.monotonic() - started >= 4 / 20.0
