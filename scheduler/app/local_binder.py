"""Binding without an API server: the BindDispatcher of ``simulate``, the benchmarks and the
unit tests, and the loop that runs the queue down through the cycle.

With an in-memory binder a decision's bind ends within ``schedule_one`` (or when a test
says so), so a run needs no event loop: :func:`attempt_queued` pops and schedules
whatever is queued, one pod after another.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from scheduler.cycle.eventhandlers import EventHandlers
from scheduler.cycle.ports import BindResult

if TYPE_CHECKING:
    from collections.abc import Iterator

    from scheduler.cycle.ports import BindDone, BindRequest
    from scheduler.cycle.schedule_one import Scheduler
    from scheduler.model.pod import Pod
    from scheduler.plugins.volume_binding import PodVolumes


def commit_volumes(handlers: EventHandlers, plan: PodVolumes, node: str) -> None:
    """What the PV controller (and a provisioner) would make of a PreBind, delivered as the
    watch would deliver it: the planned PVs bound to their claims, the claims to provision
    bound on ``node``."""
    for pv, pvc in plan.static_bindings:
        handlers.on_object(dataclasses.replace(pv.with_claim(pvc), phase="Bound"), pv)
        bound = dataclasses.replace(pvc, volume_name=pv.name, bind_completed=True, phase="Bound")
        handlers.on_object(bound, pvc)
    for pvc in plan.provisions:
        handlers.on_object(dataclasses.replace(pvc, selected_node=node), pvc)


@dataclass
class LocalBinder:
    """A BindDispatcher that binds in memory. A successful bind commits the pod's volume
    plan (:func:`commit_volumes`) and then confirms the assumed pod in the cache, as the
    PV controller and the watch (through the event handlers) would.

    ``auto``: every bind succeeds at once, inside ``dispatch``. Otherwise binds wait in
    ``pending`` until the caller ends each with :meth:`finish` and the result it wants
    (a test of bind failures, or of what happens while a bind is in flight).
    ``scheduler`` is set once the scheduler built with this binder exists."""

    auto: bool = True
    scheduler: Scheduler | None = None
    pending: list[tuple[BindRequest, BindDone]] = field(default_factory=list)

    def dispatch(self, request: BindRequest, done: BindDone) -> None:
        if self.auto:
            self.finish(request, done, BindResult.BOUND)
        else:
            self.pending.append((request, done))

    def finish(
        self, request: BindRequest, done: BindDone, result: BindResult, message: str = ""
    ) -> None:
        """End a bind with ``result``: the cycle hears of it through ``done``."""
        if self.scheduler is None:
            raise RuntimeError("LocalBinder.scheduler is not set: nothing to confirm the bind")
        bound = result is BindResult.BOUND
        handlers = EventHandlers(self.scheduler)
        if bound and request.volumes is not None:
            commit_volumes(handlers, request.volumes, request.node)
        done(request, result, message)
        if bound:  # the watch's confirmation (an assigned pod: ASSIGNED_POD_ADD, as in run)
            handlers.on_pod(request.pod)


def attempt_queued(scheduler: Scheduler) -> Iterator[tuple[Pod, str | None]]:
    """Pop and schedule every pod the queue hands out now, in queue order, yielding each
    pod right after its attempt with the node it is on then (None: not placed). Pods in
    backoff or unschedulable stay queued: the caller moves the clock or sends events."""
    while group := scheduler.queue.try_pop_group():
        for info in group:
            pod = info.pod
            scheduler.schedule_one(info)
            assigned = scheduler.cluster.get_pod(pod.uid)
            yield pod, assigned.node_name if assigned is not None else None
