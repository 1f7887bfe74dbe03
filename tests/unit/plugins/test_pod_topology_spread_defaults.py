"""PodTopologySpread default constraints: kube's default-constraint cases from
filtering_test.go, scoring_test.go and plugin_test.go restated (expectations exact), plus
signing under defaults (our departure: only pods that defaults apply to are unsignable)."""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from typing import Any

import pytest

from scheduler.cache.node_info import NodeInfo
from scheduler.cache.snapshot import Snapshot
from scheduler.framework import status as st
from scheduler.framework.config import PluginSpec
from scheduler.framework.cycle_state import CycleState
from scheduler.framework.interfaces import ExactOnly
from scheduler.framework.profile import Profile
from scheduler.framework.results import ScheduleResult
from scheduler.model import parse
from scheduler.model.labels import LabelSelector, Operator, Requirement
from scheduler.model.workloads import ControllerKind
from scheduler.plugins import pod_topology_spread as pts
from scheduler.plugins.pod_topology_spread import PodTopologySpread
from tests.builders import Raw, make_node, make_pod, taint

HOSTNAME = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"
NS = "default"
NOT_MATCH = "node(s) didn't match pod topology spread constraints"
MISSING_LABEL = NOT_MATCH + " (missing required label)"
OK = st.SUCCESS
SKEW = st.unschedulable(NOT_MATCH)
NO_KEY = st.unresolvable(MISSING_LABEL)

SYSTEM: Raw = {}
WEB = {"app": "web"}
WEB_SERVICE = ("web", {"app": "web"})
RS = ControllerKind.REPLICA_SET


@dataclass
class FakeHandle:
    snapshot: Snapshot


def default(key: str, when: str, max_skew: int = 1, **extra: Any) -> Raw:
    return {"maxSkew": max_skew, "topologyKey": key, "whenUnsatisfiable": when, **extra}


def listed(*constraints: Raw) -> Raw:
    return {"defaultingType": "List", "defaultConstraints": list(constraints)}


def node(name: str, **labels: str) -> Raw:
    return make_node(name, labels=labels)


def on(node_name: str, name: str, namespace: str = NS, **labels: str) -> Raw:
    return make_pod(name, node_name=node_name, namespace=namespace, labels=labels or WEB)


def pods_on(node_name: str, count: int) -> list[Raw]:
    return [on(node_name, f"{node_name}-{i}") for i in range(count)]


def incoming(labels: dict[str, str] | None = None, owner: str | None = None, **kw: Any) -> Raw:
    raw = make_pod("p", labels=WEB if labels is None else labels, **kw)
    if owner is not None:
        raw["metadata"]["ownerReferences"] = [
            {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": owner, "controller": True}
        ]
    return raw


def own(max_skew: int, key: str, when: str, match: dict[str, str]) -> Raw:
    return {
        "maxSkew": max_skew,
        "topologyKey": key,
        "whenUnsatisfiable": when,
        "labelSelector": {"matchLabels": match},
    }


def cluster(
    nodes: list[Raw],
    pods: list[Raw] | None = None,
    services: tuple[tuple[str, dict[str, str] | None], ...] = (),
    replica_sets: tuple[tuple[str, Raw], ...] = (),
) -> Snapshot:
    infos = {raw["metadata"]["name"]: NodeInfo(parse.node_from_raw(raw)) for raw in nodes}
    for raw in pods or []:
        pod = parse.pod_from_raw(raw)
        infos[pod.node_name].add_pod(pod)
    snap = Snapshot.of(infos.values())
    for name, selector in services:
        spec = {} if selector is None else {"selector": selector}
        raw_svc = {"metadata": {"name": name, "namespace": NS}, "spec": spec}
        snap.workloads.set_service(parse.service_from_raw(raw_svc))
    for name, selector_raw in replica_sets:
        raw_rs = {"metadata": {"name": name, "namespace": NS}, "spec": {"selector": selector_raw}}
        snap.workloads.set_controller(parse.controller_from_raw(raw_rs, RS))
    return snap


def plugin(snap: Snapshot, args: Raw) -> PodTopologySpread:
    return PodTopologySpread(args, FakeHandle(snap))


def equals(**labels: str) -> LabelSelector:
    return LabelSelector(
        tuple(Requirement(k, Operator.IN, (v,)) for k, v in sorted(labels.items()))
    )


FOO_EXISTS = LabelSelector((Requirement("foo", Operator.EXISTS),))
FOO_EXISTS_RAW = {"matchExpressions": [{"key": "foo", "operator": "Exists"}]}


def described(constraints: tuple[Any, ...]) -> list[tuple[Any, ...]]:
    """(maxSkew, key, selector, minDomains, honor node affinity, honor node taints)."""
    return [
        (
            c.max_skew,
            c.topology_key,
            c.selector,
            c.min_domains,
            c.honor_node_affinity,
            c.honor_node_taints,
        )
        for c in constraints
    ]


# -- PreFilter: which hard constraints apply (kube's TestPreFilterState) ------------------


@pytest.mark.parametrize(
    ("args", "pod", "services", "want"),
    [
        pytest.param(
            listed(
                default("node", "DoNotSchedule", 3),
                default("node", "ScheduleAnyway", 2),
                default("rack", "DoNotSchedule", 5),
            ),
            incoming({"foo": "bar", "baz": "kar"}),
            (("svc", {"foo": "bar"}),),
            [
                (3, "node", equals(foo="bar"), 1, True, False),
                (5, "rack", equals(foo="bar"), 1, True, False),
            ],
            id="list-defaults-and-a-service-give-the-hard-ones-with-its-selector",
        ),
        pytest.param(
            listed(default("node", "DoNotSchedule", 3)),
            incoming({"foo": "bar"}),
            (("svc", {"baz": "kep"}),),
            None,
            id="service-not-selecting-the-pod-skips",
        ),
        pytest.param(
            listed(default("node", "DoNotSchedule", 2)),
            incoming(
                {"foo": "bar", "baz": "tar"},
                topology_spread=[
                    own(1, "zone", "DoNotSchedule", {"baz": "tar"}),
                    own(2, "planet", "ScheduleAnyway", {"fot": "rok"}),
                ],
            ),
            (("svc", {"foo": "bar"}),),
            [(1, "zone", equals(baz="tar"), 1, True, False)],
            id="own-constraints-win-over-defaults",
        ),
        pytest.param(
            listed(default("node", "ScheduleAnyway", 2)),
            incoming({"foo": "bar"}),
            (("svc", {"foo": "bar"}),),
            None,
            id="only-soft-defaults-skip",
        ),
        pytest.param(
            SYSTEM,
            incoming({"foo": "bar"}),
            (("svc", {"foo": "bar"}),),
            None,
            id="system-defaults-are-soft-and-skip",
        ),
        pytest.param(
            listed(
                default(
                    "zone",
                    "DoNotSchedule",
                    2,
                    minDomains=3,
                    nodeAffinityPolicy="Ignore",
                    nodeTaintsPolicy="Honor",
                    matchLabelKeys=["foo"],
                )
            ),
            incoming({"foo": "bar"}),
            (("svc", {"foo": "bar"}),),
            [(2, "zone", equals(foo="bar"), 3, False, True)],
            id="entry-min-domains-and-policies-are-kept",
        ),
    ],
)
def test_pre_filter_constraints(
    args: Raw,
    pod: Raw,
    services: tuple[tuple[str, dict[str, str]], ...],
    want: list[tuple[Any, ...]] | None,
) -> None:
    snap = cluster([], services=services)
    state = CycleState()
    _, status = plugin(snap, args).pre_filter(state, parse.pod_from_raw(pod), snap)
    if want is None:
        assert status.is_skip
        return
    assert status.is_success, status
    s = state.read(pts._PRE_FILTER_KEY)
    assert s is not None
    assert described(s.constraints) == want


# -- PreScore: which soft constraints apply and what they count (TestPreScoreState...) ----


@dataclass(frozen=True)
class PreScoreCase:
    args: Raw
    pod: Raw
    nodes: list[Raw]
    constraints: list[tuple[Any, ...]]
    counts: list[dict[str, int]]
    weights: list[float]


@pytest.mark.parametrize(
    "case",
    [
        pytest.param(
            PreScoreCase(
                SYSTEM,
                incoming({"foo": "tar", "baz": "sup"}, owner="rs1"),
                [
                    node("node-a", **{ZONE: "mars"}),
                    node("node-b", **{ZONE: "mars"}),
                    node("node-c"),
                    node("node-d"),
                ],
                [
                    (3, HOSTNAME, FOO_EXISTS, 1, True, False),
                    (5, ZONE, FOO_EXISTS, 1, True, False),
                ],
                [{}, {"mars": 0, "": 0}],
                [math.log(6), math.log(4)],
            ),
            id="system-defaults-with-a-replicaset-nodes-without-zone-form-the-empty-zone",
        ),
        pytest.param(
            PreScoreCase(
                listed(
                    default(HOSTNAME, "ScheduleAnyway", 1),
                    default("rack", "DoNotSchedule", 2),
                    default("planet", "ScheduleAnyway", 2),
                ),
                incoming({"foo": "tar", "baz": "sup"}, owner="rs1"),
                [node("node-a", rack="rack1", planet="mars")],
                [
                    (1, HOSTNAME, FOO_EXISTS, 1, True, False),
                    (2, "planet", FOO_EXISTS, 1, True, False),
                ],
                [{}, {"mars": 0}],
                [math.log(3), math.log(3)],
            ),
            id="list-defaults-with-a-replicaset-give-the-soft-ones",
        ),
        pytest.param(
            PreScoreCase(
                listed(default("galaxy", "ScheduleAnyway", 2)),
                incoming(
                    {"foo": "bar", "baz": "sup"},
                    owner="rs1",
                    topology_spread=[
                        own(1, "zone", "DoNotSchedule", {"bar": ""}),
                        own(2, "planet", "ScheduleAnyway", {"baz": "sup"}),
                    ],
                ),
                [node("node-a", planet="mars", galaxy="andromeda")],
                [(2, "planet", equals(baz="sup"), 1, True, False)],
                [{"mars": 0}],
                [math.log(3)],
            ),
            id="own-soft-constraints-win-over-list-defaults",
        ),
    ],
)
def test_pre_score_state(case: PreScoreCase) -> None:
    snap = cluster(case.nodes, replica_sets=(("rs1", FOO_EXISTS_RAW),))
    state = CycleState()
    pl = plugin(snap, case.args)
    status = pl.pre_score(state, parse.pod_from_raw(case.pod), snap.node_infos)
    assert status.is_success, status
    s = state.read(pts._PRE_SCORE_KEY)
    assert s is not None
    assert described(s.constraints) == case.constraints
    assert list(s.counts) == case.counts
    assert s.ignored_nodes == frozenset()
    assert list(s.weights) == pytest.approx(case.weights)


@pytest.mark.parametrize(
    ("args", "pod"),
    [
        pytest.param(
            listed(default("planet", "ScheduleAnyway", 2)),
            incoming({"foo": "bar", "baz": "sup"}, owner="rs2"),
            id="owning-replicaset-not-in-the-cache",
        ),
        pytest.param(
            listed(default("planet", "DoNotSchedule", 2)),
            incoming({"foo": "bar"}, owner="rs1"),
            id="only-hard-defaults",
        ),
        pytest.param(SYSTEM, incoming({"foo": "bar"}), id="system-but-nothing-selects-the-pod"),
    ],
)
def test_pre_score_skips(args: Raw, pod: Raw) -> None:
    snap = cluster([node("node-a", planet="mars")], replica_sets=(("rs1", FOO_EXISTS_RAW),))
    status = plugin(snap, args).pre_score(CycleState(), parse.pod_from_raw(pod), snap.node_infos)
    assert status.is_skip


# -- Score: normalized scores under defaults (TestPodTopologySpreadScore) -----------------

PODS_4_3_2_1 = [
    *pods_on("node-a", 4),
    *pods_on("node-b", 3),
    *pods_on("node-c", 2),
    *pods_on("node-d", 1),
]
HOSTS_ONLY = [node(n) for n in ("node-a", "node-b", "node-c", "node-d")]
# node-a and node-b in zone z1; node-c and node-d without a zone label.
HALF_ZONED = [
    node("node-a", **{ZONE: "z1"}),
    node("node-b", **{ZONE: "z1"}),
    node("node-c"),
    node("node-d"),
]
PODS_2_0_1_0 = [*pods_on("node-a", 2), *pods_on("node-c", 1)]
SYSTEM_PAIR_AS_LIST = listed(
    default(HOSTNAME, "ScheduleAnyway", 3), default(ZONE, "ScheduleAnyway", 5)
)


def _scores(args: Raw, pod: Raw, nodes: list[Raw], pods: list[Raw]) -> list[int]:
    snap = cluster(nodes, pods, services=(WEB_SERVICE,))
    pl = plugin(snap, args)
    p = parse.pod_from_raw(pod)
    state = CycleState()
    status = pl.pre_score(state, p, snap.node_infos)
    assert status.is_success, status
    scores = [pl.score(state, p, info) for info in snap.node_infos]
    assert pl.normalize_score(state, p, snap.node_infos, scores).is_success
    return scores


@pytest.mark.parametrize(
    ("args", "pod", "nodes", "pods", "want"),
    [
        pytest.param(
            SYSTEM,
            incoming(),
            HOSTS_ONLY,
            PODS_4_3_2_1,
            [44, 66, 77, 100],
            id="system-no-node-has-a-zone-scores-as-hostname-alone",
        ),
        pytest.param(
            SYSTEM,
            incoming(),
            HALF_ZONED,
            PODS_2_0_1_0,
            # raw: a 2·log6+2 + 2·log4+4 → 12, b 2 + 2·log4+4 → 9, c log6+2 → 4, d 2;
            # zoneless nodes keep their hostname score and skip the zone term.
            [16, 41, 83, 100],
            id="system-nodes-without-zone-keep-hostname-spreading",
        ),
        pytest.param(
            SYSTEM_PAIR_AS_LIST,
            incoming(),
            HALF_ZONED,
            PODS_2_0_1_0,
            # The same pair under List requires every key: zoneless nodes are ignored.
            [72, 100, 0, 0],
            id="list-nodes-without-zone-are-ignored",
        ),
        pytest.param(
            SYSTEM,
            incoming(topology_spread=[own(1, ZONE, "ScheduleAnyway", WEB)]),
            HALF_ZONED,
            PODS_2_0_1_0,
            [100, 100, 0, 0],
            id="system-own-constraints-require-every-key",
        ),
        pytest.param(
            SYSTEM,
            incoming(topology_spread=[own(1, HOSTNAME, "ScheduleAnyway", {"none": "x"})]),
            HOSTS_ONLY,
            PODS_4_3_2_1,
            [100, 100, 100, 100],
            id="own-constraints-win-over-system-defaults",
        ),
    ],
)
def test_score(args: Raw, pod: Raw, nodes: list[Raw], pods: list[Raw], want: list[int]) -> None:
    assert _scores(args, pod, nodes, pods) == want


# -- Filter: hard List defaults -----------------------------------------------------------

ABXY = [
    node("node-a", zone="zone1"),
    node("node-b", zone="zone1"),
    node("node-x", zone="zone2"),
    node("node-y", zone="zone2"),
]


def _filter(
    args: Raw,
    pod: Raw,
    nodes: list[Raw],
    pods: list[Raw],
    services: tuple[tuple[str, dict[str, str] | None], ...] = (WEB_SERVICE,),
) -> dict[str, st.Status] | None:
    snap = cluster(nodes, pods, services=services)
    pl = plugin(snap, args)
    p = parse.pod_from_raw(pod)
    state = CycleState()
    _, status = pl.pre_filter(state, p, snap)
    if status.is_skip:
        return None
    assert status.is_success, status
    return {info.name: pl.filter(state, p, info) for info in snap.node_infos}


def codes(statuses: dict[str, st.Status] | None) -> dict[str, Any] | None:
    if statuses is None:
        return None
    return {name: (s.code, s.reasons) for name, s in statuses.items()}


def expect(**by_node: st.Status) -> dict[str, st.Status]:
    names = ("node-a", "node-b", "node-x", "node-y")
    return {n: by_node.get(n.removeprefix("node-"), OK) for n in names}


HARD_ZONE = default("zone", "DoNotSchedule")
HARD_HOST = default(HOSTNAME, "DoNotSchedule")


@pytest.mark.parametrize(
    ("args", "pod", "nodes", "pods", "want"),
    [
        pytest.param(
            listed(HARD_ZONE),
            incoming(),
            ABXY,
            [
                *pods_on("node-a", 1),
                *pods_on("node-b", 1),
                on("node-x", "x-db", app="db"),
                on("node-y", "y-other-ns", namespace="other"),
            ],
            expect(a=SKEW, b=SKEW),
            id="service-members-fill-zone1-so-zone2-only",
        ),
        pytest.param(
            listed(HARD_ZONE),
            incoming(),
            [*ABXY[:3], node("node-y")],
            [*pods_on("node-a", 1)],
            expect(a=SKEW, b=SKEW, y=NO_KEY),
            id="node-without-the-key-is-unresolvable",
        ),
        pytest.param(
            listed(HARD_ZONE),
            incoming(),
            ABXY,
            [*pods_on("node-a", 1), *pods_on("node-x", 1)],
            expect(),
            id="two-zones-one-member-each-every-node-fits",
        ),
        pytest.param(
            listed(default("zone", "DoNotSchedule", minDomains=3)),
            incoming(),
            ABXY,
            [*pods_on("node-a", 1), *pods_on("node-x", 1)],
            expect(a=SKEW, b=SKEW, x=SKEW, y=SKEW),
            id="min-domains-above-the-zone-count-makes-the-minimum-zero",
        ),
        pytest.param(
            listed(HARD_HOST),
            incoming(),
            [node("node-a", taint="t"), *(node(n) for n in ("node-b", "node-x", "node-y"))],
            [*pods_on("node-b", 1), *pods_on("node-x", 1), *pods_on("node-y", 1)],
            expect(b=SKEW, x=SKEW, y=SKEW),
            id="taints-policy-ignore-counts-the-tainted-empty-node",
        ),
        pytest.param(
            listed(default(HOSTNAME, "DoNotSchedule", nodeTaintsPolicy="Honor")),
            incoming(),
            [node("node-a", taint="t"), *(node(n) for n in ("node-b", "node-x", "node-y"))],
            [*pods_on("node-b", 1), *pods_on("node-x", 1), *pods_on("node-y", 1)],
            expect(),
            id="taints-policy-honor-leaves-out-the-tainted-node",
        ),
        pytest.param(
            listed(HARD_HOST),
            incoming(node_selector={"pick": "yes"}),
            [node("node-a", pick="yes"), node("node-b", pick="yes"), node("node-x")],
            [*pods_on("node-a", 1), *pods_on("node-b", 1)],
            {"node-a": OK, "node-b": OK, "node-x": OK},
            id="affinity-policy-honor-leaves-out-unselected-nodes",
        ),
        pytest.param(
            listed(default(HOSTNAME, "DoNotSchedule", nodeAffinityPolicy="Ignore")),
            incoming(node_selector={"pick": "yes"}),
            [node("node-a", pick="yes"), node("node-b", pick="yes"), node("node-x")],
            [*pods_on("node-a", 1), *pods_on("node-b", 1)],
            {"node-a": SKEW, "node-b": SKEW, "node-x": OK},
            id="affinity-policy-ignore-counts-every-node",
        ),
        pytest.param(
            listed(default("zone", "DoNotSchedule", matchLabelKeys=["hash"])),
            incoming({"app": "web", "hash": "h1"}),
            ABXY,
            [on("node-a", "a1", app="web", hash="h2"), on("node-b", "b1", app="web", hash="h2")],
            expect(a=SKEW, b=SKEW),
            id="match-label-keys-of-a-default-do-not-narrow-the-selector",
        ),
    ],
)
def test_filter(
    args: Raw, pod: Raw, nodes: list[Raw], pods: list[Raw], want: dict[str, st.Status]
) -> None:
    for raw in nodes:
        if raw["metadata"]["labels"].pop("taint", None) is not None:
            raw["spec"]["taints"] = [taint("t")]
    assert codes(_filter(args, pod, nodes, pods)) == codes(want)


@pytest.mark.parametrize(
    ("pod", "services"),
    [
        pytest.param(incoming(), (), id="no-service"),
        pytest.param(incoming(), (("nil", None),), id="service-with-nil-selector"),
        pytest.param(incoming(), (("all", {}),), id="service-with-empty-selector"),
        pytest.param(incoming({"app": "db"}), (WEB_SERVICE,), id="service-selecting-others"),
        pytest.param(
            incoming(topology_spread=[own(1, "zone", "ScheduleAnyway", WEB)]),
            (WEB_SERVICE,),
            id="own-soft-constraint-hides-hard-defaults",
        ),
    ],
)
def test_no_hard_default_applies(
    pod: Raw, services: tuple[tuple[str, dict[str, str] | None], ...]
) -> None:
    """Without a non-empty DefaultSelector (or with own constraints) PreFilter skips, even
    where the hard default would reject nodes."""
    pods = [*pods_on("node-a", 3)]
    assert _filter(listed(HARD_ZONE), pod, ABXY, pods, services) is None


# -- through the real runner --------------------------------------------------------------


def _profile(snap: Snapshot, args: Raw) -> Profile:
    return Profile(
        scheduler_name="batch-scheduler",
        plugins=[PluginSpec("PodTopologySpread", weight=2)],
        registry={"PodTopologySpread": PodTopologySpread},
        plugin_args={"PodTopologySpread": args},
        snapshot=snap,
        rng=random.Random(0),
    )


@pytest.mark.parametrize(
    ("args", "nodes", "pods", "chosen"),
    [
        pytest.param(SYSTEM, HOSTS_ONLY, PODS_4_3_2_1, {"node-d"}, id="system-emptiest-node"),
        pytest.param(
            listed(HARD_ZONE),
            ABXY,
            [*pods_on("node-a", 1), *pods_on("node-b", 1), *pods_on("node-y", 1)],
            {"node-x", "node-y"},
            id="list-hard-zone-leaves-the-emptier-zone",
        ),
    ],
)
def test_full_pass_places_service_members(
    args: Raw, nodes: list[Raw], pods: list[Raw], chosen: set[str]
) -> None:
    snap = cluster(nodes, pods, services=(WEB_SERVICE,))
    outcome = _profile(snap, args).schedule(CycleState(), parse.pod_from_raw(incoming()))
    assert isinstance(outcome, ScheduleResult)
    assert outcome.node.name in chosen


# -- Sign ---------------------------------------------------------------------------------


def _job_pod(**kw: Any) -> Raw:
    raw = incoming(**kw)
    raw["metadata"]["ownerReferences"] = [
        {"apiVersion": "batch/v1", "kind": "Job", "name": "job", "controller": True}
    ]
    return raw


@pytest.mark.parametrize(
    ("args", "pod", "services", "signable"),
    [
        pytest.param(SYSTEM, _job_pod(), (), True, id="system-job-pod-nothing-selects"),
        pytest.param(SYSTEM, incoming(), (WEB_SERVICE,), False, id="system-service-selects"),
        pytest.param(
            SYSTEM, incoming({"foo": "x"}, owner="rs1"), (), False, id="system-replicaset-owns"
        ),
        pytest.param(
            SYSTEM, incoming({"foo": "x"}, owner="rs2"), (), True, id="system-unknown-replicaset"
        ),
        pytest.param(SYSTEM, _job_pod(), (("nil", None),), True, id="system-nil-service"),
        pytest.param(SYSTEM, _job_pod(), (("all", {}),), True, id="system-empty-service"),
        pytest.param(
            listed(HARD_ZONE), incoming(), (WEB_SERVICE,), False, id="list-hard-default-applies"
        ),
        pytest.param(listed(HARD_ZONE), _job_pod(), (), True, id="list-nothing-selects"),
        pytest.param({"defaultingType": "List"}, incoming(), (WEB_SERVICE,), True, id="list-empty"),
        pytest.param(
            {"defaultingType": "List"},
            incoming(topology_spread=[own(1, "zone", "ScheduleAnyway", WEB)]),
            (),
            False,
            id="own-constraints-without-defaults",
        ),
    ],
)
def test_sign_pod(
    args: Raw,
    pod: Raw,
    services: tuple[tuple[str, dict[str, str] | None], ...],
    signable: bool,
) -> None:
    """Exact-only exactly when some constraint applies (own, or defaults with a non-empty
    DefaultSelector); otherwise ``()``, since the plugin then reads nothing of the pod."""
    snap = cluster([], services=services, replica_sets=(("rs1", FOO_EXISTS_RAW),))
    fragment = plugin(snap, args).sign_pod(parse.pod_from_raw(pod))
    assert fragment == () if signable else isinstance(fragment, ExactOnly)


def test_sign_pod_reads_the_live_workloads() -> None:
    """A Service created or deleted later changes the answer (the queue re-signs)."""
    snap = cluster([])
    pl = plugin(snap, SYSTEM)
    pod = parse.pod_from_raw(incoming())
    assert pl.sign_pod(pod) == ()
    snap.workloads.set_service(
        parse.service_from_raw({"metadata": {"name": "web", "namespace": NS}, "spec": {}})
    )
    assert pl.sign_pod(pod) == ()  # a Service with no selector selects nothing
    snap.workloads.set_service(
        parse.service_from_raw(
            {"metadata": {"name": "web", "namespace": NS}, "spec": {"selector": WEB}}
        )
    )
    assert isinstance(pl.sign_pod(pod), ExactOnly)
    snap.workloads.remove_service(NS, "web")
    assert pl.sign_pod(pod) == ()
