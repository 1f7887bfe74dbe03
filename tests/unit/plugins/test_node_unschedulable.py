"""NodeUnschedulable: cordoned nodes take only pods tolerating the unschedulable taint.

Cases ported in our own words from kube-scheduler's node_unschedulable_test.go.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from scheduler.cache.node_info import NodeInfo
from scheduler.framework import status as st
from scheduler.framework.cycle_state import CycleState
from scheduler.model.parse import node_from_raw, pod_from_raw
from scheduler.plugins.node_unschedulable import NodeUnschedulable
from scheduler.plugins.taint_toleration import TaintToleration
from tests.builders import make_node, make_pod, toleration

if TYPE_CHECKING:
    from scheduler.model.pod import Pod

PLUGIN = NodeUnschedulable({}, None)  # type: ignore[arg-type]
KEY = "node.kubernetes.io/unschedulable"


def pod(*tolerations: dict[str, Any], name: str = "p") -> Pod:
    return pod_from_raw(make_pod(name, tolerations=list(tolerations) or None))


def node(unschedulable: bool) -> NodeInfo:
    return NodeInfo(node_from_raw(make_node("n1", unschedulable=unschedulable)))


@pytest.mark.parametrize(
    ("p", "unschedulable", "rejected"),
    [
        pytest.param(pod(), False, False, id="schedulable-node-admits-any-pod"),
        pytest.param(pod(), True, True, id="cordoned-node-rejects-plain-pod"),
        pytest.param(
            pod(toleration(KEY, effect="NoSchedule", operator="Exists")),
            True,
            False,
            id="toleration-of-unschedulable-taint-admits",
        ),
        pytest.param(
            pod(toleration(KEY, effect="NoExecute", operator="Exists")),
            True,
            True,
            id="toleration-with-other-effect-does-not-admit",
        ),
        pytest.param(
            pod(toleration(operator="Exists")), True, False, id="tolerate-everything-admits"
        ),
    ],
)
def test_filter(p: Pod, unschedulable: bool, rejected: bool) -> None:
    """spec.unschedulable rejects with UnschedulableAndUnresolvable unless tolerated."""
    status = PLUGIN.filter(CycleState(), p, node(unschedulable))
    if not rejected:
        assert status is st.SUCCESS
    else:
        assert status.code is st.Code.UNSCHEDULABLE_AND_UNRESOLVABLE
        assert status.reasons == ("node(s) were unschedulable",)


def test_sign_pod() -> None:
    """Tolerations are the fragment, the same one TaintToleration gives."""
    a = pod(toleration(KEY, effect="NoSchedule", operator="Exists"), name="a")
    assert PLUGIN.sign_pod(a) == PLUGIN.sign_pod(
        pod(toleration(KEY, effect="NoSchedule", operator="Exists"), name="b")
    )
    assert PLUGIN.sign_pod(a) != PLUGIN.sign_pod(pod(name="c"))
    assert PLUGIN.sign_pod(a) == TaintToleration({}, None).sign_pod(a)  # type: ignore[arg-type]
    assert NodeUnschedulable.name == "NodeUnschedulable"
