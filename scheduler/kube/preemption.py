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

``preempt`` and ``clear_nominated_node`` only queue; worker tasks (at most
``concurrency``) do the writes. Errors are logged and dropped: the preemptor is retried by
the queue anyway, and its next cycle sees what the watch then shows (a victim that was not
deleted is found again; kube's PreemptPod errors end the same way).

Neighbours: ``client`` and ``errors``; independent of ``binder``, ``reporter``, ``leader``
and ``controller``.
"""

from __future__ import annotations

import asyncio
import collections
import datetime
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from scheduler import logs
from scheduler.kube import client, errors

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from scheduler.kube.client import ApiClient
    from scheduler.model.pod import Pod

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


def disruption_condition(preemptor: Pod, now: float) -> dict[str, Any]:
    """The condition a victim gets before its deletion (kube's PreemptPod)."""
    return {
        "type": DISRUPTION_TARGET,
        "status": "True",
        "reason": PREEMPTION_BY_SCHEDULER,
        "message": f"{preemptor.scheduler_name}: preempting to accommodate a higher priority pod",
        "lastTransitionTime": _rfc3339(now),
    }


def preempted_event(
    victim: Pod, preemptor: Pod, node: str, *, component: str, identity: str, now: float
) -> dict[str, Any]:
    """The Normal ``Preempted`` Event on ``victim`` (regarding the victim, related to the
    preemptor, as kube's ``Eventf(victim, preemptor, ...)``)."""
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {
            "name": f"{victim.name}.{time.time_ns():x}",
            "namespace": victim.namespace,
        },
        "involvedObject": _ref(victim),
        "related": _ref(preemptor),
        "type": "Normal",
        "reason": PREEMPTED,
        "action": "Preempting",
        "message": f"Preempted by pod {preemptor.uid} on node {node}",
        "count": 1,
        "source": {"component": component},
        "reportingComponent": component,
        "reportingInstance": identity,
        "firstTimestamp": _rfc3339(now),
        "lastTimestamp": _rfc3339(now),
        "eventTime": _rfc3339(now, micro=True),
    }


class ApiPreemptor:
    """Queued preemption writes; implements ``cycle.ports.Preemptor``."""

    def __init__(
        self,
        api: ApiClient,
        *,
        identity: str,
        component: str = "batch-scheduler",
        concurrency: int = 4,
        wall_clock: Callable[[], float] = time.time,
    ) -> None:
        if concurrency < 1:
            raise ValueError(f"preemption concurrency must be >= 1, got {concurrency}")
        self._api = api
        self.identity = identity
        self.component = component
        self.concurrency = concurrency
        self._wall = wall_clock
        self._queue: collections.deque[_Preempt | _Clear] = collections.deque()
        self._workers: set[asyncio.Task[None]] = set()
        self._busy = 0
        self._idle = asyncio.Event()
        self._idle.set()
        self._closed = False
        self.deleted = 0
        """Victims deleted."""
        self.failed = 0
        """Writes that failed (logged and dropped)."""

    # -- the port (synchronous, never blocks) ----------------------------------------------

    def preempt(self, pod: Pod, node: str, victims: Sequence[Pod]) -> None:
        self._push(_Preempt(pod, node, tuple(victims)))

    def clear_nominated_node(self, pods: Sequence[Pod]) -> None:
        for pod in pods:
            self._push(_Clear(pod))

    def _push(self, job: _Preempt | _Clear) -> None:
        if self._closed:
            log.warning("preemption_dropped", pod=job.pod.key, reason="shut down")
            return
        self._queue.append(job)
        self._idle.clear()
        if len(self._workers) < self.concurrency:
            task = asyncio.get_running_loop().create_task(self._worker(), name="preemption")
            self._workers.add(task)
            task.add_done_callback(self._workers.discard)

    # -- lifecycle -------------------------------------------------------------------------

    async def drain(self, timeout: float) -> bool:  # noqa: ASYNC109 - the ports' API
        """Wait up to ``timeout`` s until every queued write is done; True if it was."""
        try:
            await asyncio.wait_for(self._idle.wait(), timeout)
        except TimeoutError:
            log.warning("preemption_drain_timeout", pending=len(self._queue), busy=self._busy)
            return False
        return True

    async def close(self) -> None:
        """Refuse new work and cancel the workers (unfinished writes are dropped)."""
        self._closed = True
        for task in list(self._workers):
            task.cancel()
        await asyncio.gather(*self._workers, return_exceptions=True)
        self._queue.clear()
        self._idle.set()

    # -- the writer ------------------------------------------------------------------------

    async def _worker(self) -> None:
        while self._queue:
            job = self._queue.popleft()
            self._busy += 1
            try:
                if isinstance(job, _Preempt):
                    await self._preempt(job)
                else:
                    await self._set_nominated_node(job.pod, "")
            except asyncio.CancelledError:
                raise
            except Exception:  # a bug in one job must not stop the worker
                log.exception("preemption_crashed", pod=job.pod.key)
            finally:
                self._busy -= 1
                if not self._queue and self._busy == 0:
                    self._idle.set()

    async def _preempt(self, job: _Preempt) -> None:
        await self._set_nominated_node(job.pod, job.node)
        await asyncio.gather(*(self._evict(victim, job) for victim in job.victims))
        log.info(
            "pod_preempted_victims",
            pod=job.pod.key,
            node=job.node,
            victims=[victim.key for victim in job.victims],
        )

    async def _evict(self, victim: Pod, job: _Preempt) -> None:
        if victim.deleting:
            return  # graceful deletion has begun already: nothing to send (kube skips too)
        namespace, name = victim.namespace, victim.name
        now = self._wall()
        condition = {"status": {"conditions": [disruption_condition(job.pod, now)]}}
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
            log.info("victim_already_gone", pod=job.pod.key, victim=victim.key)
            return
        except errors.ApiError as e:
            self.failed += 1
            log.warning("preemption_failed", pod=job.pod.key, victim=victim.key, error=str(e))
            return
        self.deleted += 1
        event = preempted_event(
            victim,
            job.pod,
            job.node,
            component=self.component,
            identity=self.identity,
            now=now,
        )
        try:
            await self._api.request(
                "POST", f"/api/v1/namespaces/{victim.namespace}/events", body=event, decode=False
            )
        except errors.ApiError as e:
            log.info("preempted_event_failed", victim=victim.key, error=str(e))

    async def _set_nominated_node(self, pod: Pod, node: str) -> None:
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


def _ref(pod: Pod) -> dict[str, str]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "name": pod.name,
        "namespace": pod.namespace,
        "uid": str(pod.uid),
    }


def _rfc3339(epoch: float, *, micro: bool = False) -> str:
    t = datetime.datetime.fromtimestamp(epoch, tz=datetime.UTC)
    return t.strftime("%Y-%m-%dT%H:%M:%S.%fZ" if micro else "%Y-%m-%dT%H:%M:%SZ")
