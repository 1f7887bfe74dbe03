"""Nominated pods in the full pass: the two-pass Filter and the nominated node first
(kube's RunFilterPluginsWithNominatedPods and evaluateNominatedNode)."""

from __future__ import annotations

import pytest

from scheduler.framework.cycle_state import CycleState
from scheduler.framework.diagnosis import FitError
from scheduler.framework.results import ScheduleResult
from scheduler.model.parse import pod_from_raw
from scheduler.model.pod import Pod
from scheduler.queueing.nominator import Nominator
from tests.builders import make_node, make_pod
from tests.harness import cluster_of, profile_for


def _pod(name: str, priority: int, *, cpu: str = "1", nominated: str = "") -> Pod:
    raw = make_pod(name, cpu=cpu, priority=priority)
    if nominated:
        raw["status"]["nominatedNodeName"] = nominated
    return pod_from_raw(raw)


@pytest.mark.parametrize(
    ("priority", "fits"),
    [
        pytest.param(5, False, id="lower-priority-sees-the-room-taken"),
        pytest.param(10, False, id="equal-priority-sees-the-room-taken"),
        pytest.param(20, True, id="higher-priority-ignores-the-nomination"),
    ],
)
def test_nominated_pod_keeps_its_room(priority: int, fits: bool) -> None:
    """A pod nominated to n1 (priority 10) holds its cpu there against pods of lower or
    equal priority; the node's pods are the same afterwards."""
    cluster = cluster_of(
        [make_node("n1", cpu="2")],
        assigned=[make_pod("running", cpu="1", node_name="n1")],
    )
    profile = profile_for(cluster)
    nominator = Nominator()
    nominator.add(_pod("waiting", 10), "n1")
    profile.nominator = nominator
    outcome = profile.schedule(CycleState(), _pod("newcomer", priority))
    assert isinstance(outcome, ScheduleResult) is fits
    if not fits:
        assert isinstance(outcome, FitError)
        assert outcome.message() == "0/1 nodes are available: 1 Insufficient cpu."
    info = cluster.snapshot.get("n1")
    assert info is not None
    assert sorted(p.name for p in info.pods.values()) == ["running"]
    assert info.requested.milli_cpu == 1000


def test_both_passes_must_pass() -> None:
    """Pass two (without the nominated pods) still runs: a pod that fits only because of
    them is refused too (here: nothing fits either way, so the plain reason shows)."""
    cluster = cluster_of([make_node("n1", cpu="1")])
    profile = profile_for(cluster)
    nominator = Nominator()
    nominator.add(_pod("waiting", 10, cpu="500m"), "n1")
    profile.nominator = nominator
    info = cluster.snapshot.get("n1")
    assert info is not None
    status = profile.run_filters_with_nominated_pods(CycleState(), _pod("x", 1, cpu="2"), info)
    assert status.reasons == ("Insufficient cpu",)


def test_nominated_pod_ignores_its_own_nomination_and_goes_there_first() -> None:
    """The nominated pod does not count against itself, and its node is tried before the
    others even when another node would score higher."""
    cluster = cluster_of(
        [make_node("n1", cpu="2"), make_node("n2", cpu="64")],
        assigned=[make_pod("running", cpu="1", node_name="n1")],
    )
    profile = profile_for(cluster)
    nominator = Nominator()
    waiting = nominator.update(_pod("waiting", 10, nominated="n1"))
    profile.nominator = nominator
    outcome = profile.schedule(CycleState(), waiting)
    assert isinstance(outcome, ScheduleResult)
    assert outcome.node.name == "n1"
    plain = profile.schedule(CycleState(), _pod("plain", 10, cpu="100m"))
    assert isinstance(plain, ScheduleResult)
    assert plain.node.name == "n2"


def test_nominated_node_that_no_longer_fits_falls_back_to_the_full_pass() -> None:
    """A nominated node that fails Filter is just skipped (kube: evaluateNominatedNode)."""
    cluster = cluster_of(
        [make_node("n1", cpu="1"), make_node("n2", cpu="4")],
        assigned=[make_pod("running", cpu="1", node_name="n1")],
    )
    profile = profile_for(cluster)
    outcome = profile.schedule(CycleState(), _pod("waiting", 10, nominated="n1"))
    assert isinstance(outcome, ScheduleResult)
    assert outcome.node.name == "n2"
