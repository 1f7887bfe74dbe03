"""ApiPreemptor: the cycle's ``Preemptor`` against the API (kube's preemption Executor).

What a preemption writes, as kube-scheduler v1.37 writes it (``prepareCandidate``):

1. the preemptor's ``status.nominatedNodeName`` (a merge patch of ``pods/{name}/status``),
   first, so the watch brings the nomination back before the FailedScheduling condition;
2. per victim, concurrently: the ``DisruptionTarget=True`` condition with reason
   ``PreemptionByScheduler`` and message ``<schedulerName>: preempting to accommodate a
   higher priority pod`` (strategic merge patch of its status), then a graceful DELETE (no
   grace period given: the pod's own applies), then a Normal ``Preempted`` Event on the
   victim, ``Preempted by pod <uid> on node <node>``, with the preemptor as related object.
   A victim already terminating is left alone; one already gone (404) is skipped;
3. lower-priority pods nominated to the same node: their ``status.nominatedNodeName``
   cleared (``clear_nominated_node``), as kube's clearNominatedNodeName.

``preempt`` and ``clear_nominated_node`` only queue; worker tasks (a ``workers.WorkerPool``
of at most ``concurrency``) do the writes. The ``Preempted`` Events are queued behind the
evictions in a lane of their own (kube's event recorder posts them apart from the
preemption too), so a worker never holds a preemption back while it posts them. Errors
are logged and dropped: the preemptor is retried by the queue anyway, and its next cycle
sees what the watch then shows (a victim that was not deleted is found again; kube's
PreemptPod errors end the same way).

A preemption *runs* (``is_running``, ``cycle.ports.TrackedPreemptor``) from ``preempt``
until every victim's DELETE has been answered; then the ``on_finished`` callback hears of
it, before the ``Preempted`` Events are posted (kube's async preemption: the preemptor is
held back meanwhile, so it cannot preempt a second time before the watch shows its victims
terminating). Every write first asks ``leading``: a replica that lost its lease drops the
jobs still queued and writes nothing more (the new leader decides again).

Neighbours: ``client``, ``errors`` and ``workers``; independent of ``binder``,
``reporter``, ``leader`` and ``controller``.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from scheduler import logs
from scheduler.kube import client, errors, workers
from scheduler.kube.timestamps import rfc3339

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from scheduler.cycle.ports import PreemptionFinished
    from scheduler.kube.client import ApiClient
    from scheduler.model.keys import Uid
    from scheduler.model.pod import Pod
    from scheduler.model.pod_groups import PodGroup

__all__ = ["ApiPreemptor", "disruption_condition", "preempted_event"]

log = logs.get_logger(__name__)

PREEMPTED = "Preempted"
DISRUPTION_TARGET = "DisruptionTarget"
PREEMPTION_BY_SCHEDULER = "PreemptionByScheduler"


@dataclass(frozen=True, slots=True)
class _Preempt:
    pod: Pod
    node: str
    victims: tuple[Pod, ...]


@dataclass(frozen=True, slots=True)
class _Clear:
    pod: Pod


@dataclass(frozen=True, slots=True)
class _GroupPreempt:
    """Workload-aware preemption (kube's actuatePodGroupPreemption): the victims evicted for
    the PodGroup, its members nominated to their nodes."""

    pod_group: PodGroup
    victims: tuple[Pod, ...]
    nominations: tuple[tuple[Pod, str], ...]

    @property
    def pod(self) -> Pod:
        """The member that stands for the group in logs."""
        return self.nominations[0][0]


@dataclass(frozen=True, slots=True)
class _Event:
    """A ``Preempted`` Event, posted after every eviction queued before it."""

    pod: Pod
    """The victim the Event is about."""
    body: dict[str, Any]


Job = _Preempt | _Clear | _GroupPreempt | _Event
EVICTIONS, EVENTS = 0, 1
"""The pool's lanes: evictions and nominations first, then the Events."""


def disruption_condition(preemptor: Pod, now: float, *, what: str = "pod") -> dict[str, Any]:
    """The condition a victim gets before its deletion (kube's PreemptPod); ``what`` is
    ``podgroup`` for workload-aware preemption."""
    return {
        "type": DISRUPTION_TARGET,
        "status": "True",
        "reason": PREEMPTION_BY_SCHEDULER,
        "message": (
            f"{preemptor.scheduler_name}: preempting to accommodate a higher priority {what}"
        ),
        "lastTransitionTime": rfc3339(now),
    }


def preempted_event(
    victim: Pod,
    preemptor: Pod,
    node: str,
    *,
    component: str,
    identity: str,
    now: float,
    pod_group: PodGroup | None = None,
) -> dict[str, Any]:
    """The Normal ``Preempted`` Event on ``victim`` (regarding the victim, related to the
    preemptor, as kube's ``Eventf(victim, preemptor, ...)``; to the PodGroup for
    workload-aware preemption, ``Preempted by podgroup <uid> on node cluster``)."""
    related = _ref(preemptor)
    message = f"Preempted by pod {preemptor.uid} on node {node}"
    if pod_group is not None:
        related = {
            "apiVersion": "scheduling.k8s.io/v1beta1",
            "kind": "PodGroup",
            "name": pod_group.name,
            "namespace": pod_group.namespace,
            "uid": pod_group.uid,
        }
        message = f"Preempted by podgroup {pod_group.uid} on node cluster"
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {
            "name": f"{victim.name}.{time.time_ns():x}",
            "namespace": victim.namespace,
        },
        "involvedObject": _ref(victim),
        "related": related,
        "type": "Normal",
        "reason": PREEMPTED,
        "action": "Preempting",
        "message": message,
        "count": 1,
        "source": {"component": component},
        "reportingComponent": component,
        "reportingInstance": identity,
        "firstTimestamp": rfc3339(now),
        "lastTimestamp": rfc3339(now),
        "eventTime": rfc3339(now, micro=True),
    }


class ApiPreemptor:
    """Queued preemption writes; implements ``cycle.ports.TrackedPreemptor``."""

    def __init__(
        self,
        api: ApiClient,
        *,
        identity: str,
        component: str = "batch-scheduler",
        concurrency: int = 16,
        wall_clock: Callable[[], float] = time.time,
        leading: Callable[[], bool] | None = None,
    ) -> None:
        """``leading``: whether this replica may still write (the leader elector's
        ``is_open``); None: always (no leader election). ``concurrency``: jobs written at
        once (kube runs each preemption in a goroutine of its own and deletes a
        preemption's victims 16 at a time)."""
        if concurrency < 1:
            raise ValueError(f"preemption concurrency must be >= 1, got {concurrency}")
        self._api = api
        self.identity = identity
        self.component = component
        self.concurrency = concurrency
        self._wall = wall_clock
        self._leading = leading or _always
        self._running: set[Uid] = set()
        self._finished: PreemptionFinished | None = None
        self._pool: workers.WorkerPool[Job] = workers.WorkerPool(
            "preemption", self._work, limit=concurrency, lanes=2, describe=_describe
        )
        self.deleted = 0
        """Victims deleted."""
        self.failed = 0
        """Writes that failed (logged and dropped)."""
        self.dropped = 0
        """Jobs dropped unwritten: leadership lost, or shut down."""

    # -- the port (synchronous, never blocks) ----------------------------------------------

    def preempt(self, pod: Pod, node: str, victims: Sequence[Pod]) -> None:
        job = _Preempt(pod, node, tuple(victims))
        if self._pool.closed:
            self._drop(job, "shut down")
            return
        self._running.add(pod.uid)  # before the job runs: the pod is held back from now on
        self._push(job)

    def clear_nominated_node(self, pods: Sequence[Pod]) -> None:
        for pod in pods:
            self._push(_Clear(pod))

    def preempt_group(
        self, pod_group: PodGroup, victims: Sequence[Pod], nominations: Sequence[tuple[Pod, str]]
    ) -> None:
        """``cycle.ports.GroupPreemptor``: one job that nominates the members and evicts the
        victims for the PodGroup."""
        if nominations:
            self._push(_GroupPreempt(pod_group, tuple(victims), tuple(nominations)))

    def is_running(self, uid: Uid) -> bool:
        return uid in self._running

    def on_finished(self, callback: PreemptionFinished) -> None:
        self._finished = callback

    def _push(self, job: Job) -> None:
        lane = EVENTS if isinstance(job, _Event) else EVICTIONS
        if not self._pool.submit(job, lane=lane):
            self._drop(job, "shut down")

    # -- lifecycle -------------------------------------------------------------------------

    async def drain(self, timeout: float) -> bool:  # noqa: ASYNC109 - the ports' API
        """Wait up to ``timeout`` s until every queued write is done; True if it was."""
        if await self._pool.drain(timeout):
            return True
        log.warning("preemption_drain_timeout", pending=self._pool.pending, busy=self._pool.busy)
        return False

    async def close(self) -> None:
        """Refuse new work and cancel the workers (unfinished writes are dropped)."""
        for job in await self._pool.stop():
            self._drop(job, "shut down")

    def _drop(self, job: Job, reason: str) -> None:
        self.dropped += 1
        if isinstance(job, _Event):
            log.info("preempted_event_dropped", victim=job.pod.key, reason=reason)
            return
        log.warning("preemption_dropped", pod=job.pod.key, reason=reason)
        if isinstance(job, _Preempt):
            self._finish(job.pod.uid, ok=False)

    def _finish(self, uid: Uid, *, ok: bool) -> None:
        if uid not in self._running:
            return
        self._running.discard(uid)
        if self._finished is not None:
            try:
                self._finished(uid, ok)
            except Exception:  # the caller's bug must not stop the writer
                log.exception("preemption_finished_callback_failed", uid=uid)

    # -- the writer ------------------------------------------------------------------------

    async def _work(self, job: Job) -> None:
        """One job; an exception is logged by the pool (``worker_crashed``)."""
        if not self._leading():
            self._drop(job, "leadership lost")
        elif isinstance(job, _Preempt):
            await self._preempt(job)
        elif isinstance(job, _GroupPreempt):
            await self._preempt_group(job)
        elif isinstance(job, _Event):
            await self._post(job.pod, job.body)
        else:
            await self._set_nominated_node(job.pod, "")

    async def _preempt_group(self, job: _GroupPreempt) -> None:
        now = self._wall()
        for pod, node in job.nominations:
            await self._set_nominated_node(pod, node)
        first = job.nominations[0][0]
        outcomes = await asyncio.gather(
            *(self._evict(v, first, now, what="podgroup") for v in job.victims)
        )
        log.info(
            "pod_group_preempted_victims",
            pod_group=job.pod_group.key,
            victims=[victim.key for victim in job.victims],
        )
        for victim, outcome in zip(job.victims, outcomes, strict=True):
            if outcome:
                event = preempted_event(
                    victim,
                    first,
                    "cluster",
                    component=self.component,
                    identity=self.identity,
                    now=now,
                    pod_group=job.pod_group,
                )
                self._push(_Event(victim, event))

    async def _preempt(self, job: _Preempt) -> None:
        ok = False
        evicted: list[Pod] = []
        now = self._wall()
        try:
            await self._set_nominated_node(job.pod, job.node)
            outcomes = await asyncio.gather(*(self._evict(v, job.pod, now) for v in job.victims))
            evicted = [v for v, outcome in zip(job.victims, outcomes, strict=True) if outcome]
            ok = all(outcome is not None for outcome in outcomes)
        finally:
            # Every DELETE has been answered: the preemptor may be let go (kube's
            # preempting set), before the Events, which nothing waits for.
            self._finish(job.pod.uid, ok=ok)
        log.info(
            "pod_preempted_victims",
            pod=job.pod.key,
            node=job.node,
            victims=[victim.key for victim in job.victims],
        )
        for victim in evicted:
            event = preempted_event(
                victim,
                job.pod,
                job.node,
                component=self.component,
                identity=self.identity,
                now=now,
            )
            self._push(_Event(victim, event))

    async def _evict(
        self, victim: Pod, preemptor: Pod, now: float, *, what: str = "pod"
    ) -> bool | None:
        """Condition + graceful DELETE. True: deleted now; False: nothing to do (gone or
        terminating already); None: failed, or not written (leadership lost)."""
        if victim.deleting:
            return False  # graceful deletion has begun already: nothing to send (kube skips)
        if not self._leading():
            log.warning("eviction_dropped", pod=preemptor.key, victim=victim.key)
            return None
        namespace, name = victim.namespace, victim.name
        condition = {"status": {"conditions": [disruption_condition(preemptor, now, what=what)]}}
        try:
            await self._api.request(
                "PATCH",
                f"/api/v1/namespaces/{namespace}/pods/{name}/status",
                body=condition,
                content_type=client.STRATEGIC_MERGE_PATCH,
                decode=False,
            )
            await self._api.request(
                "DELETE", f"/api/v1/namespaces/{namespace}/pods/{name}", decode=False
            )
        except errors.NotFound:
            log.info("victim_already_gone", pod=preemptor.key, victim=victim.key)
            return False
        except errors.ApiError as e:
            self.failed += 1
            log.warning("preemption_failed", pod=preemptor.key, victim=victim.key, error=str(e))
            return None
        self.deleted += 1
        return True

    async def _post(self, victim: Pod, event: dict[str, Any]) -> None:
        try:
            await self._api.request(
                "POST", f"/api/v1/namespaces/{victim.namespace}/events", body=event, decode=False
            )
        except errors.ApiError as e:
            log.info("preempted_event_failed", victim=victim.key, error=str(e))

    async def _set_nominated_node(self, pod: Pod, node: str) -> None:
        if not self._leading():
            return
        path = f"/api/v1/namespaces/{pod.namespace}/pods/{pod.name}/status"
        patch = {"status": {"nominatedNodeName": node or None}}
        try:
            await self._api.request(
                "PATCH", path, body=patch, content_type=client.MERGE_PATCH, decode=False
            )
        except errors.NotFound:
            return
        except errors.ApiError as e:
            self.failed += 1
            log.warning("nominate_failed", pod=pod.key, node=node, error=str(e))


def _always() -> bool:
    return True


def _describe(job: Job) -> dict[str, object]:
    return {"pod": job.pod.key}


def _ref(pod: Pod) -> dict[str, str]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "name": pod.name,
        "namespace": pod.namespace,
        "uid": str(pod.uid),
    }
