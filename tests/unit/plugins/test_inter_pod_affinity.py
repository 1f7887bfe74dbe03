"""InterPodAffinity: filter statuses, normalized scores, args and signing, ported from kube's
interpodaffinity filtering_test.go / scoring_test.go (cases restated, expectations exact)."""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pytest

from scheduler.cache.node_info import NodeInfo
from scheduler.cache.snapshot import Snapshot
from scheduler.framework import status as st
from scheduler.framework.config import PluginSpec
from scheduler.framework.cycle_state import CycleState
from scheduler.framework.diagnosis import FitError
from scheduler.framework.interfaces import ExactOnly, NarrowedForExact
from scheduler.framework.profile import Profile
from scheduler.framework.results import ScheduleResult
from scheduler.model import parse
from scheduler.plugins.inter_pod_affinity import InterPodAffinity
from tests.builders import make_node, make_pod

if TYPE_CHECKING:
    from collections.abc import Mapping

Raw = dict[str, Any]

AFFINITY = "node(s) didn't match pod affinity rules"
ANTI = "node(s) didn't match pod anti-affinity rules"
EXISTING = "node(s) didn't satisfy existing pods anti-affinity rules"
OK = st.SUCCESS
NO_AFFINITY = st.unresolvable(AFFINITY)
NO_ANTI = st.unschedulable(ANTI)
NO_EXISTING = st.unschedulable(EXISTING)
HOSTNAME = "kubernetes.io/hostname"


@dataclass
class FakeHandle:
    snapshot: Snapshot


def sel_in(key: str, *values: str) -> Raw:
    return {"matchExpressions": [{"key": key, "operator": "In", "values": list(values)}]}


def sel_not_in(key: str, *values: str) -> Raw:
    return {"matchExpressions": [{"key": key, "operator": "NotIn", "values": list(values)}]}


SECURITY = sel_in("service", "securityscan", "value2")


def term(
    selector: Raw | None,
    key: str,
    *,
    namespaces: list[str] | None = None,
    namespace_selector: Raw | None = None,
) -> Raw:
    out: Raw = {"topologyKey": key}
    if selector is not None:
        out["labelSelector"] = selector
    if namespaces is not None:
        out["namespaces"] = namespaces
    if namespace_selector is not None:
        out["namespaceSelector"] = namespace_selector
    return out


def weighted(weight: int, t: Raw) -> Raw:
    return {"weight": weight, "podAffinityTerm": t}


def affinity(
    *,
    required: list[Raw] | None = None,
    preferred: list[Raw] | None = None,
    anti_required: list[Raw] | None = None,
    anti_preferred: list[Raw] | None = None,
) -> Raw:
    out: Raw = {}
    for kind, hard, soft in (
        ("podAffinity", required, preferred),
        ("podAntiAffinity", anti_required, anti_preferred),
    ):
        block: Raw = {}
        if hard:
            block["requiredDuringSchedulingIgnoredDuringExecution"] = hard
        if soft:
            block["preferredDuringSchedulingIgnoredDuringExecution"] = soft
        if block:
            out[kind] = block
    return out


def pod(
    name: str = "p",
    *,
    node: str | None = None,
    namespace: str = "default",
    labels: Mapping[str, str] | None = None,
    **terms: list[Raw],
) -> Raw:
    return make_pod(
        name,
        node_name=node,
        namespace=namespace,
        labels=dict(labels or {}),
        affinity=affinity(**terms) or None,
    )


def node(name: str, **labels: str) -> Raw:
    return make_node(name, labels=labels)


def snapshot_of(
    nodes: list[Raw], pods: list[Raw], namespaces: Mapping[str, Mapping[str, str]] | None = None
) -> Snapshot:
    infos = {raw["metadata"]["name"]: NodeInfo(parse.node_from_raw(raw)) for raw in nodes}
    for raw in pods:
        p = parse.pod_from_raw(raw)
        infos[p.node_name].add_pod(p)
    return Snapshot.of(infos.values(), namespaces)


def plugin(snapshot: Snapshot, args: Raw | None = None) -> InterPodAffinity:
    return InterPodAffinity(args or {}, FakeHandle(snapshot))


def _key(status: st.Status) -> tuple[st.Code, tuple[str, ...]]:
    return status.code, status.reasons


NODE1 = node("node1", region="r1", zone="z11")


def _filter_all(
    incoming: Raw,
    nodes: list[Raw],
    pods: list[Raw],
    namespaces: Mapping[str, Mapping[str, str]] | None,
) -> list[tuple[st.Code, tuple[str, ...]]]:
    snap = snapshot_of(nodes, pods, namespaces)
    pl = plugin(snap)
    p = parse.pod_from_raw(incoming)
    state = CycleState()
    _, pre = pl.pre_filter(state, p, snap)
    if pre.is_skip:  # the framework does not run a skipped plugin's Filter
        return [_key(OK) for _ in snap.node_infos]
    assert pre.is_success, pre
    return [_key(pl.filter(state, p, info)) for info in snap.node_infos]


SCAN = {"service": "securityscan"}


@pytest.mark.parametrize(
    ("incoming", "nodes", "pods", "namespaces", "want"),
    [
        pytest.param(
            pod(labels=SCAN), [NODE1], [], None, [OK], id="no-affinity-terms-fit-anywhere"
        ),
        pytest.param(
            pod(required=[term(SECURITY, "region")]),
            [NODE1],
            [pod("e", node="node1", labels=SCAN)],
            None,
            [OK],
            id="affinity-in-operator-matched-by-pod-on-the-node",
        ),
        pytest.param(
            pod(required=[term(sel_not_in("service", "securityscan3", "value3"), "region")]),
            [NODE1],
            [pod("e", node="node1", labels=SCAN)],
            None,
            [OK],
            id="affinity-not-in-operator-matched",
        ),
        pytest.param(
            pod(required=[term(SECURITY, "region")]),
            [NODE1],
            [pod("e", node="node1", namespace="other", labels=SCAN)],
            None,
            [NO_AFFINITY],
            id="affinity-looks-only-in-the-pods-own-namespace-by-default",
        ),
        pytest.param(
            pod(required=[term(SECURITY, "region", namespaces=["other"])]),
            [NODE1],
            [pod("e", node="node1", namespace="other", labels=SCAN)],
            None,
            [OK],
            id="affinity-namespaces-list-reaches-another-namespace",
        ),
        pytest.param(
            pod(
                required=[
                    term(SECURITY, "region", namespace_selector={"matchLabels": {"team": "a"}})
                ]
            ),
            [NODE1],
            [pod("e", node="node1", namespace="other", labels=SCAN)],
            {"other": {"team": "a"}},
            [OK],
            id="affinity-namespace-selector-matches-namespace-labels",
        ),
        pytest.param(
            pod(
                required=[
                    term(SECURITY, "region", namespace_selector={"matchLabels": {"team": "a"}})
                ]
            ),
            [NODE1],
            [pod("e", node="node1", namespace="other", labels=SCAN)],
            {"other": {"team": "b"}},
            [NO_AFFINITY],
            id="affinity-namespace-selector-rejects-other-namespace-labels",
        ),
        pytest.param(
            pod(required=[term(SECURITY, "region", namespace_selector={})]),
            [NODE1],
            [pod("e", node="node1", namespace="unlabelled", labels=SCAN)],
            None,
            [OK],
            id="affinity-empty-namespace-selector-matches-every-namespace",
        ),
        pytest.param(
            pod(required=[term(SECURITY, "rack")]),
            [NODE1],
            [pod("e", node="node1", labels=SCAN)],
            None,
            [NO_AFFINITY],
            id="affinity-fails-on-node-without-the-topology-key",
        ),
        pytest.param(
            pod(required=[term(None, "region")], labels=SCAN),
            [NODE1],
            [pod("e", node="node1", labels=SCAN)],
            None,
            [NO_AFFINITY],
            id="affinity-nil-label-selector-matches-no-pod-not-even-itself",
        ),
        pytest.param(
            pod(required=[term(SECURITY, "region"), term(sel_in("app", "db"), "zone")]),
            [NODE1],
            [pod("e", node="node1", labels=SCAN)],
            None,
            [NO_AFFINITY],
            id="affinity-needs-one-pod-matching-all-terms",
        ),
        pytest.param(
            pod(required=[term(SECURITY, "region"), term(sel_in("app", "db"), "zone")]),
            [NODE1],
            [pod("e", node="node1", labels={**SCAN, "app": "db"})],
            None,
            [OK],
            id="affinity-pod-matching-all-terms-satisfies-them",
        ),
        pytest.param(
            pod(required=[term(SECURITY, "region")], labels=SCAN),
            [NODE1],
            [],
            None,
            [OK],
            id="first-pod-of-a-group-matching-its-own-affinity-fits",
        ),
        pytest.param(
            pod(required=[term(SECURITY, "region")]),
            [NODE1],
            [],
            None,
            [NO_AFFINITY],
            id="pod-not-matching-its-own-affinity-has-nowhere-to-go",
        ),
        pytest.param(
            pod(required=[term(SECURITY, "zone")], labels=SCAN),
            [node("n1", zone="z1"), node("n2", zone="z2")],
            [pod("e", node="n1", labels=SCAN)],
            None,
            [OK, NO_AFFINITY],
            id="first-pod-rule-off-once-a-matching-pod-exists-anywhere",
        ),
        pytest.param(
            pod(required=[term(SECURITY, "zone")], labels=SCAN),
            [node("n1", zone="z1"), node("n2")],
            [],
            None,
            [OK, NO_AFFINITY],
            id="first-pod-rule-still-needs-the-topology-key",
        ),
        pytest.param(
            pod(anti_required=[term(SECURITY, HOSTNAME)]),
            [NODE1, node("node2")],
            [pod("e", node="node1", labels=SCAN)],
            None,
            [NO_ANTI, OK],
            id="anti-affinity-rejects-node-with-matching-pod",
        ),
        pytest.param(
            pod(anti_required=[term(SECURITY, "zone")]),
            [node("n1", zone="z1"), node("n2", zone="z1"), node("n3", zone="z2")],
            [pod("e", node="n1", labels=SCAN)],
            None,
            [NO_ANTI, NO_ANTI, OK],
            id="anti-affinity-rejects-the-whole-zone",
        ),
        pytest.param(
            pod(anti_required=[term(SECURITY, "rack")]),
            [NODE1],
            [pod("e", node="node1", labels=SCAN)],
            None,
            [OK],
            id="anti-affinity-ignores-nodes-without-the-key",
        ),
        pytest.param(
            pod(anti_required=[term(sel_in("service", "other"), HOSTNAME)]),
            [NODE1],
            [pod("e", node="node1", labels=SCAN)],
            None,
            [OK],
            id="anti-affinity-selector-not-matching-fits",
        ),
        pytest.param(
            pod(labels=SCAN),
            [NODE1, node("node2")],
            [pod("e", node="node1", anti_required=[term(SECURITY, HOSTNAME)])],
            None,
            [NO_EXISTING, OK],
            id="existing-pods-anti-affinity-rejects-its-host",
        ),
        pytest.param(
            pod(labels=SCAN),
            [node("n1", zone="z1"), node("n2", zone="z1"), node("n3", zone="z2")],
            [pod("e", node="n1", anti_required=[term(SECURITY, "zone")])],
            None,
            [NO_EXISTING, NO_EXISTING, OK],
            id="existing-pods-anti-affinity-rejects-its-zone",
        ),
        pytest.param(
            pod(labels=SCAN, namespace="ns1"),
            [NODE1, node("node2")],
            [
                pod(
                    "e",
                    node="node1",
                    namespace="ns2",
                    anti_required=[
                        term(SECURITY, HOSTNAME, namespace_selector={"matchLabels": {"t": "x"}})
                    ],
                )
            ],
            {"ns1": {"t": "x"}},
            [NO_EXISTING, OK],
            id="existing-pods-anti-affinity-namespace-selector-reads-incoming-namespace",
        ),
        pytest.param(
            pod(labels=SCAN, namespace="ns1"),
            [NODE1, node("node2")],
            [
                pod(
                    "e",
                    node="node1",
                    namespace="ns2",
                    anti_required=[
                        term(SECURITY, HOSTNAME, namespace_selector={"matchLabels": {"t": "x"}})
                    ],
                )
            ],
            {"ns1": {"t": "y"}},
            [OK, OK],
            id="existing-pods-anti-affinity-other-namespace-labels-do-not-apply",
        ),
        pytest.param(
            pod(labels=SCAN, namespace="ns1"),
            [NODE1],
            [pod("e", node="node1", namespace="ns2", anti_required=[term(SECURITY, HOSTNAME)])],
            None,
            [OK],
            id="existing-pods-anti-affinity-defaults-to-their-namespace",
        ),
        pytest.param(
            pod(
                labels={"service": "web"},
                required=[term(SECURITY, "region")],
                anti_required=[term(sel_in("service", "web"), "region")],
            ),
            [NODE1],
            [pod("e", node="node1", labels={"service": "web"})],
            None,
            [NO_AFFINITY],
            id="affinity-is-checked-before-anti-affinity",
        ),
        pytest.param(
            pod(labels=SCAN, anti_required=[term(SECURITY, HOSTNAME)]),
            [NODE1, node("node2")],
            [pod("e", node="node2", anti_required=[term(SECURITY, HOSTNAME)])],
            None,
            [OK, NO_EXISTING],
            id="symmetric-anti-affinity-rejects-only-the-occupied-node",
        ),
    ],
)
def test_filter(
    incoming: Raw,
    nodes: list[Raw],
    pods: list[Raw],
    namespaces: Mapping[str, Mapping[str, str]] | None,
    want: list[st.Status],
) -> None:
    """Filter returns kube's status and reason for each node after PreFilter counted pairs."""
    assert _filter_all(incoming, nodes, pods, namespaces) == [_key(s) for s in want]


@pytest.mark.parametrize(
    ("incoming", "pods", "skip"),
    [
        pytest.param(pod(labels=SCAN), [], True, id="no-terms-anywhere"),
        pytest.param(
            pod(labels=SCAN, preferred=[weighted(5, term(SECURITY, "region"))]),
            [],
            True,
            id="preferred-terms-only",
        ),
        pytest.param(
            pod(labels={"service": "web"}),
            [pod("e", node="node1", anti_required=[term(SECURITY, HOSTNAME)])],
            True,
            id="existing-anti-affinity-not-matching-the-pod",
        ),
        pytest.param(
            pod(labels=SCAN),
            [pod("e", node="node1", anti_required=[term(SECURITY, HOSTNAME)])],
            False,
            id="existing-anti-affinity-matching-the-pod",
        ),
        pytest.param(
            pod(required=[term(SECURITY, "region")]), [], False, id="required-affinity-of-the-pod"
        ),
        pytest.param(
            pod(anti_required=[term(SECURITY, "region")]),
            [],
            False,
            id="required-anti-affinity-of-the-pod",
        ),
    ],
)
def test_pre_filter_skip(incoming: Raw, pods: list[Raw], skip: bool) -> None:
    """PreFilter skips when nothing could reject a node: no required terms either way."""
    snap = snapshot_of([NODE1], pods)
    _, status = plugin(snap).pre_filter(CycleState(), parse.pod_from_raw(incoming), snap)
    assert status.is_skip is skip
    assert status.is_success is not skip


# -- scoring ------------------------------------------------------------------------------

CHINA = node("machine1", region="China")
INDIA = node("machine2", region="India")
AZ1 = node("machine3", az="az1")
THREE = [CHINA, INDIA, AZ1]
S2 = {"service": "S2"}


def _scores(
    incoming: Raw, nodes: list[Raw], pods: list[Raw], args: Raw | None = None
) -> list[int] | None:
    """Normalized scores for every node, or None when PreScore skipped."""
    snap = snapshot_of(nodes, pods)
    pl = plugin(snap, args)
    p = parse.pod_from_raw(incoming)
    infos = snap.node_infos
    state = CycleState()
    status = pl.pre_score(state, p, infos)
    if status.is_skip:
        return None
    assert status.is_success, status
    scores = [pl.score(state, p, info) for info in infos]
    assert pl.normalize_score(state, p, infos, scores).is_success
    return scores


PREFER_SCAN_REGION = weighted(5, term(SECURITY, "region"))


@pytest.mark.parametrize(
    ("incoming", "nodes", "pods", "args", "want"),
    [
        pytest.param(
            pod(preferred=[PREFER_SCAN_REGION]), THREE, [], None, None, id="no-existing-pods-skips"
        ),
        pytest.param(
            pod(preferred=[PREFER_SCAN_REGION]),
            THREE,
            [
                pod("e1", node="machine1", labels=SCAN),
                pod("e2", node="machine2", labels=S2),
                pod("e3", node="machine3", labels=SCAN),
            ],
            None,
            [100, 0, 0],
            id="affinity-credits-the-matching-pods-topology-only-where-the-key-exists",
        ),
        pytest.param(
            pod(preferred=[PREFER_SCAN_REGION]),
            [CHINA, node("machine2", region="China"), node("machine3", region="India")],
            [pod("e1", node="machine1", labels=SCAN)],
            None,
            [100, 100, 0],
            id="affinity-credits-every-node-of-the-same-region",
        ),
        pytest.param(
            pod(anti_preferred=[PREFER_SCAN_REGION]),
            THREE,
            [pod("e1", node="machine1", labels=SCAN), pod("e2", node="machine2", labels=S2)],
            None,
            [0, 100, 100],
            id="anti-affinity-lowers-the-matching-region",
        ),
        pytest.param(
            pod(
                preferred=[PREFER_SCAN_REGION],
                anti_preferred=[weighted(4, term(sel_in("service", "S2"), "region"))],
            ),
            THREE,
            [pod("e1", node="machine1", labels=SCAN), pod("e2", node="machine2", labels=S2)],
            None,
            [100, 0, 44],
            id="affinity-and-anti-affinity-combine-min-max",
        ),
        pytest.param(
            pod(labels=SCAN),
            THREE,
            [pod("e1", node="machine1", preferred=[weighted(5, term(SECURITY, "region"))])],
            None,
            [100, 0, 0],
            id="existing-pods-preferred-affinity-is-symmetric",
        ),
        pytest.param(
            pod(labels=SCAN),
            THREE,
            [pod("e1", node="machine1", anti_preferred=[weighted(5, term(SECURITY, "region"))])],
            None,
            [0, 100, 100],
            id="existing-pods-preferred-anti-affinity-is-symmetric",
        ),
        pytest.param(
            pod(labels=SCAN),
            THREE,
            [pod("e2", node="machine2", required=[term(SECURITY, "region")])],
            None,
            [0, 100, 0],
            id="existing-pods-required-affinity-adds-hard-weight",
        ),
        pytest.param(
            pod(labels=SCAN),
            THREE,
            [pod("e2", node="machine2", required=[term(SECURITY, "region")])],
            {"hardPodAffinityWeight": 0},
            None,
            id="hard-weight-zero-ignores-existing-required-affinity",
        ),
        pytest.param(
            pod(labels=SCAN),
            THREE,
            [pod("e1", node="machine1", preferred=[weighted(5, term(SECURITY, "region"))])],
            {"ignorePreferredTermsOfExistingPods": True},
            None,
            id="ignore-preferred-terms-of-existing-pods-skips-a-pod-without-terms",
        ),
        pytest.param(
            pod(labels=SCAN, anti_preferred=[weighted(3, term(sel_in("service", "S2"), "region"))]),
            THREE,
            [
                pod("e1", node="machine1", preferred=[weighted(5, term(SECURITY, "region"))]),
                pod("e2", node="machine2", labels=S2),
            ],
            {"ignorePreferredTermsOfExistingPods": True},
            [100, 0, 37],
            id="ignore-flag-still-scores-existing-pods-when-the-pod-has-terms",
        ),
        pytest.param(
            pod(preferred=[weighted(1, term(SECURITY, "zone"))]),
            [node("n1", zone="z1"), node("n2", zone="z2"), node("n3", zone="z3")],
            [
                pod("e1", node="n2", labels=SCAN),
                *[pod(f"e{i}", node="n3", labels=SCAN) for i in range(2, 5)],
            ],
            None,
            [0, 33, 100],
            id="normalization-truncates-one-third-to-33",
        ),
        pytest.param(
            pod(preferred=[weighted(1, term(SECURITY, "zone"))]),
            [node("n1", zone="z1"), node("n2", zone="z2"), node("n3", zone="z3")],
            [
                *[pod(f"e{i}", node="n2", labels=SCAN) for i in range(2)],
                *[pod(f"f{i}", node="n3", labels=SCAN) for i in range(3)],
            ],
            None,
            [0, 66, 100],
            id="normalization-truncates-two-thirds-to-66",
        ),
        pytest.param(
            pod(preferred=[weighted(1, term(SECURITY, "zone"))]),
            [node("n1", zone="z1"), node("n2", zone="z1")],
            [pod("e1", node="n1", labels=SCAN)],
            None,
            [0, 0],
            id="equal-nonzero-scores-all-normalize-to-zero",
        ),
        pytest.param(
            pod(preferred=[weighted(5, term(SECURITY, "region", namespaces=["other"]))]),
            THREE,
            [pod("e1", node="machine1", labels=SCAN)],
            None,
            None,
            id="preferred-term-in-another-namespace-does-not-match",
        ),
        pytest.param(
            pod(preferred=[PREFER_SCAN_REGION]),
            [CHINA, INDIA, node("machine3", hostname="x")],
            [pod("e1", node="machine1", labels=SCAN), pod("e2", node="machine2", labels=SCAN)],
            None,
            [100, 100, 0],
            id="every-matching-region-gets-its-weight",
        ),
    ],
)
def test_score(
    incoming: Raw, nodes: list[Raw], pods: list[Raw], args: Raw | None, want: list[int] | None
) -> None:
    """PreScore → Score → NormalizeScore give kube's exact normalized scores (None: Skip)."""
    assert _scores(incoming, nodes, pods, args) == want


def test_raw_scores_before_normalizing() -> None:
    """Score sums weights by topology pair: +5 for affinity, -4 for anti-affinity, 0 elsewhere."""
    snap = snapshot_of(
        THREE, [pod("e1", node="machine1", labels=SCAN), pod("e2", node="machine2", labels=S2)]
    )
    pl = plugin(snap)
    p = parse.pod_from_raw(
        pod(
            preferred=[PREFER_SCAN_REGION],
            anti_preferred=[weighted(4, term(sel_in("service", "S2"), "region"))],
        )
    )
    state = CycleState()
    assert pl.pre_score(state, p, snap.node_infos).is_success
    assert [pl.score(state, p, info) for info in snap.node_infos] == [5, -4, 0]


# -- args ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "message"),
    [
        pytest.param(
            {"hardPodAffinityWeight": 101},
            "InterPodAffinityArgs.hardPodAffinityWeight: not in valid range [0, 100]",
            id="weight-above-100",
        ),
        pytest.param(
            {"hardPodAffinityWeight": -1},
            "InterPodAffinityArgs.hardPodAffinityWeight: not in valid range [0, 100]",
            id="negative-weight",
        ),
        pytest.param(
            {"hardPodAffinityWeight": "5"},
            "InterPodAffinityArgs.hardPodAffinityWeight: must be an integer",
            id="weight-not-an-integer",
        ),
        pytest.param(
            {"hardPodAffinityWeight": True},
            "InterPodAffinityArgs.hardPodAffinityWeight: must be an integer",
            id="weight-boolean",
        ),
        pytest.param(
            {"ignorePreferredTermsOfExistingPods": "yes"},
            "InterPodAffinityArgs.ignorePreferredTermsOfExistingPods: must be a boolean",
            id="flag-not-boolean",
        ),
        pytest.param(
            {"hardWeight": 1},
            "InterPodAffinityArgs: unknown field(s): hardWeight",
            id="unknown-field",
        ),
    ],
)
def test_args_rejected(args: Raw, message: str) -> None:
    """Invalid InterPodAffinityArgs raise ValueError naming the field."""
    with pytest.raises(ValueError) as caught:
        plugin(Snapshot(), args)
    assert str(caught.value) == message


@pytest.mark.parametrize(
    ("args", "weight", "ignore"),
    [
        pytest.param({}, 1, False, id="defaults"),
        pytest.param({"hardPodAffinityWeight": 0}, 0, False, id="weight-zero"),
        pytest.param(
            {
                "hardPodAffinityWeight": 100,
                "ignorePreferredTermsOfExistingPods": True,
                "kind": "InterPodAffinityArgs",
            },
            100,
            True,
            id="all-set",
        ),
    ],
)
def test_args_accepted(args: Raw, weight: int, ignore: bool) -> None:
    """Valid args are kept; hardPodAffinityWeight defaults to 1."""
    pl = plugin(Snapshot(), args)
    assert (pl.hard_pod_affinity_weight, pl.ignore_preferred_terms_of_existing_pods) == (
        weight,
        ignore,
    )


# -- sign ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "incoming",
    [
        pytest.param(pod(required=[term(SECURITY, "region")]), id="required-affinity"),
        pytest.param(pod(preferred=[PREFER_SCAN_REGION]), id="preferred-affinity"),
        pytest.param(pod(anti_required=[term(SECURITY, "region")]), id="required-anti-affinity"),
        pytest.param(pod(anti_preferred=[PREFER_SCAN_REGION]), id="preferred-anti-affinity"),
    ],
)
def test_sign_pod_with_terms_is_exact_only(incoming: Raw) -> None:
    """Any pod (anti-)affinity term makes the pod one only the exact batch serves (kube's
    batching cannot: unsignable there)."""
    assert isinstance(plugin(Snapshot()).sign_pod(parse.pod_from_raw(incoming)), ExactOnly)


def test_sign_pod_is_namespace_and_sorted_labels() -> None:
    """Existing pods' terms read the namespace and labels, so kube's form of the fragment
    holds exactly those; the exact batch's form only the labels a known term reads (none
    yet)."""
    pl = plugin(Snapshot())
    one = pl.sign_pod(parse.pod_from_raw(pod("a", labels={"b": "2", "a": "1"})))
    two = pl.sign_pod(parse.pod_from_raw(pod("b", labels={"a": "1", "b": "2"})))
    assert one == two
    assert isinstance(one, NarrowedForExact)
    assert one.fragment == ("default", (("a", "1"), ("b", "2")))
    assert one.exact == ("default", ())


def test_sign_pod_for_the_exact_batch_keeps_the_labels_terms_read() -> None:
    """Once a known term names key ``a``, the exact form keeps ``a`` (pods differing in it
    may get different verdicts) and still leaves ``b`` out; kube's form is unchanged."""
    snap = Snapshot()
    reader = pod(anti_required=[term({"matchLabels": {"a": "1"}}, "zone")])
    snap.identity_labels.observe(parse.pod_from_raw(reader))
    pl = plugin(snap)
    one = pl.sign_pod(parse.pod_from_raw(pod("a", labels={"b": "2", "a": "1"})))
    other = pl.sign_pod(parse.pod_from_raw(pod("c", labels={"b": "3", "a": "1"})))
    apart = pl.sign_pod(parse.pod_from_raw(pod("d", labels={"b": "2", "a": "2"})))
    assert isinstance(one, NarrowedForExact)
    assert isinstance(other, NarrowedForExact)
    assert isinstance(apart, NarrowedForExact)
    assert one.fragment == ("default", (("a", "1"), ("b", "2")))
    assert one.exact == other.exact == ("default", (("a", "1"),))
    assert one.fragment != other.fragment
    assert apart.exact != one.exact


@pytest.mark.parametrize(
    ("left", "right"),
    [
        pytest.param(pod("a", labels=SCAN), pod("b", labels=S2), id="labels-differ"),
        pytest.param(
            pod("a", labels=SCAN), pod("b", labels=SCAN, namespace="other"), id="namespaces-differ"
        ),
    ],
)
def test_sign_pod_separates_pods_existing_terms_can_tell_apart(left: Raw, right: Raw) -> None:
    """Pods that an existing pod's term could treat differently sign differently."""
    pl = plugin(Snapshot())
    assert pl.sign_pod(parse.pod_from_raw(left)) != pl.sign_pod(parse.pod_from_raw(right))


def test_name_is_kubes() -> None:
    """The plugin name matches kube-scheduler byte for byte."""
    assert InterPodAffinity.name == "InterPodAffinity"


# -- through the real runner --------------------------------------------------------------


def _profile(snap: Snapshot) -> Profile:
    return Profile(
        scheduler_name="batch-scheduler",
        plugins=[PluginSpec("InterPodAffinity", weight=2)],
        registry={"InterPodAffinity": InterPodAffinity},
        plugin_args={},
        snapshot=snap,
        rng=random.Random(0),
    )


HOSTS = [node("n1", zone="z1"), node("n2", zone="z1"), node("n3", zone="z2")]


@pytest.mark.parametrize(
    ("incoming", "pods", "chosen"),
    [
        pytest.param(
            pod(labels=SCAN, anti_required=[term(SECURITY, "zone")]),
            [pod("e", node="n1", labels=SCAN)],
            {"n3"},
            id="required-anti-affinity-leaves-the-other-zone",
        ),
        pytest.param(
            pod(required=[term(SECURITY, "zone")]),
            [pod("e", node="n3", labels=SCAN)],
            {"n3"},
            id="required-affinity-joins-the-matching-zone",
        ),
        pytest.param(
            pod(labels=SCAN, preferred=[weighted(10, term(SECURITY, HOSTNAME))]),
            [pod("e", node="n2", labels=SCAN)],
            {"n2"},
            id="preferred-affinity-picks-the-matching-host",
        ),
        pytest.param(
            pod(labels=SCAN),
            [pod("e", node="n2", anti_preferred=[weighted(10, term(SECURITY, "zone"))])],
            {"n3"},
            id="existing-preferred-anti-affinity-pushes-the-pod-away",
        ),
        pytest.param(pod(labels=SCAN), [], {"n1", "n2", "n3"}, id="no-terms-both-points-skip"),
    ],
)
def test_full_pass_places_the_pod(incoming: Raw, pods: list[Raw], chosen: set[str]) -> None:
    """A Profile full pass with the plugin alone lands where kube would."""
    snap = snapshot_of(HOSTS, pods)
    outcome = _profile(snap).schedule(CycleState(), parse.pod_from_raw(incoming))
    assert isinstance(outcome, ScheduleResult)
    assert outcome.node.name in chosen


def test_full_pass_reports_affinity_reasons() -> None:
    """When no node fits, the FitError counts kube's reasons per node."""
    snap = snapshot_of(
        HOSTS, [pod("e", node="n3", labels=SCAN, anti_required=[term(SECURITY, HOSTNAME)])]
    )
    incoming = pod(
        labels=SCAN, anti_required=[term(SECURITY, "zone")], required=[term(SECURITY, "zone")]
    )
    outcome = _profile(snap).schedule(CycleState(), parse.pod_from_raw(incoming))
    assert isinstance(outcome, FitError)
    assert outcome.message() == (
        "0/3 nodes are available: 1 node(s) didn't match pod anti-affinity rules, "
        "2 node(s) didn't match pod affinity rules."
    )
