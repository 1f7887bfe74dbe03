"""TaintToleration: filter on NoSchedule/NoExecute, score PreferNoSchedule, signature.

Cases ported in our own words from kube-scheduler's taint_toleration_test.go (v1.35: the
filter reason no longer names the taint, kubernetes#134740).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from scheduler.cache.node_info import NodeInfo
from scheduler.framework import status as st
from scheduler.framework.cycle_state import CycleState
from scheduler.model.parse import node_from_raw, pod_from_raw
from scheduler.plugins.taint_toleration import TaintToleration
from tests.builders import make_node, make_pod, taint, toleration

if TYPE_CHECKING:
    from scheduler.model.pod import Pod

REASON = "node(s) had untolerated taint(s)"
PLUGIN = TaintToleration({}, None)  # type: ignore[arg-type]


def pod(*tolerations: dict[str, Any], name: str = "p") -> Pod:
    return pod_from_raw(make_pod(name, tolerations=list(tolerations) or None))


def node(*taints: dict[str, Any], name: str = "n1") -> NodeInfo:
    return NodeInfo(node_from_raw(make_node(name, taints=list(taints) or None)))


FILTER_CASES = [
    pytest.param(
        pod(), node(taint("dedicated", "user1")), REASON, id="no-tolerations-untolerated-noschedule"
    ),
    pytest.param(
        pod(toleration("dedicated", "user1", "NoSchedule")),
        node(taint("dedicated", "user1")),
        None,
        id="equal-toleration-matches",
    ),
    pytest.param(
        pod(toleration("dedicated", "user2", "NoSchedule")),
        node(taint("dedicated", "user1")),
        REASON,
        id="toleration-value-differs",
    ),
    pytest.param(
        pod(toleration("foo", effect="NoSchedule", operator="Exists")),
        node(taint("foo", "bar")),
        None,
        id="exists-ignores-value",
    ),
    pytest.param(
        pod(toleration("foo", "bar", "PreferNoSchedule")),
        node(taint("foo", "bar")),
        REASON,
        id="toleration-effect-differs",
    ),
    pytest.param(
        pod(toleration("foo", "bar")),
        node(taint("foo", "bar", "NoExecute")),
        None,
        id="empty-effect-tolerates-every-effect",
    ),
    pytest.param(
        pod(),
        node(taint("foo", "bar", "PreferNoSchedule")),
        None,
        id="prefer-no-schedule-does-not-filter",
    ),
    pytest.param(
        pod(toleration("a", "1", "NoSchedule")),
        node(taint("a", "1"), taint("b", "2", "NoExecute")),
        REASON,
        id="second-taint-untolerated",
    ),
    pytest.param(
        pod(toleration(operator="Exists")),
        node(taint("a", "1"), taint("b", "2", "NoExecute")),
        None,
        id="empty-key-exists-tolerates-everything",
    ),
]


@pytest.mark.parametrize(("p", "info", "reason"), FILTER_CASES)
def test_filter(p: Pod, info: NodeInfo, reason: str | None) -> None:
    """Untolerated NoSchedule/NoExecute taints reject with UnschedulableAndUnresolvable."""
    status = PLUGIN.filter(CycleState(), p, info)
    if reason is None:
        assert status is st.SUCCESS
    else:
        assert status.code is st.Code.UNSCHEDULABLE_AND_UNRESOLVABLE
        assert status.reasons == (reason,)


PREFER = "PreferNoSchedule"
SCORE_CASES = [
    pytest.param(
        pod(toleration("foo", "bar", PREFER)),
        [node(taint("foo", "bar", PREFER)), node(taint("foo", "blah", PREFER))],
        [0, 1],
        [100, 0],
        id="tolerated-taint-beats-intolerable-one",
    ),
    pytest.param(
        pod(toleration("foo", "bar", PREFER), toleration("cpu-type", "arm64", PREFER)),
        [
            node(),
            node(taint("cpu-type", "arm64", PREFER)),
            node(taint("foo", "bar", PREFER), taint("cpu-type", "arm64", PREFER)),
        ],
        [0, 0, 0],
        [100, 100, 100],
        id="all-tolerated-equal-whatever-the-count",
    ),
    pytest.param(
        pod(toleration("foo", "bar", PREFER)),
        [
            node(),
            node(taint("cpu-type", "arm64", PREFER)),
            node(taint("cpu-type", "arm64", PREFER), taint("disk-type", "ssd", PREFER)),
        ],
        [0, 1, 2],
        [100, 50, 0],
        id="more-intolerable-taints-lower-score",
    ),
    pytest.param(
        pod(toleration("cpu-type", "arm64", "NoSchedule")),
        [node(taint("cpu-type", "arm64", PREFER)), node()],
        [1, 0],
        [0, 100],
        id="only-prefer-no-schedule-tolerations-count",
    ),
    pytest.param(
        pod(toleration("cpu-type", "arm64")),
        [node(taint("cpu-type", "arm64", PREFER)), node(taint("x", "y", "NoSchedule"))],
        [0, 0],
        [100, 100],
        id="empty-effect-toleration-counts-and-noschedule-taints-ignored",
    ),
]


@pytest.mark.parametrize(("p", "infos", "raw", "normalized"), SCORE_CASES)
def test_score(p: Pod, infos: list[NodeInfo], raw: list[int], normalized: list[int]) -> None:
    """Raw score counts intolerable PreferNoSchedule taints; normalization reverses it."""
    state = CycleState()
    assert PLUGIN.pre_score(state, p, infos) is st.SUCCESS
    scores = [PLUGIN.score(state, p, info) for info in infos]
    assert scores == raw
    assert PLUGIN.normalize_score(state, p, infos, scores) is st.SUCCESS
    assert scores == normalized


def test_score_without_pre_score_state() -> None:
    """Score computes the PreferNoSchedule tolerations itself when PreScore did not run."""
    assert (
        PLUGIN.score(
            CycleState(), pod(toleration("a", "b", "NoSchedule")), node(taint("a", "b", PREFER))
        )
        == 1
    )


def test_sign_pod() -> None:
    """Same tolerations in any order sign equal; another toleration signs differently."""
    a = PLUGIN.sign_pod(pod(toleration("a", "1", "NoSchedule"), toleration("b", "2"), name="x"))
    assert a == PLUGIN.sign_pod(
        pod(toleration("b", "2"), toleration("a", "1", "NoSchedule"), name="y")
    )
    assert a != PLUGIN.sign_pod(pod(toleration("a", "1", "NoSchedule"), name="z"))
    assert a != PLUGIN.sign_pod(
        pod(toleration("a", "1", "NoExecute"), toleration("b", "2"), name="w")
    )
    assert TaintToleration.name == "TaintToleration"
