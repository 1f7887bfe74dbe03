"""The pod index and the counts read through it equal a full scan (issue 19).

Random programs of cache operations (pods added, updated, moved, removed, assumed, forgotten,
on nodes that come, change and go, ghosts included; namespaces labelled and unlabelled), then
(1) every selector query of ``snapshot.pod_index`` returns exactly the pods a scan of the
cache finds, and (2) InterPodAffinity's and PodTopologySpread's PreFilter and PreScore state,
Filter statuses and scores for a random incoming pod equal what a scan of every node's pods
computes, as the plugins did before the index.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scheduler.cache.cluster_state import ClusterState
from scheduler.cache.snapshot import Snapshot
from scheduler.framework.cycle_state import CycleState
from scheduler.model import parse
from scheduler.model.affinity import PodAffinityTerm, WeightedPodAffinityTerm
from scheduler.model.labels import LabelSelector
from scheduler.model.node import Node
from scheduler.model.pod import Pod
from scheduler.plugins import affinity_counts, score_math
from scheduler.plugins import inter_pod_affinity as ipa
from scheduler.plugins import pod_topology_spread as pts
from scheduler.plugins import spread_constraints as spread
from tests.builders import make_node, make_pod

Raw = dict[str, Any]

NODES = ["n0", "n1", "n2", "n3"]
NAMESPACES = ["a", "b", "c"]
ZONE = "zone"
HOST = "kubernetes.io/hostname"


@dataclass
class FakeHandle:
    snapshot: Snapshot


# -- strategies ------------------------------------------------------------------------------

RARELY = st.sampled_from([False, False, False, True])
"""True one time in four (hypothesis favours small integers, so not ``integers() == 0``)."""

labels_st = st.builds(
    lambda app, tier: {k: v for k, v in (("app", app), ("tier", tier)) if v is not None},
    st.sampled_from(["x", "x", "y", "", None]),
    st.sampled_from([None, "x", "y"]),
)
namespace_st = st.sampled_from(["a", "a", "a", "b", "c"])
"""Mostly one namespace, so that selectors often find pods."""
requirement_st = st.one_of(
    st.builds(
        lambda key, op, values: {"key": key, "operator": op, "values": values},
        st.sampled_from(["app", "tier"]),
        st.sampled_from(["In", "NotIn"]),
        st.lists(st.sampled_from(["x", "y", ""]), min_size=1, max_size=2),
    ),
    st.builds(
        lambda key, op: {"key": key, "operator": op},
        st.sampled_from(["app", "tier"]),
        st.sampled_from(["Exists", "DoesNotExist"]),
    ),
)
APP_X = {"matchLabels": {"app": "x"}}
selector_st = st.one_of(
    st.none(),
    st.just(APP_X),
    st.builds(lambda reqs: {"matchExpressions": reqs}, st.lists(requirement_st, max_size=2)),
    st.builds(lambda lab: {"matchLabels": lab}, labels_st),
)
finding_selector_st = st.one_of(st.just(APP_X), selector_st)
"""Mostly a selector that finds pods, so that counts are not all zero."""


SHARED_TERMS = [
    {"topologyKey": ZONE, "labelSelector": APP_X},
    {"topologyKey": HOST, "labelSelector": APP_X},
]
"""Terms many pods carry alike (a Deployment's replicas), so that the term index holds one
term for several pods of one node (counts above 1)."""


def term_st() -> st.SearchStrategy[Raw]:
    return st.one_of(st.sampled_from(SHARED_TERMS).map(dict), any_term_st())


@st.composite
def any_term_st(draw: st.DrawFn) -> Raw:
    term: Raw = {"topologyKey": draw(st.sampled_from([ZONE, HOST]))}
    selector = draw(finding_selector_st)
    if selector is not None:
        term["labelSelector"] = selector
    namespaces = draw(st.lists(st.sampled_from(NAMESPACES), max_size=2))
    if namespaces:
        term["namespaces"] = namespaces
    by_labels = draw(st.sampled_from([None, {}, {"matchLabels": {"team": "t"}}]))
    if by_labels is not None:
        term["namespaceSelector"] = by_labels
    return term


@st.composite
def affinity_st(draw: st.DrawFn) -> Raw | None:
    affinity: Raw = {}
    for kind in ("podAffinity", "podAntiAffinity"):
        required = draw(st.lists(term_st(), max_size=2))
        preferred = draw(st.lists(term_st(), max_size=1))
        section: Raw = {}
        if required:
            section["requiredDuringSchedulingIgnoredDuringExecution"] = required
        if preferred:
            section["preferredDuringSchedulingIgnoredDuringExecution"] = [
                {"weight": draw(st.integers(1, 2)), "podAffinityTerm": t} for t in preferred
            ]
        if section:
            affinity[kind] = section
    return affinity or None


@st.composite
def pod_st(draw: st.DrawFn, name: str, node: str | None, *, terms: bool) -> Raw:
    raw = make_pod(
        name,
        namespace=draw(namespace_st),
        node_name=node,
        labels=draw(labels_st),
        affinity=draw(affinity_st()) if terms and draw(st.booleans()) else None,
        uid=f"uid-{name}",
    )
    if node is not None:
        raw["status"] = {"phase": draw(st.sampled_from(["Running"] * 5 + ["Succeeded"]))}
    if draw(RARELY):
        raw["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    return raw


@st.composite
def node_st(draw: st.DrawFn, name: str) -> Raw:
    labels = {}
    zone = draw(st.sampled_from(["z1", "z2", "z1", "z2", None]))
    if zone is not None:
        labels[ZONE] = zone
    taints = [{"key": "k", "effect": "NoSchedule"}] if draw(RARELY) else None
    return make_node(name, labels=labels, taints=taints)


@st.composite
def program_st(draw: st.DrawFn) -> list[tuple[str, Any]]:
    """A cluster built up (nodes, then pods on them or on nodes to come), then churned."""
    present = NODES[: draw(st.integers(1, len(NODES)))]
    steps: list[tuple[str, Any]] = [("node", draw(node_st(name))) for name in present]
    # Mostly on the nodes there, sometimes on one to come (a ghost until then).
    steps.extend(
        ("pod", draw(pod_st(f"p{i}", draw(st.sampled_from(present * 4 + NODES)), terms=True)))
        for i in range(draw(st.integers(3, 20)))
    )
    for i in range(draw(st.integers(0, 20))):
        op = draw(st.sampled_from(["node", "unnode", "pod", "pod", "unpod", "assume", "ns"]))
        if op == "ns":
            team = draw(st.sampled_from(["t", "u", None]))
            steps.append((op, (draw(st.sampled_from(NAMESPACES)), team)))
        elif op == "node":
            steps.append((op, draw(node_st(draw(st.sampled_from(NODES))))))
        elif op == "unnode":
            steps.append((op, draw(st.sampled_from(NODES))))
        elif op == "pod":
            # Mostly an existing uid: relabel, move, turn terminal or pending.
            name = f"p{draw(st.integers(0, 25))}"
            node = draw(st.sampled_from([*NODES, None]))
            steps.append((op, draw(pod_st(name, node, terms=True))))
        elif op == "unpod":
            steps.append((op, f"uid-p{draw(st.integers(0, 20))}"))
        else:
            pod = draw(pod_st(f"q{i}", None, terms=True))
            steps.append((op, (pod, draw(st.sampled_from(NODES)), draw(st.booleans()))))
    return steps


@st.composite
def spread_st(draw: st.DrawFn) -> Raw:
    constraint: Raw = {
        "maxSkew": draw(st.integers(1, 2)),
        "topologyKey": draw(st.sampled_from([ZONE, HOST])),
        "whenUnsatisfiable": draw(st.sampled_from(["DoNotSchedule", "ScheduleAnyway"])),
        "nodeTaintsPolicy": draw(st.sampled_from(["Honor", "Ignore", "Ignore"])),
    }
    if draw(RARELY):
        constraint["minDomains"] = draw(st.integers(1, 3))
        constraint["whenUnsatisfiable"] = "DoNotSchedule"
    selector = draw(finding_selector_st)
    if selector is not None:
        constraint["labelSelector"] = selector
    return constraint


def run(steps: list[tuple[str, Any]]) -> ClusterState:
    cs = ClusterState()
    for op, arg in steps:
        if op == "node":
            cs.add_node(parse.node_from_raw(arg))
        elif op == "unnode":
            cs.remove_node(arg)
        elif op == "pod":
            cs.add_pod(parse.pod_from_raw(arg))
        elif op == "unpod":
            cs.remove_pod(arg)
        elif op == "ns":
            namespace, team = arg
            if team is None:
                cs.remove_namespace(namespace)
            else:
                cs.set_namespace(namespace, {"team": team})
        else:
            raw, node, forget = arg
            pod = parse.pod_from_raw(raw)
            if cs.get_pod(pod.uid) is None and node in cs.node_names():
                cs.assume(pod, node)
                if forget:
                    cs.forget(pod.uid)
    return cs


def cached_pods(cs: ClusterState) -> list[Pod]:
    pods = [cs.get_pod(uid) for uid in cs.pod_uids()]
    return [p for p in pods if p is not None]


# -- (1) the index answers as a scan -----------------------------------------------------------


@settings(
    max_examples=120, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow]
)
@given(program_st(), st.lists(selector_st, min_size=1, max_size=4))
def test_index_queries_equal_a_scan(steps: list[tuple[str, Any]], selectors: list[Any]) -> None:
    cs = run(steps)
    index = cs.snapshot.pod_index
    pods = cached_pods(cs)
    assert len(index) == len(pods)
    for namespace in NAMESPACES:
        assert {p.uid for p, _ in index.pods_in(namespace)} == {
            p.uid for p in pods if p.namespace == namespace
        }
        for raw in selectors:
            selector = parse_selector(raw)
            found = {p.uid: info for p, info in index.matching(namespace, selector)}
            want = {
                p.uid
                for p in pods
                if p.namespace == namespace and selector is not None and selector.matches(p.labels)
            }
            assert set(found) == want
            for uid, info in found.items():
                pod = cs.get_pod(uid)
                assert pod is not None
                assert info is cs.node_info(pod.node_name)
                assert pod.uid in info.pods


def parse_selector(raw: Raw | None) -> LabelSelector | None:
    wrapped = make_pod(
        "s",
        topology_spread=[{"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule"}],
    )
    if raw is not None:
        wrapped["spec"]["topologySpreadConstraints"][0]["labelSelector"] = raw
    pod = parse.pod_from_raw(wrapped)
    return pod.topology_spread_constraints[0].label_selector


# -- (2) the plugins' state equals a scan of every node's pods ------------------------------


@settings(
    max_examples=120, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow]
)
@given(
    program_st(),
    pod_st("incoming", None, terms=True),
    st.lists(spread_st(), max_size=2),
    st.sampled_from([None, {ZONE: "z1"}]),
)
def test_plugin_state_equals_a_scan(
    steps: list[tuple[str, Any]], raw: Raw, spread: list[Raw], node_selector: Raw | None
) -> None:
    cs = run(steps)
    snap = cs.snapshot
    raw["spec"]["topologySpreadConstraints"] = spread
    if node_selector:
        raw["spec"]["nodeSelector"] = node_selector
    raw["metadata"].pop("deletionTimestamp", None)
    pod = parse.pod_from_raw(raw)
    check_inter_pod_affinity(snap, pod)
    check_pod_topology_spread(snap, pod)


def check_inter_pod_affinity(snap: Snapshot, pod: Pod) -> None:
    plugin = ipa.InterPodAffinity({}, FakeHandle(snap))
    state = CycleState()
    _, status = plugin.pre_filter(state, pod, snap)
    existing: dict[tuple[str, str], int] = {}
    affinity: dict[tuple[str, str], int] = {}
    anti: dict[tuple[str, str], int] = {}
    for info in snap.node_infos:
        node = info.node
        assert node is not None
        for other in info.pods.values():
            for term in other.required_pod_anti_affinity:
                if ipa._term_matches(term, pod, snap):
                    affinity_counts.add(existing, node, term.topology_key, 1)
            if pod.required_pod_affinity and ipa._matches_all(
                pod.required_pod_affinity, other, snap
            ):
                for term in pod.required_pod_affinity:
                    affinity_counts.add(affinity, node, term.topology_key, 1)
            for term in pod.required_pod_anti_affinity:
                if ipa._term_matches(term, other, snap):
                    affinity_counts.add(anti, node, term.topology_key, 1)
    if status.is_skip:
        assert not existing
        assert not pod.required_pod_affinity
        assert not pod.required_pod_anti_affinity
    else:
        s = state.read(ipa._PRE_FILTER_KEY)
        assert s is not None
        assert (s.existing_anti_affinity, s.affinity, s.anti_affinity) == (existing, affinity, anti)
        for info in snap.node_infos:
            plugin.filter(state, pod, info)  # runs on every node without error
    scores: dict[str, dict[str, int]] = {}
    touched = False
    for info in snap.node_infos:
        node = info.node
        assert node is not None
        if not node.labels:
            continue
        for other in info.pods.values():
            touched |= _weigh(scores, pod.preferred_pod_affinity, other, node, snap, 1)
            touched |= _weigh(scores, pod.preferred_pod_anti_affinity, other, node, snap, -1)
            for term in other.required_pod_affinity:
                touched |= _credit(scores, term, 1, pod, node, snap)
            touched |= _weigh(scores, other.preferred_pod_affinity, pod, node, snap, 1)
            touched |= _weigh(scores, other.preferred_pod_anti_affinity, pod, node, snap, -1)
    state = CycleState()
    status = plugin.pre_score(state, pod, snap.node_infos)
    assert status.is_skip == (not touched)
    if touched:
        s_score = state.read(ipa._PRE_SCORE_KEY)
        assert s_score is not None
        assert s_score.topology_score == scores


def _credit(
    scores: dict[str, dict[str, int]],
    term: PodAffinityTerm,
    weight: int,
    pod: Pod,
    node: Node,
    snap: Snapshot,
) -> bool:
    """kube's processTerm for one pod on one node: what the scan credits."""
    if not ipa._term_matches(term, pod, snap):
        return False
    value = node.labels.get(term.topology_key)
    if value is None:
        return False
    by_value = scores.setdefault(term.topology_key, {})
    by_value[value] = by_value.get(value, 0) + weight
    return True


def _weigh(
    scores: dict[str, dict[str, int]],
    terms: Iterable[WeightedPodAffinityTerm],
    pod: Pod,
    node: Node,
    snap: Snapshot,
    sign: int,
) -> bool:
    touched = False
    for weighted in terms:
        touched |= _credit(scores, weighted.term, weighted.weight * sign, pod, node, snap)
    return touched


def check_pod_topology_spread(snap: Snapshot, pod: Pod) -> None:
    plugin = pts.PodTopologySpread({"defaultingType": "List"}, FakeHandle(snap))
    state = CycleState()
    _, status = plugin.pre_filter(state, pod, snap)
    hard = spread.own_constraints(pod, pts.DO_NOT_SCHEDULE)
    assert status.is_skip == (not hard)
    if hard:
        counts: tuple[dict[str, int], ...] = tuple({} for _ in hard)
        for info in snap.node_infos:
            node = info.node
            assert node is not None
            if not spread.has_all_keys(node.labels, hard):
                continue
            for i, c in enumerate(hard):
                if spread.node_included(c, pod, node):
                    value = node.labels[c.topology_key]
                    found = count_matching(info.pods.values(), c, pod.namespace)
                    counts[i][value] = counts[i].get(value, 0) + found
        s = state.read(pts._PRE_FILTER_KEY)
        assert s is not None
        assert s.counts == tuple({v: n for v, n in c.items() if n} for c in counts)
        assert s.domains == tuple(len(c) for c in counts)
        assert s.minimums == tuple(min(c.values(), default=pts._MAX_INT32) for c in counts)
        for info in snap.node_infos:
            assert plugin.filter(state, pod, info) == reference_filter(hard, counts, pod, info)
    soft = spread.own_constraints(pod, pts.SCHEDULE_ANYWAY)
    state = CycleState()
    status = plugin.pre_score(state, pod, snap.node_infos)
    assert status.is_skip == (not soft or not snap.node_infos)
    if status.is_skip:
        return
    want: tuple[dict[str, int], ...] = tuple({} for _ in soft)
    for info in snap.node_infos:
        node = info.node
        assert node is not None
        if spread.has_all_keys(node.labels, soft):
            for i, c in enumerate(soft):
                if c.topology_key != pts.LABEL_HOSTNAME:
                    want[i].setdefault(node.labels[c.topology_key], 0)
    for info in snap.node_infos:
        node = info.node
        assert node is not None
        if not spread.has_all_keys(node.labels, soft):
            continue
        for i, c in enumerate(soft):
            value = node.labels[c.topology_key]
            if spread.node_included(c, pod, node) and value in want[i]:
                want[i][value] += count_matching(info.pods.values(), c, pod.namespace)
    s_score = state.read(pts._PRE_SCORE_KEY)
    assert s_score is not None
    assert s_score.counts == want
    # Score counts the hostname domain on the node itself, whatever its policies.
    for info in snap.node_infos:
        total = 0.0
        node = info.node
        assert node is not None
        if node.name not in s_score.ignored_nodes:
            for i, c in enumerate(soft):
                if c.topology_key not in node.labels:
                    continue
                if c.topology_key == pts.LABEL_HOSTNAME:
                    found = count_matching(info.pods.values(), c, pod.namespace)
                else:
                    found = want[i].get(node.labels[c.topology_key], 0)
                total += found * s_score.weights[i] + (c.max_skew - 1)
        assert plugin.score(state, pod, info) == score_math.round_half_away(total)


def count_matching(pods: Any, c: Any, namespace: str) -> int:
    """PodTopologySpread's count of one node's pods before the index (countPodsMatchSelector)."""
    selector = c.selector
    if selector is None or selector.empty:
        return 0
    return sum(
        1
        for p in pods
        if not p.deleting and p.namespace == namespace and selector.matches(p.labels)
    )


def reference_filter(
    constraints: tuple[Any, ...], counts: tuple[dict[str, int], ...], pod: Pod, info: Any
) -> Any:
    """PodTopologySpread's Filter as it read the full counts before the index."""
    from scheduler.framework import status as status_mod

    node = info.node
    for i, c in enumerate(constraints):
        value = node.labels.get(c.topology_key)
        if value is None:
            return status_mod.unresolvable(pts.ERR_REASON_NODE_LABEL_NOT_MATCH).with_plugin(
                pts.NAME
            )
        minimum = min(counts[i].values(), default=pts._MAX_INT32)
        if len(counts[i]) < c.min_domains:
            minimum = 0
        skew = counts[i].get(value, 0) + (1 if c.selects(pod.labels) else 0) - minimum
        if skew > c.max_skew:
            return status_mod.unschedulable(pts.ERR_REASON_CONSTRAINTS_NOT_MATCH).with_plugin(
                pts.NAME
            )
    return status_mod.SUCCESS
