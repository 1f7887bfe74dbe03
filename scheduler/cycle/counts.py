"""What the scheduling cycles did so far, read from the metrics.

The metrics are the only count: simulate's summary, the demo's report, the run's stop
summary and bench read this view of them instead of keeping counters of their own.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from scheduler.metrics.labels import DecisionPath, Result

if TYPE_CHECKING:
    from scheduler.metrics.registry import Metrics


@dataclass(frozen=True, slots=True)
class CycleCounts:
    cycles: int
    scheduled: int
    unschedulable: int
    errors: int
    batched: int
    """Cycles placed without a full pass: the batch's hint (``hint`` and ``rescore``
    paths) and the exact batch (``exact``)."""
    exact: int
    """Of those, the cycles the exact batch placed (spread and pod affinity pods)."""
    full_passes: int
    decision_seconds: float
    batched_seconds: float
    """Decision time of the batched cycles (recheck included)."""
    verified: int
    divergences: int

    @classmethod
    def read(cls, metrics: Metrics) -> CycleCounts:
        attempts = metrics.by_label(metrics.schedule_attempts, "result")
        paths = metrics.by_label(metrics.decision_duration, "path")
        seconds = metrics.by_label(metrics.decision_duration, "path", field="sum")
        hinted = (DecisionPath.HINT, DecisionPath.RESCORE, DecisionPath.EXACT)
        return cls(
            cycles=int(sum(attempts.values())),
            scheduled=int(attempts.get(Result.SCHEDULED, 0)),
            unschedulable=int(attempts.get(Result.UNSCHEDULABLE, 0)),
            errors=int(attempts.get(Result.ERROR, 0)),
            batched=int(sum(paths.get(path, 0) for path in hinted)),
            exact=int(paths.get(DecisionPath.EXACT, 0)),
            full_passes=int(paths.get(DecisionPath.FULL, 0)),
            decision_seconds=sum(seconds.values()),
            batched_seconds=sum(seconds.get(path, 0.0) for path in hinted),
            verified=int(metrics.total(metrics.batch_verified)),
            divergences=int(metrics.total(metrics.batch_divergence)),
        )
