"""scheduler_batch_* series as kube-scheduler v1.37 records them (values and precedence)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from scheduler.app.core import build_scheduler
from scheduler.app.local_binder import LocalBinder
from scheduler.batching.signature import BatchingMode
from scheduler.clock import FakeClock
from scheduler.cycle.schedule_one import BatchingSettings
from scheduler.framework import status as st
from scheduler.framework.config import default_config
from scheduler.metrics.registry import Metrics
from scheduler.model.parse import node_from_raw, pod_from_raw
from tests.builders import make_node, make_pod
from tests.harness import RecordingReporter, drain

if TYPE_CHECKING:
    from collections.abc import Sequence

    from scheduler.cache.node_info import NodeInfo
    from scheduler.cycle.schedule_one import Scheduler
    from scheduler.framework.cycle_state import CycleState
    from scheduler.model.pod import Pod

PROFILE = "batch-scheduler"


def _scheduler(
    node_raws: list[dict[str, Any]], mode: BatchingMode = BatchingMode.ALL
) -> tuple[Scheduler, Metrics]:
    metrics = Metrics()
    binder = LocalBinder()
    scheduler = build_scheduler(
        default_config(),
        clock=FakeClock(),
        binder=binder,
        reporter=RecordingReporter(),
        batching=BatchingSettings(mode=mode),
        metrics=metrics,
        seed=0,
    )
    binder.scheduler = scheduler
    for raw in node_raws:
        scheduler.cluster.add_node(node_from_raw(raw))
    return scheduler, metrics


def _count(metrics: Metrics, name: str, **labels: str) -> float:
    value = metrics.registry.get_sample_value(name, {"profile": PROFILE, **labels})
    return value or 0.0


def _flushes(metrics: Metrics) -> dict[str, float]:
    return {
        sample.labels["reason"]: sample.value
        for family in metrics.registry.collect()
        if family.name == "scheduler_batch_cache_flushed"
        for sample in family.samples
        if sample.name.endswith("_total")
    }


def _schedule(scheduler: Scheduler, *names: str, cpu: str = "100m", **kw: Any) -> None:
    for name in names:
        scheduler.enqueue(pod_from_raw(make_pod(name, cpu=cpu, **kw)))
    drain(scheduler)


def test_empty_list_wins_over_pod_not_batchable() -> None:
    """kube's StoreScheduleResults: no other feasible node → empty_list, even for a pod
    without a signature; pod_not_batchable only when nodes were left to keep."""
    scheduler, metrics = _scheduler([make_node("only")], mode=BatchingMode.ANNOTATED)
    _schedule(scheduler, "alone")
    assert _flushes(metrics) == {"empty_list": 1.0}
    scheduler, metrics = _scheduler([make_node("a"), make_node("b")], mode=BatchingMode.ANNOTATED)
    _schedule(scheduler, "unsigned")
    assert _flushes(metrics) == {"pod_not_batchable": 1.0}


_NO_NODE = {
    "nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [
                {
                    "matchFields": [
                        {"key": "metadata.name", "operator": "In", "values": ["n0"]},
                        {"key": "metadata.name", "operator": "In", "values": ["n1"]},
                    ]
                }
            ]
        }
    }
}
"""Conflicting name terms: PreFilter rejects the pod before it asks for a hint."""


def test_failed_cycle_is_pod_skipped_never_pod_failed() -> None:
    """A pod that fits nowhere in between: the next pod's cycle is not last + 1 (kube records
    only placed cycles, so its pod_failed cannot happen)."""
    scheduler, metrics = _scheduler([make_node(f"n{i}") for i in range(3)])
    _schedule(scheduler, "a")
    _schedule(scheduler, "lost", affinity=_NO_NODE)
    _schedule(scheduler, "b")
    assert _flushes(metrics) == {"pod_skipped": 1.0}
    assert _count(metrics, "scheduler_batch_attempts_total", result="no_hint") == 2


def test_deleted_hint_is_hint_not_used() -> None:
    """A hint whose node left the cache: hinted (duration label hint), then hint_not_used."""
    scheduler, metrics = _scheduler([make_node(f"n{i}", cpu=str(4 + i)) for i in range(3)])
    _schedule(scheduler, "a", cpu="3")
    state = scheduler.batches[PROFILE].state
    assert state is not None
    state.sort()  # as the next hint will (a state is sorted when a hint is asked)
    scheduler.cluster.remove_node(state.nodes[state.order[-1]].name)
    _schedule(scheduler, "b", cpu="3")
    assert _count(metrics, "scheduler_batch_attempts_total", result="hint_not_used") == 1
    assert _count(metrics, "scheduler_get_node_hint_duration_seconds_count", hinted="hint") == 1
    assert _flushes(metrics) == {}


def test_rescore_prescore_error_is_counted_and_timed() -> None:
    """PreScore failing for the rescored node: prescore_error, the attempt and its duration
    are recorded anyway, and the pod gets a full pass."""
    scheduler, metrics = _scheduler([make_node(f"n{i}", cpu="64") for i in range(3)])
    _schedule(scheduler, "a")
    profile = scheduler.profiles[PROFILE]

    def failing(state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> st.Status:
        return st.error("injected")

    profile.run_pre_score = failing  # type: ignore[method-assign]
    scheduler.enqueue(pod_from_raw(make_pod("b", cpu="100m")))
    run = scheduler.queue.try_pop()
    assert run is not None
    for info in run:
        scheduler.schedule_one(info)
    assert _flushes(metrics) == {"prescore_error": 1.0}
    assert _count(metrics, "scheduler_batch_rescore_attempts_total") == 1
    assert _count(metrics, "scheduler_batch_rescore_duration_seconds_count") == 1
    assert scheduler.counts().batched == 0


def test_rescore_normalize_error() -> None:
    """NormalizeScore failing while rescoring: normalize_error (kube's label)."""
    scheduler, metrics = _scheduler([make_node(f"n{i}", cpu="64") for i in range(3)])
    _schedule(scheduler, "a")
    profile = scheduler.profiles[PROFILE]
    (taints,) = [s.plugin for s in profile.score_plugins if s.plugin.name == "TaintToleration"]

    def failing(state: CycleState, pod: Pod, nodes: Sequence[NodeInfo], s: list[int]) -> st.Status:
        return st.error("injected")

    taints.normalize_score = failing  # type: ignore[attr-defined]
    _schedule(scheduler, "b")
    assert _flushes(metrics) == {"normalize_error": 1.0}
    assert _count(metrics, "scheduler_batch_rescore_attempts_total") == 1


def test_batch_help_texts_carry_kube_stability_prefix() -> None:
    """kube's component-base prefixes HELP with the stability level: [ALPHA] for these."""
    text = Metrics().render().decode()
    for name, help_text in [
        ("scheduler_batch_attempts_total", "Counts of results when we attempt to use batching."),
        ("scheduler_batch_cache_flushed_total", "Counts of cache flushes by reason."),
        ("scheduler_get_node_hint_duration_seconds", "Latency for getting a node hint."),
        (
            "scheduler_store_schedule_results_duration_seconds",
            "Latency for storing scheduling results.",
        ),
        (
            "scheduler_batch_rescore_attempts_total",
            "Counts of rescore attempts during opportunistic batching.",
        ),
        (
            "scheduler_batch_rescore_duration_seconds",
            "Latency for rescoring a node during opportunistic batching.",
        ),
    ]:
        assert f"# HELP {name} [ALPHA] {help_text}\n" in text
