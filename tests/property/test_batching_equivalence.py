"""Batching changes speed, not outcomes (DESIGN.md section 4), on random clusters."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from scheduler.batching.signature import BatchingMode
from scheduler.framework.cycle_state import CycleState
from scheduler.framework.profile import Scores
from scheduler.model.parse import pod_from_raw
from tests.builders import make_node, make_pod
from tests.harness import drain, scheduler_for

node_sizes = st.lists(st.tuples(st.integers(4, 16), st.integers(8, 64)), min_size=2, max_size=12)
one_pod_node_sizes = st.lists(
    st.tuples(st.integers(4, 5), st.integers(2, 512)),
    min_size=2,
    max_size=8,
    unique_by=lambda size: size[1],
)
"""4 or 5 CPUs: a 3-CPU pod fills a node, so no node's score changes while it stays free."""


def _nodes(sizes: list[tuple[int, int]]) -> list[dict[str, Any]]:
    return [make_node(f"n{i:02}", cpu=str(c), memory=f"{m}Gi") for i, (c, m) in enumerate(sizes)]


def _run(
    sizes: list[tuple[int, int]],
    pod: dict[str, str],
    count: int,
    mode: BatchingMode,
    verify: float = 0.0,
) -> tuple[dict[str, str | None], Any]:
    scheduler, _, _ = scheduler_for(_nodes(sizes), mode=mode, verify_ratio=verify)
    for i in range(count):
        scheduler.enqueue(pod_from_raw(make_pod(f"p{i:03}", **pod)))
    return drain(scheduler), scheduler


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
@given(sizes=one_pod_node_sizes, extra=st.integers(0, 3))
def test_one_pod_per_node_identical_without_ties(sizes: list[tuple[int, int]], extra: int) -> None:
    """3-CPU pods that fill a node each: on and off place every pod on the same node."""
    pod = {"cpu": "3", "memory": "1Gi"}
    _, scheduler = _run(sizes, pod, 0, BatchingMode.OFF)
    profile = scheduler.profiles["batch-scheduler"]
    first = pod_from_raw(make_pod("probe", **pod))
    state = CycleState()
    profile.run_pre_filter(state, first)
    scores = profile.prioritize(state, first, list(profile.snapshot.node_infos))
    assert isinstance(scores, Scores)
    assume(len(set(scores.totals)) == len(scores.totals))  # no ties: decisions are unique
    count = len(sizes) + extra
    off, _ = _run(sizes, pod, count, BatchingMode.OFF)
    on, batched = _run(sizes, pod, count, BatchingMode.ALL)
    assert on == off
    assert batched.stats.batched == len(sizes) - 1


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
    on, scheduler = _run(sizes, {"cpu": cpu, "memory": memory}, count, BatchingMode.ALL, verify=1.0)
    assert scheduler.stats.divergences == 0
    assert sum(v is not None for v in on.values()) == sum(v is not None for v in off.values())
    for info in scheduler.cluster.snapshot.node_infos:
        node = info.node
        assert node is not None
        assert info.requested.milli_cpu <= node.allocatable.milli_cpu
        assert info.requested.memory <= node.allocatable.memory
        assert len(info.pods) <= node.allocatable.allowed_pod_number
