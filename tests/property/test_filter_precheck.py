"""The Filter precheck changes nothing a full pass decides (issue 19, ``framework.feasible``).

Random clusters (up to 144 nodes, so that a pass may stop before the last node; nodes of
varied cpu, memory and pod capacity, some tainted, unschedulable or labelled; running pods
filling them) and a random pending pod, scheduled several times in a row (the rotation
moves) by two profiles over the same cluster and seed: the default one, whose
NodeResourcesFit offers a precheck, and one without prechecks (every node through every
Filter, as kube). Both must give the same node, the same evaluated and feasible counts, the
same next start, and, when nothing fits, the same FailedScheduling message, node statuses
and rejecting plugins.
"""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scheduler.framework.cycle_state import CycleState
from scheduler.framework.diagnosis import FitError
from scheduler.framework.profile import Profile
from scheduler.framework.results import ScheduleResult
from scheduler.model.parse import pod_from_raw
from tests.builders import make_node, make_pod, taint, toleration
from tests.harness import cluster_of, profile_for

Raw = dict[str, Any]

node_st = st.fixed_dictionaries(
    {
        "cpu": st.sampled_from(["1", "2", "4"]),
        "memory": st.sampled_from(["1Gi", "4Gi"]),
        "pods": st.sampled_from(["1", "2", "110"]),
        "tainted": st.sampled_from([False, False, False, True]),
        "unschedulable": st.sampled_from([False, False, False, True]),
        "ssd": st.booleans(),
        "running": st.lists(
            st.tuples(st.sampled_from(["500m", "1", "2"]), st.sampled_from(["256Mi", "1Gi"])),
            max_size=3,
        ),
    }
)
pod_st = st.fixed_dictionaries(
    {
        "cpu": st.sampled_from([None, "100m", "1", "2", "3"]),
        "memory": st.sampled_from([None, "128Mi", "1Gi", "3Gi"]),
        "tolerates": st.booleans(),
        "ssd": st.sampled_from([False, False, True]),
    }
)


def _cluster(nodes: list[Raw]) -> tuple[list[Raw], list[Raw]]:
    node_raws, running = [], []
    for i, n in enumerate(nodes):
        name = f"n{i}"
        node_raws.append(
            make_node(
                name,
                cpu=n["cpu"],
                memory=n["memory"],
                pods=n["pods"],
                taints=[taint("dedicated")] if n["tainted"] else None,
                unschedulable=n["unschedulable"],
                labels={"disk": "ssd"} if n["ssd"] else None,
            )
        )
        for j, (cpu, memory) in enumerate(n["running"]):
            running.append(make_pod(f"r{i}-{j}", cpu=cpu, memory=memory, node_name=name))
    return node_raws, running


def _outcome(profile: Profile, pod: Raw) -> tuple[object, ...]:
    outcome = profile.schedule(CycleState(), pod_from_raw(pod))
    start = profile.selector.next_start
    if isinstance(outcome, ScheduleResult):
        return ("placed", outcome.node.name, outcome.evaluated, outcome.feasible, start)
    assert isinstance(outcome, FitError), outcome
    d = outcome.diagnosis
    statuses = sorted((name, s.code, s.reasons) for name, s in d.node_statuses.items())
    return ("unfit", outcome.message(), statuses, sorted(d.unschedulable_plugins), start)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    nodes=st.lists(node_st, min_size=1, max_size=12),
    pod=pod_st,
    copies=st.sampled_from([1, 1, 12]),
    rounds=st.integers(1, 4),
    seed=st.integers(0, 3),
)
def test_precheck_changes_no_decision(
    nodes: list[Raw], pod: Raw, copies: int, rounds: int, seed: int
) -> None:
    # 12 copies make up to 144 nodes: above kube's 100, a pass stops early (rotation).
    node_raws, running = _cluster(nodes * copies)
    cluster = cluster_of(node_raws, running)
    prechecked = profile_for(cluster, seed=seed)
    plain = profile_for(cluster, seed=seed)
    assert prechecked.filter_prechecks, "NodeResourcesFit offers a precheck"
    plain.filter_prechecks = []
    prechecked.percentage_of_nodes_to_score = plain.percentage_of_nodes_to_score = 0
    raw = make_pod(
        "incoming",
        cpu=pod["cpu"],
        memory=pod["memory"],
        tolerations=[toleration("dedicated", operator="Exists")] if pod["tolerates"] else None,
        node_selector={"disk": "ssd"} if pod["ssd"] else None,
    )
    for _ in range(rounds):  # the rotation moves between passes; the pod is not placed
        assert _outcome(prechecked, raw) == _outcome(plain, raw)
