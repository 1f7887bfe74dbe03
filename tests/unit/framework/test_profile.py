"""Profile: the full pass through the real default plugins, as kube-scheduler runs it."""

from __future__ import annotations

import pytest

from scheduler.framework.cycle_state import CycleState
from scheduler.framework.diagnosis import FitError
from scheduler.framework.feasible import num_feasible_nodes_to_find
from scheduler.framework.results import ScheduleResult, Scores
from scheduler.framework.scoring import pick_top
from scheduler.model.parse import pod_from_raw
from tests.builders import make_node, make_pod, taint, toleration
from tests.harness import cluster_of, config_with, profile_for


@pytest.mark.parametrize(
    ("percentage", "nodes", "expected"),
    [
        pytest.param(0, 50, 50, id="small-cluster-all-nodes"),
        pytest.param(0, 100, 100, id="100-nodes-all"),
        pytest.param(0, 500, 230, id="adaptive-46-percent-at-500"),
        pytest.param(0, 1000, 420, id="adaptive-42-percent-at-1000"),
        pytest.param(0, 5000, 500, id="adaptive-10-percent-at-5000"),
        pytest.param(0, 6000, 300, id="adaptive-floor-5-percent"),
        pytest.param(10, 500, 100, id="configured-10-percent-floored-at-100"),
        pytest.param(100, 5000, 5000, id="configured-100-percent"),
    ],
)
def test_num_feasible_nodes_to_find(percentage: int, nodes: int, expected: int) -> None:
    """kube's numFeasibleNodesToFind: at least 100 nodes, 50 - n/125 percent, floor 5 %."""
    assert num_feasible_nodes_to_find(percentage, nodes) == expected


def test_pick_top_chooses_among_ties_only() -> None:
    """Reservoir sampling never picks a node below the top score and reaches every tie."""
    import random

    rng = random.Random(1)
    seen = {pick_top([5, 9, 1, 9, 9], rng) for _ in range(200)}
    assert seen == {1, 3, 4}


def test_full_pass_prefers_least_allocated_node() -> None:
    """With LeastAllocated, the emptier node wins."""
    cluster = cluster_of(
        [make_node("busy"), make_node("free")],
        assigned=[make_pod("running", cpu="3", memory="1Gi", node_name="busy")],
    )
    profile = profile_for(cluster)
    outcome = profile.schedule(CycleState(), pod_from_raw(make_pod("p", cpu="500m")))
    assert isinstance(outcome, ScheduleResult)
    assert outcome.node.name == "free"
    assert outcome.feasible == 2


@pytest.mark.parametrize(
    ("node_raws", "pod_raw", "message"),
    [
        pytest.param(
            [make_node("a", cpu="1"), make_node("b", cpu="1"), make_node("c", taints=[taint("x")])],
            make_pod("p", cpu="2"),
            "0/3 nodes are available: 1 node(s) had untolerated taint(s), 2 Insufficient cpu.",
            id="histogram-sorted-as-strings",
        ),
        pytest.param(
            [make_node("a"), make_node("b", unschedulable=True)],
            make_pod("p", node_selector={"disk": "ssd"}),
            "0/2 nodes are available: 1 node(s) didn't match Pod's node affinity/selector, "
            "1 node(s) were unschedulable.",
            id="first-failing-filter-per-node",
        ),
        pytest.param(
            [make_node("a", cpu="1", memory="1Gi")],
            make_pod("p", cpu="2", memory="2Gi"),
            "0/1 nodes are available: 1 Insufficient cpu, 1 Insufficient memory.",
            id="all-insufficient-resources-counted",
        ),
        pytest.param(
            [],
            make_pod("p"),
            "0/0 nodes are available: no nodes available to schedule pods.",
            id="no-nodes",
        ),
        pytest.param(
            [make_node("a")],
            make_pod("p", volumes=[{"name": "v", "persistentVolumeClaim": {"claimName": "c"}}]),
            '0/1 nodes are available: persistentvolumeclaim "c" not found.',
            id="pvc-missing",
        ),
    ],
)
def test_fit_error_message(
    node_raws: list[dict[str, object]], pod_raw: dict[str, object], message: str
) -> None:
    """FailedScheduling messages count reasons per node the way kube-scheduler does."""
    profile = profile_for(cluster_of(node_raws))
    outcome = profile.schedule(CycleState(), pod_from_raw(pod_raw))
    assert isinstance(outcome, FitError)
    assert outcome.message() == message


def test_pre_filter_node_set_narrows_and_counts_absent_nodes() -> None:
    """A metadata.name affinity filters only the named node; others count as not matching."""
    affinity = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["b"]}]}
                ]
            }
        }
    }
    cluster = cluster_of([make_node("a"), make_node("b", cpu="1"), make_node("c")])
    profile = profile_for(cluster)
    placed = profile.schedule(CycleState(), pod_from_raw(make_pod("p", affinity=affinity)))
    assert isinstance(placed, ScheduleResult)
    assert placed.node.name == "b"
    refused = profile.schedule(
        CycleState(), pod_from_raw(make_pod("q", cpu="2", affinity=affinity))
    )
    assert isinstance(refused, FitError)
    assert refused.message() == (
        "0/3 nodes are available: 1 Insufficient cpu, "
        "2 node(s) didn't satisfy plugin(s) [NodeAffinity]."
    )


def test_percentage_limits_filtering_and_start_rotates() -> None:
    """With 200 nodes and 50 %, a pass filters 100 nodes and the next starts after them."""
    cluster = cluster_of([make_node(f"n{i:03}") for i in range(200)])
    profile = profile_for(cluster, config_with(percentageOfNodesToScore=50))
    first = profile.schedule(CycleState(), pod_from_raw(make_pod("p")))
    assert isinstance(first, ScheduleResult)
    assert first.feasible == 100
    assert first.scores is not None
    assert {n.name for n in first.scores.nodes} == {f"n{i:03}" for i in range(100)}
    second = profile.schedule(CycleState(), pod_from_raw(make_pod("q")))
    assert isinstance(second, ScheduleResult)
    assert second.scores is not None
    assert {n.name for n in second.scores.nodes} == {f"n{i:03}" for i in range(100, 200)}


def test_taint_toleration_weight_breaks_even_resources() -> None:
    """A PreferNoSchedule taint the pod does not tolerate loses to an untainted node."""
    cluster = cluster_of(
        [make_node("tainted", taints=[taint("t", effect="PreferNoSchedule")]), make_node("clean")]
    )
    profile = profile_for(cluster)
    outcome = profile.schedule(CycleState(), pod_from_raw(make_pod("p")))
    assert isinstance(outcome, ScheduleResult)
    assert outcome.node.name == "clean"
    tolerant = pod_from_raw(make_pod("q", tolerations=[toleration("t", effect="PreferNoSchedule")]))
    scores = profile.prioritize(CycleState(), tolerant, list(cluster.snapshot.node_infos))
    assert isinstance(scores, Scores)
    assert scores.totals[0] == scores.totals[1]


def test_config_disables_plugin_at_one_point() -> None:
    """Disabling TaintToleration's filter lets a pod onto a NoSchedule-tainted node."""
    config = config_with(
        profiles=[{"plugins": {"filter": {"disabled": [{"name": "TaintToleration"}]}}}]
    )
    profile = profile_for(cluster_of([make_node("only", taints=[taint("x")])]), config)
    outcome = profile.schedule(CycleState(), pod_from_raw(make_pod("p")))
    assert isinstance(outcome, ScheduleResult)
    assert "TaintToleration" in {s.plugin.name for s in profile.score_plugins}


def test_rotation_moves_modulo_all_nodes_after_a_narrowed_pass() -> None:
    """kube's nextStartNodeIndex: (next + processed) % len(allNodes), also after a pass over
    the few nodes a PreFilter left (NodeAffinity's metadata.name field)."""
    cluster = cluster_of([make_node(f"n{i:03}") for i in range(150)])
    profile = profile_for(cluster)
    plain = pod_from_raw(make_pod("plain", cpu="100m"))
    assert isinstance(profile.schedule(CycleState(), plain), ScheduleResult)
    assert profile.selector.next_start == 100  # 100 feasible found among 150
    by_name = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [n]}]}
                    for n in ("n001", "n002", "n003")
                ]
            }
        }
    }
    narrowed = pod_from_raw(make_pod("narrowed", cpu="100m", affinity=by_name))
    outcome = profile.schedule(CycleState(), narrowed)
    assert isinstance(outcome, ScheduleResult)
    assert outcome.node.name in {"n001", "n002", "n003"}
    assert profile.selector.next_start == 103  # not (100 % 3 + 3) % 3
