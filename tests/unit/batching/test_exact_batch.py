"""The exact batch (batching/exact.py) through the real cycle: where it serves a pod, where
it gives the pod to the full pass, per profile, and the shadow pass that checks it."""

from __future__ import annotations

from typing import Any

import pytest

from scheduler.batching import exact
from scheduler.batching.signature import BatchingMode
from scheduler.cycle.eventhandlers import EventHandlers
from scheduler.cycle.schedule_one import Scheduler
from scheduler.framework.results import ScheduleResult
from scheduler.model.parse import node_from_raw, pod_from_raw
from tests.builders import make_node, make_pod
from tests.harness import config_with, drain, scheduler_for

ZONE = "topology.kubernetes.io/zone"
Raw = dict[str, Any]


def _nodes(count: int = 9) -> list[Raw]:
    return [
        make_node(f"n{i}", labels={ZONE: f"z{i % 3}", "kubernetes.io/hostname": f"n{i}"})
        for i in range(count)
    ]


def _spread_pod(name: str, scheduler: str = "batch-scheduler", app: str = "web") -> Raw:
    spread = [
        {
            "maxSkew": 1,
            "topologyKey": ZONE,
            "whenUnsatisfiable": "DoNotSchedule",
            "labelSelector": {"matchLabels": {"app": app}},
        }
    ]
    return make_pod(
        name,
        cpu="100m",
        memory="100Mi",
        labels={"app": app},
        topology_spread=spread,
        scheduler_name=scheduler,
    )


def _outcomes(scheduler: Scheduler) -> dict[str, float]:
    metrics = scheduler.metrics
    return metrics.by_label(metrics.exact_batch, "outcome")


def _run(mode: BatchingMode, raws: list[Raw], **kw: Any) -> tuple[Scheduler, dict[str, str | None]]:
    scheduler, _, _ = scheduler_for(_nodes(), mode=mode, seed=7, **kw)
    for raw in raws:
        scheduler.enqueue(pod_from_raw(raw))
    return scheduler, drain(scheduler)


def test_spread_pods_take_the_exact_path_and_land_as_batching_off() -> None:
    """The first pod of the signature is a full pass, the state is built on the second, and
    every later pod is placed from it: the same nodes as batching off, same seed."""
    raws = [_spread_pod(f"p{i}") for i in range(12)]
    off, placed_off = _run(BatchingMode.OFF, raws)
    on, placed_on = _run(BatchingMode.ALL, raws)
    assert placed_on == placed_off
    assert None not in placed_on.values()
    outcomes = _outcomes(on)
    assert outcomes.get("no_state") == 1
    assert outcomes.get("built") == 1
    assert outcomes.get("placed") == 11
    assert on.counts().exact == 11
    assert off.counts().exact == 0


def test_nominated_pods_send_exact_pods_to_the_full_pass() -> None:
    """A pod nominated to a node makes Filter run twice there: the exact path refuses and
    the full pass decides (same nodes as batching off)."""
    raws = [_spread_pod(f"p{i}") for i in range(5)]
    results = []
    for mode in (BatchingMode.OFF, BatchingMode.ALL):
        scheduler, _, _ = scheduler_for(_nodes(), mode=mode, seed=7)
        waiting = pod_from_raw(make_pod("preemptor", cpu="3", memory="1Gi", priority=10))
        scheduler.queue.nominator.add(waiting, "n1")
        for raw in raws:
            scheduler.enqueue(pod_from_raw(raw))
        results.append((scheduler, drain(scheduler)))
    (_, placed_off), (on, placed_on) = results
    assert placed_on == placed_off
    assert _outcomes(on).get("nominated_pods", 0) >= 1
    assert _outcomes(on).get("placed", 0) == 0


def test_a_node_label_change_drops_the_state_and_the_next_pods_rebuild_it() -> None:
    """A node's labels may move it between domains: the state is dropped, not patched."""
    results = []
    for mode in (BatchingMode.OFF, BatchingMode.ALL):
        scheduler, _, _ = scheduler_for(_nodes(), mode=mode, seed=7)
        for i in range(4):
            scheduler.enqueue(pod_from_raw(_spread_pod(f"a{i}")))
        first = drain(scheduler)
        moved = make_node("n4", labels={ZONE: "z0", "kubernetes.io/hostname": "n4"})
        moved["metadata"]["resourceVersion"] = "2"
        EventHandlers(scheduler).on_node(node_from_raw(moved))
        for i in range(6):
            scheduler.enqueue(pod_from_raw(_spread_pod(f"b{i}")))
        results.append((scheduler, {**first, **drain(scheduler)}))
    (_, placed_off), (on, placed_on) = results
    assert placed_on == placed_off
    outcomes = _outcomes(on)
    assert outcomes.get("dropped", 0) >= 1
    assert outcomes.get("built", 0) == 2
    assert outcomes.get("placed", 0) >= 7


def test_each_profile_keeps_its_own_exact_state() -> None:
    """Two profiles, pods alternating between them: each profile's pods are placed on the
    exact path from a state of its own, as batching off places them."""
    config = config_with(profiles=[{"schedulerName": "alpha"}, {"schedulerName": "beta"}])
    raws = [_spread_pod(f"p{i}", scheduler=("alpha", "beta")[i % 2]) for i in range(12)]
    _, placed_off = _run(BatchingMode.OFF, raws, config=config)
    on, placed_on = _run(BatchingMode.ALL, raws, config=config)
    assert placed_on == placed_off
    metrics = on.metrics
    for profile in ("alpha", "beta"):
        counts = metrics.by_label(metrics.exact_batch, "outcome", profile=profile)
        assert counts.get("built") == 1, profile
        assert counts.get("placed") == 5, profile


def test_the_shadow_pass_agrees_with_the_exact_path() -> None:
    """--batching-verify-ratio 1: every exact decision is checked by a full pass from the
    selector as it was; none diverges, and checking changes no decision."""
    raws = [_spread_pod(f"p{i}") for i in range(10)]
    _, placed_plain = _run(BatchingMode.ALL, raws)
    on, placed = _run(BatchingMode.ALL, raws, verify_ratio=1.0)
    assert placed == placed_plain
    metrics = on.metrics
    assert on.counts().exact == 9
    assert on.counts().divergences == 0
    assert next(iter(metrics.batch_verified.collect())).samples[0].value >= 9


def test_the_shadow_pass_catches_a_wrong_exact_decision(monkeypatch: pytest.MonkeyPatch) -> None:
    """The check can fail: an exact path that picks another feasible node is counted as
    exact_mismatch."""
    original = exact.ExactBatch._choose

    def wrong(self: exact.ExactBatch, live: Any, pod: Any) -> Any:
        outcome = original(self, live, pod)
        if not isinstance(outcome, ScheduleResult):
            return outcome
        others = [n for n in live.nodes if n.name != outcome.node.name]
        return ScheduleResult(others[0], outcome.evaluated, outcome.feasible, None, 0)

    monkeypatch.setattr(exact.ExactBatch, "_choose", wrong)
    raws = [
        make_pod(
            f"p{i}",
            cpu="100m",
            memory="100Mi",
            labels={"app": "web"},
            topology_spread=[
                {
                    "maxSkew": 5,
                    "topologyKey": ZONE,
                    "whenUnsatisfiable": "ScheduleAnyway",
                    "labelSelector": {"matchLabels": {"app": "web"}},
                }
            ],
        )
        for i in range(6)
    ]
    on, _ = _run(BatchingMode.ALL, raws, verify_ratio=1.0)
    metrics = on.metrics
    assert metrics.by_label(metrics.batch_divergence, "kind").get("exact_mismatch", 0) >= 1
    assert on.counts().divergences >= 1
