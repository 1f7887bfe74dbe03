"""PodTopologySpread: filter statuses, normalized scores, args and signing, ported from kube's
podtopologyspread filtering_test.go / scoring_test.go (cases restated, expectations exact)."""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

import pytest

from scheduler.cache.node_info import NodeInfo
from scheduler.cache.snapshot import Snapshot
from scheduler.framework import status as st
from scheduler.framework.config import PluginSpec
from scheduler.framework.cycle_state import CycleState
from scheduler.framework.diagnosis import FitError
from scheduler.framework.interfaces import ExactOnly
from scheduler.framework.profile import Profile
from scheduler.framework.results import ScheduleResult
from scheduler.model import parse
from scheduler.plugins import score_math
from scheduler.plugins.pod_topology_spread import PodTopologySpread
from tests.builders import make_node, make_pod, taint, toleration

Raw = dict[str, Any]

FOO = {"matchExpressions": [{"key": "foo", "operator": "Exists"}]}
BAR = {"matchExpressions": [{"key": "bar", "operator": "Exists"}]}
HOSTNAME = "kubernetes.io/hostname"
MISSING_LABEL = "node(s) didn't match pod topology spread constraints (missing required label)"
NOT_MATCH = "node(s) didn't match pod topology spread constraints"

OK = st.SUCCESS
SKEW = st.unschedulable(NOT_MATCH)
NO_KEY = st.unresolvable(MISSING_LABEL)


@dataclass
class FakeHandle:
    snapshot: Snapshot


def spread(
    max_skew: int,
    key: str,
    when: str = "DoNotSchedule",
    selector: Raw | None = FOO,
    **extra: Any,
) -> Raw:
    constraint: Raw = {"maxSkew": max_skew, "topologyKey": key, "whenUnsatisfiable": when}
    if selector is not None:
        constraint["labelSelector"] = selector
    constraint.update(extra)
    return constraint


def incoming(*constraints: Raw, labels: dict[str, str] | None = None, **kw: Any) -> Raw:
    return make_pod(
        "p",
        labels={"foo": ""} if labels is None else labels,
        topology_spread=list(constraints),
        **kw,
    )


def node(
    name: str, *, hostname: bool = True, taints: list[Raw] | None = None, **labels: str
) -> Raw:
    raw = make_node(name, labels=labels, taints=taints)
    if not hostname:
        del raw["metadata"]["labels"][HOSTNAME]
    return raw


def on(
    node_name: str,
    name: str,
    *,
    namespace: str = "default",
    terminating: bool = False,
    **labels: str,
) -> Raw:
    raw = make_pod(name, node_name=node_name, namespace=namespace, labels=labels or {"foo": ""})
    if terminating:
        raw["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    return raw


def pods_on(node_name: str, count: int) -> list[Raw]:
    return [on(node_name, f"{node_name}-{i}") for i in range(count)]


def snapshot_of(nodes: list[Raw], pods: list[Raw]) -> Snapshot:
    infos = {raw["metadata"]["name"]: NodeInfo(parse.node_from_raw(raw)) for raw in nodes}
    for raw in pods:
        pod = parse.pod_from_raw(raw)
        infos[pod.node_name].add_pod(pod)
    return Snapshot.of(infos.values())


def plugin(snapshot: Snapshot, args: Raw | None = None) -> PodTopologySpread:
    return PodTopologySpread(args or {}, FakeHandle(snapshot))


def four_nodes(**extra: dict[str, str]) -> list[Raw]:
    """node-a/node-b in zone1, node-x/node-y in zone2; label ``node`` names the node."""
    return [
        make_node(n, labels={"zone": z, "node": n, **extra.get(n, {})})
        for n, z in (
            ("node-a", "zone1"),
            ("node-b", "zone1"),
            ("node-x", "zone2"),
            ("node-y", "zone2"),
        )
    ]


SPREAD_2_1_0_3 = [*pods_on("node-a", 2), *pods_on("node-b", 1), *pods_on("node-y", 3)]
HARD_ZONE = spread(1, "zone")
HARD_NODE = spread(1, "node")


def _filter_all(pod_raw: Raw, nodes: list[Raw], pods: list[Raw]) -> dict[str, st.Status]:
    snap = snapshot_of(nodes, pods)
    pl = plugin(snap)
    pod = parse.pod_from_raw(pod_raw)
    state = CycleState()
    _, pre = pl.pre_filter(state, pod, snap)
    assert pre.is_success, pre
    return {info.name: pl.filter(state, pod, info) for info in snap.node_infos}


def _codes(statuses: dict[str, st.Status]) -> dict[str, tuple[st.Code, tuple[str, ...]]]:
    return {name: (s.code, s.reasons) for name, s in statuses.items()}


ALL = ("node-a", "node-b", "node-x", "node-y")


def expect(**by_node: st.Status) -> dict[str, st.Status]:
    return {name: by_node.get(name.replace("node-", ""), OK) for name in ALL}


@pytest.mark.parametrize(
    ("pod", "nodes", "pods", "want"),
    [
        pytest.param(
            incoming(HARD_ZONE), four_nodes(), [], expect(), id="no-existing-pods-every-node-fits"
        ),
        pytest.param(
            incoming(HARD_ZONE, labels={}),
            four_nodes(),
            [],
            expect(),
            id="no-existing-pods-pod-not-matching-itself-fits-everywhere",
        ),
        pytest.param(
            incoming(HARD_ZONE),
            four_nodes(),
            [
                on("node-a", "a1", namespace="other"),
                on("node-b", "b1", namespace="other"),
                on("node-x", "x1"),
            ],
            expect(x=SKEW, y=SKEW),
            id="pods-in-another-namespace-do-not-count",
        ),
        pytest.param(
            incoming(HARD_ZONE),
            four_nodes(),
            [
                *pods_on("node-a", 2),
                *pods_on("node-b", 1),
                *pods_on("node-x", 2),
                *pods_on("node-y", 1),
            ],
            expect(),
            id="zones-spread-3-3-every-node-fits",
        ),
        pytest.param(
            incoming(HARD_ZONE),
            [
                node("node-a", zone="zone1"),
                node("node-b"),
                node("node-x", zone="zone2"),
                node("node-y", zone="zone2"),
            ],
            [on("node-a", "a1"), on("node-b", "b1"), on("node-x", "x1"), on("node-y", "y1")],
            expect(b=NO_KEY, x=SKEW, y=SKEW),
            id="node-without-zone-label-is-unresolvable-and-its-pods-do-not-count",
        ),
        pytest.param(
            incoming(spread(1, "rack")),
            four_nodes(),
            [],
            expect(a=NO_KEY, b=NO_KEY, x=NO_KEY, y=NO_KEY),
            id="no-node-has-the-topology-key",
        ),
        pytest.param(
            incoming(HARD_NODE),
            four_nodes(),
            SPREAD_2_1_0_3,
            expect(a=SKEW, b=SKEW, y=SKEW),
            id="nodes-spread-2-1-0-3-only-the-empty-node-fits",
        ),
        pytest.param(
            incoming(spread(2, "node")),
            four_nodes(),
            SPREAD_2_1_0_3,
            expect(a=SKEW, y=SKEW),
            id="nodes-spread-2-1-0-3-max-skew-2-two-nodes-fit",
        ),
        pytest.param(
            incoming(HARD_NODE, labels={"bar": ""}),
            four_nodes(),
            SPREAD_2_1_0_3,
            expect(a=SKEW, y=SKEW),
            id="pod-not-matching-itself-adds-no-self-match",
        ),
        pytest.param(
            incoming(
                HARD_NODE,
                affinity={
                    "nodeAffinity": {
                        "requiredDuringSchedulingIgnoredDuringExecution": {
                            "nodeSelectorTerms": [
                                {
                                    "matchExpressions": [
                                        {
                                            "key": "node",
                                            "operator": "In",
                                            "values": ["node-a", "node-y"],
                                        }
                                    ]
                                }
                            ]
                        }
                    }
                },
            ),
            four_nodes(),
            SPREAD_2_1_0_3,
            # Only node-a and node-y are counted (minimum 2); NodeAffinity rejects b and x.
            expect(y=SKEW),
            id="node-affinity-honored-counts-only-eligible-nodes",
        ),
        pytest.param(
            incoming(spread(1, "node", nodeAffinityPolicy="Ignore"), node_selector={"pick": "yes"}),
            four_nodes(**{"node-a": {"pick": "yes"}, "node-y": {"pick": "yes"}}),
            SPREAD_2_1_0_3,
            expect(a=SKEW, b=SKEW, y=SKEW),
            id="node-affinity-policy-ignore-counts-every-node",
        ),
        pytest.param(
            incoming(spread(1, "node", nodeAffinityPolicy="Honor"), node_selector={"pick": "yes"}),
            four_nodes(**{"node-a": {"pick": "yes"}, "node-y": {"pick": "yes"}}),
            SPREAD_2_1_0_3,
            expect(y=SKEW),
            id="node-affinity-policy-honor-applies-the-node-selector",
        ),
        pytest.param(
            incoming(spread(1, "node", nodeTaintsPolicy="Honor")),
            [
                node("node-a", node="node-a"),
                node("node-b", node="node-b"),
                node("node-x", node="node-x", taints=[taint("dedicated", "db")]),
                node("node-y", node="node-y"),
            ],
            [on("node-a", "a1"), on("node-b", "b1"), on("node-y", "y1")],
            # The tainted empty node is not counted, so the minimum is 1, not 0.
            expect(),
            id="node-taints-policy-honor-skips-untolerated-tainted-nodes",
        ),
        pytest.param(
            incoming(
                spread(1, "node", nodeTaintsPolicy="Honor"),
                tolerations=[toleration("dedicated", "db", "NoSchedule")],
            ),
            [
                node("node-a", node="node-a"),
                node("node-b", node="node-b"),
                node("node-x", node="node-x", taints=[taint("dedicated", "db")]),
                node("node-y", node="node-y"),
            ],
            [on("node-a", "a1"), on("node-b", "b1"), on("node-y", "y1")],
            expect(a=SKEW, b=SKEW, y=SKEW),
            id="node-taints-policy-honor-counts-tolerated-tainted-nodes",
        ),
        pytest.param(
            incoming(spread(1, "node", nodeTaintsPolicy="Honor")),
            [
                node("node-a", node="node-a"),
                node("node-b", node="node-b"),
                node(
                    "node-x",
                    node="node-x",
                    taints=[taint("dedicated", "db", effect="PreferNoSchedule")],
                ),
                node("node-y", node="node-y"),
            ],
            [on("node-a", "a1"), on("node-b", "b1"), on("node-y", "y1")],
            expect(a=SKEW, b=SKEW, y=SKEW),
            id="node-taints-policy-honor-ignores-prefer-no-schedule-taints",
        ),
        pytest.param(
            incoming(spread(1, "node")),
            [
                node("node-a", node="node-a"),
                node("node-b", node="node-b"),
                node("node-x", node="node-x", taints=[taint("dedicated", "db")]),
                node("node-y", node="node-y"),
            ],
            [on("node-a", "a1"), on("node-b", "b1"), on("node-y", "y1")],
            expect(a=SKEW, b=SKEW, y=SKEW),
            id="node-taints-policy-defaults-to-ignore",
        ),
        pytest.param(
            incoming(spread(1, "zone", minDomains=3)),
            four_nodes(),
            [on("node-a", "a1"), on("node-x", "x1")],
            expect(a=SKEW, b=SKEW, x=SKEW, y=SKEW),
            id="fewer-domains-than-min-domains-make-the-minimum-zero",
        ),
        pytest.param(
            incoming(spread(1, "zone", minDomains=2)),
            four_nodes(),
            [on("node-a", "a1"), on("node-x", "x1")],
            expect(),
            id="min-domains-reached-keeps-the-real-minimum",
        ),
        pytest.param(
            incoming(HARD_NODE),
            four_nodes(),
            [on("node-a", "a1", terminating=True), on("node-b", "b1")],
            expect(b=SKEW),
            id="terminating-pods-are-not-counted",
        ),
        pytest.param(
            incoming(spread(1, "node", selector=None)),
            four_nodes(),
            SPREAD_2_1_0_3,
            expect(),
            id="nil-selector-matches-no-pod",
        ),
        pytest.param(
            incoming(spread(1, "node", selector={})),
            four_nodes(),
            SPREAD_2_1_0_3,
            expect(),
            id="empty-selector-counts-no-pod-so-every-node-fits",
        ),
        pytest.param(
            incoming(HARD_ZONE, HARD_NODE),
            four_nodes(),
            SPREAD_2_1_0_3,
            expect(a=SKEW, b=SKEW, y=SKEW),
            id="zone-and-node-constraints-3-3-and-2-1-0-3-only-node-x-fits",
        ),
        pytest.param(
            incoming(HARD_ZONE, HARD_NODE),
            four_nodes(),
            [on("node-a", "a1"), *pods_on("node-y", 2)],
            expect(a=SKEW, x=SKEW, y=SKEW),
            id="zone-and-node-constraints-each-reject-different-nodes",
        ),
        pytest.param(
            incoming(HARD_ZONE, HARD_NODE),
            [
                node("node-a", zone="zone1", node="node-a"),
                node("node-b", zone="zone1"),
                node("node-x", zone="zone2", node="node-x"),
                node("node-y", zone="zone2", node="node-y"),
            ],
            [],
            expect(b=NO_KEY),
            id="node-missing-one-of-two-keys-is-unresolvable",
        ),
        pytest.param(
            incoming(HARD_ZONE, spread(1, "zone", "ScheduleAnyway")),
            four_nodes(),
            [*pods_on("node-x", 2)],
            expect(x=SKEW, y=SKEW),
            id="soft-constraints-do-not-filter",
        ),
    ],
)
def test_filter(pod: Raw, nodes: list[Raw], pods: list[Raw], want: dict[str, st.Status]) -> None:
    """Filter returns kube's status and reason for each node after PreFilter counted pods."""
    assert _codes(_filter_all(pod, nodes, pods)) == _codes(want)


@pytest.mark.parametrize(
    "pod",
    [
        pytest.param(make_pod("p"), id="no-constraints"),
        pytest.param(incoming(spread(1, "zone", "ScheduleAnyway")), id="only-soft-constraints"),
    ],
)
def test_pre_filter_skips_without_hard_constraints(pod: Raw) -> None:
    """PreFilter returns Skip when the pod has no DoNotSchedule constraint."""
    snap = snapshot_of(four_nodes(), [])
    _, status = plugin(snap).pre_filter(CycleState(), parse.pod_from_raw(pod), snap)
    assert status.is_skip


def test_filter_leaves_pre_filter_state_untouched() -> None:
    """Filter reads the PreFilter state only: a cloned state gives the same answers."""
    nodes, pods = four_nodes(), SPREAD_2_1_0_3
    snap = snapshot_of(nodes, pods)
    pl = plugin(snap)
    pod = parse.pod_from_raw(incoming(HARD_NODE))
    state = CycleState()
    pl.pre_filter(state, pod, snap)
    first = [pl.filter(state.clone(), pod, info).code for info in snap.node_infos]
    second = [pl.filter(state, pod, info).code for info in snap.node_infos]
    assert (
        first
        == second
        == [st.Code.UNSCHEDULABLE, st.Code.UNSCHEDULABLE, st.Code.SUCCESS, st.Code.UNSCHEDULABLE]
    )


# -- scoring ------------------------------------------------------------------------------

SOFT_HOST = spread(1, HOSTNAME, "ScheduleAnyway")
SOFT_ZONE = spread(1, "zone", "ScheduleAnyway")


def host_nodes(*names: str) -> list[Raw]:
    return [node(n) for n in names]


def zone_nodes(*pairs: tuple[str, str]) -> list[Raw]:
    return [node(n, zone=z) for n, z in pairs]


def _scores(pod_raw: Raw, candidates: list[Raw], failed: list[Raw], pods: list[Raw]) -> list[int]:
    snap = snapshot_of([*candidates, *failed], pods)
    pl = plugin(snap)
    pod = parse.pod_from_raw(pod_raw)
    names = [raw["metadata"]["name"] for raw in candidates]
    infos = [info for info in snap.node_infos if info.name in names]
    state = CycleState()
    status = pl.pre_score(state, pod, infos)
    assert status.is_success, status
    scores = [pl.score(state, pod, info) for info in infos]
    assert pl.normalize_score(state, pod, infos, scores).is_success
    return scores


ZONES_ABXY = (("node-a", "zone1"), ("node-b", "zone1"), ("node-x", "zone2"), ("node-y", "zone2"))
PODS_4_2_1_3 = [
    *pods_on("node-a", 4),
    *pods_on("node-b", 2),
    *pods_on("node-x", 1),
    *pods_on("node-y", 3),
]


@pytest.mark.parametrize(
    ("pod", "candidates", "failed", "pods", "want"),
    [
        pytest.param(
            incoming(SOFT_HOST),
            host_nodes("node-a", "node-b"),
            [],
            [],
            [100, 100],
            id="hostname-no-existing-pods-all-max",
        ),
        pytest.param(
            incoming(SOFT_HOST),
            host_nodes("node-a"),
            host_nodes("node-b"),
            [*pods_on("node-a", 2), *pods_on("node-b", 1)],
            [100],
            id="hostname-single-candidate-gets-max",
        ),
        pytest.param(
            incoming(SOFT_HOST),
            host_nodes("node-a", "node-b"),
            [],
            [*pods_on("node-a", 1), *pods_on("node-b", 1)],
            [100, 100],
            id="hostname-equal-counts-all-max",
        ),
        pytest.param(
            incoming(SOFT_HOST),
            host_nodes("node-a", "node-b", "node-c", "node-d"),
            [],
            [*pods_on("node-a", 2), *pods_on("node-b", 1), *pods_on("node-d", 3)],
            [20, 60, 100, 0],
            id="hostname-spread-2-1-0-3",
        ),
        pytest.param(
            incoming(spread(1, HOSTNAME, "ScheduleAnyway", selector=None)),
            host_nodes("node-a", "node-b", "node-c", "node-d"),
            [],
            [*pods_on("node-a", 2), *pods_on("node-b", 1), *pods_on("node-d", 3)],
            [100, 100, 100, 100],
            id="hostname-nil-selector-counts-nothing",
        ),
        pytest.param(
            incoming(spread(1, HOSTNAME, "ScheduleAnyway", selector={})),
            host_nodes("node-a", "node-b", "node-c", "node-d"),
            [],
            [*pods_on("node-a", 2), *pods_on("node-b", 1), *pods_on("node-d", 3)],
            [100, 100, 100, 100],
            id="hostname-empty-selector-counts-nothing",
        ),
        pytest.param(
            incoming(spread(1, "zone", "ScheduleAnyway", selector={}, matchLabelKeys=["foo"])),
            zone_nodes(*ZONES_ABXY),
            [],
            [*pods_on("node-a", 1), on("node-x", "x1", bar="")],
            [0, 0, 100, 100],
            id="empty-selector-with-match-label-keys-counts-the-merged-labels",
        ),
        pytest.param(
            incoming(spread(2, HOSTNAME, "ScheduleAnyway")),
            host_nodes("node-a", "node-b", "node-c", "node-d"),
            [],
            [*pods_on("node-a", 2), *pods_on("node-b", 1), *pods_on("node-d", 3)],
            [33, 66, 100, 16],
            id="hostname-spread-2-1-0-3-max-skew-2-softens",
        ),
        pytest.param(
            incoming(spread(3, HOSTNAME, "ScheduleAnyway")),
            host_nodes("node-a", "node-b", "node-c", "node-d"),
            [],
            [
                *pods_on("node-a", 4),
                *pods_on("node-b", 3),
                *pods_on("node-c", 2),
                *pods_on("node-d", 1),
            ],
            [44, 66, 77, 100],
            id="hostname-spread-4-3-2-1-max-skew-3",
        ),
        pytest.param(
            incoming(SOFT_HOST),
            host_nodes("node-a", "node-b", "node-x"),
            host_nodes("node-y"),
            PODS_4_2_1_3,
            [33, 83, 100],
            id="hostname-three-of-four-nodes-are-candidates",
        ),
        pytest.param(
            incoming(SOFT_HOST),
            [node("node-a"), node("node-b", hostname=False, n="node-b"), node("node-x")],
            host_nodes("node-y"),
            PODS_4_2_1_3,
            [16, 0, 100],
            id="hostname-candidate-without-the-key-is-ignored-and-scores-zero",
        ),
        pytest.param(
            incoming(SOFT_ZONE),
            zone_nodes(*ZONES_ABXY[:3]),
            zone_nodes(ZONES_ABXY[3]),
            PODS_4_2_1_3,
            [75, 75, 100],
            id="zone-counts-include-pods-on-failed-nodes",
        ),
        pytest.param(
            incoming(SOFT_ZONE, SOFT_HOST),
            zone_nodes(ZONES_ABXY[0], ZONES_ABXY[2]),
            zone_nodes(ZONES_ABXY[1], ZONES_ABXY[3]),
            [
                *pods_on("node-a", 2),
                *pods_on("node-b", 1),
                *pods_on("node-x", 2),
                *pods_on("node-y", 4),
            ],
            [100, 63],
            id="zone-and-hostname-two-of-four-candidates",
        ),
        pytest.param(
            incoming(
                SOFT_ZONE,
                spread(1, "zone", "ScheduleAnyway", selector=BAR),
                labels={"foo": "", "bar": ""},
            ),
            zone_nodes(ZONES_ABXY[0], ZONES_ABXY[2]),
            zone_nodes(ZONES_ABXY[1], ZONES_ABXY[3]),
            [
                on("node-a", "a1", foo="", bar=""),
                on("node-a", "a2"),
                on("node-b", "b1", foo="", bar=""),
                on("node-y", "y1"),
                on("node-y", "y2", foo="", bar=""),
                on("node-y", "y3"),
            ],
            [85, 100],
            id="two-zone-constraints-with-different-selectors",
        ),
        pytest.param(
            incoming(
                SOFT_ZONE,
                spread(1, HOSTNAME, "ScheduleAnyway", selector=BAR),
                labels={"foo": "", "bar": ""},
            ),
            zone_nodes(*ZONES_ABXY),
            [],
            [
                on("node-a", "a1"),
                on("node-b", "b1", foo="", bar=""),
                on("node-y", "y1"),
                on("node-y", "y2", bar=""),
            ],
            [60, 20, 100, 60],
            id="zone-and-hostname-with-different-selectors",
        ),
        pytest.param(
            incoming(
                SOFT_ZONE,
                spread(1, HOSTNAME, "ScheduleAnyway", selector=BAR),
                labels={"foo": "", "bar": ""},
            ),
            zone_nodes(*ZONES_ABXY),
            [],
            [on("node-b", "b1", bar=""), on("node-x", "x1"), on("node-y", "y1", foo="", bar="")],
            [100, 60, 40, 0],
            id="zone-and-hostname-with-different-selectors-some-empty-nodes",
        ),
        pytest.param(
            incoming(
                SOFT_ZONE,
                spread(1, HOSTNAME, "ScheduleAnyway", selector=BAR),
                labels={"foo": "", "bar": ""},
            ),
            zone_nodes(*ZONES_ABXY[:3]),
            zone_nodes(ZONES_ABXY[3]),
            [
                on("node-a", "a1"),
                on("node-b", "b1", foo="", bar=""),
                on("node-y", "y1"),
                on("node-y", "y2", bar=""),
            ],
            [50, 25, 100],
            id="zone-and-hostname-with-different-selectors-three-candidates",
        ),
        pytest.param(
            incoming(SOFT_HOST),
            host_nodes("node-a", "node-b"),
            [],
            [on("node-a", "a1", namespace="ns1"), on("node-a", "a2"), *pods_on("node-b", 2)],
            [100, 33],
            id="pods-in-another-namespace-do-not-count",
        ),
        pytest.param(
            incoming(SOFT_HOST),
            host_nodes("node-a", "node-b"),
            [],
            [on("node-a", "a1", terminating=True), on("node-b", "b1")],
            [100, 0],
            id="terminating-pods-are-not-counted",
        ),
        pytest.param(
            incoming(SOFT_ZONE, node_selector={"pick": "yes"}),
            [node("node-a", zone="zone1", pick="yes"), node("node-x", zone="zone2", pick="yes")],
            [node("node-b", zone="zone1")],
            [*pods_on("node-b", 2), on("node-x", "x1")],
            [100, 0],
            id="node-affinity-policy-honor-leaves-out-pods-on-ineligible-nodes",
        ),
        pytest.param(
            incoming(
                spread(1, "zone", "ScheduleAnyway", nodeAffinityPolicy="Ignore"),
                node_selector={"pick": "yes"},
            ),
            [node("node-a", zone="zone1", pick="yes"), node("node-x", zone="zone2", pick="yes")],
            [node("node-b", zone="zone1")],
            [*pods_on("node-b", 2), on("node-x", "x1")],
            [33, 100],
            id="node-affinity-policy-ignore-counts-pods-on-every-node",
        ),
    ],
)
def test_score(
    pod: Raw, candidates: list[Raw], failed: list[Raw], pods: list[Raw], want: list[int]
) -> None:
    """PreScore → Score → NormalizeScore give kube's exact normalized scores."""
    assert _scores(pod, candidates, failed, pods) == want


@pytest.mark.parametrize(
    "pod",
    [
        pytest.param(make_pod("p"), id="no-constraints"),
        pytest.param(incoming(HARD_ZONE), id="only-hard-constraints"),
    ],
)
def test_pre_score_skips_without_soft_constraints(pod: Raw) -> None:
    """PreScore returns Skip when the pod has no ScheduleAnyway constraint."""
    snap = snapshot_of(four_nodes(), [])
    status = plugin(snap).pre_score(CycleState(), parse.pod_from_raw(pod), snap.node_infos)
    assert status.is_skip


def test_pre_score_skips_without_nodes() -> None:
    """An empty cluster has nothing to score."""
    snap = snapshot_of([], [])
    status = plugin(snap).pre_score(CycleState(), parse.pod_from_raw(incoming(SOFT_ZONE)), [])
    assert status.is_skip


def test_raw_score_is_rounded_not_truncated() -> None:
    """1 pod × log(3 + 2) + (maxSkew − 1) = 3.609… gives 4 (Go's math.Round), empty give 2."""
    nodes = [node("node-a", zone="z1"), node("node-b", zone="z2"), node("node-c", zone="z3")]
    snap = snapshot_of(nodes, [on("node-a", "a1")])
    pl = plugin(snap)
    pod = parse.pod_from_raw(incoming(spread(3, "zone", "ScheduleAnyway")))
    state = CycleState()
    assert pl.pre_score(state, pod, snap.node_infos).is_success
    assert [pl.score(state, pod, info) for info in snap.node_infos] == [4, 2, 2]


# -- args ---------------------------------------------------------------------------------


def _default(**overrides: Any) -> Raw:
    return {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "ScheduleAnyway", **overrides}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        pytest.param(
            {"defaultingType": "List", "defaultConstraints": [_default(maxSkew=0)]},
            "PodTopologySpreadArgs.defaultConstraints[0].maxSkew: must be greater than zero",
            id="max-skew-zero",
        ),
        pytest.param(
            {"defaultConstraints": [_default()]},
            'PodTopologySpreadArgs.defaultingType: invalid value "System": when '
            ".defaultConstraints are not empty",
            id="system-with-constraints",
        ),
        pytest.param(
            {"defaultingType": "Auto"},
            "PodTopologySpreadArgs.defaultingType: unsupported value 'Auto'",
            id="unknown-defaulting-type",
        ),
        pytest.param(
            {"defaultingType": "List", "defaultConstraints": [_default(topologyKey="")]},
            "PodTopologySpreadArgs.defaultConstraints[0].topologyKey",
            id="empty-key",
        ),
        pytest.param(
            {"defaultingType": "List", "defaultConstraints": [_default(whenUnsatisfiable="Never")]},
            "PodTopologySpreadArgs.defaultConstraints[0].whenUnsatisfiable",
            id="bad-when-unsatisfiable",
        ),
        pytest.param(
            {
                "defaultingType": "List",
                "defaultConstraints": [_default(labelSelector={"matchLabels": {"a": "b"}})],
            },
            "PodTopologySpreadArgs.defaultConstraints[0].labelSelector: forbidden",
            id="selector-forbidden",
        ),
        pytest.param(
            {"defaultingType": "List", "defaultConstraints": [_default(), _default()]},
            "PodTopologySpreadArgs.defaultConstraints[1]: duplicate",
            id="duplicate",
        ),
        pytest.param(
            {"defaultingType": "List", "defaultConstraints": [_default(), "zone"]},
            "PodTopologySpreadArgs.defaultConstraints[1]: must be a mapping",
            id="entry-not-a-mapping",
        ),
        pytest.param(
            {"defaultingType": "List", "defaultConstraints": [_default(matchLabelKeys="app")]},
            "PodTopologySpreadArgs.defaultConstraints[0].matchLabelKeys: must be a list of strings",
            id="match-label-keys-not-a-list",
        ),
        pytest.param(
            {"defaultingType": "List", "defaultConstraints": [_default(minDomains=0)]},
            "PodTopologySpreadArgs.defaultConstraints[0].minDomains: must be greater than zero",
            id="min-domains-zero",
        ),
        pytest.param(
            {"defaultingType": "List", "defaultConstraints": [_default(nodeTaintsPolicy="Yes")]},
            "PodTopologySpreadArgs.defaultConstraints[0].nodeTaintsPolicy: unsupported value",
            id="bad-node-taints-policy",
        ),
        pytest.param(
            {"spreadDefaults": []},
            "PodTopologySpreadArgs: unknown field(s): spreadDefaults",
            id="unknown-field",
        ),
    ],
)
def test_args_rejected(args: Raw, message: str) -> None:
    """Invalid PodTopologySpreadArgs raise ValueError naming the field."""
    with pytest.raises(ValueError) as caught:
        plugin(Snapshot(), args)
    assert str(caught.value).startswith(message)


@pytest.mark.parametrize(
    ("args", "defaulting", "count"),
    [
        pytest.param({}, "System", 2, id="empty-means-system-with-its-two-defaults"),
        pytest.param(
            {"kind": "PodTopologySpreadArgs", "defaultingType": "System"},
            "System",
            2,
            id="kind-is-accepted",
        ),
        pytest.param(
            {
                "defaultingType": "List",
                "defaultConstraints": [
                    _default(),
                    _default(whenUnsatisfiable="DoNotSchedule"),
                    _default(topologyKey=HOSTNAME, maxSkew=3),
                ],
            },
            "List",
            3,
            id="list-with-constraints",
        ),
        pytest.param({"defaultingType": "List"}, "List", 0, id="list-without-constraints"),
    ],
)
def test_args_accepted(args: Raw, defaulting: str, count: int) -> None:
    """Valid args are kept as given; System brings kube's hostname/zone pair."""
    pl = plugin(Snapshot(), args)
    assert (pl.defaulting_type, len(pl.default_constraints)) == (defaulting, count)


# -- sign ---------------------------------------------------------------------------------

LIST_ARGS = {"defaultingType": "List", "defaultConstraints": [_default()]}


@pytest.mark.parametrize(
    ("args", "pod", "signable"),
    [
        pytest.param(
            {},
            make_pod("p", labels={"app": "web"}),
            True,
            id="system-defaulting-pod-without-constraints-is-signable",
        ),
        pytest.param(
            {"defaultingType": "List"}, make_pod("p"), True, id="empty-list-defaulting-is-signable"
        ),
        pytest.param({}, incoming(HARD_ZONE), False, id="hard-constraint-is-exact-only"),
        pytest.param({}, incoming(SOFT_ZONE), False, id="soft-constraint-is-exact-only"),
        pytest.param(
            LIST_ARGS,
            make_pod("p", labels={"app": "web"}),
            True,
            id="list-defaults-but-nothing-selects-the-pod-is-signable",
        ),
        pytest.param(LIST_ARGS, incoming(SOFT_ZONE), False, id="own-constraint-under-list"),
    ],
)
def test_sign_pod(args: Raw, pod: Raw, signable: bool) -> None:
    """Pods with constraints sign only for the exact batch (``ExactOnly``: kube's KEP-5598
    batching cannot serve them); without them, and with no Service or controller selecting
    them, no default applies and they sign as ``()``."""
    fragment = plugin(Snapshot(), args).sign_pod(parse.pod_from_raw(pod))
    assert fragment == () if signable else isinstance(fragment, ExactOnly)


def test_sign_pod_ignores_labels_and_namespace() -> None:
    """Without constraints the plugin reads nothing of the pod, so pods sign the same."""
    pl = plugin(Snapshot())
    one = pl.sign_pod(parse.pod_from_raw(make_pod("a", labels={"app": "web"})))
    two = pl.sign_pod(parse.pod_from_raw(make_pod("b", namespace="other")))
    assert one == two == ()


def test_name_is_kubes() -> None:
    """The plugin name matches kube-scheduler byte for byte."""
    assert PodTopologySpread.name == "PodTopologySpread"


@pytest.mark.parametrize(
    ("value", "want"),
    [
        pytest.param(0.5, 1, id="half-rounds-up"),
        pytest.param(2.5, 3, id="two-and-a-half-rounds-up-not-to-even"),
        pytest.param(2.4999999999999996, 2, id="just-below-half-rounds-down"),
        pytest.param(7.0, 7, id="whole-stays"),
    ],
)
def test_round_half_away_from_zero(value: float, want: int) -> None:
    """Raw scores round as Go's math.Round, not Python's round-half-to-even."""
    assert score_math.round_half_away(value) == want


# -- through the real runner --------------------------------------------------------------


def _profile(snap: Snapshot) -> Profile:
    return Profile(
        scheduler_name="batch-scheduler",
        plugins=[PluginSpec("PodTopologySpread", weight=2)],
        registry={"PodTopologySpread": PodTopologySpread},
        plugin_args={},
        snapshot=snap,
        rng=random.Random(0),
    )


@pytest.mark.parametrize(
    ("pod", "pods", "chosen"),
    [
        pytest.param(
            incoming(HARD_ZONE),
            [*pods_on("node-a", 1), *pods_on("node-b", 1)],
            {"node-x", "node-y"},
            id="hard-zone-constraint-picks-the-empty-zone",
        ),
        pytest.param(
            incoming(HARD_NODE),
            SPREAD_2_1_0_3,
            {"node-x"},
            id="hard-node-constraint-picks-the-only-fitting-node",
        ),
        pytest.param(
            incoming(spread(1, "node", "ScheduleAnyway")),
            SPREAD_2_1_0_3,
            {"node-x"},
            id="soft-node-constraint-prefers-the-emptiest-node",
        ),
        pytest.param(make_pod("p"), SPREAD_2_1_0_3, set(ALL), id="no-constraints-both-points-skip"),
    ],
)
def test_full_pass_places_the_pod(pod: Raw, pods: list[Raw], chosen: set[str]) -> None:
    """A Profile full pass with the plugin alone lands where kube would."""
    snap = snapshot_of(four_nodes(), pods)
    outcome = _profile(snap).schedule(CycleState(), parse.pod_from_raw(pod))
    assert isinstance(outcome, ScheduleResult)
    assert outcome.node.name in chosen


def test_full_pass_reports_spread_reasons() -> None:
    """When no node fits, the FitError counts kube's reasons per node."""
    nodes = [node("node-a", zone="zone1"), node("node-b", zone="zone1"), node("node-x")]
    snap = snapshot_of(nodes, [*pods_on("node-a", 1), *pods_on("node-b", 1)])
    pod = incoming(spread(1, "zone", minDomains=2))
    outcome = _profile(snap).schedule(CycleState(), parse.pod_from_raw(pod))
    assert isinstance(outcome, FitError)
    assert outcome.message() == (
        "0/3 nodes are available: 1 node(s) didn't match pod topology spread constraints "
        "(missing required label), 2 node(s) didn't match pod topology spread constraints."
    )
