"""The points around the bind as kube's framework runs them (framework/binding_points.py):
order, Unreserve in reverse, Permit's Wait collection and Status wrapping, PreBind's
pre-flight, and the pods held at Permit (framework/waiting_pods.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from scheduler.cache.cluster_state import ClusterState
from scheduler.framework import status as st
from scheduler.framework.config import PluginSpec
from scheduler.framework.cycle_state import CycleState
from scheduler.framework.profile import Profile
from scheduler.framework.waiting_pods import HeldPod, go_duration
from scheduler.model.parse import pod_from_raw
from scheduler.plugins.scheduling_gates import SchedulingGates
from tests.builders import make_pod

if TYPE_CHECKING:
    from collections.abc import Callable

    from scheduler.framework.interfaces import PluginArgs
    from scheduler.model.pod import Pod

POD = pod_from_raw(make_pod("p"))


class Recorder:
    """A plugin at every point after Filter; answers what it is told, records each call."""

    def __init__(
        self,
        name: str,
        calls: list[str],
        *,
        reserve: st.Status = st.SUCCESS,
        permit: tuple[st.Status, float] = (st.SUCCESS, 0.0),
        pre_flight: st.Status = st.SUCCESS,
        pre_bind: st.Status = st.SUCCESS,
    ) -> None:
        self.name = name
        self.calls = calls
        self._reserve, self._permit = reserve, permit
        self._pre_flight, self._pre_bind = pre_flight, pre_bind

    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> st.Status:
        self.calls.append(f"reserve {self.name}")
        return self._reserve

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        self.calls.append(f"unreserve {self.name}")

    def permit(self, state: CycleState, pod: Pod, node_name: str) -> tuple[st.Status, float]:
        self.calls.append(f"permit {self.name}")
        return self._permit

    def pre_bind_pre_flight(self, state: CycleState, pod: Pod, node_name: str) -> st.Status:
        return self._pre_flight

    def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> st.Status:
        self.calls.append(f"pre_bind {self.name}")
        return self._pre_bind

    def post_bind(self, state: CycleState, pod: Pod, node_name: str) -> None:
        self.calls.append(f"post_bind {self.name}")


def _profile(*plugins: Recorder, off: dict[str, frozenset[str]] | None = None) -> Profile:
    def factory(plugin: Recorder) -> Callable[[PluginArgs, Profile], Recorder]:
        return lambda args, handle: plugin

    off = off or {}
    return Profile(
        scheduler_name="test",
        plugins=tuple(PluginSpec(p.name, 1, off.get(p.name, frozenset())) for p in plugins),
        registry={p.name: factory(p) for p in plugins},
        plugin_args={},
        snapshot=ClusterState().snapshot,
    )


def test_reserve_stops_at_the_first_failure_and_unreserve_runs_all_in_reverse() -> None:
    calls: list[str] = []
    profile = _profile(
        Recorder("A", calls),
        Recorder("B", calls, reserve=st.unschedulable("no room")),
        Recorder("C", calls),
    )
    status = profile.binding.run_reserve(CycleState(), POD, "n")
    assert status == st.Status(st.Code.UNSCHEDULABLE, ("no room",), "B")
    profile.binding.run_unreserve(CycleState(), POD, "n")
    assert calls == ["reserve A", "reserve B", "unreserve C", "unreserve B", "unreserve A"]


def test_a_reserve_error_names_the_plugin_as_kube_does() -> None:
    profile = _profile(Recorder("A", [], reserve=st.error("boom")))
    status = profile.binding.run_reserve(CycleState(), POD, "n")
    assert status.code is st.Code.ERROR
    assert status.message() == 'running Reserve plugin "A": boom'
    assert status.plugin == "A"


@pytest.mark.parametrize(
    ("answers", "code", "waits", "ran"),
    [
        pytest.param([(st.SUCCESS, 0.0)] * 2, st.Code.SUCCESS, {}, 2, id="all-allow"),
        pytest.param(
            [(st.Status(st.Code.WAIT), 5.0), (st.SUCCESS, 0.0)],
            st.Code.WAIT,
            {"P0": 5.0},
            2,
            id="one-waits-the-rest-run",
        ),
        pytest.param(
            [(st.Status(st.Code.WAIT), 5.0), (st.unschedulable("no"), 0.0), (st.SUCCESS, 0.0)],
            st.Code.UNSCHEDULABLE,
            {},
            2,
            id="a-later-rejection-wins-over-a-wait",
        ),
        pytest.param(
            [(st.Status(st.Code.WAIT), 3600.0)],
            st.Code.WAIT,
            {"P0": 900.0},
            1,
            id="wait-cut-to-15-minutes",
        ),
        pytest.param([(st.error("x"), 0.0), (st.SUCCESS, 0.0)], st.Code.ERROR, {}, 1, id="error"),
    ],
)
def test_permit(
    answers: list[tuple[st.Status, float]], code: st.Code, waits: dict[str, float], ran: int
) -> None:
    calls: list[str] = []
    profile = _profile(*(Recorder(f"P{i}", calls, permit=a) for i, a in enumerate(answers)))
    status, got = profile.binding.run_permit(CycleState(), POD, "n")
    assert status.code is code
    assert got == waits
    assert len(calls) == ran
    if code is st.Code.WAIT:
        assert status.reasons[-1] == "one or more plugins asked to wait and no plugin rejected pod"


def test_points_disabled_in_the_configuration_are_not_run() -> None:
    calls: list[str] = []
    profile = _profile(
        Recorder("A", calls), Recorder("B", calls), off={"B": frozenset({"permit", "reserve"})}
    )
    profile.binding.run_reserve(CycleState(), POD, "n")
    profile.binding.run_permit(CycleState(), POD, "n")
    assert calls == ["reserve A", "permit A"]


def test_pre_bind_pre_flights_skip_and_the_rest_run_in_order() -> None:
    calls: list[str] = []
    profile = _profile(
        Recorder("A", calls, pre_flight=st.SKIP), Recorder("B", calls), Recorder("C", calls)
    )
    state = CycleState()
    assert profile.binding.run_pre_bind_pre_flights(state, POD, "n").is_success
    assert [p.name for p in profile.binding.pre_bind_to_run(state)] == ["B", "C"]
    skipping = _profile(Recorder("A", [], pre_flight=st.SKIP))
    assert skipping.binding.run_pre_bind_pre_flights(CycleState(), POD, "n").is_skip
    failing = _profile(Recorder("A", [], pre_flight=st.unschedulable("no")))
    status = failing.binding.run_pre_bind_pre_flights(CycleState(), POD, "n")
    assert (status.code, status.message()) == (st.Code.ERROR, 'running PreBindPreFlight "A": no')


def test_a_failed_pre_bind_names_the_plugin() -> None:
    status = _profile().binding.pre_bind_failed(st.error("disk full"), "V")
    assert (status.code, status.message(), status.plugin) == (
        st.Code.ERROR,
        'running PreBind plugin "V": disk full',
        "V",
    )


class Timers:
    """Fake ``call_later``: the test fires the callbacks."""

    def __init__(self) -> None:
        self.armed: list[tuple[float, Callable[[], None], Handle]] = []

    def __call__(self, delay: float, callback: Callable[[], None]) -> Handle:
        handle = Handle()
        self.armed.append((delay, callback, handle))
        return handle


class Handle:
    cancelled = False

    def cancel(self) -> None:
        self.cancelled = True


def test_a_held_pod_goes_on_once_every_waiting_plugin_allowed_it() -> None:
    decided: list[st.Status] = []
    timers = Timers()
    held = HeldPod(POD, {"A": 5.0, "B": 1.5}, decided.append, timers)
    assert sorted(held.pending_plugins()) == ["A", "B"]
    held.allow("A")
    assert decided == []
    held.allow("B")
    assert decided == [st.SUCCESS]
    assert all(handle.cancelled for _, _, handle in timers.armed)
    assert not held.reject("A", "late")  # decided already
    assert decided == [st.SUCCESS]


def test_a_held_pod_times_out_with_kubes_message() -> None:
    decided: list[st.Status] = []
    timers = Timers()
    HeldPod(POD, {"Gang": 10.0}, decided.append, timers)
    [(delay, fire, _)] = timers.armed
    assert delay == 10.0
    fire()
    assert decided == [
        st.Status(
            st.Code.UNSCHEDULABLE,
            ("rejected due to timeout after waiting 10s at plugin Gang",),
            "Gang",
        )
    ]


def test_reject_waiting_pod_through_the_handle() -> None:
    profile = _profile()
    decided: list[st.Status] = []
    profile.binding.add_waiting_pod(POD, {"A": 1.0}, decided.append, None)
    assert profile.get_waiting_pod(POD.uid) is not None
    seen: list[str] = []
    profile.iterate_over_waiting_pods(lambda w: seen.append(w.pod.key))
    assert seen == [POD.key]
    assert profile.reject_waiting_pod(POD.uid)
    assert decided == [st.Status(st.Code.UNSCHEDULABLE, ("removed",), "")]
    assert not profile.reject_waiting_pod("no-such-uid")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("seconds", "text"),
    [(10, "10s"), (1.5, "1.5s"), (0.5, "500ms"), (120, "2m0s"), (90, "1m30s"), (3600, "1h0m0s")],
)
def test_go_duration(seconds: float, text: str) -> None:
    assert go_duration(seconds) == text


def test_scheduling_gates_keep_a_gated_pod_out_with_kubes_message() -> None:
    plugin = SchedulingGates({}, _profile())
    assert plugin.pre_enqueue(POD).is_success
    raw = make_pod("g")
    raw["spec"]["schedulingGates"] = [{"name": "a"}, {"name": "b"}]
    gated = pod_from_raw(raw)
    status = plugin.pre_enqueue(gated)
    assert status.code is st.Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert status.message() == "waiting for scheduling gates: [a b]"


def test_reserve_and_permit_calls_are_timed_in_a_sampled_cycle() -> None:
    """scheduler_plugin_execution_duration_seconds: each Reserve and Permit call of a cycle
    PreFilter drew as sampled, with kube's point names and status labels."""
    seen: list[tuple[str, str, str]] = []
    profile = _profile(Recorder("A", [], permit=(st.Status(st.Code.WAIT), 1.0)))
    profile.timing.observe_plugin = lambda plugin, point, status, seconds: seen.append(
        (plugin, point, status)
    )
    profile.timing.plugin_sample = 1.0
    state = CycleState()
    profile.run_pre_filter(state, POD)
    profile.binding.run_reserve(state, POD, "n")
    profile.binding.run_permit(state, POD, "n")
    assert seen == [("A", "Reserve", "Success"), ("A", "Permit", "Wait")]
    profile.timing.plugin_sample = 0.0
    profile.run_pre_filter(state, POD)
    profile.binding.run_reserve(state, POD, "n")
    assert len(seen) == 2  # an unsampled cycle times nothing


def test_binding_cycle_plugins_are_timed_by_the_pods_own_sampling() -> None:
    """PreBind, PostBind and Unreserve run after later cycles began: whether they are timed
    is the pod's own cycle's draw, carried in its CycleState, not the profile's current."""
    seen: list[tuple[str, str, str]] = []
    profile = _profile(Recorder("A", []))
    profile.timing.observe_plugin = lambda plugin, point, status, seconds: seen.append(
        (plugin, point, status)
    )
    sampled, unsampled = CycleState(), CycleState()
    sampled.record_plugin_metrics = True
    for state in (sampled, sampled.clone(), unsampled):
        plugin = profile.binding.pre_bind_to_run(state)[0]
        profile.binding.call_pre_bind(plugin, state, POD, "n")
        profile.binding.run_post_bind(state, POD, "n")
        profile.binding.run_unreserve(state, POD, "n")
    once = [
        ("A", "PreBind", "Success"),
        ("A", "PostBind", "Success"),
        ("A", "Unreserve", "Success"),
    ]
    assert seen == once + once  # the sampled state and its clone; the other times nothing
