"""Nominator: kube's nominator.go semantics for our queue."""

from __future__ import annotations

from scheduler.clock import FakeClock
from scheduler.model.parse import pod_from_raw
from scheduler.model.pod import Pod
from scheduler.queueing.nominator import Nominator
from scheduler.queueing.scheduling_queue import SchedulingQueue
from tests.builders import make_pod


def _pod(name: str, *, nominated: str = "", priority: int = 0) -> Pod:
    raw = make_pod(name, priority=priority)
    if nominated:
        raw["status"]["nominatedNodeName"] = nominated
    return pod_from_raw(raw)


def test_status_nomination_is_recorded_and_replaced() -> None:
    """A pod's ``status.nominatedNodeName`` nominates it; a new node moves it."""
    nominator = Nominator()
    recorded = nominator.update(_pod("a", nominated="n1"))
    assert recorded.nominated_node_name == "n1"
    assert [p.name for p in nominator.nominated_pods_for_node("n1")] == ["a"]
    nominator.update(_pod("a", nominated="n2"))
    assert nominator.nominated_pods_for_node("n1") == []
    assert set(nominator.nominated_node_names()) == {"n2"}


def test_in_memory_nomination_survives_an_update_without_one() -> None:
    """Our nomination stays while the watch has not brought the patch back yet."""
    nominator = Nominator()
    recorded = nominator.add(_pod("a"), "n1")
    assert recorded.nominated_node_name == "n1"
    kept = nominator.update(_pod("a"))
    assert kept.nominated_node_name == "n1"
    assert nominator.node_of(kept.uid) == "n1"


def test_empty_node_clears_and_delete_forgets() -> None:
    nominator = Nominator()
    pod = nominator.add(_pod("a"), "n1")
    nominator.add(pod, "")
    assert len(nominator) == 0
    nominator.add(pod, "n1")
    nominator.delete(pod.uid)
    assert nominator.nominated_node_names() == set()
    nominator.delete(pod.uid)  # idempotent


def test_lower_priority_on_node() -> None:
    """kube's getLowerPriorityNominatedPods."""
    nominator = Nominator()
    nominator.add(_pod("low", priority=1), "n1")
    nominator.add(_pod("same", priority=5), "n1")
    nominator.add(_pod("elsewhere", priority=1), "n2")
    assert [p.name for p in nominator.lower_priority_on("n1", 5)] == ["low"]


def test_queue_delete_drops_the_nomination() -> None:
    """A pod leaving the queue for good (deleted, bound elsewhere) is no longer nominated."""
    queue = SchedulingQueue(clock=FakeClock())
    pod = queue.nominator.update(_pod("a", nominated="n1"))
    queue.add(pod, None, "NominatedNode")
    queue.delete(pod.uid)
    assert queue.nominator.node_of(pod.uid) is None


def test_nomination_cleared_in_the_api_ends() -> None:
    """Once the API showed the nomination, an update without one means someone cleared it."""
    nominator = Nominator()
    nominator.update(_pod("a", nominated="n1"))
    cleared = nominator.update(_pod("a"))
    assert cleared.nominated_node_name == ""
    assert len(nominator) == 0
