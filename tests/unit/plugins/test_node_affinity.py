"""NodeAffinity: PreFilter node names, Filter on selector/required/added affinity, preferred
scores, args and signature. Cases ported in our own words from kube-scheduler's
node_affinity_test.go.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from scheduler.cache.node_info import NodeInfo
from scheduler.framework import status as st
from scheduler.framework.cycle_state import CycleState
from scheduler.model.parse import node_from_raw, pod_from_raw
from scheduler.plugins.node_affinity import NodeAffinity
from tests.builders import make_node, make_pod

if TYPE_CHECKING:
    from scheduler.model.pod import Pod

POD_REASON = "node(s) didn't match Pod's node affinity/selector"
ENFORCED_REASON = "node(s) didn't match scheduler-enforced node affinity"


def expr(key: str, op: str, *values: str) -> dict[str, Any]:
    out: dict[str, Any] = {"key": key, "operator": op}
    if values:
        out["values"] = list(values)
    return out


def term(*exprs: dict[str, Any], fields: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if exprs:
        out["matchExpressions"] = list(exprs)
    if fields:
        out["matchFields"] = fields
    return out


def required(*terms: dict[str, Any]) -> dict[str, Any]:
    return {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": list(terms)}}


def preferred(*weighted: tuple[int, dict[str, Any]]) -> dict[str, Any]:
    return {
        "preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": w, "preference": t} for w, t in weighted
        ]
    }


def pod(node_affinity: dict[str, Any] | None = None, name: str = "p", **kw: Any) -> Pod:
    affinity = {"nodeAffinity": node_affinity} if node_affinity else None
    return pod_from_raw(make_pod(name, affinity=affinity, **kw))


def node(name: str = "n1", **labels: str) -> NodeInfo:
    return NodeInfo(node_from_raw(make_node(name, labels=labels)))


def plugin(args: dict[str, Any] | None = None) -> NodeAffinity:
    return NodeAffinity(args or {}, None)  # type: ignore[arg-type]


def run_filter(pl: NodeAffinity, p: Pod, info: NodeInfo) -> st.Status:
    state = CycleState()
    _, status = pl.pre_filter(state, p, None)  # type: ignore[arg-type]
    if status.is_skip:
        return st.SUCCESS
    assert status.is_success
    return pl.filter(state, p, info)


FILTER_CASES = [
    pytest.param(
        {}, pod(node_selector={"foo": "bar"}), node(), POD_REASON, id="selector-label-missing"
    ),
    pytest.param(
        {},
        pod(node_selector={"foo": "bar"}),
        node(foo="bar", baz="blah"),
        None,
        id="selector-subset-of-labels-matches",
    ),
    pytest.param(
        {},
        pod(node_selector={"foo": "bar", "baz": "blah"}),
        node(foo="bar"),
        POD_REASON,
        id="selector-all-entries-must-match",
    ),
    pytest.param(
        {},
        pod(required(term(expr("foo", "In", "value1", "bar")))),
        node(foo="bar"),
        None,
        id="in-operator-matches",
    ),
    pytest.param(
        {},
        pod(required(term(expr("kernel-version", "Gt", "0204")))),
        node(**{"kernel-version": "0206"}),
        None,
        id="gt-compares-integers",
    ),
    pytest.param(
        {},
        pod(required(term(expr("mem-type", "NotIn", "DDR", "DDR2")))),
        node(**{"mem-type": "DDR3"}),
        None,
        id="not-in-matches-other-value",
    ),
    pytest.param(
        {},
        pod(required(term(expr("GPU", "Exists")))),
        node(GPU="NVIDIA-GRID-K1"),
        None,
        id="exists-matches",
    ),
    pytest.param(
        {},
        pod(required(term(expr("foo", "DoesNotExist")))),
        node(foo="bar"),
        POD_REASON,
        id="does-not-exist-rejects",
    ),
    pytest.param(
        {},
        pod(required(term(expr("foo", "In", "x")), term(expr("diffkey", "In", "wrong")))),
        node(foo="bar"),
        POD_REASON,
        id="no-term-matches",
    ),
    pytest.param(
        {},
        pod(required(term(expr("foo", "In", "x")), term(expr("foo", "In", "bar")))),
        node(foo="bar"),
        None,
        id="terms-are-ored",
    ),
    pytest.param(
        {},
        pod(required(term(expr("foo", "In", "bar"), expr("baz", "Exists")))),
        node(foo="bar"),
        POD_REASON,
        id="expressions-in-a-term-are-anded",
    ),
    pytest.param(
        {},
        pod(required(term(expr("foo", "In", "bar"))), node_selector={"baz": "x"}),
        node(foo="bar"),
        POD_REASON,
        id="selector-and-affinity-both-apply",
    ),
    pytest.param(
        {},
        pod(required(term(fields=[expr("metadata.name", "In", "n1")]))),
        node("n2"),
        POD_REASON,
        id="match-fields-other-node-rejected",
    ),
    pytest.param(
        {},
        pod(required(term(fields=[expr("metadata.name", "NotIn", "n1")]))),
        node("n2"),
        None,
        id="match-fields-not-in-other-node",
    ),
    pytest.param(
        {"addedAffinity": required(term(expr("zone", "In", "foo")))},
        pod(),
        node(zone="bar"),
        ENFORCED_REASON,
        id="added-affinity-rejects-plain-pod",
    ),
    pytest.param(
        {"addedAffinity": required(term(expr("zone", "In", "foo")))},
        pod(node_selector={"zone": "bar"}),
        node(zone="bar"),
        ENFORCED_REASON,
        id="added-affinity-checked-before-pod",
    ),
    pytest.param(
        {"addedAffinity": required(term(expr("zone", "In", "foo")))},
        pod(node_selector={"x": "y"}),
        node(zone="foo"),
        POD_REASON,
        id="added-affinity-passes-pod-selector-fails",
    ),
]


@pytest.mark.parametrize(("args", "p", "info", "reason"), FILTER_CASES)
def test_filter(args: dict[str, Any], p: Pod, info: NodeInfo, reason: str | None) -> None:
    """Mismatches are UnschedulableAndUnresolvable with kube's two reasons."""
    status = run_filter(plugin(args), p, info)
    if reason is None:
        assert status is st.SUCCESS
    else:
        assert (status.code, status.reasons) == (st.Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (reason,))


NAME = "metadata.name"
PRE_FILTER_CASES = [
    pytest.param({}, pod(), None, st.Code.SKIP, id="nothing-to-check-skips"),
    pytest.param(
        {"addedAffinity": required(term(expr("a", "Exists")))},
        pod(),
        None,
        st.Code.SUCCESS,
        id="added-affinity-prevents-skip",
    ),
    pytest.param(
        {}, pod(node_selector={"a": "b"}), None, st.Code.SUCCESS, id="selector-only-all-nodes"
    ),
    pytest.param(
        {},
        pod(required(term(fields=[expr(NAME, "In", "n1")]))),
        {"n1"},
        st.Code.SUCCESS,
        id="one-term-names-a-node",
    ),
    pytest.param(
        {},
        pod(required(term(fields=[expr(NAME, "In", "n1")]), term(fields=[expr(NAME, "In", "n2")]))),
        {"n1", "n2"},
        st.Code.SUCCESS,
        id="terms-union",
    ),
    pytest.param(
        {},
        pod(required(term(fields=[expr(NAME, "In", "n1")]), term(expr("a", "Exists")))),
        None,
        st.Code.SUCCESS,
        id="a-term-without-names-allows-all",
    ),
    pytest.param(
        {},
        pod(required(term(fields=[expr(NAME, "In", "n1"), expr(NAME, "In", "n2")]))),
        None,
        st.Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
        id="conflicting-names-in-a-term",
    ),
    pytest.param(
        {},
        pod(required(term(fields=[expr(NAME, "NotIn", "n1")]))),
        None,
        st.Code.SUCCESS,
        id="not-in-does-not-narrow",
    ),
]


@pytest.mark.parametrize(("args", "p", "want_names", "code"), PRE_FILTER_CASES)
def test_pre_filter(
    args: dict[str, Any], p: Pod, want_names: set[str] | None, code: st.Code
) -> None:
    """PreFilter narrows to the named nodes (kube's PreFilterResult) or skips."""
    names_, status = plugin(args).pre_filter(CycleState(), p, None)  # type: ignore[arg-type]
    assert status.code is code
    assert names_ == (frozenset(want_names) if want_names is not None else None)
    if code is st.Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
        assert status.reasons == ("pod affinity terms conflict",)


def test_score() -> None:
    """Matching preferred weights add up; normalized by the maximum (18, 36, 100)."""
    p = pod(
        preferred(
            (2, term(expr("zone", "In", "z1"))),
            (4, term(expr("disk", "In", "ssd"))),
            (5, term(expr("zone", "In", "z1"), expr("disk", "In", "ssd"))),
        )
    )
    infos = [
        node("a", zone="z1"),
        node("b", disk="ssd"),
        node("c", zone="z1", disk="ssd"),
        node("d"),
    ]
    pl = plugin()
    state = CycleState()
    assert pl.pre_score(state, p, infos) is st.SUCCESS
    scores = [pl.score(state, p, info) for info in infos]
    assert scores == [2, 4, 11, 0]
    pl.normalize_score(state, p, infos, scores)
    assert scores == [18, 36, 100, 0]


def test_score_adds_added_preferred_terms() -> None:
    """addedAffinity's preferred terms score every pod, on top of the pod's own."""
    pl = plugin({"addedAffinity": preferred((3, term(expr("zone", "In", "z1"))))})
    p = pod(preferred((1, term(expr("disk", "Exists")))))
    infos = [node("a", zone="z1", disk="hdd"), node("b", disk="ssd"), node("c")]
    state = CycleState()
    assert pl.pre_score(state, p, infos) is st.SUCCESS
    scores = [pl.score(state, p, info) for info in infos]
    assert scores == [4, 1, 0]
    pl.normalize_score(state, p, infos, scores)
    assert scores == [100, 25, 0]


def test_pre_score_skips_without_preferences() -> None:
    """Nothing preferred anywhere: PreScore returns Skip."""
    assert plugin().pre_score(CycleState(), pod(required(term(expr("a", "Exists")))), []).is_skip


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        pytest.param(
            {
                "addedAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": []}
                }
            },
            "nodeSelectorTerms: must have at least one",
            id="no-terms",
        ),
        pytest.param(
            {"addedAffinity": required(term(expr("a", "Into", "b")))},
            'matchExpressions[0].operator: unknown value "Into"',
            id="bad-operator",
        ),
        pytest.param(
            {"addedAffinity": required(term(expr("a", "In")))},
            "matchExpressions[0].values: must be specified",
            id="in-without-values",
        ),
        pytest.param(
            {"addedAffinity": required(term(fields=[expr("metadata.labels", "In", "x")]))},
            "matchFields[0].key",
            id="bad-field-key",
        ),
        pytest.param(
            {"addedAffinity": preferred((0, term(expr("a", "Exists"))))},
            "[0].weight: 0 must be in the range 1-100",
            id="zero-weight",
        ),
        pytest.param(
            {"addedAffinity": {"requiredDuringSchedulingRequiredDuringExecution": {}}},
            'unknown field "requiredDuringSchedulingRequiredDuringExecution"',
            id="unknown-field",
        ),
    ],
)
def test_args_rejected(args: dict[str, Any], fragment: str) -> None:
    """Bad addedAffinity raises ValueError naming NodeAffinityArgs and the field."""
    with pytest.raises(ValueError, match=r"NodeAffinityArgs\.addedAffinity") as info:
        plugin(args)
    assert fragment in str(info.value)


def test_sign_pod() -> None:
    """Equivalent affinities sign equal (value and term order ignored); changes differ."""
    pl = plugin()
    a = pl.sign_pod(
        pod(
            required(term(expr("a", "In", "1", "2")), term(expr("b", "Exists"))),
            node_selector={"x": "y"},
            name="a",
        )
    )
    b = pl.sign_pod(
        pod(
            required(term(expr("b", "Exists")), term(expr("a", "In", "2", "1"))),
            node_selector={"x": "y"},
            name="b",
        )
    )
    assert a == b
    assert a != pl.sign_pod(
        pod(
            required(term(expr("a", "In", "1")), term(expr("b", "Exists"))),
            node_selector={"x": "y"},
            name="c",
        )
    )
    assert a != pl.sign_pod(
        pod(
            required(term(expr("a", "In", "1", "2")), term(expr("b", "Exists"))),
            node_selector={"x": "z"},
            name="d",
        )
    )
    p1 = pl.sign_pod(pod(preferred((1, term(expr("a", "Exists")))), name="e"))
    assert p1 != pl.sign_pod(pod(preferred((2, term(expr("a", "Exists")))), name="f"))
    added = plugin({"addedAffinity": preferred((3, term(expr("zone", "In", "z1"))))})
    assert added.sign_pod(pod(name="g")) != pl.sign_pod(pod(name="g"))
    assert NodeAffinity.name == "NodeAffinity"
