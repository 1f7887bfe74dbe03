"""The binding cycle, off the scheduling cycle (kube's bindingCycle and
handleBindingCycleError): WaitOnPermit → PreBind → Bind → PostBind.

The scheduling cycle (cycle/schedule_one.py) ends with the pod assumed, reserved and
permitted, and hands it here with a CycleState of its own (cloned before Reserve, so what
Reserve writes belongs to this pod alone, even where the exact batch shares one state
between the pods of a signature).

- **Waiting at Permit**: the pod's WaitingPod (framework/waiting_pods.py) decides later.
  A decision may come from another pod's Permit, inside that pod's cycle, so it is not acted
  on there: it is queued and run once the cycle is over (:meth:`BindingCycles.run_decided`:
  at the event loop's next turn in ``run``, at the end of ``schedule_one`` without a loop).
  Allowed: on to PreBind. Rejected, timed out or removed: the failure path below, as an
  unschedulable pod. ``scheduler_permit_wait_duration_seconds`` either way.
- **PreBind**: the pre-flights first (Skip from all: straight to Bind); then each PreBind in
  order. One that returns an awaitable (a port lent by the Handle, such as VolumeBinding's
  volume binder, which writes to the API and waits for the PV controller) is awaited in a
  task of its own, as kube runs each binding cycle in a goroutine: the loop and the other
  binds never wait for it.
- **Bind**: the ``BindDispatcher`` port (``kube.binder`` or the in-memory one); its result
  comes back to :meth:`BindingCycles.bind_finished`. Bound: ``Scheduled``, then PostBind.
- **Failure** (kube's handleBindingCycleError): Unreserve (every Reserve plugin, in reverse
  order), forget the assumption (its resources free: AssignedPodDelete wakes unschedulable
  pods), drop the batch state, then requeue: a rejection at Permit as unschedulable (the
  rejecting plugin's events wake it), with kube's ``0/1 nodes are available: …`` message; a
  PreBind or Bind error with backoff, the nomination cleared. A pod deleted meanwhile is not
  requeued.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from scheduler import logs
from scheduler.cycle.decision import signature_digest
from scheduler.cycle.ports import BindResult
from scheduler.framework import status as st
from scheduler.framework.diagnosis import Diagnosis, FitError
from scheduler.framework.events import ClusterEvent
from scheduler.framework.plugin_failures import plugin_raised
from scheduler.queueing.queued_pod import Pool

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Iterator, Mapping

    from scheduler.cache.cluster_state import ClusterState
    from scheduler.clock import Clock
    from scheduler.cycle.failure import FailureHandler
    from scheduler.cycle.ports import BindDispatcher, BindRequest, Reporter
    from scheduler.framework.interfaces import PreBindPlugin
    from scheduler.framework.profile import Profile
    from scheduler.framework.waiting_pods import Timers
    from scheduler.metrics.registry import Metrics
    from scheduler.queueing.scheduling_queue import SchedulingQueue

log = logs.get_logger(__name__)

SHUTTING_DOWN = "scheduler is shutting down"


class BindingCycles:
    """The binding cycles of one Scheduler's assumed pods."""

    def __init__(
        self,
        *,
        profiles: Mapping[str, Profile],
        cluster: ClusterState,
        queue: SchedulingQueue,
        clock: Clock,
        metrics: Metrics,
        binder: BindDispatcher,
        reporter: Reporter,
        failures: FailureHandler,
        end_batch: Callable[[str], None],
    ) -> None:
        self.profiles = profiles
        self.cluster = cluster
        self.queue = queue
        self.clock = clock
        self.metrics = metrics
        self.binder = binder
        self.reporter = reporter
        self.failures = failures
        """Clears a failed pod's nomination (kube's clearNominatedNode)."""
        self.end_batch = end_batch
        """Drops a profile's batch state: a pod it placed let its node go again."""
        self._decided: list[tuple[BindRequest, st.Status, float]] = []
        """Permit decisions not acted on yet (see the module docstring)."""
        self._tasks: dict[asyncio.Task[None], _Awaiting] = {}
        """PreBinds being awaited."""
        self._closed = False

    @property
    def in_flight(self) -> int:
        """PreBinds being awaited now."""
        return len(self._tasks)

    def start(self, request: BindRequest, waits: Mapping[str, float]) -> None:
        """The binding cycle of a permitted pod; ``waits``: the plugins it waits for at
        Permit, with their timeouts (empty: it goes on at once)."""
        if not waits:
            self._pre_bind(request)
            return
        started = self.clock.now()

        def decided(status: st.Status) -> None:
            self._decided.append((request, status, started))
            loop = _running_loop()
            if loop is not None:
                loop.call_soon(self.run_decided)

        profile = self._profile(request)
        profile.binding.add_waiting_pod(request.pod, dict(waits), decided, _loop_timers())
        log.info(
            "pod_waiting_on_permit", pod=request.pod.key, node=request.node, plugins=sorted(waits)
        )

    def run_decided(self) -> None:
        """Act on the Permit decisions taken since the last call (idempotent)."""
        while self._decided:
            request, status, started = self._decided.pop(0)
            self._profile(request).binding.waiting.pop(request.pod.uid, None)
            waited = max(0.0, self.clock.now() - started)
            result = st.CODE_LABELS[status.code]
            self.metrics.permit_wait_duration.labels(result=result).observe(waited)
            if status.is_success:
                self._pre_bind(request)
            elif status.is_rejected:
                self.failed(request, status)
            else:
                message = f"waiting on permit for pod: {status.message()}"
                self.failed(request, st.Status(st.Code.ERROR, (message,), status.plugin))

    async def drain(self) -> None:
        """Shutdown: pods waiting at Permit are rejected and PreBinds in flight cancelled;
        each pod is unreserved, forgotten and requeued. No PreBind is awaited after this."""
        self._closed = True
        for profile in self.profiles.values():
            for waiting in list(profile.binding.waiting.values()):
                waiting.reject("", SHUTTING_DOWN)
        self.run_decided()
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.wait(tasks)

    # -- PreBind -------------------------------------------------------------------------

    def _pre_bind(self, request: BindRequest) -> None:
        binding = self._profile(request).binding
        state, pod, node = request.state, request.pod, request.node
        status = binding.run_pre_bind_pre_flights(state, pod, node)
        if status.is_skip:
            self._bind(request)
        elif not status.is_success:
            self.failed(request, status)
        else:
            plugins = iter(binding.pre_bind_to_run(state))
            self._go_on(request, plugins, time.perf_counter())

    def _go_on(
        self, request: BindRequest, plugins: Iterator[PreBindPlugin], started: float
    ) -> None:
        """Run the remaining PreBind plugins; an awaitable result continues in a task."""
        binding = self._profile(request).binding
        for plugin in plugins:
            result = binding.call_pre_bind(plugin, request.state, request.pod, request.node)
            if not isinstance(result, st.Status):
                self._await(request, plugins, plugin, result, started)
                return
            if not result.is_success:
                self._pre_bound(request, binding.pre_bind_failed(result, plugin.name), started)
                return
        self._pre_bound(request, st.SUCCESS, started)

    def _await(
        self,
        request: BindRequest,
        plugins: Iterator[PreBindPlugin],
        plugin: PreBindPlugin,
        awaitable: Awaitable[st.Status],
        started: float,
    ) -> None:
        job = _Awaiting(request, plugins, plugin, awaitable, started)
        loop = _running_loop()
        if loop is None or self._closed:
            why = SHUTTING_DOWN if self._closed else "no event loop to await it on"
            self._give_up(job, why)
            return
        task = loop.create_task(self._awaited(job), name=f"pre-bind {request.pod.key}")
        self._tasks[task] = job
        task.add_done_callback(self._task_done)

    async def _awaited(self, job: _Awaiting) -> None:
        job.entered = True
        binding = self._profile(job.request).binding
        try:
            status = await job.awaitable
        except asyncio.CancelledError:
            self._give_up(job, SHUTTING_DOWN)
            raise
        except Exception as exc:  # a bug must not leave the pod assumed forever
            status = plugin_raised(job.plugin.name, "PreBind", exc)
        if not status.is_success:
            failed = binding.pre_bind_failed(status, job.plugin.name)
            self._pre_bound(job.request, failed, job.started)
            return
        self._go_on(job.request, job.plugins, job.started)

    def _task_done(self, task: asyncio.Task[None]) -> None:
        job = self._tasks.pop(task)
        if task.cancelled() and not job.entered:  # cancelled before it began
            self._give_up(job, SHUTTING_DOWN)

    def _give_up(self, job: _Awaiting, why: str) -> None:
        """End a PreBind that will not be awaited (any more) as an error."""
        close = getattr(job.awaitable, "close", None)
        if not job.entered and close is not None:
            close()  # a coroutine never to be awaited: no "never awaited" warning
        name = job.plugin.name
        status = st.Status(st.Code.ERROR, (f'running PreBind plugin "{name}": {why}',), name)
        self._pre_bound(job.request, status, job.started)

    def _pre_bound(self, request: BindRequest, status: st.Status, started: float) -> None:
        observe = self._profile(request).timing.observe
        if observe is not None:
            observe("PreBind", st.CODE_LABELS[status.code], time.perf_counter() - started)
        if status.is_success:
            self._bind(request)
        else:
            self.failed(request, status)

    # -- Bind and its outcome --------------------------------------------------------------

    def _bind(self, request: BindRequest) -> None:
        self.binder.dispatch(request, self.bind_finished)

    def bind_finished(self, request: BindRequest, result: BindResult, message: str) -> None:
        """The BindDispatcher's callback, on the event loop."""
        pod, info = request.pod, request.info
        metrics = self.metrics
        metrics.binds.labels(result=_BIND_LABEL[result]).inc()
        metrics.bind_duration.observe(max(0.0, self.clock.now() - request.started))
        profile = self._profile(request)
        if result is BindResult.BOUND:
            self.queue.done(pod.uid)
            log.info(
                "pod_bound",
                pod=pod.key,
                node=request.node,
                cycle=request.cycle,
                path=request.path,
                signature=signature_digest(info.signature),
                evaluated=request.evaluated,
                feasible=request.feasible,
            )
            metrics.pod_scheduling_attempts.observe(info.attempts)
            if info.initial_attempt is not None:
                metrics.pod_scheduling_sli_duration.labels(attempts=str(info.attempts)).observe(
                    max(0.0, self.clock.now() - info.initial_attempt)
                )
            self.reporter.scheduled(pod, request.node)
            profile.binding.run_post_bind(request.state, pod, request.node)
            return
        # No longer assumed: deleted meanwhile, or the watch shows it on a node (our bind
        # landed after all, or another scheduler's); kube's informer check requeues neither.
        gone = not self.cluster.is_assumed(pod.uid)
        self._release(request)
        if (
            gone
            or result is BindResult.GONE
            or (result is BindResult.CONFLICT and settled(message))
        ):
            # Deleted, bound by someone else, being deleted, or another pod by now: nothing
            # to retry (kube requeues only what its informer still shows pending).
            log.info("bind_dropped", pod=pod.key, node=request.node, result=result, error=message)
            self.queue.done(pod.uid)
            return
        log.warning("bind_failed", pod=pod.key, node=request.node, error=message)
        # kube's handleBindingCycleError: clearNominatedNode (the nominator entry went at
        # assume; the queued copy and the API lose it too).
        self.failures.clear_nomination(info)
        self.queue.requeue_backoff(info)
        self.reporter.failed(pod, f"binding rejected: {message}")

    def failed(self, request: BindRequest, status: st.Status) -> None:
        """kube's handleBindingCycleError for a rejection at Permit or a PreBind error."""
        pod, info, node = request.pod, request.info, request.node
        gone = self.cluster.get_pod(pod.uid) is None  # deleted while it waited
        self._release(request)
        if gone:
            log.info("binding_cycle_dropped", pod=pod.key, node=node, reason=status.message())
            self.queue.done(pod.uid)
            return
        if status.is_rejected:
            diagnosis = Diagnosis(
                node_statuses={node: status}, unschedulable_plugins={status.plugin}
            )
            message = FitError(pod.key, 1, diagnosis).message()
            log.info("pod_unschedulable", pod=pod.key, node=node, reason=message)
            self.queue.requeue_unschedulable(info, frozenset({status.plugin}))
            self.reporter.unschedulable(info.pod, message)
            return
        log.warning("binding_cycle_failed", pod=pod.key, node=node, error=status.message())
        self.failures.clear_nomination(info)
        self.queue.requeue_backoff(info)
        self.reporter.failed(info.pod, status.message())

    def _release(self, request: BindRequest) -> None:
        """Unreserve and forget: what the pod held is free again."""
        self._profile(request).binding.run_unreserve(request.state, request.pod, request.node)
        self.cluster.forget(request.pod.uid)
        # Its resources are free again (kube's handleBindingCycleError: AssignedPodDelete).
        if self.queue.pending()[Pool.UNSCHEDULABLE]:
            self.queue.on_cluster_event(ClusterEvent.ASSIGNED_POD_DELETE)
        self.end_batch(request.profile)

    def _profile(self, request: BindRequest) -> Profile:
        return self.profiles[request.profile]


SETTLED_CONFLICTS = (
    "is already assigned to node",
    "is being deleted",
    "Precondition failed",
    "non-empty .spec.schedulingGates",
)
"""What kube-apiserver's binding says when a 409 settles the pod: bound, going away, or a
recreated pod of the same name (kube's pod storage, ``setPodNodeAndMetadata``). Every other
error of its storage comes as a 409 too (``assignPod``: etcd unavailable reads ``Operation
cannot be fulfilled on pods/binding "p": rpc error: ... Unavailable``): the pod is still
pending, and is retried (issue 37: 3 pods lost to an etcd SIGKILL before this)."""


def settled(message: str) -> bool:
    """A 409 of the binding that leaves nothing to retry (:data:`SETTLED_CONFLICTS`)."""
    return any(reason in message for reason in SETTLED_CONFLICTS)


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


def _loop_timers() -> Timers | None:
    """The running loop's timers for Permit timeouts; None offline (no timeouts)."""
    loop = _running_loop()
    if loop is None:
        return None
    return lambda delay, callback: loop.call_later(delay, callback)


@dataclass(slots=True)
class _Awaiting:
    """A PreBind whose awaitable is awaited in a task, and what comes after it."""

    request: BindRequest
    plugins: Iterator[PreBindPlugin]
    plugin: PreBindPlugin
    awaitable: Awaitable[st.Status]
    started: float
    entered: bool = False
    """The task began awaiting (a cancellation then ends the PreBind inside it)."""


_BIND_LABEL = {
    BindResult.BOUND: "success",
    BindResult.CONFLICT: "conflict",
    BindResult.GONE: "conflict",
    BindResult.ERROR: "error",
}
