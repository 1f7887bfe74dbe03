"""PodIndex and the snapshot's node-label counts, as ClusterState and direct NodeInfo changes
keep them (issue 19: affinity and spreading without scanning every pod)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from scheduler.cache.cluster_state import ClusterState
from scheduler.cache.node_info import NodeInfo
from scheduler.cache.snapshot import Snapshot
from scheduler.model.labels import LabelSelector, Operator, Requirement
from scheduler.model.parse import node_from_raw, pod_from_raw
from scheduler.model.pod import Pod
from tests.builders import make_node, make_pod


def pod(name: str, node_name: str | None = None, ns: str = "default", **labels: str) -> Pod:
    return pod_from_raw(make_pod(name, namespace=ns, node_name=node_name, labels=labels))


def cluster(*names: str, **zones: str) -> ClusterState:
    cs = ClusterState()
    for name in names:
        labels = {"zone": zones[name]} if name in zones else {}
        cs.add_node(node_from_raw(make_node(name, labels=labels)))
    return cs


def req(key: str, op: Operator, *values: str) -> Requirement:
    return Requirement(key, op, values)


def found(cs: ClusterState, namespace: str, selector: LabelSelector | None) -> dict[str, str]:
    """Pod name → the name of the NodeInfo the index holds it under ("" for a ghost)."""
    return {p.name: info.name for p, info in cs.snapshot.pod_index.matching(namespace, selector)}


APP_A = LabelSelector((req("app", Operator.IN, "a"),))
Step = Callable[[ClusterState], object]


@pytest.mark.parametrize(
    ("steps", "namespace", "selector", "want"),
    [
        pytest.param(
            [lambda cs: cs.add_pod(pod("x", "n1", app="a"))],
            "default",
            APP_A,
            {"x": "n1"},
            id="added-pod-found-by-label",
        ),
        pytest.param(
            [lambda cs: cs.add_pod(pod("x", "n1", ns="other", app="a"))],
            "default",
            APP_A,
            {},
            id="other-namespace-not-found",
        ),
        pytest.param(
            [lambda cs: cs.add_pod(pod("x", "n1", app="a"))],
            "default",
            None,
            {},
            id="nil-selector-matches-none",
        ),
        pytest.param(
            [lambda cs: cs.add_pod(pod("x", "n1", app="a")), lambda cs: cs.add_pod(pod("y", "n2"))],
            "default",
            LabelSelector(),
            {"x": "n1", "y": "n2"},
            id="empty-selector-matches-all-of-the-namespace",
        ),
        pytest.param(
            [
                lambda cs: cs.add_pod(pod("x", "n1", app="a")),
                lambda cs: cs.add_pod(pod("x", "n2", app="b")),
            ],
            "default",
            APP_A,
            {},
            id="relabelled-pod-leaves-its-old-label",
        ),
        pytest.param(
            [
                lambda cs: cs.add_pod(pod("x", "n1", app="a")),
                lambda cs: cs.add_pod(pod("x", "n2", app="a")),
            ],
            "default",
            APP_A,
            {"x": "n2"},
            id="moved-pod-found-on-its-new-node",
        ),
        pytest.param(
            [
                lambda cs: cs.add_pod(pod("x", "n1", app="a")),
                lambda cs: cs.remove_pod("uid-default-x"),
            ],
            "default",
            APP_A,
            {},
            id="removed-pod-gone",
        ),
        pytest.param(
            [lambda cs: cs.assume(pod("x", app="a"), "n1")],
            "default",
            APP_A,
            {"x": "n1"},
            id="assumed-pod-found",
        ),
        pytest.param(
            [lambda cs: cs.assume(pod("x", app="a"), "n1"), lambda cs: cs.forget("uid-default-x")],
            "default",
            APP_A,
            {},
            id="forgotten-pod-gone",
        ),
        pytest.param(
            [lambda cs: cs.add_pod(pod("x", "n1", app="a")), lambda cs: cs.remove_node("n1")],
            "default",
            APP_A,
            {"x": ""},
            id="pod-of-a-ghost-stays-with-the-ghost",
        ),
        pytest.param(
            [lambda cs: cs.add_pod(pod("x", "n9", app="a"))],
            "default",
            APP_A,
            {"x": ""},
            id="pod-before-its-node-held-by-a-ghost",
        ),
        pytest.param(
            [
                lambda cs: cs.add_pod(pod("x", "n9", app="a")),
                lambda cs: cs.add_node(node_from_raw(make_node("n9"))),
            ],
            "default",
            APP_A,
            {"x": "n9"},
            id="ghost-gets-its-node-back",
        ),
        pytest.param(
            [
                lambda cs: cs.add_pod(pod("x", "n1", app="a", tier="t")),
                lambda cs: cs.add_pod(pod("y", "n1", app="b", tier="t")),
                lambda cs: cs.add_pod(pod("z", "n1", tier="t")),
            ],
            "default",
            LabelSelector((req("tier", Operator.EXISTS), req("app", Operator.NOT_IN, "a"))),
            {"y": "n1", "z": "n1"},
            id="every-requirement-checked-on-the-narrowest-set",
        ),
        pytest.param(
            [
                lambda cs: cs.add_pod(pod("x", "n1", app="a")),
                lambda cs: cs.add_pod(pod("y", "n1", app="b")),
                lambda cs: cs.add_pod(pod("z", "n1", app="c")),
            ],
            "default",
            LabelSelector((req("app", Operator.IN, "a", "b", "a"),)),
            {"x": "n1", "y": "n1"},
            id="in-with-repeated-values-finds-each-pod-once",
        ),
        pytest.param(
            [lambda cs: cs.add_pod(pod("x", "n1", app="a"))],
            "default",
            LabelSelector((req("tier", Operator.DOES_NOT_EXIST),)),
            {"x": "n1"},
            id="only-negative-requirements-check-the-whole-namespace",
        ),
        pytest.param(
            [lambda cs: cs.add_pod(pod("x", "n1", app="a"))],
            "default",
            LabelSelector((req("tier", Operator.IN, "t"),)),
            {},
            id="key-nobody-carries-matches-none",
        ),
        pytest.param(
            [
                lambda cs: cs.add_pod(pod("x", "n1", app="a", tier="1")),
                lambda cs: cs.add_pod(pod("y", "n1", app="a", tier="5")),
                lambda cs: cs.add_pod(pod("z", "n1", app="a")),
            ],
            "default",
            LabelSelector((req("tier", Operator.GT, "3"),)),
            {"y": "n1"},
            id="gt-narrows-to-the-key-and-still-compares",
        ),
        pytest.param(
            [
                lambda cs: cs.add_pod(pod("x", "n1", app="a", tier="t")),
                lambda cs: cs.add_pod(pod("y", "n1", app="b", tier="t")),
                lambda cs: cs.add_pod(pod("z", "n2", app="a")),
            ],
            "default",
            LabelSelector((req("tier", Operator.IN, "t"), req("app", Operator.IN, "a"))),
            {"x": "n1"},
            id="the-requirements-besides-the-narrowing-one-are-checked",
        ),
    ],
)
def test_matching(
    steps: list[Step], namespace: str, selector: LabelSelector | None, want: dict[str, str]
) -> None:
    """The index answers a selector as a scan of the cached pods would, after each change."""
    cs = cluster("n1", "n2")
    for step in steps:
        step(cs)
    assert found(cs, namespace, selector) == want


def test_namespaces_are_dropped_with_their_last_pod() -> None:
    cs = cluster("n1")
    cs.add_pod(pod("x", "n1", ns="one"))
    cs.add_pod(pod("y", "n1", ns="two"))
    cs.remove_pod("uid-one-x")
    index = cs.snapshot.pod_index
    assert set(index.namespaces()) == {"two"}
    assert [p.name for p, _ in index.pods_in("two")] == ["y"]
    assert list(index.pods_in("one")) == []
    assert len(index) == 1


def test_direct_node_info_changes_are_indexed() -> None:
    """Preemption and nominated pods place pods on a NodeInfo for one call: the index follows."""
    cs = cluster("n1")
    info = cs.node_info("n1")
    assert info is not None
    placed = pod("v", "n1", app="a")
    info.add_pod(placed)
    assert found(cs, "default", APP_A) == {"v": "n1"}
    info.remove_pod(placed.uid)
    assert found(cs, "default", APP_A) == {}


def test_snapshot_of_indexes_pods_already_on_node_infos() -> None:
    """Tests and simulate build NodeInfos with pods first, then the snapshot."""
    info = NodeInfo(node_from_raw(make_node("n1")))
    info.add_pod(pod("x", "n1", app="a"))
    snap = Snapshot.of([info, info])  # adopting twice indexes once
    assert [(p.name, i.name) for p, i in snap.pod_index.matching("default", APP_A)] == [("x", "n1")]
    assert len(snap.pod_index) == 1


def test_node_label_counts_follow_node_add_update_remove() -> None:
    cs = cluster("n1", "n2", "n3", n1="z1", n2="z1", n3="z2")
    snap = cs.snapshot
    assert dict(snap.label_values("zone")) == {"z1": 2, "z2": 1}
    assert snap.num_nodes_with_label("zone") == 3
    assert snap.num_nodes_with_label("kubernetes.io/hostname") == 3
    cs.add_node(node_from_raw(make_node("n2", labels={"zone": "z2"})))
    assert dict(snap.label_values("zone")) == {"z1": 1, "z2": 2}
    cs.add_node(node_from_raw(make_node("n3")))  # loses its zone
    assert dict(snap.label_values("zone")) == {"z1": 1, "z2": 1}
    assert snap.num_nodes_with_label("zone") == 2
    cs.add_pod(pod("x", "n1"))
    cs.remove_node("n1")  # a ghost now: no longer counted
    assert dict(snap.label_values("zone")) == {"z2": 1}
    cs.add_node(node_from_raw(make_node("n1", labels={"zone": "z3"})))
    assert dict(snap.label_values("zone")) == {"z2": 1, "z3": 1}
    cs.remove_node("n2")
    cs.remove_node("n1")
    assert dict(snap.label_values("zone")) == {}
    assert snap.num_nodes_with_label("zone") == 0
    assert snap.num_nodes_with_label("kubernetes.io/hostname") == 1


def test_index_entry_replaced_when_a_uid_is_added_again() -> None:
    """Adding a uid the index holds replaces its labels (no stale label entry is left)."""
    cs = cluster("n1", "n2")
    index = cs.snapshot.pod_index
    first, second = cs.node_info("n1"), cs.node_info("n2")
    assert first is not None
    assert second is not None
    index.add(pod("x", "n1", app="a"), first)
    index.add(pod("x", "n2", app="b"), second)
    assert found(cs, "default", APP_A) == {}
    assert found(cs, "default", LabelSelector((req("app", Operator.IN, "b"),))) == {"x": "n2"}
    index.remove(pod("x", "n1", app="a"), first)  # not the holder: ignored
    assert len(index) == 1
    index.remove(pod("x", "n2", app="b"), second)
    assert len(index) == 0


def test_entry_taken_over_comes_back_when_the_new_holder_removes_it() -> None:
    """Review finding 8: a second NodeInfo adding a uid the index holds, then removing it,
    must not drop the first holder's pod from the index."""
    cs = cluster("n1")
    index = cs.snapshot.pod_index
    holder = cs.node_info("n1")
    assert holder is not None
    cs.add_pod(pod("x", "n1", app="a"))
    other = NodeInfo(node_from_raw(make_node("n2")), pod_index=index)
    other.add_pod(pod("x", "n2", app="b"))
    assert found(cs, "default", APP_A) == {}
    other.remove_pod(pod("x").uid)
    assert found(cs, "default", APP_A) == {"x": "n1"}
    assert len(index) == 1
    holder.remove_pod(pod("x").uid)
    assert len(index) == 0
    assert list(index.namespaces()) == []


def kept(cs: ClusterState, selector: LabelSelector) -> dict[str, int]:
    """The index's kept counts for ``selector`` by NodeInfo name ("" for a ghost)."""
    counts = cs.snapshot.pod_index.counts_on_nodes("default", selector)
    assert counts is not None
    return {info.name: n for info, n in counts.items()}


def scanned(cs: ClusterState, selector: LabelSelector) -> dict[str, int]:
    """The same counts from a walk over the matching pods, terminating ones left out."""
    counts: dict[str, int] = {}
    for p, info in cs.snapshot.pod_index.matching("default", selector):
        if not p.deleting:
            counts[info.name] = counts.get(info.name, 0) + 1
    return counts


def terminating(name: str, node_name: str, **labels: str) -> Pod:
    raw = make_pod(name, node_name=node_name, labels=labels)
    raw["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    return pod_from_raw(raw)


def test_kept_counts_follow_adds_updates_takeovers_and_removes() -> None:
    """A one-label selector's per-NodeInfo counts are kept as pods come, turn terminating,
    move between NodeInfos and go, and always equal the walk over the pods."""
    cs = cluster("n1", "n2")
    index = cs.snapshot.pod_index
    assert kept(cs, APP_A) == {}
    cs.add_pod(pod("x", "n1", app="a"))
    cs.add_pod(pod("y", "n1", app="a"))
    cs.add_pod(pod("z", "n2", app="a"))
    cs.add_pod(pod("w", "n2", app="b"))
    assert kept(cs, APP_A) == scanned(cs, APP_A) == {"n1": 2, "n2": 1}
    cs.add_pod(terminating("y", "n1", app="a"))  # an update: y is terminating now
    assert kept(cs, APP_A) == scanned(cs, APP_A) == {"n1": 1, "n2": 1}
    other = NodeInfo(node_from_raw(make_node("n3")), pod_index=index)
    other.add_pod(pod("x", "n3", app="a"))  # takes x over from n1
    assert kept(cs, APP_A) == scanned(cs, APP_A) == {"n3": 1, "n2": 1}
    other.remove_pod(pod("x").uid)  # n1's entry comes back
    assert kept(cs, APP_A) == scanned(cs, APP_A) == {"n1": 1, "n2": 1}
    for name in ("y", "x", "z"):
        cs.remove_pod(pod(name).uid)
    assert kept(cs, APP_A) == {}
    assert kept(cs, LabelSelector((req("app", Operator.IN, "b"),))) == {"n2": 1}


def test_only_one_label_selectors_have_kept_counts() -> None:
    index = cluster("n1").snapshot.pod_index
    assert (
        index.counts_on_nodes("default", LabelSelector((req("app", Operator.IN, "a", "b"),)))
        is None
    )
    assert index.counts_on_nodes("default", LabelSelector((req("app", Operator.EXISTS),))) is None
    two = LabelSelector((req("app", Operator.IN, "a"), req("tier", Operator.IN, "t")))
    assert index.counts_on_nodes("default", two) is None
