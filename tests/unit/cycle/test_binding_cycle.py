"""The binding cycle (cycle/binding_cycle.py) with VolumeBinding on the framework's points:
Reserve assumes the volume plan, PreBind hands it to the Handle's volume binder (a Status
at once, or an awaitable the cycle awaits in a task), a PreBind failure unreserves, forgets
and retries the pod with kube's message, and the cycle and binder name no plugin."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

import pytest

from scheduler.cycle.eventhandlers import EventHandlers
from scheduler.cycle.ports import BindResult
from scheduler.framework import status as st
from scheduler.model.parse import pod_from_raw
from scheduler.model.parse_volumes import pv_from_raw, pvc_from_raw, storage_class_from_raw
from scheduler.plugins.volume_binding import VOLUME_BINDER
from scheduler.queueing.queued_pod import Pool
from tests.builders import make_node, make_pod
from tests.harness import drain, scheduler_for
from tests.volume_builders import claim_volume, make_pv, make_pvc, make_storage_class

if TYPE_CHECKING:
    from scheduler.cycle.schedule_one import Scheduler
    from scheduler.model.pod import Pod
    from scheduler.plugins.volume_binding import PodVolumes
    from tests.harness import RecordingReporter


def _with_a_claim() -> tuple[Scheduler, RecordingReporter, Pod]:
    scheduler, _, reporter = scheduler_for([make_node("node-0")])
    handlers = EventHandlers(scheduler)
    handlers.on_object(storage_class_from_raw(make_storage_class("wait-sc")), None)
    handlers.on_object(pv_from_raw(make_pv("local-0")), None)
    handlers.on_object(pvc_from_raw(make_pvc("data")), None)
    pod = pod_from_raw(make_pod("web", volumes=[claim_volume("data")]))
    return scheduler, reporter, pod


class Port:
    """A volume binder that records the plans it is given and answers ``answer``."""

    def __init__(self, answer: st.Status, *, later: bool = False) -> None:
        self.answer, self.later = answer, later
        self.plans: list[PodVolumes] = []

    def bind_pod_volumes(
        self, pod: Pod, node_name: str, plan: PodVolumes, *, timeout: float
    ) -> st.Status | asyncio.Future[st.Status]:
        self.plans.append(plan)
        if not self.later:
            return self.answer
        future: asyncio.Future[st.Status] = asyncio.get_running_loop().create_future()
        answer = self.answer

        def resolve() -> None:
            if not future.done():  # not cancelled by a drain meanwhile
                future.set_result(answer)

        asyncio.get_running_loop().call_later(0.01, resolve)
        return future


def _provide(scheduler: Scheduler, port: Port) -> None:
    for profile in scheduler.profiles.values():
        profile.provide(VOLUME_BINDER, port)


def test_pre_bind_hands_reserves_plan_to_the_port_and_the_pod_is_bound() -> None:
    scheduler, reporter, pod = _with_a_claim()
    port = Port(st.SUCCESS)
    _provide(scheduler, port)
    scheduler.enqueue(pod)
    info = scheduler.queue.try_pop()
    assert info is not None
    for queued in info:
        scheduler.schedule_one(queued)
    [plan] = port.plans
    assert [(pv.name, pvc.name) for pv, pvc in plan.static_bindings] == [("local-0", "data")]
    assert reporter.bound == [("default/web", "node-0")]


def test_a_pre_bind_failure_unreserves_and_retries_with_kubes_message() -> None:
    scheduler, reporter, pod = _with_a_claim()
    _provide(scheduler, Port(st.error("disk on fire")))
    scheduler.enqueue(pod)
    for group in iter(scheduler.queue.try_pop, None):
        for queued in group:
            scheduler.schedule_one(queued)
    assert reporter.bound == []
    assert (
        reporter.failures["default/web"] == 'running PreBind plugin "VolumeBinding": disk on fire'
    )
    assert not scheduler.cluster.is_assumed(pod.uid)
    pv = scheduler.cluster.volumes.pv("local-0")
    assert pv is not None
    assert pv.claim_ref is None  # Unreserve dropped what Reserve assumed
    assert scheduler.queue.pending()[Pool.BACKOFF] == 1


async def test_an_awaitable_pre_bind_is_awaited_off_the_cycle() -> None:
    scheduler, reporter, pod = _with_a_claim()
    _provide(scheduler, Port(st.SUCCESS, later=True))
    scheduler.enqueue(pod)
    for group in iter(scheduler.queue.try_pop, None):
        for queued in group:
            scheduler.schedule_one(queued)
    assert reporter.bound == []  # its PreBind is still being awaited
    assert scheduler.binding.in_flight == 1
    await asyncio.sleep(0.1)
    assert reporter.bound == [("default/web", "node-0")]
    assert scheduler.binding.in_flight == 0


async def test_draining_gives_up_a_pre_bind_in_flight() -> None:
    scheduler, reporter, pod = _with_a_claim()
    _provide(scheduler, Port(st.SUCCESS, later=True))
    scheduler.enqueue(pod)
    for group in iter(scheduler.queue.try_pop, None):
        for queued in group:
            scheduler.schedule_one(queued)
    await scheduler.binding.drain()
    assert reporter.bound == []
    assert reporter.failures["default/web"] == (
        'running PreBind plugin "VolumeBinding": scheduler is shutting down'
    )
    assert not scheduler.cluster.is_assumed(pod.uid)


ASSIGNED = (
    'Operation cannot be fulfilled on pods/binding "web": pod web is already assigned to '
    'node "node-9"'
)
STORAGE_DOWN = (
    'Operation cannot be fulfilled on pods/binding "web": rpc error: code = Unavailable desc '
    "= error reading from server: EOF"
)
DELETING = (
    'Operation cannot be fulfilled on pods/binding "web": pod web is being deleted, cannot '
    "be assigned to a host"
)
RECREATED = (
    'Operation cannot be fulfilled on pods "web": Precondition failed: UID in precondition: '
    "a, UID in object meta: b"
)


@pytest.mark.parametrize(
    ("message", "requeued"),
    [(ASSIGNED, False), (DELETING, False), (RECREATED, False), (STORAGE_DOWN, True)],
    ids=[
        "bound elsewhere: dropped",
        "being deleted: dropped",
        "a recreated pod of the name: dropped",
        "etcd away (kube-apiserver says 409 too): backed off and retried",
    ],
)
def test_a_409_drops_the_pod_only_when_it_settles_it(message: str, requeued: bool) -> None:
    """Every error of the binding's storage is a 409: only kube's settling reasons end the
    pod's scheduling; an etcd outage's leaves it pending, so it is retried."""
    scheduler, binder, _ = scheduler_for([make_node("node-0")], auto_bind=False)
    scheduler.enqueue(pod_from_raw(make_pod("web", cpu="100m")))
    drain(scheduler)
    request, done = binder.pending.pop()
    binder.finish(request, done, BindResult.CONFLICT, message)
    assert scheduler.cluster.get_pod(request.pod.uid) is None
    assert scheduler.queue.pending()[Pool.BACKOFF] == (1 if requeued else 0)
    assert (scheduler.queue.get(request.pod.uid) is not None) is requeued


def test_a_bind_error_does_not_requeue_a_pod_deleted_meanwhile() -> None:
    """A pod whose DELETE arrives while its bind is in flight, and whose bind then fails
    with an error other than 404, is not requeued: retrying it would assume a pod that no
    longer exists (kube requeues only what its informer still shows pending)."""
    scheduler, binder, reporter = scheduler_for([make_node("node-0")], auto_bind=False)
    scheduler.enqueue(pod_from_raw(make_pod("web", cpu="100m")))
    drain(scheduler)
    request, done = binder.pending.pop()
    EventHandlers(scheduler).on_pod_deleted(request.pod.uid)
    binder.finish(request, done, BindResult.ERROR, "etcdserver: request timed out")
    assert scheduler.queue.get(request.pod.uid) is None
    assert sum(scheduler.queue.pending().values()) == 0
    assert reporter.failures == {}


def test_a_bind_error_does_not_requeue_a_pod_the_watch_shows_bound() -> None:
    """The bind landed after all (its answer lost, the retries spent) or another scheduler
    bound the pod: the watch shows it on a node, so the error requeues nothing (kube's
    handleSchedulingFailure: "Pod has been assigned to node. Abort adding it back")."""
    scheduler, binder, _ = scheduler_for([make_node("node-0")], auto_bind=False)
    scheduler.enqueue(pod_from_raw(make_pod("web", cpu="100m")))
    drain(scheduler)
    request, done = binder.pending.pop()
    scheduler.cluster.add_pod(pod_from_raw(make_pod("web", cpu="100m", node_name="node-0")))
    binder.finish(request, done, BindResult.ERROR, "the server was unable to return a response")
    assert scheduler.queue.get(request.pod.uid) is None
    assert scheduler.cluster.get_pod(request.pod.uid) is not None  # still accounted, bound
