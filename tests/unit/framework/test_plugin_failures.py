"""A misbehaving plugin (framework/plugin_failures.py) is one Error Status naming the plugin
and the extension point — a wrong return type at run time, an ``async def`` method when the
profile is built — never an exception out of the runner."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from scheduler.batching.signature import BatchingMode, Signer
from scheduler.cache.cluster_state import ClusterState
from scheduler.framework import status as st
from scheduler.framework.config import PluginSpec
from scheduler.framework.config_values import ConfigError
from scheduler.framework.cycle_state import CycleState
from scheduler.framework.diagnosis import SchedulingError
from scheduler.framework.profile import Profile
from scheduler.model.parse import node_from_raw, pod_from_raw
from tests.builders import make_node, make_pod

if TYPE_CHECKING:
    from scheduler.cache.node_info import NodeInfo
    from scheduler.cache.snapshot import Snapshot
    from scheduler.model.pod import Pod

POD = pod_from_raw(make_pod("p"))


class _Answers:
    """A plugin that answers each point with what it is given (of any type)."""

    def __init__(self, **answers: object) -> None:
        self.name = "Bad"
        self.answers = answers

    def pre_filter(self, state: CycleState, pod: Pod, snapshot: Snapshot) -> object:
        return self.answers.get("pre_filter", (None, st.SUCCESS))

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> object:
        return self.answers.get("filter", st.SUCCESS)

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> object:
        return self.answers.get("score", 0)

    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> object:
        return self.answers.get("reserve", st.SUCCESS)

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        return None

    def permit(self, state: CycleState, pod: Pod, node_name: str) -> object:
        return self.answers.get("permit", (st.SUCCESS, 0.0))


def _profile(plugin: object, *, nodes: int = 2) -> Profile:
    cluster = ClusterState()
    for i in range(nodes):
        cluster.add_node(node_from_raw(make_node(f"n{i}")))
    return Profile(
        scheduler_name="test",
        plugins=(PluginSpec("Bad", 1, frozenset()),),
        registry={"Bad": lambda args, handle: plugin},  # type: ignore[dict-item]
        plugin_args={},
        snapshot=cluster.snapshot,
    )


@pytest.mark.parametrize(
    ("answers", "message"),
    [
        pytest.param(
            {"filter": True}, "plugin 'Bad' Filter returned bool, not a Status", id="filter-bool"
        ),
        pytest.param(
            {"score": "high"}, "plugin 'Bad' Score returned str, not an int", id="score-str"
        ),
        pytest.param(
            {"pre_filter": st.SUCCESS},
            "plugin 'Bad' PreFilter returned Status, not a (node names or None, Status) pair",
            id="pre-filter-status-alone",
        ),
    ],
)
def test_a_wrong_return_type_fails_the_cycle_with_one_message(
    answers: dict[str, object], message: str
) -> None:
    """The full pass ends in a SchedulingError that names the plugin, the point and the
    type it got (the pod is retried with backoff, as for any Error Status)."""
    outcome = _profile(_Answers(**answers)).schedule(CycleState(), POD)
    assert isinstance(outcome, SchedulingError)
    assert outcome.message == message


@pytest.mark.parametrize(
    ("answers", "run", "message"),
    [
        pytest.param(
            {"reserve": None},
            "reserve",
            "plugin 'Bad' Reserve returned NoneType, not a Status",
            id="reserve-none",
        ),
        pytest.param(
            {"permit": st.SUCCESS},
            "permit",
            "plugin 'Bad' Permit returned Status, not a (Status, timeout seconds) pair",
            id="permit-status-alone",
        ),
    ],
)
def test_binding_points_name_a_wrong_return_type(
    answers: dict[str, object], run: str, message: str
) -> None:
    """Reserve and Permit turn a wrong answer into an Error naming the plugin and point."""
    binding = _profile(_Answers(**answers)).binding
    if run == "reserve":
        status = binding.run_reserve(CycleState(), POD, "n0")
    else:
        status, _ = binding.run_permit(CycleState(), POD, "n0")
    assert status.code is st.Code.ERROR
    assert status.message() == message
    assert status.plugin == "Bad"


class _AsyncFilter:
    name = "Bad"

    async def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> st.Status:
        return st.SUCCESS


def test_an_async_plugin_is_refused_when_the_profile_is_built() -> None:
    """An ``async def`` extension point is a ConfigError naming the plugin and the point:
    the scheduling cycle never awaits, so its coroutine would never run."""
    with pytest.raises(ConfigError) as raised:
        _profile(_AsyncFilter())
    assert str(raised.value) == (
        "plugins[Bad]: Filter (filter) must be synchronous (def, not async def): plugins run "
        "inside the scheduling cycle, which never awaits"
    )


class _BadEvents:
    name = "Bad"

    def events_to_register(self) -> object:
        return ["NodeAdd?"]


def test_events_that_are_not_cluster_events_are_refused_at_load() -> None:
    """``events_to_register`` answering something else than ClusterEvents is a ConfigError
    naming the plugin (the queue reads them for every rejected pod)."""
    with pytest.raises(ConfigError) as raised:
        _profile(_BadEvents())
    assert str(raised.value) == (
        "plugins[Bad]: events_to_register must answer ClusterEvents, got 'NodeAdd?'"
    )


class _RaisingSign(_Answers):
    def sign_pod(self, pod: Pod) -> object:
        raise RuntimeError("cannot sign")


def test_a_sign_pod_that_raises_makes_the_pod_unbatched_not_the_scheduler_fail() -> None:
    """The pod is unsignable, named by the plugin; its cycle still runs (a full pass)."""
    signer = Signer(_profile(_RaisingSign()), BatchingMode.ALL)
    signed = signer.sign(POD)
    assert (signed.signature, signed.refused_by) == (None, "Bad")
