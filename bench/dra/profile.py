"""Where ours' CPU goes in a DRA run: py-spy's raw stacks (``--profile``) by stage.

As :mod:`bench.gang.profile` (the same classifier, :mod:`bench.profile_real`): each sample
goes to the first stage of :data:`STAGES` one of its frames names, and a stage's share of
the samples times ours' CPU seconds from spawn to the last bind gives its seconds. The
stages follow a DRA pod's way: the claim writes (PreBind), the binds, the exact batch and
the allocator, the full pass, the rest of the cycle, the intake.

Neighbours: :mod:`bench.dra.backlog` (runs py-spy), :mod:`bench.dra.cli` (the table).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from bench.profile_real import summarize_stages

if TYPE_CHECKING:
    from pathlib import Path

STAGES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("reporter (events, conditions)", ("kube/reporter.py",)),
    ("claim writes (PreBind: finalizer, allocation, reservedFor)", ("kube/claim_writer.py",)),
    ("binding (Permit, PreBind, bind calls)", ("kube/binder.py", "cycle/binding_cycle.py")),
    ("full pass: Filter", ("framework/feasible.py",)),
    ("full pass: Score", ("framework/scoring.py",)),
    ("exact batch (choose, catch up, recheck)", ("scheduler/batching/",)),
    ("DynamicResources outside the batch (PreFilter, Reserve)", ("plugins/dynamic_resources/",)),
    ("cycle: the rest (PreFilter, assume, Reserve)", ("cycle/schedule_one.py", "cycle/loop.py")),
    ("queue", ("scheduler/queueing/",)),
    (
        "event handlers (parse, cache, queue)",
        (
            "kube/controller/",
            "cycle/eventhandlers.py",
            "cycle/claim_events.py",
            "scheduler/model/",
            "scheduler/cache/",
        ),
    ),
    ("watch (our reflectors)", ("kube/intake/", "kopf/")),
    ("the rest of ours (metrics, logs, start-up)", ("scheduler/",)),
    ("HTTP, JSON and event loop", ("aiohttp/", "asyncio/", "json/", "yarl/", "multidict/")),
)


def summarize(path: Path, cpu_s: float) -> dict[str, Any]:
    """The stages' shares of the samples and their CPU seconds (share x ``cpu_s``)."""
    return summarize_stages(path, cpu_s, STAGES)
