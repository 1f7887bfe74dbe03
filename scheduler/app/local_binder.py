"""Binding without an API server: the BindDispatcher of ``simulate``, the benchmarks and the
unit tests, the volume binder VolumeBinding's PreBind writes through there, and the loop
that runs the queue down through the cycle.

With an in-memory binder a decision's bind ends within ``schedule_one`` (or when a test
says so), so a run needs no event loop: :func:`attempt_queued` pops and schedules
whatever is queued, one pod after another.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from scheduler.app.local_claims import LocalClaimWriter
from scheduler.cycle.eventhandlers import EventHandlers
from scheduler.cycle.ports import BindResult
from scheduler.framework import status as st
from scheduler.plugins.dynamic_resources.claim_binding import CLAIM_WRITER
from scheduler.plugins.volume_binding import VOLUME_BINDER
from scheduler.queueing.queued_group import QueuedPodGroupInfo

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


class LocalVolumeBinder:
    """VolumeBinding's volume binder offline (``plugins.volume_binding.VolumeBinderPort``):
    PreBind's writes are completed at once, as the PV controller would complete them
    (:func:`commit_volumes`)."""

    def __init__(self, scheduler: Scheduler) -> None:
        self.scheduler = scheduler

    def bind_pod_volumes(
        self, pod: Pod, node_name: str, plan: PodVolumes, *, timeout: float
    ) -> st.Status:
        commit_volumes(EventHandlers(self.scheduler), plan, node_name)
        return st.SUCCESS


class LocalBinder:
    """A BindDispatcher that binds in memory and confirms the assumed pod in the cache, as
    the watch (through the event handlers) would.

    ``auto``: every bind succeeds at once, inside ``dispatch``. Otherwise binds wait in
    ``pending`` until the caller ends each with :meth:`finish` and the result it wants
    (a test of bind failures, or of what happens while a bind is in flight).
    ``scheduler`` is set once the scheduler built with this binder exists; setting it lends
    its profiles a :class:`LocalVolumeBinder` and a ``LocalClaimWriter`` (unless they have
    a volume binder or claim writer already)."""

    def __init__(self, auto: bool = True) -> None:
        self.auto = auto
        self.pending: list[tuple[BindRequest, BindDone]] = []
        self._scheduler: Scheduler | None = None

    @property
    def scheduler(self) -> Scheduler | None:
        return self._scheduler

    @scheduler.setter
    def scheduler(self, scheduler: Scheduler | None) -> None:
        self._scheduler = scheduler
        if scheduler is None:
            return
        volumes = LocalVolumeBinder(scheduler)
        claims = LocalClaimWriter(scheduler)
        for profile in scheduler.profiles.values():
            if profile.service(VOLUME_BINDER) is None:
                profile.provide(VOLUME_BINDER, volumes)
            if profile.service(CLAIM_WRITER) is None:
                profile.provide(CLAIM_WRITER, claims)

    def dispatch(self, request: BindRequest, done: BindDone) -> None:
        if self.auto:
            self.finish(request, done, BindResult.BOUND)
        else:
            self.pending.append((request, done))

    def finish(
        self, request: BindRequest, done: BindDone, result: BindResult, message: str = ""
    ) -> None:
        """End a bind with ``result``: the cycle hears of it through ``done``."""
        if self._scheduler is None:
            raise RuntimeError("LocalBinder.scheduler is not set: nothing to confirm the bind")
        done(request, result, message)
        if result is BindResult.BOUND:  # the watch's confirmation (ASSIGNED_POD_ADD, as in run)
            EventHandlers(self._scheduler).on_pod(request.pod)


def attempt_queued(scheduler: Scheduler) -> Iterator[tuple[Pod, str | None]]:
    """Pop and schedule every pod the queue hands out now, in queue order, yielding each
    pod right after its attempt with the node it is on then (None: not placed). Pods in
    backoff or unschedulable stay queued: the caller moves the clock or sends events (the
    live loop's ``pop`` takes from the backoff early when nothing is active, as kube's
    SchedulerPopFromBackoffQ; an offline pass keeps to what is active)."""
    while popped := scheduler.queue.try_pop(early=False):
        if isinstance(popped, QueuedPodGroupInfo):
            members = [info.pod for info in popped.ordered()]
            scheduler.schedule_group(popped)
            for pod in members:
                assigned = scheduler.cluster.get_pod(pod.uid)
                yield pod, assigned.node_name if assigned is not None else None
            continue
        for info in popped:
            pod = info.pod
            scheduler.schedule_one(info)
            assigned = scheduler.cluster.get_pod(pod.uid)
            yield pod, assigned.node_name if assigned is not None else None
