"""A Service made while its pods are queued, mid-run: the pods not yet decided get default
topology spreading, and the batch state built for their old signature is not used for them
(issue 37, the default-spreading race)."""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

import pytest

from scheduler.app.local_binder import attempt_queued
from scheduler.batching.signature import BatchingMode
from scheduler.cycle.eventhandlers import EventHandlers
from scheduler.model.parse import pod_from_raw, service_from_raw
from tests.builders import make_node, make_pod
from tests.harness import config_with, scheduler_for

if TYPE_CHECKING:
    from scheduler.cycle.decision import Decision
    from scheduler.cycle.schedule_one import Scheduler
    from scheduler.queueing.queued_pod import QueuedPodInfo

NODES = 4
PODS = 12
BEFORE = 3
"""Pods decided before the Service appears (the first a full pass, then the batch)."""
STACKING = {
    "profiles": [
        {
            "schedulerName": "batch-scheduler",
            "pluginConfig": [
                {
                    "name": "NodeResourcesFit",
                    "args": {
                        "scoringStrategy": {
                            "type": "MostAllocated",
                            "resources": [{"name": "cpu", "weight": 1}],
                        }
                    },
                }
            ],
        }
    ]
}
"""MostAllocated stacks pods on the fullest node: they spread only when default topology
spreading applies to them, so placements show whether it did."""
SERVICE = {
    "metadata": {"name": "web", "namespace": "team", "resourceVersion": "1"},
    "spec": {"selector": {"app": "web"}},
}


def _run(mode: BatchingMode) -> tuple[list[tuple[str, str | None, str]], Scheduler]:
    """PODS pods of app web queued at once; the Service added right after the BEFORE-th
    decision, at the loop's yield between two pods of one run. (pod, node, path) each."""
    nodes = [make_node(f"n{i}", cpu="16") for i in range(NODES)]
    scheduler, _, _ = scheduler_for(nodes, mode=mode, config=config_with(**STACKING))
    handlers = EventHandlers(scheduler)
    paths: dict[str, str] = {}
    decide = scheduler.decide

    def recording(info: QueuedPodInfo, cycle: int) -> Decision:
        decision = decide(info, cycle)
        paths[info.pod.name] = decision.path
        return decision

    scheduler.decide = recording  # type: ignore[method-assign]
    for i in range(PODS):
        raw = make_pod(f"p{i:02d}", namespace="team", cpu="1", labels={"app": "web"})
        scheduler.enqueue(pod_from_raw(raw))
    placed = []
    for pod, node in attempt_queued(scheduler):
        placed.append((pod.name, node, paths[pod.name]))
        if len(placed) == BEFORE:
            handlers.on_object(service_from_raw(SERVICE), None)
    return placed, scheduler


def test_the_run_ends_at_the_service_and_no_later_pod_takes_a_hint_of_the_old_batch() -> None:
    """After the Service, no pod is placed by the batch state the first pods built."""
    placed, _ = _run(BatchingMode.ALL)
    assert len(placed) == PODS
    assert all(node for _, node, _ in placed)
    before = [path for _, _, path in placed[:BEFORE]]
    assert before[0] == "full"
    assert set(before[1:]) <= {"hint", "rescore"}, before
    after = [path for _, _, path in placed[BEFORE:]]
    # The first pod after the Service starts a new computation (a full pass or the exact
    # batch's), never a hint from the state signed without spreading.
    assert after[0] not in ("hint", "rescore"), after


@pytest.mark.parametrize("mode", [BatchingMode.ALL, BatchingMode.OFF], ids=["batched", "off"])
def test_pods_decided_after_the_service_are_spread_as_by_full_passes(mode: BatchingMode) -> None:
    """Batching on or off, the pods after the Service land as kube's full passes would."""
    placed, _ = _run(mode)
    reference, _ = _run(BatchingMode.OFF)
    assert sorted(Counter(n for _, n, _ in placed).values()) == sorted(
        Counter(n for _, n, _ in reference).values()
    )
    stacked = Counter(node for _, node, _ in placed[:BEFORE])
    assert len(stacked) == 1  # before the Service: MostAllocated stacks them
    spread = Counter(node for _, node, _ in placed[BEFORE:])
    assert len(spread) > 1, spread  # after it: default spreading applies
