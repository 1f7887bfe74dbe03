"""The extension points after Filter and Score, and PreEnqueue: kube's RunPreEnqueuePlugins,
RunReservePluginsReserve/Unreserve, RunPermitPlugins, RunPreBindPreFlights, the PreBind
calls and RunPostBindPlugins, with their order and Status handling, and the pods waiting at
Permit (kube's waitingPodsMap, which the Handle lends plugins).

- PreEnqueue: every plugin in order; the first that does not succeed keeps the pod out of
  the queue (gated), named in the Status.
- Reserve: in order; the first failure stops the run (a rejection keeps its code, an error
  becomes ``running Reserve plugin "X": …``); the caller then runs Unreserve, which goes
  over *every* Reserve plugin in reverse order (Unreserve must be idempotent).
- Permit: in order; a rejection or an error stops the run; Wait (with a timeout, cut to 15
  min) is collected and the run goes on, so a later plugin may still reject; the result is
  Wait when some plugin waits and none rejected.
- PreBind: PreBindPreFlight first (Skip: nothing to do for this pod, its PreBind is not
  called; Skip from every plugin: no PreBind at all); then PreBind in order, the first
  failure stops it (``running PreBind plugin "X": …``). A PreBind may return an awaitable
  Status (a port that writes to the API, lent by the Handle's ``service``): the binding
  cycle awaits it before the next plugin (cycle/binding_cycle.py).
- PostBind: every plugin, informational; one that raises is logged and the rest still run.

A plugin that raises fails the point with an Error status naming it (``plugin_raised``),
except at Unreserve and PostBind, which cannot fail: there it is logged.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from scheduler import logs
from scheduler.framework import status as st
from scheduler.framework.interfaces import (
    PermitPlugin,
    PostBindPlugin,
    PreBindPlugin,
    PreEnqueuePlugin,
    ReservePlugin,
)
from scheduler.framework.plugin_failures import plugin_raised, wrong_result
from scheduler.framework.timing import timed
from scheduler.framework.waiting_pods import MAX_TIMEOUT_SECONDS, HeldPod

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from scheduler.framework.cycle_state import CycleState
    from scheduler.framework.interfaces import Plugin, ServiceKey
    from scheduler.framework.timing import ObservePlugin, Timing
    from scheduler.framework.waiting_pods import Timers
    from scheduler.model.keys import Uid
    from scheduler.model.pod import Pod

log = logs.get_logger(__name__)

WAIT_REASON = "one or more plugins asked to wait and no plugin rejected pod"
"""kube's reason appended to a Permit Wait status."""


class BindingPoints:
    """One profile's PreEnqueue, Reserve, Permit, PreBind and PostBind plugins, in the
    configured order, and its pods waiting at Permit."""

    def __init__(self, timing: Timing) -> None:
        self._timing = timing
        """The profile's recorders: each point (scheduler_framework_extension_point_duration)
        and, in sampled cycles, each plugin call."""
        self.pre_enqueue_plugins: list[PreEnqueuePlugin] = []
        self.reserve_plugins: list[ReservePlugin] = []
        self.permit_plugins: list[PermitPlugin] = []
        self.pre_bind_plugins: list[PreBindPlugin] = []
        self.post_bind_plugins: list[PostBindPlugin] = []
        self.waiting: dict[Uid, HeldPod] = {}
        """Pods waiting at Permit, by uid (kube's waitingPodsMap)."""
        self.services: dict[ServiceKey[Any], object] = {}
        """Ports the composition root lends plugins (``Handle.service``)."""

    def register(self, plugin: Plugin, off: frozenset[str]) -> None:
        """Add ``plugin`` at each of these points it implements and is not disabled at."""
        if isinstance(plugin, PreEnqueuePlugin) and "preEnqueue" not in off:
            self.pre_enqueue_plugins.append(plugin)
        if isinstance(plugin, ReservePlugin) and "reserve" not in off:
            self.reserve_plugins.append(plugin)
        if isinstance(plugin, PermitPlugin) and "permit" not in off:
            self.permit_plugins.append(plugin)
        if isinstance(plugin, PreBindPlugin) and "preBind" not in off:
            self.pre_bind_plugins.append(plugin)
        if isinstance(plugin, PostBindPlugin) and "postBind" not in off:
            self.post_bind_plugins.append(plugin)

    # -- PreEnqueue ----------------------------------------------------------------------

    def run_pre_enqueue(self, pod: Pod) -> st.Status:
        for plugin in self.pre_enqueue_plugins:
            try:
                status = plugin.pre_enqueue(pod)
            except Exception as exc:  # a plugin's bug gates this pod, not the watch
                return plugin_raised(plugin.name, "PreEnqueue", exc)
            if type(status) is not st.Status:
                return wrong_result(plugin.name, "PreEnqueue", status, "a Status")
            if not status.is_success:
                return status.with_plugin(plugin.name)
        return st.SUCCESS

    # -- Reserve / Unreserve ---------------------------------------------------------------

    def run_reserve(self, state: CycleState, pod: Pod, node_name: str) -> st.Status:
        started = time.perf_counter()
        status = self._reserve(state, pod, node_name)
        self._observed("Reserve", status.code, started)
        return status

    def _reserve(self, state: CycleState, pod: Pod, node_name: str) -> st.Status:
        timing = self._timing.cycle
        for plugin in self.reserve_plugins:
            started = time.perf_counter()
            try:
                status = plugin.reserve(state, pod, node_name)
            except Exception as exc:  # a plugin's bug fails this pod's cycle, not the loop
                return plugin_raised(plugin.name, "Reserve", exc)
            if type(status) is not st.Status:
                return wrong_result(plugin.name, "Reserve", status, "a Status")
            if timing is not None:
                timed(timing, plugin.name, "Reserve", status.code, started)
            if not status.is_success:
                return _failed(status, plugin.name, "running Reserve plugin")
        return st.SUCCESS

    def run_unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        started = time.perf_counter()
        timing = self._binding_timing(state)
        for plugin in reversed(self.reserve_plugins):
            began = time.perf_counter()
            try:
                plugin.unreserve(state, pod, node_name)
            except Exception:  # the others must still release what they hold
                log.exception("plugin_raised", plugin=plugin.name, point="Unreserve")
            if timing is not None:
                timed(timing, plugin.name, "Unreserve", st.Code.SUCCESS, began)
        self._observed("Unreserve", st.Code.SUCCESS, started)

    # -- Permit --------------------------------------------------------------------------

    def run_permit(
        self, state: CycleState, pod: Pod, node_name: str
    ) -> tuple[st.Status, dict[str, float]]:
        """The Permit verdict and, when it is Wait, each waiting plugin's timeout (s)."""
        started = time.perf_counter()
        status, waits = self._permit(state, pod, node_name)
        self._observed("Permit", status.code, started)
        return status, waits

    def _permit(
        self, state: CycleState, pod: Pod, node_name: str
    ) -> tuple[st.Status, dict[str, float]]:
        waits: dict[str, float] = {}
        timing = self._timing.cycle
        for plugin in self.permit_plugins:
            started = time.perf_counter()
            try:
                answer = plugin.permit(state, pod, node_name)
            except Exception as exc:  # a plugin's bug fails this pod's cycle, not the loop
                return plugin_raised(plugin.name, "Permit", exc), {}
            if (
                type(answer) is not tuple
                or len(answer) != 2
                or type(answer[0]) is not st.Status
                or not isinstance(answer[1], int | float)
            ):
                expected = "a (Status, timeout seconds) pair"
                return wrong_result(plugin.name, "Permit", answer, expected), {}
            status, seconds = answer[0], float(answer[1])
            if timing is not None:
                timed(timing, plugin.name, "Permit", status.code, started)
            if status.is_success:
                continue
            if status.code is st.Code.WAIT:
                waits[plugin.name] = min(max(seconds, 0.0), MAX_TIMEOUT_SECONDS)
                continue
            if status.is_rejected:
                return status.with_plugin(plugin.name), {}
            return _failed(status, plugin.name, "running Permit plugin"), {}
        if waits:
            return st.Status(st.Code.WAIT, (WAIT_REASON,)), waits
        return st.SUCCESS, {}

    def add_waiting_pod(
        self,
        pod: Pod,
        waits: dict[str, float],
        on_decided: Callable[[st.Status], None],
        timers: Timers | None,
    ) -> HeldPod:
        waiting = HeldPod(pod, waits, on_decided, timers)
        self.waiting[pod.uid] = waiting
        return waiting

    def reject_waiting_pod(self, uid: Uid) -> bool:
        """kube's RejectWaitingPod: reject it, with kube's message "removed"."""
        waiting = self.waiting.get(uid)
        return waiting is not None and waiting.reject("", "removed")

    # -- PreBind / PostBind ------------------------------------------------------------

    def run_pre_bind_pre_flights(self, state: CycleState, pod: Pod, node_name: str) -> st.Status:
        """Which PreBind plugins have work (the others go into ``state``'s skip set);
        Skip: none has, PreBind is not run; Error: a pre-flight failed."""
        work = False
        for plugin in self.pre_bind_plugins:
            try:
                status = plugin.pre_bind_pre_flight(state, pod, node_name)
            except Exception as exc:  # a plugin's bug fails this pod's bind, not the loop
                return plugin_raised(plugin.name, "PreBindPreFlight", exc)
            if type(status) is not st.Status:
                return wrong_result(plugin.name, "PreBindPreFlight", status, "a Status")
            if status.is_skip:
                state.skip_pre_bind_plugins.add(plugin.name)
            elif status.is_success:
                work = True
            else:  # Unschedulable is not a pre-flight answer: kube counts it an error
                message = f'running PreBindPreFlight "{plugin.name}": {status.message()}'
                return st.Status(st.Code.ERROR, (message,), plugin.name)
        return st.SUCCESS if work else st.SKIP

    def pre_bind_to_run(self, state: CycleState) -> list[PreBindPlugin]:
        """The PreBind plugins whose pre-flight did not skip, in order."""
        skip = state.skip_pre_bind_plugins
        return [p for p in self.pre_bind_plugins if p.name not in skip]

    def call_pre_bind(
        self, plugin: PreBindPlugin, state: CycleState, pod: Pod, node_name: str
    ) -> st.Status | Awaitable[st.Status]:
        """One PreBind; a synchronous answer is timed in a sampled pod's cycle (one that
        returns an awaitable is covered by the PreBind extension point's duration)."""
        started = time.perf_counter()
        try:
            result = plugin.pre_bind(state, pod, node_name)
        except Exception as exc:  # a plugin's bug fails this pod's bind, not the loop
            return plugin_raised(plugin.name, "PreBind", exc)
        timing = self._binding_timing(state)
        if timing is not None and isinstance(result, st.Status):
            timed(timing, plugin.name, "PreBind", result.code, started)
        return result

    @staticmethod
    def pre_bind_failed(status: st.Status, plugin: str) -> st.Status:
        """A failed PreBind as the binding cycle reports it."""
        return _failed(status, plugin, "running PreBind plugin")

    def run_post_bind(self, state: CycleState, pod: Pod, node_name: str) -> None:
        started = time.perf_counter()
        timing = self._binding_timing(state)
        for plugin in self.post_bind_plugins:
            began = time.perf_counter()
            try:
                plugin.post_bind(state, pod, node_name)
            except Exception:  # informational: the pod is bound whatever it does
                log.exception("plugin_raised", plugin=plugin.name, point="PostBind")
            if timing is not None:
                timed(timing, plugin.name, "PostBind", st.Code.SUCCESS, began)
        self._observed("PostBind", st.Code.SUCCESS, started)

    def _binding_timing(self, state: CycleState) -> ObservePlugin | None:
        """Per-plugin timing for the binding cycle's points: the pod's own cycle decides
        (the profile's current one may be another pod's by now)."""
        return self._timing.observe_plugin if state.record_plugin_metrics else None

    def _observed(self, point: str, code: st.Code, started: float) -> None:
        observe = self._timing.observe
        if observe is not None:
            observe(point, st.CODE_LABELS[code], time.perf_counter() - started)


def _failed(status: st.Status, plugin: str, what: str) -> st.Status:
    """A rejection keeps its code and names the plugin; anything else is an Error saying
    where it happened (kube's ``running <Point> plugin "X": …``)."""
    if status.is_rejected or status.plugin:  # stamped already: the runner's own (a raise)
        return status.with_plugin(plugin)
    return st.Status(st.Code.ERROR, (f'{what} "{plugin}": {status.message()}',), plugin)
