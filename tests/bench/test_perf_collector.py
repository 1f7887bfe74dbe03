"""bench.scheduler_perf.collector computes SchedulingThroughput and histogram quantiles as
kube's scheduler_perf (util.go) and component-base's testutil do."""

from __future__ import annotations

import math

import pytest

from bench.measure import parse_metrics
from bench.scheduler_perf.collector import (
    Histogram,
    ThroughputSampler,
    counter_delta,
    histogram_summary,
    summary,
)
from bench.scheduler_perf.podwatch import PodInfo, became_scheduled


def sample(ticks: list[tuple[float, int]]) -> list[float]:
    sampler = ThroughputSampler()
    for now, scheduled in ticks:
        sampler.tick(now, scheduled)
    return sampler.samples


@pytest.mark.parametrize(
    ("ticks", "want"),
    [
        pytest.param([(1, 0), (2, 0)], [], id="nothing-scheduled-no-sample"),
        pytest.param([(1, 50)], [], id="first-sample-only-starts-the-clock"),
        pytest.param([(1, 50), (2, 150), (3, 350)], [100.0, 200.0], id="rate-per-interval"),
        pytest.param(
            [(1, 50), (2, 50), (3, 50), (4, 110)],
            [20.0, 20.0, 20.0],
            id="idle-intervals-repeat-the-next-rate",
        ),
        pytest.param(
            [(1, 10), (2.5, 40)], [20.0], id="rate-over-the-real-elapsed-time-not-the-tick"
        ),
    ],
)
def test_throughput_samples_as_kubes_collector(
    ticks: list[tuple[float, int]], want: list[float]
) -> None:
    """throughputCollector.run: skip the first sample, count idle ticks into the next one."""
    assert sample(ticks) == pytest.approx(want)


def test_summary_percentiles_are_kubes_ceil_index() -> None:
    """Perc_p = sorted[ceil(n*p/100) - 1]; Average the mean (n = 10: p50 is the 5th)."""
    samples = [float(v) for v in (10, 1, 9, 2, 8, 3, 7, 4, 6, 5)]
    assert summary(samples) == {
        "Average": 5.5,
        "Perc50": 5.0,
        "Perc90": 9.0,
        "Perc95": 10.0,
        "Perc99": 10.0,
    }


def test_summary_of_one_sample_and_of_none() -> None:
    """One sample is every percentile; none is no SchedulingThroughput at all."""
    assert summary([42.0]) == dict.fromkeys(
        ("Average", "Perc50", "Perc90", "Perc95", "Perc99"), 42.0
    )
    assert summary([]) is None


def histogram(buckets: dict[float, float], total: float, count: float) -> Histogram:
    return Histogram(buckets, total, count)


@pytest.mark.parametrize(
    ("q", "want"),
    [
        pytest.param(0.1, 0.01 * (1 / 2), id="first-bucket-interpolates-from-zero"),
        pytest.param(0.5, 0.01 + (0.1 - 0.01) * (3 / 4), id="linear-inside-a-bucket"),
        pytest.param(0.99, 0.1, id="inf-bucket-answers-last-finite-bound"),
    ],
)
def test_histogram_quantile_is_component_base_bucket_quantile(q: float, want: float) -> None:
    """bucketQuantile: rank q*count, first bucket from 0, +Inf gives the last bound."""
    # cumulative: <=0.01: 2, <=0.1: 6, +Inf: 10 (10 observations)
    h = histogram({0.01: 2, 0.1: 6, math.inf: 10}, total=1.0, count=10)
    assert h.quantile(q) == pytest.approx(want)


def test_histogram_delta_between_scrapes_in_ms() -> None:
    """What a scheduler recorded between the start and the end of collection, every label
    set summed, quantiles and Average in ms."""
    name = "scheduler_pod_scheduling_sli_duration_seconds"
    before = parse_metrics(
        f'{name}_bucket{{attempts="1",le="0.01"}} 5\n'
        f'{name}_bucket{{attempts="1",le="0.1"}} 5\n'
        f'{name}_bucket{{attempts="1",le="+Inf"}} 5\n'
        f'{name}_sum{{attempts="1"}} 0.02\n'
        f'{name}_count{{attempts="1"}} 5\n'
    )
    after = parse_metrics(
        f'{name}_bucket{{attempts="1",le="0.01"}} 7\n'
        f'{name}_bucket{{attempts="1",le="0.1"}} 9\n'
        f'{name}_bucket{{attempts="1",le="+Inf"}} 9\n'
        f'{name}_bucket{{attempts="2",le="0.01"}} 0\n'
        f'{name}_bucket{{attempts="2",le="0.1"}} 1\n'
        f'{name}_bucket{{attempts="2",le="+Inf"}} 1\n'
        f'{name}_sum{{attempts="1"}} 0.12\n'
        f'{name}_sum{{attempts="2"}} 0.05\n'
        f'{name}_count{{attempts="1"}} 9\n'
        f'{name}_count{{attempts="2"}} 1\n'
    )
    got = histogram_summary(before, after, name)
    assert got is not None
    # delta: <=0.01: 2, <=0.1: 5, +Inf: 5; sum 0.15 over 5 pods
    assert got["Average"] == pytest.approx(30.0)
    assert got["Perc50"] == pytest.approx((0.01 + 0.09 * (0.5 / 3)) * 1000)
    assert histogram_summary(after, after, name) is None


def test_counter_delta_per_label() -> None:
    """Attempts per result between two scrapes; results that did not move are left out."""
    name = "scheduler_schedule_attempts_total"
    before = parse_metrics(f'{name}{{result="scheduled",profile="p"}} 10\n')
    after = parse_metrics(
        f'{name}{{result="scheduled",profile="p"}} 25\n'
        f'{name}{{result="unschedulable",profile="p"}} 3\n'
        f'{name}{{result="error",profile="p"}} 0\n'
    )
    assert counter_delta(before, after, name, "result") == {"scheduled": 15, "unschedulable": 3}


@pytest.mark.parametrize(
    ("old", "new", "want"),
    [
        pytest.param(None, "", False, id="added-pending"),
        pytest.param(None, "node-1", True, id="added-already-bound-counts"),
        pytest.param("", "node-1", True, id="bound-by-an-update"),
        pytest.param("node-1", "node-1", False, id="later-update-of-a-bound-pod"),
    ],
)
def test_scheduled_transition_is_kubes(old: str | None, new: str, want: bool) -> None:
    """A pod counts once: when an add or update first shows spec.nodeName."""

    def pod(node: str) -> PodInfo:
        return PodInfo("ns", "p", {}, node, attempted=False)

    assert became_scheduled(None if old is None else pod(old), pod(new)) is want
