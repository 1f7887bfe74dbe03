"""ClusterState: pod state machine, assumptions and expiry, ghost nodes, snapshot accounting."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import pytest

from scheduler.cache.cluster_state import CacheError, ClusterState
from scheduler.model.parse import node_from_raw, pod_from_raw
from scheduler.model.pod import HostPort, Pod
from tests.builders import make_node, make_pod

if TYPE_CHECKING:
    from scheduler.model.node import Node

Gi = 2**30


def node(name: str, **kw: Any) -> Node:
    return node_from_raw(make_node(name, **kw))


def pod(name: str, node_name: str | None = None, *, cpu: str = "1", **kw: Any) -> Pod:
    return pod_from_raw(make_pod(name, cpu=cpu, memory="1Gi", node_name=node_name, **kw))


def cluster(*names: str) -> ClusterState:
    cs = ClusterState()
    for name in names:
        cs.add_node(node(name))
    return cs


def cpu_on(cs: ClusterState, name: str) -> int:
    info = cs.node_info(name)
    return info.requested.milli_cpu if info is not None else -1


Step = Callable[[ClusterState], object]


@pytest.mark.parametrize(
    ("steps", "cpu_n1", "cpu_n2", "pods", "assumed"),
    [
        pytest.param(
            [lambda cs: cs.add_pod(pod("a", "n1"))],
            1000,
            0,
            1,
            0,
            id="bound-pod-counts-on-its-node",
        ),
        pytest.param(
            [
                lambda cs: cs.add_pod(pod("a", "n1")),
                lambda cs: cs.add_pod(pod("b", "n1", cpu="500m")),
            ],
            1500,
            0,
            2,
            0,
            id="pods-sum",
        ),
        pytest.param([lambda cs: cs.add_pod(pod("a"))], 0, 0, 0, 0, id="pending-pod-is-not-cached"),
        pytest.param(
            [lambda cs: cs.add_pod(pod("a", "n1", phase="Succeeded"))],
            0,
            0,
            0,
            0,
            id="terminal-pod-is-not-cached",
        ),
        pytest.param(
            [
                lambda cs: cs.add_pod(pod("a", "n1")),
                lambda cs: cs.add_pod(pod("a", "n1", phase="Failed")),
            ],
            0,
            0,
            0,
            0,
            id="pod-turning-terminal-releases-its-node",
        ),
        pytest.param(
            [
                lambda cs: cs.add_pod(pod("a", "n1")),
                lambda cs: cs.add_pod(pod("a", "n1", cpu="3")),
            ],
            3000,
            0,
            1,
            0,
            id="update-replaces-requests",
        ),
        pytest.param(
            [lambda cs: cs.add_pod(pod("a", "n1")), lambda cs: cs.add_pod(pod("a", "n2"))],
            0,
            1000,
            1,
            0,
            id="update-to-another-node-moves",
        ),
        pytest.param(
            [lambda cs: cs.add_pod(pod("a", "n1")), lambda cs: cs.remove_pod("uid-default-a")],
            0,
            0,
            0,
            0,
            id="remove",
        ),
        pytest.param(
            [lambda cs: cs.add_pod(pod("a", "n1")), lambda cs: cs.add_pod(pod("a"))],
            0,
            0,
            0,
            0,
            id="added-pod-losing-its-node-leaves",
        ),
        pytest.param(
            [lambda cs: cs.assume(pod("a"), "n1")], 1000, 0, 1, 1, id="assume-takes-resources"
        ),
        pytest.param(
            [lambda cs: cs.assume(pod("a"), "n1"), lambda cs: cs.forget("uid-default-a")],
            0,
            0,
            0,
            0,
            id="forget-releases",
        ),
        pytest.param(
            [lambda cs: cs.assume(pod("a"), "n1"), lambda cs: cs.add_pod(pod("a", "n1"))],
            1000,
            0,
            1,
            0,
            id="watch-confirms-assumption",
        ),
        pytest.param(
            [
                lambda cs: cs.assume(pod("a"), "n1"),
                lambda cs: cs.add_pod(pod("a", "n1")),
                lambda cs: cs.forget("uid-default-a"),
            ],
            1000,
            0,
            1,
            0,
            id="forget-after-confirm-is-a-no-op",
        ),
        pytest.param(
            [lambda cs: cs.assume(pod("a"), "n1"), lambda cs: cs.add_pod(pod("a", "n2"))],
            0,
            1000,
            1,
            0,
            id="confirmed-on-another-node-moves",
        ),
        pytest.param(
            [lambda cs: cs.assume(pod("a"), "n1"), lambda cs: cs.add_pod(pod("a"))],
            1000,
            0,
            1,
            1,
            id="stale-pending-event-keeps-assumption",
        ),
        pytest.param(
            [lambda cs: cs.assume(pod("a"), "n1"), lambda cs: cs.remove_pod("uid-default-a")],
            0,
            0,
            0,
            0,
            id="deleting-an-assumed-pod",
        ),
        pytest.param(
            [
                lambda cs: cs.assume(pod("a"), "n1"),
                lambda cs: cs.add_pod(pod("a", "n1", phase="Succeeded")),
            ],
            0,
            0,
            0,
            0,
            id="assumed-pod-seen-terminal",
        ),
        pytest.param(
            [lambda cs: cs.forget("nope"), lambda cs: cs.remove_pod("nope")],
            0,
            0,
            0,
            0,
            id="unknown-uids-are-no-ops",
        ),
    ],
)
def test_pod_state_machine(
    steps: list[Step], cpu_n1: int, cpu_n2: int, pods: int, assumed: int
) -> None:
    """Each sequence of events leaves the expected requests, pod and assumption counts."""
    cs = cluster("n1", "n2")
    for step in steps:
        step(cs)
    assert (cpu_on(cs, "n1"), cpu_on(cs, "n2")) == (cpu_n1, cpu_n2)
    assert (cs.num_pods, cs.num_assumed) == (pods, assumed)
    assert len(cs.pod_uids()) == pods


def test_confirmed_version_replaces_assumed_copy() -> None:
    """After confirmation the cache holds the watched pod, not the assumed copy."""
    cs = cluster("n1")
    placed = cs.assume(pod("a"), "n1")
    assert placed.node_name == "n1"
    assert cs.get_pod("uid-default-a") is placed
    assert cs.is_assumed("uid-default-a")
    watched = pod("a", "n1", priority=5)
    cs.add_pod(watched)
    assert cs.get_pod("uid-default-a") is watched
    assert not cs.is_assumed("uid-default-a")
    info = cs.snapshot.get("n1")
    assert info is not None
    assert info.pods[watched.uid] is watched


def test_confirm_keeps_the_assumed_copy_and_ends_the_assumption() -> None:
    """The watch showed our bind and nothing else: the assumed copy becomes the added pod;
    confirming a pod that is not assumed is refused (False)."""
    cs = cluster("n1")
    placed = cs.assume(pod("a"), "n1")
    assert cs.confirm(placed.uid)
    assert not cs.is_assumed(placed.uid)
    assert cs.get_pod(placed.uid) is placed
    assert cs.forget(placed.uid) is None  # confirmed: no longer forgettable
    assert not cs.confirm(placed.uid)
    assert cpu_on(cs, "n1") == 1000


@pytest.mark.parametrize(
    ("prepare", "node_name", "message"),
    [
        pytest.param(
            lambda cs: cs.assume(pod("a"), "n1"), "n1", "already assumed", id="assumed-twice"
        ),
        pytest.param(
            lambda cs: cs.add_pod(pod("a", "n1")), "n1", "already added", id="assume-an-added-pod"
        ),
        pytest.param(lambda cs: None, "missing", "unknown node", id="unknown-node"),
        pytest.param(
            lambda cs: cs.add_pod(pod("x", "ghost")),
            "ghost",
            "unknown node",
            id="ghost-node-is-unknown",
        ),
    ],
)
def test_assume_errors(prepare: Step, node_name: str, message: str) -> None:
    """Assuming is refused for a pod already cached or a node that is not there."""
    cs = cluster("n1")
    prepare(cs)
    before = cs.num_pods
    with pytest.raises(CacheError, match=message):
        cs.assume(pod("a"), node_name)
    assert cs.num_pods == before


def test_assumption_waits_for_the_watch_however_long() -> None:
    """No TTL (kube since #106361): an assumed pod holds its node until confirmed or forgotten."""
    cs = cluster("n1")
    cs.assume(pod("a"), "n1")
    assert cs.is_assumed("uid-default-a")
    assert cpu_on(cs, "n1") == 1000
    cs.add_pod(pod("a", "n1"))  # the watch confirms it
    assert not cs.is_assumed("uid-default-a")
    assert cpu_on(cs, "n1") == 1000
    assert cs.forget("uid-default-a") is None  # confirmed: forgetting is a no-op
    assert cpu_on(cs, "n1") == 1000


def test_ghost_nodes() -> None:
    """NodeInfos outlive their node while pods name it, and appear before it."""
    cs = ClusterState()
    cs.add_pod(pod("early", "n1"))
    ghost = cs.node_info("n1")
    assert ghost is not None
    assert ghost.node is None
    assert cs.snapshot.get("n1") is None
    assert cs.num_nodes == 0
    assert cs.node_names() == set()
    assert not cs.has_node("n1")  # the binder's check: a ghost is no node to bind to

    cs.add_node(node("n1"))
    assert cs.has_node("n1")
    info = cs.snapshot.get("n1")
    assert info is ghost
    assert info.requested.milli_cpu == 1000
    assert [i.name for i in cs.snapshot.node_infos] == ["n1"]

    cs.remove_node("n1")
    assert not cs.has_node("n1")
    assert cs.snapshot.get("n1") is None
    assert cs.snapshot.node_infos == []
    assert cs.node_info("n1") is ghost
    assert cs.node_names() == set()

    cs.remove_pod("uid-default-early")
    assert cs.node_info("n1") is None


def test_remove_empty_node_drops_it() -> None:
    """A node without pods goes away entirely; removing it twice is harmless."""
    cs = cluster("n1", "n2")
    cs.remove_node("n1")
    cs.remove_node("n1")
    assert cs.node_info("n1") is None
    assert cs.node_names() == {"n2"}
    assert cs.num_nodes == 1


def test_update_node_keeps_pods_and_order() -> None:
    """Updating a node swaps the Node record in place; pods and order stay."""
    cs = cluster("n1", "n2", "n3")
    cs.add_pod(pod("a", "n2"))
    cs.add_node(node("n2", cpu="16"))
    info = cs.snapshot.get("n2")
    assert info is not None
    assert info.node is not None
    assert info.node.allocatable.milli_cpu == 16000
    assert info.requested.milli_cpu == 1000
    assert [i.name for i in cs.snapshot.node_infos] == ["n1", "n2", "n3"]


def test_requested_non_zero_and_ports() -> None:
    """NodeInfo sums requests, non-zero requests and host ports of its pods."""
    cs = cluster("n1")
    cs.add_pod(pod("a", "n1", cpu="250m", host_ports=[80]))
    cs.add_pod(pod_from_raw(make_pod("b", node_name="n1", host_ports=[80, 443])))
    info = cs.snapshot.get("n1")
    assert info is not None
    assert (info.requested.milli_cpu, info.requested.memory) == (250, Gi)
    assert (info.non_zero_requested.milli_cpu, info.non_zero_requested.memory) == (
        350,
        Gi + 200 * 2**20,
    )
    assert info.used_ports == {
        HostPort("0.0.0.0", "TCP", 80): 2,
        HostPort("0.0.0.0", "TCP", 443): 1,
    }
    cs.remove_pod("uid-default-b")
    assert info.used_ports == {HostPort("0.0.0.0", "TCP", 80): 1}


def test_generation_changes_with_pods() -> None:
    """Every pod event on a node bumps its generation."""
    cs = cluster("n1")
    info = cs.snapshot.get("n1")
    assert info is not None
    g0 = info.generation
    cs.assume(pod("a"), "n1")
    g1 = info.generation
    cs.forget("uid-default-a")
    assert g0 < g1 < info.generation


def test_image_counts_in_snapshot() -> None:
    """The snapshot counts nodes per image name through node add, update and remove."""
    cs = ClusterState()
    cs.add_node(node("n1", images=[(["nginx:1"], 10)]))
    cs.add_node(node("n2", images=[(["nginx:1", "redis:7"], 10)]))
    assert (cs.snapshot.image_num_nodes("nginx:1"), cs.snapshot.image_num_nodes("redis:7")) == (
        2,
        1,
    )
    cs.add_node(node("n2", images=[(["redis:7"], 10)]))
    assert (cs.snapshot.image_num_nodes("nginx:1"), cs.snapshot.image_num_nodes("redis:7")) == (
        1,
        1,
    )
    cs.add_pod(pod("a", "n1"))
    cs.remove_node("n1")  # becomes a ghost: its images no longer count
    assert cs.snapshot.image_num_nodes("nginx:1") == 0
    cs.add_node(node("n1", images=[(["nginx:1"], 10)]))
    assert cs.snapshot.image_num_nodes("nginx:1") == 1


def test_namespaces() -> None:
    """Namespace labels reach the snapshot and can be removed."""
    cs = ClusterState()
    cs.set_namespace("team", {"env": "prod"})
    assert cs.snapshot.namespace_labels("team") == {"env": "prod"}
    cs.remove_namespace("team")
    assert cs.snapshot.namespace_labels("team") == {}


def test_reconcile_views() -> None:
    """pod_uids includes assumed pods; node_names lists real nodes."""
    cs = cluster("n1", "n2")
    cs.add_pod(pod("a", "n1"))
    cs.assume(pod("b"), "n2")
    cs.add_pod(pod("c", "gone"))
    assert cs.pod_uids() == {"uid-default-a", "uid-default-b", "uid-default-c"}
    assert cs.node_names() == {"n1", "n2"}
    assert (cs.num_nodes, cs.num_pods, cs.num_assumed) == (2, 3, 1)
