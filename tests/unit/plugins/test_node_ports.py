"""NodePorts: host-port conflicts by protocol, port and IP (kube's node_ports_test.go)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from scheduler.cache.node_info import NodeInfo
from scheduler.framework import status as st
from scheduler.framework.cycle_state import CycleState
from scheduler.model.parse import node_from_raw, pod_from_raw
from scheduler.plugins.node_ports import NodePorts
from tests.builders import make_node, make_pod

if TYPE_CHECKING:
    from scheduler.model.pod import Pod

PLUGIN = NodePorts({}, None)  # type: ignore[arg-type]
REASON = "node(s) didn't have free ports for the requested pod ports"


def ports_pod(*ports: str, name: str = "p", node_name: str | None = None) -> Pod:
    """Ports as ``PROTO/IP/port`` (IP may be empty)."""
    specs: list[dict[str, Any]] = []
    for spec in ports:
        proto, ip, port = spec.split("/")
        entry: dict[str, Any] = {
            "containerPort": int(port),
            "hostPort": int(port),
            "protocol": proto,
        }
        if ip:
            entry["hostIP"] = ip
        specs.append(entry)
    container = {"name": "c", "image": "pause", "ports": specs}
    return pod_from_raw(make_pod(name, containers=[container], node_name=node_name))


def node_with(*used: Pod) -> NodeInfo:
    info = NodeInfo(node_from_raw(make_node("n1")))
    for p in used:
        info.add_pod(p)
    return info


def run(p: Pod, info: NodeInfo) -> st.Status:
    state = CycleState()
    _, status = PLUGIN.pre_filter(state, p, None)  # type: ignore[arg-type]
    assert status.is_success
    return PLUGIN.filter(state, p, info)


CASES = [
    pytest.param(ports_pod("UDP/127.0.0.1/8080"), node_with(), False, id="nothing-running-fits"),
    pytest.param(
        ports_pod("UDP/127.0.0.1/8080"),
        node_with(ports_pod("UDP/127.0.0.1/9090", name="e")),
        False,
        id="other-port-fits",
    ),
    pytest.param(
        ports_pod("UDP/127.0.0.1/8080"),
        node_with(ports_pod("UDP/127.0.0.1/8080", name="e")),
        True,
        id="same-udp-port-conflicts",
    ),
    pytest.param(
        ports_pod("TCP/127.0.0.1/8080"),
        node_with(ports_pod("UDP/127.0.0.1/8080", name="e")),
        False,
        id="same-port-other-protocol-fits",
    ),
    pytest.param(
        ports_pod("TCP/127.0.0.1/8001"),
        node_with(ports_pod("TCP/127.0.0.2/8001", name="e")),
        False,
        id="same-port-other-ip-fits",
    ),
    pytest.param(
        ports_pod("TCP/0.0.0.0/8001"),
        node_with(ports_pod("TCP/127.0.0.1/8001", name="e")),
        True,
        id="wanted-wildcard-conflicts-with-any-ip",
    ),
    pytest.param(
        ports_pod("TCP/127.0.0.1/8001"),
        node_with(ports_pod("TCP//8001", name="e")),
        True,
        id="used-wildcard-conflicts-with-specific-ip",
    ),
    pytest.param(
        ports_pod("TCP/0.0.0.0/8001"),
        node_with(ports_pod("UDP/127.0.0.1/8001", name="e")),
        False,
        id="wildcard-other-protocol-fits",
    ),
    pytest.param(
        ports_pod("TCP/127.0.0.1/8001", "UDP/127.0.0.1/8002"),
        node_with(ports_pod("UDP/127.0.0.1/8002", name="e")),
        True,
        id="second-wanted-port-conflicts",
    ),
]


@pytest.mark.parametrize(("p", "info", "conflict"), CASES)
def test_filter(p: Pod, info: NodeInfo, conflict: bool) -> None:
    """A conflict is Unschedulable with kube's reason; no conflict is SUCCESS."""
    status = run(p, info)
    if conflict:
        assert (status.code, status.reasons) == (st.Code.UNSCHEDULABLE, (REASON,))
    else:
        assert status is st.SUCCESS


def test_pre_filter_skips_pods_without_host_ports() -> None:
    """No host ports: PreFilter returns Skip; Filter on a fresh state still passes."""
    p = pod_from_raw(make_pod("p"))
    assert PLUGIN.pre_filter(CycleState(), p, None)[1].is_skip  # type: ignore[arg-type]
    assert PLUGIN.filter(CycleState(), p, node_with(ports_pod("TCP//80", name="e"))) is st.SUCCESS


def test_filter_without_pre_filter_state() -> None:
    """A recheck on a fresh CycleState still finds the conflict."""
    status = PLUGIN.filter(
        CycleState(), ports_pod("TCP//80"), node_with(ports_pod("TCP//80", name="e"))
    )
    assert status.reasons == (REASON,)


def test_sign_pod() -> None:
    """Same ports in any order sign equal; another port or protocol signs differently."""
    a = PLUGIN.sign_pod(ports_pod("TCP//80", "UDP//53", name="a"))
    assert a == PLUGIN.sign_pod(ports_pod("UDP//53", "TCP//80", name="b"))
    assert a != PLUGIN.sign_pod(ports_pod("TCP//80", "TCP//53", name="c"))
    assert a != PLUGIN.sign_pod(ports_pod("TCP//80", name="d"))
    assert NodePorts.name == "NodePorts"
