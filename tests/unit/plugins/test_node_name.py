"""NodeName: a pod naming its node fits only there (kube's node_name_test.go, our words)."""

from __future__ import annotations

import pytest

from scheduler.cache.node_info import NodeInfo
from scheduler.framework import status as st
from scheduler.framework.cycle_state import CycleState
from scheduler.model.parse import node_from_raw, pod_from_raw
from scheduler.plugins.node_name import NodeName
from tests.builders import make_node, make_pod

PLUGIN = NodeName({}, None)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("node_name", "rejected"),
    [
        pytest.param(None, False, id="no-node-name-fits-anywhere"),
        pytest.param("foo", False, id="same-node-name-fits"),
        pytest.param("bar", True, id="other-node-name-rejected"),
    ],
)
def test_filter(node_name: str | None, rejected: bool) -> None:
    """spec.nodeName other than the node's name is UnschedulableAndUnresolvable."""
    p = pod_from_raw(make_pod("p", node_name=node_name))
    status = PLUGIN.filter(CycleState(), p, NodeInfo(node_from_raw(make_node("foo"))))
    if not rejected:
        assert status is st.SUCCESS
    else:
        assert status.code is st.Code.UNSCHEDULABLE_AND_UNRESOLVABLE
        assert status.reasons == ("node(s) didn't match the requested node name",)


def test_sign_pod() -> None:
    """The node name is the fragment."""
    a = PLUGIN.sign_pod(pod_from_raw(make_pod("a", node_name="n1")))
    assert a == PLUGIN.sign_pod(pod_from_raw(make_pod("b", node_name="n1")))
    assert a != PLUGIN.sign_pod(pod_from_raw(make_pod("c", node_name="n2")))
    assert NodeName.name == "NodeName"


def test_rejects_args() -> None:
    """NodeName takes no args; an unknown field names itself."""
    with pytest.raises(ValueError, match='NodeNameArgs: unknown field "x"'):
        NodeName({"x": 1}, None)  # type: ignore[arg-type]
