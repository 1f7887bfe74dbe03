"""Where ours' CPU goes in a gang run: py-spy's raw stacks (``--profile``) by stage.

py-spy samples ours at 100 Hz from its spawn to the last bind (:mod:`bench.gang.backlog`).
Each sample goes to the first stage of :data:`STAGES` one of its frames names (the
classifier of :mod:`bench.profile_real`, the event loop's own frames skipped to the task it
steps), and a stage's share of the samples times ours' CPU seconds from spawn to the last
bind gives its seconds. The stages follow a gang's way: its full passes and batch, the
rest of its cycle (reserve, assume, release, PlacementFeasible), the failures' reports,
the binds, the intake.

Neighbours: :mod:`bench.profile_real` (the same classifier for the plain scenarios).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from bench.profile_real import summarize_stages

if TYPE_CHECKING:
    from pathlib import Path

STAGES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("reporter (events, conditions), failures", ("kube/reporter.py", "cycle/failure.py")),
    ("binding (Permit, bind calls)", ("kube/binder.py", "cycle/binding_cycle.py")),
    ("full pass: Filter", ("framework/feasible.py",)),
    ("full pass: Score", ("framework/scoring.py",)),
    ("batch: hint, recheck, rescore", ("scheduler/batching/",)),
    (
        "group cycle: the rest (reserve, assume, release)",
        ("cycle/schedule_group.py", "cycle/schedule_one.py", "cycle/loop.py"),
    ),
    ("queue", ("scheduler/queueing/",)),
    (
        "event handlers (parse, cache, queue)",
        ("kube/controller/", "cycle/eventhandlers.py", "scheduler/model/", "scheduler/cache/"),
    ),
    ("watch (our reflectors)", ("kube/intake/", "kopf/")),
    ("the rest of ours (metrics, logs, start-up)", ("scheduler/",)),
    ("HTTP, JSON and event loop", ("aiohttp/", "asyncio/", "json/", "yarl/", "multidict/")),
)


def summarize(path: Path, cpu_s: float) -> dict[str, Any]:
    """The stages' shares of the samples and their CPU seconds (share x ``cpu_s``)."""
    return summarize_stages(path, cpu_s, STAGES)
