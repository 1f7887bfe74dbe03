"""Batching changes speed, not outcomes (DESIGN.md section 4), on random clusters.

Equal scores are broken at random (kube's selection), so a batched and an unbatched run may
pick different nodes among equals: each placement is checked against the best total a full
pass would give at that moment, not against a node name.
"""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from scheduler.batching.signature import BatchingMode
from scheduler.cycle.schedule_one import Scheduler
from scheduler.framework.cycle_state import CycleState
from scheduler.framework.results import Scores
from scheduler.model.parse import pod_from_raw
from tests.builders import make_node, make_pod
from tests.harness import scheduler_for

node_sizes = st.lists(st.tuples(st.integers(4, 16), st.integers(8, 64)), min_size=2, max_size=12)
one_pod_node_sizes = st.lists(
    st.tuples(st.integers(4, 5), st.sampled_from([8, 16, 64])), min_size=2, max_size=8
)
"""4 or 5 CPUs: a 3-CPU pod fills a node; few memory sizes, so many nodes tie."""


def _nodes(sizes: list[tuple[int, int]]) -> list[dict[str, Any]]:
    return [make_node(f"n{i:02}", cpu=str(c), memory=f"{m}Gi") for i, (c, m) in enumerate(sizes)]


def _best_totals(scheduler: Scheduler, pod_raw: dict[str, Any]) -> dict[str, int]:
    """Node → total a full pass gives ``pod`` now, over every feasible node."""
    pod = pod_from_raw(pod_raw)
    profile = scheduler.profiles[pod.scheduler_name]
    state = CycleState()
    _, status = profile.run_pre_filter(state, pod)
    if not status.is_success:
        return {}
    feasible = [
        info
        for info in profile.snapshot.node_infos
        if profile.run_filters(state, pod, info).is_success
    ]
    if len(feasible) <= 1:
        return {info.name: 0 for info in feasible}
    scores = profile.prioritize(state, pod, feasible)
    assert isinstance(scores, Scores)
    return {info.name: total for info, total in zip(scores.nodes, scores.totals, strict=True)}


def _run(
    sizes: list[tuple[int, int]], pod: dict[str, str], count: int, mode: BatchingMode
) -> tuple[dict[str, str | None], Scheduler]:
    """Schedule ``count`` equal pods one by one; every placement scores the best total."""
    scheduler, _, _ = scheduler_for(_nodes(sizes), mode=mode)
    raws = [make_pod(f"p{i:03}", **pod) for i in range(count)]
    for raw in raws:
        scheduler.enqueue(pod_from_raw(raw))
    placed: dict[str, str | None] = {}
    for raw in raws:
        run = scheduler.queue.try_pop()
        assert run is not None
        info = next(iter(run))  # one pod at a time, so the best totals are computed first
        assert info.pod.name == raw["metadata"]["name"]
        totals = _best_totals(scheduler, raw)
        scheduler.schedule_one(info)
        assigned = scheduler.cluster.get_pod(info.pod.uid)
        node = assigned.node_name if assigned is not None else None
        placed[info.pod.key] = node
        if not totals:
            assert node is None
        else:
            assert node is not None
            assert totals[node] == max(totals.values()), (info.pod.key, node, totals)
    return placed, scheduler


@settings(max_examples=60, deadline=None)
@given(sizes=one_pod_node_sizes, extra=st.integers(0, 3))
def test_one_pod_per_node_places_on_a_best_node_ties_included(
    sizes: list[tuple[int, int]], extra: int
) -> None:
    """3-CPU pods that fill a node each, equal nodes allowed: every hint is a best node."""
    pod = {"cpu": "3", "memory": "1Gi"}
    count = len(sizes) + extra
    off, _ = _run(sizes, pod, count, BatchingMode.OFF)
    on, batched = _run(sizes, pod, count, BatchingMode.ALL)
    assert sorted(v for v in on.values() if v) == sorted(v for v in off.values() if v)
    assert batched.counts().batched == len(sizes) - 1


@settings(max_examples=40, deadline=None)
@given(
    sizes=node_sizes,
    cpu=st.sampled_from(["100m", "250m", "500m"]),
    memory=st.sampled_from(["128Mi", "500Mi", "1Gi"]),
    count=st.integers(5, 80),
)
def test_many_pods_per_node_same_count_no_overcommit(
    sizes: list[tuple[int, int]], cpu: str, memory: str, count: int
) -> None:
    """Many pods per node: same number placed, none over-committed, no hint below the best."""
    off, _ = _run(sizes, {"cpu": cpu, "memory": memory}, count, BatchingMode.OFF)
    on, scheduler = _run(sizes, {"cpu": cpu, "memory": memory}, count, BatchingMode.ALL)
    assert scheduler.counts().batched > 0
    assert sum(v is not None for v in on.values()) == sum(v is not None for v in off.values())
    for info in scheduler.cluster.snapshot.node_infos:
        node = info.node
        assert node is not None
        assert info.requested.milli_cpu <= node.allocatable.milli_cpu
        assert info.requested.memory <= node.allocatable.memory
        assert len(info.pods) <= node.allocatable.allowed_pod_number
