"""Kube's measurements, computed kube's way (``test/integration/scheduler_perf/util.go``).

* **SchedulingThroughput** (``throughputCollector``): the pods of the measured namespaces
  (and label selector) that became scheduled are counted as watch events arrive; once a
  second the count is sampled. The first sample with any pod scheduled only starts the
  clock (it "is likely to be an outlier"); a second with no new pod adds no sample but is
  remembered, and the next sample's rate (new pods / seconds since the last sample) is
  recorded once per interval it covers. Average, and Perc50/90/95/99 as
  ``sorted[ceil(n * p / 100) - 1]``.
* **Histograms from /metrics** (``metricsCollector``): kube resets its registry when
  collection starts; a scheduler in another process cannot be reset, so the buckets,
  sum and count scraped at the start are subtracted from those at the end. Quantiles are
  component-base's ``bucketQuantile`` (linear inside a bucket, the first bucket from 0,
  the +Inf bucket answers the last finite bound), Average is sum / count, both in ms.

Neighbours: :mod:`bench.scheduler_perf.podwatch` feeds the throughput sampler;
:mod:`bench.scheduler_perf.executor` starts and stops collection.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from bench.scheduler_perf.podwatch import became_scheduled

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence

    from bench.measure import Metrics
    from bench.scheduler_perf.podwatch import PodInfo, PodWatch

SAMPLE_INTERVAL = 1.0
"""kube's ``throughputSampleInterval``."""
SLI_METRIC = "scheduler_pod_scheduling_sli_duration_seconds"
PERCENTILES = (50, 90, 95, 99)


def summary(samples: Sequence[float]) -> dict[str, float] | None:
    """kube's ``throughputCollector.collect``: None when no sample was taken (kube then
    reports no SchedulingThroughput and warns to make the run longer)."""
    if not samples:
        return None
    ordered = sorted(samples)
    n = len(ordered)
    out = {"Average": sum(ordered) / n}
    for p in PERCENTILES:
        out[f"Perc{p}"] = ordered[math.ceil(n * p / 100) - 1]
    return out


@dataclass
class ThroughputSampler:
    """The sampling of kube's ``throughputCollector.run``, one tick at a time."""

    samples: list[float] = field(default_factory=list)
    started: bool = False
    last_count: int = 0
    last_time: float = 0.0
    skipped: int = 0
    start_time: float | None = None

    def tick(self, now: float, scheduled: int) -> None:
        """A sample at ``now`` with ``scheduled`` pods counted so far."""
        if scheduled == 0:
            return
        if not self.started:
            self.started = True
            self.last_count, self.last_time, self.start_time = scheduled, now, now
            return
        new = scheduled - self.last_count
        if new == 0:
            self.skipped += 1
            return
        rate = new / (now - self.last_time)
        self.samples.extend([rate] * (self.skipped + 1))
        self.last_count, self.last_time, self.skipped = scheduled, now, 0


class ThroughputCollector:
    """Counts pods becoming scheduled in ``namespaces`` matching ``selector`` and samples
    the count every second until :meth:`stop`."""

    def __init__(
        self,
        watch: PodWatch,
        namespaces: Sequence[str],
        selector: Mapping[str, str],
        *,
        clock: Callable[[], float],
    ) -> None:
        self.watch = watch
        self.namespaces = set(namespaces)
        self.selector = dict(selector)
        self.clock = clock
        self.scheduled = 0
        self.sampler = ThroughputSampler()
        self._remove: Callable[[], None] | None = None
        self._task: asyncio.Task[None] | None = None
        self.started_at = 0.0
        self.stopped_at = 0.0

    def _on_pod(self, old: PodInfo | None, new: PodInfo) -> None:
        if (
            new.namespace in self.namespaces
            and new.matches(self.selector)
            and became_scheduled(old, new)
        ):
            self.scheduled += 1

    def start(self) -> None:
        self._remove = self.watch.add_handler(self._on_pod)
        self.started_at = self.clock()
        self._task = asyncio.create_task(self._ticks(), name="throughput collector")

    async def _ticks(self) -> None:
        # A ticker: ticks at start + k seconds; a late wake-up drops the ticks it missed,
        # as Go's time.Ticker does.
        next_tick = self.started_at + SAMPLE_INTERVAL
        while True:
            await asyncio.sleep(max(0.0, next_tick - self.clock()))
            now = self.clock()
            self.sampler.tick(now, self.scheduled)
            next_tick += SAMPLE_INTERVAL * max(1, math.ceil((now - next_tick) / SAMPLE_INTERVAL))

    async def stop(self) -> dict[str, float] | None:
        self.stopped_at = self.clock()
        if self._remove is not None:
            self._remove()
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        return summary(self.sampler.samples)


# -- histograms from /metrics ---------------------------------------------------------------


@dataclass(frozen=True)
class Histogram:
    """A histogram summed over every label set: cumulative counts by upper bound."""

    buckets: Mapping[float, float]
    total: float
    count: float

    @classmethod
    def of(cls, metrics: Metrics, name: str) -> Histogram:
        buckets: dict[float, float] = {}
        for labels, value in metrics.get(f"{name}_bucket", []):
            le = float(labels["le"])
            buckets[le] = buckets.get(le, 0.0) + value
        total = sum(v for _, v in metrics.get(f"{name}_sum", []))
        count = sum(v for _, v in metrics.get(f"{name}_count", []))
        return cls(buckets, total, count)

    def minus(self, before: Histogram) -> Histogram:
        return Histogram(
            {le: c - before.buckets.get(le, 0.0) for le, c in self.buckets.items()},
            self.total - before.total,
            self.count - before.count,
        )

    def quantile(self, q: float) -> float:
        """component-base's ``bucketQuantile`` over these buckets."""
        bounds = sorted(self.buckets)
        pairs = [(le, self.buckets[le]) for le in bounds]
        if not pairs or not math.isinf(pairs[-1][0]):
            pairs.append((math.inf, self.count))
        if len(pairs) < 2:
            return math.nan
        rank = q * pairs[-1][1]
        b = next((i for i in range(len(pairs) - 1) if pairs[i][1] >= rank), len(pairs) - 1)
        if b == 0:
            return pairs[0][0] * (rank / pairs[0][1])
        if b == len(pairs) - 1 and math.isinf(pairs[b][0]):
            return pairs[-2][0]
        lower, below = pairs[b - 1]
        upper, count = pairs[b]
        return lower + (upper - lower) * ((rank - below) / (count - below))

    def summary_ms(self) -> dict[str, float] | None:
        """kube's ``collectHistogramVec`` data: Perc50/90/95/99 and Average in ms; None
        for an empty histogram (kube stores nothing then)."""
        if self.count <= 0 or self.total <= 0:
            return None
        out = {f"Perc{p}": self.quantile(p / 100) * 1000 for p in PERCENTILES}
        out["Average"] = self.total / self.count * 1000
        return out


def histogram_summary(before: Metrics, after: Metrics, name: str) -> dict[str, float] | None:
    """The summary of what histogram ``name`` recorded between two scrapes."""
    return Histogram.of(after, name).minus(Histogram.of(before, name)).summary_ms()


def counter_delta(before: Metrics, after: Metrics, name: str, label: str) -> dict[str, int]:
    """What counter ``name`` counted between two scrapes, per value of ``label``."""
    totals: dict[str, float] = {}
    for sign, metrics in ((-1.0, before), (1.0, after)):
        for labels, value in metrics.get(name, []):
            key = labels.get(label, "")
            totals[key] = totals.get(key, 0.0) + sign * value
    return {k: round(v) for k, v in sorted(totals.items()) if round(v)}
