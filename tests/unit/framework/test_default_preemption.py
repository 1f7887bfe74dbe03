"""DefaultPreemption: kube's default_preemption_test.go tables, in our words, through the real
default profile (victim selection, budgets, node choice, eligibility, messages)."""

from __future__ import annotations

from typing import Any

import pytest

from scheduler.cache.cluster_state import ClusterState
from scheduler.framework import preemption
from scheduler.framework.config import ConfigError, SchedulerConfig
from scheduler.framework.cycle_state import CycleState
from scheduler.framework.diagnosis import FitError
from scheduler.framework.profile import Profile, build_profile
from scheduler.model.parse import node_from_raw, pdb_from_raw, pod_from_raw
from scheduler.model.pod import Pod
from scheduler.plugins import in_tree_registry
from scheduler.plugins.default_preemption import DefaultPreemption, parse_args
from tests.builders import make_node, make_pod, taint
from tests.harness import config_with, profile_for

Raw = dict[str, Any]

NEG, LOW, MID, HIGH, VERY_HIGH = -100, 0, 100, 1000, 10000
SMALL = ("100m", "100")
MEDIUM = ("200m", "200")
LARGE = ("300m", "300")
VERY_LARGE = ("500m", "500")


def pod(
    name: str,
    node: str | None = None,
    *,
    priority: int = LOW,
    res: tuple[str, str] | None = None,
    start: int | None = None,
    labels: dict[str, str] | None = None,
    **extra: Any,
) -> Raw:
    """kube's st.MakePod().Name(n).UID(n).Node(..).Priority(..).Req(..).StartTime(..)."""
    cpu, memory = res if res is not None else (None, None)
    policy = extra.pop("preemption_policy", None)
    raw = make_pod(
        name,
        cpu=cpu,
        memory=memory,
        node_name=node,
        priority=priority,
        labels=labels,
        uid=name,
        phase="Running" if node else "Pending",
        **extra,
    )
    if start is not None:
        raw["status"]["startTime"] = f"1970-01-01T00:00:{start:02d}Z"
    if policy is not None:
        raw["spec"]["preemptionPolicy"] = policy
    return raw


def node(name: str, res: tuple[str, str] = VERY_LARGE, **labels: str) -> Raw:
    return make_node(name, cpu=res[0], memory=res[1], labels={"hostname": name, **labels})


def pdb(
    allowed: int, *, disrupted: tuple[str, ...] = (), labels: dict[str, str] | None = None
) -> Raw:
    return {
        "metadata": {"name": "budget", "namespace": "default"},
        "spec": {"selector": {"matchLabels": labels or {"app": "foo"}}},
        "status": {"disruptionsAllowed": allowed, "disruptedPods": dict.fromkeys(disrupted, "x")},
    }


def setup(
    nodes: list[Raw],
    pods: list[Raw],
    *,
    budgets: list[Raw] | None = None,
    config: SchedulerConfig | None = None,
) -> tuple[ClusterState, Profile]:
    cluster = ClusterState()
    for raw in nodes:
        cluster.add_node(node_from_raw(raw))
    for raw in pods:
        cluster.add_pod(pod_from_raw(raw))
    for raw in budgets or []:
        cluster.disruption_budgets.add(pdb_from_raw(raw))
    return cluster, profile_for(cluster, config)


def fail(profile: Profile, raw: Raw) -> tuple[Pod, FitError]:
    preemptor = pod_from_raw(raw)
    outcome = profile.schedule(CycleState(), preemptor)
    assert isinstance(outcome, FitError), outcome
    return preemptor, outcome


def pre_filtered(profile: Profile, pod: Pod) -> CycleState:
    """A CycleState with PreFilter run, as the cycle hands PostFilter (DynamicResources'
    PostFilter, first in the default profile, reads its PreFilter state)."""
    state = CycleState()
    profile.run_pre_filter(state, pod)
    return state


def plugin_of(profile: Profile) -> DefaultPreemption:
    (plugin,) = [p for p in profile.post_filter_plugins if isinstance(p, DefaultPreemption)]
    return plugin


def snapshot_of(cluster: ClusterState) -> list[tuple[str, list[str]]]:
    """Every node's pods, to check the dry run put everything back."""
    return [(info.name, sorted(info.pods)) for info in cluster.snapshot.node_infos]


# -- dry run: the minimal victims per node (TestDryRunPreemption) ------------------------

DRY_RUN = [
    pytest.param(
        [node("node1"), node("node2")],
        [pod("p1", "node1", priority=MID, res=LARGE), pod("p2", "node2", priority=MID, res=LARGE)],
        pod("p", priority=HIGH, res=LARGE),
        None,
        [("node1", ["p1"], 0), ("node2", ["p2"], 0)],
        id="fits-on-both-nodes-when-lower-priority-pods-are-preempted",
    ),
    pytest.param(
        [node("node1"), node("node2")],
        [pod("p1", "node1", priority=MID, res=LARGE), pod("p2", "node2", priority=MID, res=LARGE)],
        pod("p", priority=LOW, res=LARGE),
        None,
        [],
        id="running-pods-of-higher-priority-no-preemption",
    ),
    pytest.param(
        [node("node1"), node("node2")],
        [
            pod("p1.1", "node1", priority=LOW, res=SMALL),
            pod("p1.2", "node1", priority=MID, res=LARGE),
            pod("p2", "node2", priority=MID, res=LARGE),
        ],
        pod("p", priority=HIGH, res=LARGE),
        None,
        [("node1", ["p1.2"], 0), ("node2", ["p2"], 0)],
        id="medium-priority-pod-preempted-small-lower-one-stays",
    ),
    pytest.param(
        [node("node1"), node("node2")],
        [
            pod("p1.1", "node1", priority=MID, res=SMALL),
            pod("p1.2", "node1", priority=LOW, res=SMALL),
            pod("p1.3", "node1", priority=MID, res=MEDIUM),
            pod("p1.4", "node1", priority=HIGH, res=SMALL),
            pod("p2", "node2", priority=HIGH, res=LARGE),
        ],
        pod("p", priority=HIGH, res=LARGE),
        None,
        [("node1", ["p1.3", "p1.2"], 0)],
        id="mixed-priority-pods-are-preempted",
    ),
    pytest.param(
        [node("node1"), node("node2")],
        [
            pod("p1.1", "node1", priority=LOW, res=SMALL, start=5),
            pod("p1.2", "node1", priority=LOW, res=SMALL, start=4),
            pod("p1.3", "node1", priority=MID, res=MEDIUM, start=3),
            pod("p1.4", "node1", priority=HIGH, res=SMALL, start=2),
            pod("p2", "node2", priority=HIGH, res=LARGE, start=1),
        ],
        pod("p", priority=HIGH, res=LARGE),
        None,
        [("node1", ["p1.3", "p1.1"], 0)],
        id="equal-priorities-the-later-started-pod-is-preempted",
    ),
    pytest.param(
        [node("node1")],
        [
            pod("p1.1", "node1", priority=MID, res=MEDIUM, labels={"app": "foo"}),
            pod("p1.2", "node1", priority=MID, res=MEDIUM, labels={"app": "foo"}),
        ],
        pod("p", priority=HIGH, res=VERY_LARGE),
        [pdb(1)],
        [("node1", ["p1.2", "p1.1"], 1)],
        id="violation-of-same-pdb",
    ),
    pytest.param(
        [node("node1")],
        [
            pod("p1.1", "node1", priority=MID, res=MEDIUM, labels={"app": "foo"}),
            pod("p1.2", "node1", priority=MID, res=MEDIUM, labels={"app": "foo"}),
        ],
        pod("p", priority=HIGH, res=VERY_LARGE),
        [pdb(1, disrupted=("p2",))],
        [("node1", ["p1.2", "p1.1"], 1)],
        id="pdb-eviction-processed-victim-not-among-disrupted-pods",
    ),
    pytest.param(
        [node("node1")],
        [
            pod("p1.1", "node1", priority=MID, res=MEDIUM, labels={"app": "foo"}),
            pod("p1.2", "node1", priority=MID, res=MEDIUM, labels={"app": "foo"}),
        ],
        pod("p", priority=HIGH, res=VERY_LARGE),
        [pdb(1, disrupted=("p1.2",))],
        [("node1", ["p1.1", "p1.2"], 0)],
        id="pdb-eviction-processed-victim-among-disrupted-pods",
    ),
    pytest.param(
        [node("node1")],
        [
            pod("p1.1", "node1", priority=MID, res=MEDIUM, labels={"app": "foo"}),
            pod("p1.2", "node1", priority=MID, res=MEDIUM, labels={"app": "foo"}),
            pod("p1.3", "node1", priority=MID, res=MEDIUM, labels={"app": "foo"}),
        ],
        pod("p", priority=HIGH, res=VERY_LARGE),
        [pdb(1, disrupted=("p1.3",))],
        [("node1", ["p1.2", "p1.1", "p1.3"], 1)],
        id="disrupted-pod-counts-as-non-violating",
    ),
]


@pytest.mark.parametrize(("nodes", "pods", "preemptor", "budgets", "expected"), DRY_RUN)
def test_dry_run_finds_minimal_victims(
    nodes: list[Raw],
    pods: list[Raw],
    preemptor: Raw,
    budgets: list[Raw] | None,
    expected: list[tuple[str, list[str], int]],
) -> None:
    """Per node: every lower-priority pod off, then as many back as still let the pod fit,
    budget-violating ones tried first, most important first."""
    cluster, profile = setup(nodes, pods, budgets=budgets)
    before = snapshot_of(cluster)
    candidates, _ = preemption.dry_run(
        profile,
        pod_from_raw(preemptor),
        cluster.snapshot.node_infos,
        cluster.disruption_budgets.list(),
        offset=0,
        num_candidates=len(nodes),
    )
    got = [(c.node, [v.name for v in c.victims], c.pdb_violations) for c in candidates]
    assert got == expected
    assert snapshot_of(cluster) == before


def test_preempts_the_pod_whose_anti_affinity_rejects_the_preemptor() -> None:
    """A lower-priority pod whose required anti-affinity repels the preemptor is its victim;
    PreFilter runs again after each change, so the index of such pods follows the edits."""
    anti = {
        "podAntiAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {
                    "labelSelector": {"matchExpressions": [{"key": "foo", "operator": "Exists"}]},
                    "topologyKey": "hostname",
                }
            ]
        }
    }
    cluster, profile = setup(
        [node("node1"), node("node2")],
        [
            pod("p1.1", "node1", priority=LOW, res=SMALL, labels={"foo": ""}, affinity=anti),
            pod("p1.2", "node1", priority=MID, res=SMALL),
            pod("p1.3", "node1", priority=HIGH, res=SMALL),
            pod("p2", "node2", priority=HIGH, res=SMALL),
        ],
    )
    before = snapshot_of(cluster)
    candidates, statuses = preemption.dry_run(
        profile,
        pod_from_raw(pod("p", priority=HIGH, res=SMALL, labels={"foo": ""})),
        cluster.snapshot.node_infos,
        [],
        offset=0,
        num_candidates=2,
    )
    assert [(c.node, [v.name for v in c.victims]) for c in candidates] == [("node1", ["p1.1"])]
    assert statuses["node2"].reasons == (preemption.NO_VICTIMS,)
    assert snapshot_of(cluster) == before
    holders = cluster.snapshot.pod_index.terms.required_anti_affinity.values()
    assert [sum(by_node.values()) for by_node in holders] == [1]


def test_preemption_resolves_a_topology_spread_failure() -> None:
    """Evicting one low-priority pod per zone-1 node evens the spread (kube's zone/hostname
    case); the zone-2 node holds only higher-priority pods and is no candidate."""
    spread = [
        {
            "maxSkew": 1,
            "topologyKey": key,
            "whenUnsatisfiable": "DoNotSchedule",
            "labelSelector": {"matchExpressions": [{"key": "foo", "operator": "Exists"}]},
        }
        for key in ("zone", "hostname")
    ]
    foo = {"foo": ""}
    cluster, profile = setup(
        [node("node-a", zone="zone1"), node("node-b", zone="zone1"), node("node-x", zone="zone2")],
        [
            pod("pod-a1", "node-a", priority=MID, labels=foo),
            pod("pod-a2", "node-a", priority=LOW, labels=foo),
            pod("pod-b1", "node-b", priority=LOW, labels=foo),
            pod("pod-x1", "node-x", priority=HIGH, labels=foo),
            pod("pod-x2", "node-x", priority=HIGH, labels=foo),
        ],
    )
    preemptor, fit = fail(profile, pod("p", priority=HIGH, labels=foo, topology_spread=spread))
    candidates, _ = preemption.dry_run(
        profile,
        preemptor,
        preemption.potential_nodes(fit.diagnosis, cluster.snapshot.node_infos),
        [],
        offset=0,
        num_candidates=3,
    )
    assert [(c.node, [v.name for v in c.victims]) for c in candidates] == [
        ("node-a", ["pod-a2"]),
        ("node-b", ["pod-b1"]),
    ]


# -- how many candidates, from where (minCandidateNodes*, the random offset) --------------


def _five_nodes(high_on: tuple[str, ...] = (), pdb_on: tuple[str, ...] = ()) -> list[Raw]:
    pods = []
    for i in range(1, 6):
        name = f"node{i}"
        labels = {"app": "foo"} if name in pdb_on else None
        priority = HIGH if name in high_on else MID
        pods.append(pod(f"p{i}", name, priority=priority, res=LARGE, labels=labels))
    return pods


@pytest.mark.parametrize(
    ("pods", "budgets", "offset", "expected"),
    [
        pytest.param(_five_nodes(), None, 0, ["node1", "node2"], id="all-candidates-limited-to-2"),
        pytest.param(
            _five_nodes(high_on=("node2", "node4")),
            None,
            0,
            ["node1", "node3"],
            id="some-nodes-no-candidates-limited-to-2",
        ),
        pytest.param(_five_nodes(), None, 3, ["node4", "node5"], id="offset-wraps-around"),
        pytest.param(
            _five_nodes(pdb_on=("node1", "node2")),
            [pdb(0)],
            0,
            ["node3", "node1", "node2"],
            id="looks-past-the-limit-for-a-node-violating-no-budget",
        ),
    ],
)
def test_num_candidates_and_offset(
    pods: list[Raw], budgets: list[Raw] | None, offset: int, expected: list[str]
) -> None:
    """The dry run stops once it has minCandidateNodesAbsolute candidates and one of them
    violates no budget; it starts at the offset and wraps around."""
    config = config_with(
        profiles=[
            {
                "pluginConfig": [
                    {
                        "name": "DefaultPreemption",
                        "args": {"minCandidateNodesPercentage": 0, "minCandidateNodesAbsolute": 2},
                    }
                ]
            }
        ]
    )
    cluster, profile = setup(
        [node(f"node{i}") for i in range(1, 6)], pods, budgets=budgets, config=config
    )
    plugin = plugin_of(profile)
    preemptor, fit = fail(profile, pod("p", priority=HIGH, res=LARGE))
    potential = preemption.potential_nodes(fit.diagnosis, cluster.snapshot.node_infos)
    _, count = plugin.offset_and_num_candidates(len(potential))
    assert count == 2
    candidates, _ = preemption.dry_run(
        profile,
        preemptor,
        potential,
        cluster.disruption_budgets.list(),
        offset=offset,
        num_candidates=count,
    )
    assert [c.node for c in candidates] == expected


@pytest.mark.parametrize(
    ("percentage", "absolute", "nodes", "expected"),
    [
        pytest.param(10, 100, 50, 50, id="defaults-small-cluster-all-nodes"),
        pytest.param(10, 100, 5000, 500, id="defaults-10-percent-of-5000"),
        pytest.param(10, 100, 500, 100, id="defaults-absolute-floor"),
        pytest.param(40, 0, 10, 4, id="percentage-only"),
        pytest.param(0, 2, 10, 2, id="absolute-only"),
    ],
)
def test_calculate_num_candidates(
    percentage: int, absolute: int, nodes: int, expected: int
) -> None:
    """kube's calculateNumCandidates: percent of the nodes, at least the absolute, at most all."""
    plugin = DefaultPreemption(
        {"minCandidateNodesPercentage": percentage, "minCandidateNodesAbsolute": absolute},
        profile_for(ClusterState()),
    )
    assert plugin.num_candidates(nodes) == expected


@pytest.mark.parametrize(
    ("args", "message"),
    [
        pytest.param(
            {"minCandidateNodesPercentage": 101},
            "DefaultPreemptionArgs.minCandidateNodesPercentage: not in valid range [0, 100]",
            id="percentage-above-100",
        ),
        pytest.param(
            {"minCandidateNodesAbsolute": -1},
            "DefaultPreemptionArgs.minCandidateNodesAbsolute: not in valid range [0, inf)",
            id="negative-absolute",
        ),
        pytest.param(
            {"minCandidateNodesPercentage": 0, "minCandidateNodesAbsolute": 0},
            "DefaultPreemptionArgs.minCandidateNodesPercentage: cannot be zero at the same "
            "time as minCandidateNodesAbsolute",
            id="both-zero",
        ),
        pytest.param(
            {"minCandidateNodes": 3},
            'DefaultPreemptionArgs: unknown field "minCandidateNodes"',
            id="unknown-field",
        ),
    ],
)
def test_bad_args_are_named(args: dict[str, object], message: str) -> None:
    """Args are validated as kube's ValidateDefaultPreemptionArgs, naming the field."""
    with pytest.raises(ValueError, match=r".*") as raised:
        parse_args(args)
    assert str(raised.value) == message


def test_bad_args_in_a_config_file_are_a_config_error() -> None:
    """The profile builder turns the plugin's refusal into a ConfigError naming its args."""
    config = config_with(
        profiles=[
            {
                "pluginConfig": [
                    {"name": "DefaultPreemption", "args": {"minCandidateNodesAbsolute": -1}}
                ]
            }
        ]
    )
    with pytest.raises(ConfigError, match=r"pluginConfig\[DefaultPreemption\]\.args"):
        build_profile(
            config.profiles[0], registry=in_tree_registry(), snapshot=ClusterState().snapshot
        )


def test_post_filter_disabled_in_config() -> None:
    """``postFilter: disabled: [*]`` leaves the profile without PostFilter plugins."""
    config = config_with(profiles=[{"plugins": {"postFilter": {"disabled": [{"name": "*"}]}}}])
    assert profile_for(ClusterState(), config).post_filter_plugins == []
    names = [p.name for p in profile_for(ClusterState()).post_filter_plugins]
    assert names == ["DynamicResources", "DefaultPreemption"]


# -- the node choice (TestSelectBestCandidate) --------------------------------------------

SELECT = [
    pytest.param(
        2,
        [
            pod("p1", "node1", priority=MID, res=LARGE, start=0),
            pod("p2", "node2", priority=MID, res=LARGE, start=0),
        ],
        pod("p", priority=HIGH, res=LARGE),
        {"node1", "node2"},
        id="fits-on-both-nodes-either-is-fine",
    ),
    pytest.param(
        3,
        [
            pod("p1.1", "node1", priority=MID, res=MEDIUM, start=0),
            pod("p1.2", "node1", priority=MID, res=LARGE, start=0),
            pod("p2.1", "node2", priority=MID, res=MEDIUM, start=0),
            pod("p2.2", "node2", priority=LOW, res=MEDIUM, start=0),
            pod("p3.1", "node3", priority=LOW, res=MEDIUM, start=0),
            pod("p3.2", "node3", priority=LOW, res=MEDIUM, start=0),
        ],
        pod("p", priority=HIGH, res=VERY_LARGE),
        {"node3"},
        id="lowest-highest-victim-priority",
    ),
    pytest.param(
        3,
        [
            pod("p1.1", "node1", priority=MID, res=MEDIUM, start=0),
            pod("p1.2", "node1", priority=MID, res=LARGE, start=0),
            pod("p2.1", "node2", priority=MID, res=LARGE, start=0),
            pod("p2.2", "node2", priority=LOW, res=MEDIUM, start=0),
            pod("p3.1", "node3", priority=MID, res=MEDIUM, start=0),
            pod("p3.2", "node3", priority=MID, res=MEDIUM, start=0),
        ],
        pod("p", priority=HIGH, res=VERY_LARGE),
        {"node2"},
        id="same-highest-priority-smallest-sum",
    ),
    pytest.param(
        3,
        [
            pod("p1.1", "node1", priority=MID, res=SMALL, start=0),
            pod("p1.2", "node1", priority=NEG, res=SMALL, start=0),
            pod("p1.3", "node1", priority=MID, res=SMALL, start=0),
            pod("p1.4", "node1", priority=NEG, res=SMALL, start=0),
            pod("p2.1", "node2", priority=MID, res=LARGE, start=0),
            pod("p2.2", "node2", priority=NEG, res=MEDIUM, start=0),
            pod("p3.1", "node3", priority=MID, res=MEDIUM, start=0),
            pod("p3.2", "node3", priority=NEG, res=SMALL, start=0),
            pod("p3.3", "node3", priority=LOW, res=SMALL, start=0),
        ],
        pod("p", priority=HIGH, res=VERY_LARGE),
        {"node2"},
        id="same-priority-and-sum-fewest-victims",
    ),
    pytest.param(
        3,
        [
            pod("p1.1", "node1", priority=MID, res=SMALL, start=0),
            pod("p1.2", "node1", priority=NEG, res=SMALL, start=0),
            pod("p1.3", "node1", priority=NEG, res=SMALL, start=0),
            pod("p2.1", "node2", priority=MID, res=LARGE, start=0),
            pod("p2.2", "node2", priority=NEG, res=MEDIUM, start=0),
            pod("p3.1", "node3", priority=MID, res=MEDIUM, start=0),
            pod("p3.2", "node3", priority=NEG, res=SMALL, start=0),
            pod("p3.3", "node3", priority=LOW, res=SMALL, start=0),
        ],
        pod("p", priority=HIGH, res=VERY_LARGE),
        {"node2"},
        id="sum-of-shifted-priorities",
    ),
    pytest.param(
        4,
        [
            pod("p1.1", "node1", priority=MID, res=SMALL, start=0),
            pod("p1.2", "node1", priority=LOW, res=SMALL, start=0),
            pod("p1.3", "node1", priority=LOW, res=SMALL, start=0),
            pod("p2.1", "node2", priority=HIGH, res=LARGE, start=0),
            pod("p3.1", "node3", priority=MID, res=MEDIUM, start=0),
            pod("p3.2", "node3", priority=LOW, res=SMALL, start=0),
            pod("p3.3", "node3", priority=LOW, res=SMALL, start=0),
            pod("p3.4", "node3", priority=LOW, res=MEDIUM, start=0),
            pod("p4.1", "node4", priority=MID, res=MEDIUM, start=0),
            pod("p4.2", "node4", priority=MID, res=SMALL, start=0),
            pod("p4.3", "node4", priority=MID, res=SMALL, start=0),
            pod("p4.4", "node4", priority=NEG, res=SMALL, start=0),
        ],
        pod("p", priority=VERY_HIGH, res=VERY_LARGE),
        {"node1"},
        id="non-overlapping-criteria",
    ),
    pytest.param(
        3,
        [
            pod("p1.1", "node1", priority=MID, res=MEDIUM, start=2),
            pod("p1.2", "node1", priority=MID, res=MEDIUM, start=2),
            pod("p2.1", "node2", priority=MID, res=MEDIUM, start=3),
            pod("p2.2", "node2", priority=MID, res=MEDIUM, start=3),
            pod("p3.1", "node3", priority=MID, res=MEDIUM, start=1),
            pod("p3.2", "node3", priority=MID, res=MEDIUM, start=1),
        ],
        pod("p", priority=HIGH, res=VERY_LARGE),
        {"node2"},
        id="all-else-equal-latest-start-per-node",
    ),
    pytest.param(
        3,
        [
            pod("p1.1", "node1", priority=MID, res=MEDIUM, start=4),
            pod("p1.2", "node1", priority=MID, res=MEDIUM, start=2),
            pod("p2.1", "node2", priority=MID, res=MEDIUM, start=5),
            pod("p2.2", "node2", priority=MID, res=MEDIUM, start=1),
            pod("p3.1", "node3", priority=MID, res=MEDIUM, start=3),
            pod("p3.2", "node3", priority=MID, res=MEDIUM, start=6),
        ],
        pod("p", priority=HIGH, res=VERY_LARGE),
        {"node3"},
        id="all-else-equal-latest-earliest-start",
    ),
    pytest.param(
        3,
        [
            pod("p1.1", "node1", priority=LOW, res=MEDIUM, start=4),
            pod("p1.2", "node1", priority=MID, res=MEDIUM, start=2),
            pod("p2.1", "node2", priority=MID, res=MEDIUM, start=6),
            pod("p2.2", "node2", priority=LOW, res=MEDIUM, start=1),
            pod("p3.1", "node3", priority=LOW, res=MEDIUM, start=3),
            pod("p3.2", "node3", priority=MID, res=MEDIUM, start=5),
        ],
        pod("p", priority=HIGH, res=VERY_LARGE),
        {"node2"},
        id="start-of-the-highest-priority-victims-only",
    ),
]


@pytest.mark.parametrize(("count", "pods", "preemptor", "expected"), SELECT)
def test_select_best_candidate(
    count: int, pods: list[Raw], preemptor: Raw, expected: set[str]
) -> None:
    """kube's order: fewest budget violations, lowest highest priority, smallest sum,
    fewest victims, latest start of the highest-priority victims."""
    _, profile = setup([node(f"node{i}") for i in range(1, count + 1)], pods)
    target, fit = fail(profile, preemptor)
    result = profile.run_post_filter(pre_filtered(profile, target), target, fit)
    assert result.status.is_success, result.status
    assert result.nominated_node in expected


def test_fewest_budget_violations_win_over_lower_priorities() -> None:
    """A node whose victims break a budget loses to one whose (higher) victims break none."""
    _, profile = setup(
        [node("node1"), node("node2")],
        [
            pod("p1", "node1", priority=LOW, res=LARGE, labels={"app": "foo"}),
            pod("p2", "node2", priority=MID, res=LARGE),
        ],
        budgets=[pdb(0)],
    )
    target, fit = fail(profile, pod("p", priority=HIGH, res=LARGE))
    result = profile.run_post_filter(pre_filtered(profile, target), target, fit)
    assert (result.nominated_node, [v.name for v in result.victims]) == ("node2", ["p2"])
    assert result.pdb_violations == 0


# -- eligibility (TestPodEligibleToPreemptOthers) -----------------------------------------


def _deleting(raw: Raw) -> Raw:
    raw["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:09Z"
    return raw


def _preempted(raw: Raw) -> Raw:
    _deleting(raw)
    raw["status"]["conditions"] = [
        {"type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler"}
    ]
    return raw


def _nominated(raw: Raw, node_name: str) -> Raw:
    raw["status"]["nominatedNodeName"] = node_name
    return raw


@pytest.mark.parametrize(
    ("pods", "preemptor", "unresolvable", "expected"),
    [
        pytest.param(
            [_preempted(pod("p1", "node1", priority=LOW, res=LARGE))],
            _nominated(pod("p", priority=HIGH, res=LARGE), "node1"),
            False,
            (False, "not eligible due to a terminating pod on the nominated node."),
            id="nominated-node-has-a-victim-terminating",
        ),
        pytest.param(
            [_preempted(pod("p1", "node1", priority=LOW, res=LARGE))],
            pod("p", priority=HIGH, res=LARGE),
            False,
            (True, ""),
            id="no-nominated-node",
        ),
        pytest.param(
            [pod("p1", "node1", priority=LOW, res=LARGE)],
            pod("p", priority=HIGH, res=LARGE, preemption_policy="Never"),
            False,
            (False, "not eligible due to preemptionPolicy=Never."),
            id="preemption-policy-never",
        ),
        pytest.param(
            [_deleting(pod("p1", "node1", priority=LOW, res=LARGE))],
            _nominated(pod("p", priority=HIGH, res=LARGE), "node1"),
            False,
            (True, ""),
            id="terminating-for-another-reason-than-preemption",
        ),
        pytest.param(
            [_preempted(pod("p1", "node1", priority=VERY_HIGH, res=LARGE))],
            _nominated(pod("p", priority=HIGH, res=LARGE), "node1"),
            False,
            (True, ""),
            id="terminating-victim-of-higher-priority-is-not-ours",
        ),
        pytest.param(
            [_preempted(pod("p1", "node1", priority=LOW, res=LARGE))],
            _nominated(pod("p", priority=HIGH, res=LARGE), "node1"),
            True,
            (True, ""),
            id="nominated-node-now-unresolvable",
        ),
    ],
)
def test_pod_eligible_to_preempt_others(
    pods: list[Raw], preemptor: Raw, unresolvable: bool, expected: tuple[bool, str]
) -> None:
    """preemptionPolicy Never, and victims of an earlier preemption still terminating on the
    nominated node, keep a pod from preempting (unless that node is now out of reach)."""
    taints = [taint("gone")] if unresolvable else None
    _, profile = setup([make_node("node1", cpu="500m", memory="500", taints=taints)], pods)
    target, fit = fail(profile, preemptor)
    assert plugin_of(profile).eligible(target, fit.diagnosis) == expected


# -- PostFilter's messages (TestPostFilter) -----------------------------------------------

ONE_CPU = ("1", "500")


def _crowded(name: str) -> list[Raw]:
    """A low-priority pod that could go and a high-priority one that stays."""
    return [
        pod(f"{name}-low", name, priority=LOW, res=("100m", "1")),
        pod(f"{name}-high", name, priority=HIGH, res=("500m", "1")),
    ]


POST_FILTER = [
    pytest.param(
        [node("node1")],
        [pod("p1", "node1", priority=LOW, res=VERY_LARGE)],
        pod("p", priority=HIGH, res=VERY_LARGE),
        "preemption: found a potential placement for pod on node node1, preempting 1 victims",
        "node1",
        id="higher-priority-pod-can-be-made-schedulable",
    ),
    pytest.param(
        [node("node1")],
        [pod("p1", "node1", priority=HIGH, res=VERY_LARGE)],
        pod("p", priority=HIGH, res=VERY_LARGE),
        "preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.",
        "",
        id="tied-priority-still-unschedulable",
    ),
    pytest.param(
        [make_node("node1", cpu="500m", memory="500", taints=[taint("x")])],
        [pod("p1", "node1", priority=LOW, res=VERY_LARGE)],
        pod("p", priority=HIGH, res=VERY_LARGE),
        "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.",
        "",
        id="unresolvable-node-is-not-helped",
    ),
    pytest.param(
        [node("node1", res=ONE_CPU), node("node2", res=ONE_CPU)],
        [*_crowded("node1"), *_crowded("node2")],
        pod("p", priority=HIGH, res=("600m", "1")),
        "preemption: 0/2 nodes are available: 2 Insufficient cpu.",
        "",
        id="not-enough-even-after-removing-lower-priority-pods",
    ),
    pytest.param(
        [node("node1", res=ONE_CPU), node("node2", res=ONE_CPU), node("node3", res=ONE_CPU)],
        [
            *_crowded("node1"),
            pod("p2", "node2", priority=HIGH, res=ONE_CPU),
            pod("p3", "node3", priority=HIGH, res=ONE_CPU),
        ],
        pod("p", priority=HIGH, res=("600m", "1")),
        "preemption: 0/3 nodes are available: 1 Insufficient cpu, "
        "2 No preemption victims found for incoming pod.",
        "",
        id="mixed-reasons-no-lower-pod-and-not-enough-cpu",
    ),
    pytest.param(
        [
            node("node1", res=ONE_CPU),
            node("node2", res=ONE_CPU),
            make_node("node3", cpu="1", memory="500", taints=[taint("x")]),
            make_node("node4", cpu="1", memory="500", unschedulable=True),
        ],
        [*_crowded("node1"), *_crowded("node2")],
        pod("p", priority=HIGH, res=("600m", "1")),
        "preemption: 0/4 nodes are available: 2 Insufficient cpu, "
        "2 Preemption is not helpful for scheduling.",
        "",
        id="two-unresolvable-two-not-enough-cpu",
    ),
    pytest.param(
        [node("node1")],
        [pod("p1", "node1", priority=LOW, res=VERY_LARGE)],
        pod("p", priority=HIGH, res=VERY_LARGE, preemption_policy="Never"),
        "preemption: not eligible due to preemptionPolicy=Never.",
        None,
        id="preemption-policy-never-leaves-the-nomination",
    ),
]


@pytest.mark.parametrize(("nodes", "pods", "preemptor", "message", "nominated"), POST_FILTER)
def test_post_filter_messages(
    nodes: list[Raw], pods: list[Raw], preemptor: Raw, message: str, nominated: str | None
) -> None:
    """PostFilter's status message, prefixed ``preemption: `` (kube's words), and the
    nomination it asks for ("" clears one)."""
    _, profile = setup(nodes, pods)
    target, fit = fail(profile, preemptor)
    result = profile.run_post_filter(pre_filtered(profile, target), target, fit)
    assert result.status.message() == message
    assert result.nominated_node == nominated
    # kube names the first PostFilter plugin that rejected: DynamicResources runs first in
    # the default profile and rejects a pod without claims with no reason.
    expected = "DefaultPreemption" if result.status.is_success else "DynamicResources"
    assert result.status.plugin == expected


def test_pods_of_other_schedulers_can_be_victims() -> None:
    """kube preempts any lower-priority pod on the node, whoever scheduled it."""
    _, profile = setup(
        [node("node1")],
        [pod("other", "node1", priority=LOW, res=VERY_LARGE, scheduler_name="default-scheduler")],
    )
    target, fit = fail(profile, pod("p", priority=HIGH, res=VERY_LARGE))
    result = profile.run_post_filter(pre_filtered(profile, target), target, fit)
    assert [v.name for v in result.victims] == ["other"]


def test_no_post_filter_plugins_clears_the_nomination() -> None:
    """Without PostFilter plugins the result is Unschedulable and clears a nomination."""
    config = config_with(profiles=[{"plugins": {"postFilter": {"disabled": [{"name": "*"}]}}}])
    _, profile = setup([node("node1")], [pod("p1", "node1", res=VERY_LARGE)], config=config)
    target, fit = fail(profile, pod("p", priority=HIGH, res=VERY_LARGE))
    result = profile.run_post_filter(pre_filtered(profile, target), target, fit)
    assert (result.status.is_rejected, result.nominated_node, result.victims) == (True, "", ())


def test_split_by_budget_spends_allowances_in_order() -> None:
    """Each budget's allowance is spent in the given order; pods without labels, of other
    namespaces, or already disrupted spend nothing."""
    budget = pdb_from_raw(pdb(1, disrupted=("c",)))
    pods = [
        pod_from_raw(pod(name, "n", labels=labels, namespace=namespace))
        for name, labels, namespace in [
            ("a", {"app": "foo"}, "default"),
            ("b", None, "default"),
            ("c", {"app": "foo"}, "default"),
            ("d", {"app": "foo"}, "other"),
            ("e", {"app": "foo"}, "default"),
        ]
    ]
    violating, keeping = preemption.split_by_budget(pods, [budget])
    assert [p.name for p in violating] == ["e"]
    assert [p.name for p in keeping] == ["a", "b", "c", "d"]
