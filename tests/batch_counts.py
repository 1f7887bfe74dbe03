"""Batch counts for tests, read from the scheduler's metrics (the only count)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from scheduler.cycle.schedule_one import Scheduler

PROFILE = "batch-scheduler"


def flushes(scheduler: Scheduler, profile: str = PROFILE) -> dict[str, int]:
    """Batch-state flushes of ``profile`` by reason (scheduler_batch_cache_flushed_total)."""
    m = scheduler.metrics
    counted = m.by_label(m.batch_cache_flushed, "reason", profile=profile)
    return {reason: int(n) for reason, n in counted.items() if n}


def attempts(scheduler: Scheduler, profile: str = PROFILE) -> dict[str, int]:
    """GetNodeHint results of ``profile`` (scheduler_batch_attempts_total)."""
    m = scheduler.metrics
    counted = m.by_label(m.batch_attempts, "result", profile=profile)
    return {result: int(n) for result, n in counted.items() if n}


def rescores(scheduler: Scheduler, profile: str = PROFILE) -> int:
    """Rescore attempts of ``profile`` (scheduler_batch_rescore_attempts_total)."""
    m = scheduler.metrics
    return int(m.total(m.batch_rescore_attempts, profile=profile))
