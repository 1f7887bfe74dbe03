"""How much work rejecting the infeasible gang takes, counted in-process (no API server).

The real-API run (:mod:`bench.gang.backlog`) times each attempt but cannot tell a full
pass from a hint. Here the same objects (:mod:`bench.gang.shapes`) go through ours'
scheduler in-process (``build_scheduler``, an in-memory binder, GenericWorkload,
``--batching all``'s mode, kube's default sampling): the infeasible gang is attempted
``attempts`` times, and each attempt's decisions are counted by path (``full``: a full
pass; ``hint``/``rescore``: the batch's next node, rechecked) from
``batch_scheduler_decision_duration_seconds``, with its time from
``scheduler_podgroup_scheduling_algorithm_duration_seconds``. The unit, "one full pass",
is then timed the same way: a plain pod of the same template alone on the same nodes.

Neighbours: :mod:`bench.gang.cli` (``--work``), ``tests/bench/test_gang_work.py``.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from bench.gang import shapes
from scheduler.app.core import build_scheduler
from scheduler.app.local_binder import LocalBinder, attempt_queued
from scheduler.batching.signature import BatchingMode
from scheduler.clock import FakeClock
from scheduler.cycle.eventhandlers import EventHandlers
from scheduler.cycle.ports import NoPreemptor
from scheduler.cycle.schedule_one import BatchingSettings, Scheduler
from scheduler.framework.config import API_VERSION, DEFAULT_SCHEDULER_NAME, KIND, load_config
from scheduler.framework.feature_gates import parse_feature_gates
from scheduler.model.parse import node_from_raw, pod_from_raw
from scheduler.model.parse_pod_groups import pod_group_from_raw

if TYPE_CHECKING:
    from bench.gang.shapes import Shape
    from scheduler.model.pod import Pod

GATES = parse_feature_gates("GenericWorkload=true")
NAME = DEFAULT_SCHEDULER_NAME


class _Silent:
    """A Reporter that reports nothing."""

    def scheduled(self, pod: Pod, node: str) -> None:
        return None

    def unschedulable(self, pod: Pod, message: str) -> None:
        return None

    def failed(self, pod: Pod, message: str) -> None:
        return None


def _scheduler(shape: Shape, *, seed: int) -> tuple[Scheduler, EventHandlers, FakeClock]:
    binder = LocalBinder()
    clock = FakeClock()
    config = load_config({"apiVersion": API_VERSION, "kind": KIND}, gates=GATES)
    scheduler = build_scheduler(
        config,
        clock=clock,
        binder=binder,
        reporter=_Silent(),
        batching=BatchingSettings(mode=BatchingMode.ALL),
        seed=seed,
        gates=GATES,
        preemptor=NoPreemptor(),
    )
    binder.scheduler = scheduler
    events = EventHandlers(scheduler)
    for i in range(shape.nodes):
        events.on_node(node_from_raw(shapes.node(shape, i, scheduler_run="work")))
    return scheduler, events, clock


def _with_identity(obj: dict[str, Any], namespace: str) -> dict[str, Any]:
    meta = obj["metadata"]
    meta["namespace"] = namespace
    meta["uid"] = f"uid-{namespace}-{meta['name']}"
    obj.setdefault("status", {"phase": "Pending"})
    return obj


def _paths(scheduler: Scheduler) -> tuple[dict[str, float], dict[str, float], float]:
    metrics = scheduler.metrics
    paths = metrics.by_label(metrics.decision_duration, "path")
    seconds = metrics.by_label(metrics.decision_duration, "path", field="sum")
    algorithm = sum(
        sample.value
        for family in metrics.podgroup_algorithm_duration.collect()
        for sample in family.samples
        if sample.name.endswith("_sum")
    )
    return paths, seconds, algorithm


def infeasible_work(shape: Shape, *, attempts: int = 3, seed: int = 1) -> dict[str, Any]:
    """Per attempt of the infeasible gang: decisions by path, seconds, and the seconds of
    one full pass for a plain pod on the same nodes; the attempts' outcome."""
    if not shape.infeasible:
        raise ValueError(f"{shape.name}: not the infeasible shape")
    scheduler, events, clock = _scheduler(shape, seed=seed)
    events.on_object(
        pod_group_from_raw(_with_identity(shapes.pod_group(shape, 0), shapes.GANG_NS)), None
    )
    for i in range(shape.gang_size):
        raw = shapes.gang_pod(shape, i, scheduler_name=NAME)
        events.on_pod(pod_from_raw(_with_identity(raw, shapes.GANG_NS)))
    per_attempt: list[dict[str, Any]] = []
    before, seconds0, algorithm0 = _paths(scheduler)
    for _ in range(attempts):
        began = time.perf_counter()
        placed = sum(1 for _, node in attempt_queued(scheduler) if node)
        wall = time.perf_counter() - began
        after, seconds, algorithm = _paths(scheduler)
        per_attempt.append(
            {
                "placed": placed,
                "decisions": {p: int(after.get(p, 0) - before.get(p, 0)) for p in after},
                "decision_s": {p: round(seconds[p] - seconds0.get(p, 0), 5) for p in seconds},
                "algorithm_s": round(algorithm - algorithm0, 5),
                "cycle_s": round(wall, 5),
            }
        )
        before, seconds0, algorithm0 = after, seconds, algorithm
        clock.advance(400.0)  # past any group backoff (kube's cap: 10 s times sqrt(1000))
        scheduler.queue.flush()
    member_full = _full_pass(shape, plain=False, seed=seed)
    plain_full = _full_pass(shape, plain=True, seed=seed)
    return {
        "nodes": shape.nodes,
        "pool": shape.pool,
        "gang_size": shape.gang_size,
        "labels": shape.labels,
        "attempts": per_attempt,
        "member_full_pass_s": round(member_full, 5),
        "plain_full_pass_s": round(plain_full, 5),
        "algorithm_in_member_full_passes": [
            round(a["algorithm_s"] / member_full, 1) for a in per_attempt
        ],
    }


def _full_pass(shape: Shape, *, plain: bool, seed: int, samples: int = 7) -> float:
    """The mean seconds of one full pass for a member of the infeasible gang (alone, no
    group: every node is looked at, a tenth fits) or for a plain pod, on fresh nodes."""
    scheduler, events, _ = _scheduler(shape, seed=seed)
    for i in range(samples):  # a signature label each: every one a full pass
        if plain:
            raw = shapes.plain_pod(shape, i * shapes.PLAIN_RUN, scheduler_name=NAME)
            raw["metadata"]["labels"]["signature"] = f"full-pass-{i}"
            namespace = shapes.PLAIN_NS
        else:
            raw = shapes.gang_pod(shape, i, scheduler_name=NAME)
            raw["spec"].pop("schedulingGroup")
            raw["metadata"]["labels"]["signature"] = f"full-pass-{i}"
            namespace = shapes.GANG_NS
        events.on_pod(pod_from_raw(_with_identity(raw, namespace)))
    list(attempt_queued(scheduler))
    metrics = scheduler.metrics
    counts = metrics.by_label(metrics.decision_duration, "path")
    if counts.get("full") != samples:
        raise RuntimeError(f"expected {samples} full passes, got {counts}")
    return metrics.by_label(metrics.decision_duration, "path", field="sum")["full"] / samples
