"""Reporter: the Events and pod conditions users see, written off the hot path.

Implements ``cycle.ports.Reporter``. The three methods are synchronous and only enqueue;
``run()`` drains the queue with one writer task by default (as kube's event broadcaster
sink writes one event at a time), so a slow or failing API server never stalls a
scheduling cycle, and under a burst the binds, which hold up pods, get the larger share of
the process's time (measured: about 10 % more binds/s than four writers, bench.e2e).

What is written, as kube-scheduler writes it:

- ``scheduled``: a Normal ``Scheduled`` Event, "Successfully assigned ns/name to node".
- ``unschedulable``: ``PodScheduled=False, reason=Unschedulable`` on the pod's status (a
  strategic-merge patch of ``pods/{name}/status``, merged by condition type) and a Warning
  ``FailedScheduling`` Event with the fit message.
- ``failed``: the same with condition reason ``SchedulerError`` (an error, not a fit
  problem), as kube's ``handleSchedulingFailure`` does.

Backpressure: the queue is bounded; when full, the oldest Event is dropped (conditions
matter more: they drive autoscalers and ``kubectl get``), and every drop is counted
(``batch_scheduler_events_dropped_total``).
De-duplication: the same (pod UID, reason, message) is written at most once per
``dedup_seconds``; repeats in that window are counted and the next write after the window
carries the count, roughly what kube's event broadcaster aggregation achieves.

Failures never propagate: 404 (pod or namespace gone) is ignored quietly, other errors are
logged (at most one warning per status per window) and the item is dropped.

Neighbours: ``client``/``errors`` for I/O; independent of ``binder``, ``leader``,
``controller``. Timing goes through ``scheduler.clock`` for testability.
"""

from __future__ import annotations

import asyncio
import collections
import datetime
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import cachetools

from scheduler import clock as clocks
from scheduler import logs
from scheduler.kube import client, errors

if TYPE_CHECKING:
    from scheduler.kube.client import ApiClient
    from scheduler.metrics import Metrics
    from scheduler.model.pod import Pod

__all__ = ["Reporter"]

log = logs.get_logger(__name__)

SCHEDULED = "Scheduled"
FAILED_SCHEDULING = "FailedScheduling"
UNSCHEDULABLE = "Unschedulable"
SCHEDULER_ERROR = "SchedulerError"
RECENT_LIMIT = 100_000
"""Reports remembered for de-duplication at most (the oldest go first)."""


@dataclass(slots=True)
class _Item:
    pod: Pod
    type: str
    """Event type: Normal or Warning."""
    reason: str
    message: str
    count: int
    condition_reason: str | None
    """Set when the pod's PodScheduled condition is to become False with this reason."""
    action: str


class Reporter:
    """Queued, de-duplicated Events and conditions; implements ``cycle.ports.Reporter``."""

    def __init__(
        self,
        api: ApiClient,
        *,
        identity: str,
        component: str = "batch-scheduler",
        max_queue: int = 10_000,
        workers: int = 1,
        dedup_seconds: float = 60.0,
        retries: int = 2,
        clock: clocks.Clock | None = None,
        metrics: Metrics | None = None,
    ) -> None:
        self._api = api
        self.metrics = metrics
        self.identity = identity
        self.component = component
        self.max_queue = max_queue
        self.workers = max(1, workers)
        self.dedup_seconds = dedup_seconds
        self.retries = retries
        self._clock = clock or clocks.MonotonicClock()
        self._queue: collections.deque[_Item] = collections.deque()
        # (uid, reason, message) -> [time written, repeats suppressed since]. Kept for two
        # windows, so that a repeat just after the window can still carry the count of the
        # repeats swallowed in it; bounded, so a burst of distinct pods cannot grow it.
        self._recent: cachetools.TTLCache[tuple[str, str, str], list[float]] = cachetools.TTLCache(
            maxsize=RECENT_LIMIT, ttl=2 * dedup_seconds, timer=self._clock.now
        )
        self._wakeup = asyncio.Event()
        self._idle = asyncio.Event()
        self._idle.set()
        self._busy = 0
        self._last_name_ns = 0
        self._warned: dict[int, float] = {}
        self.posted = 0
        """Events written."""
        self.patched = 0
        """Condition patches written."""
        self.deduplicated = 0
        """Reports suppressed as repeats within the window."""
        self.dropped = 0
        """Items dropped because the queue was full."""
        self.failed_writes = 0
        """Writes that failed for a reason other than 404."""

    # -- the port (synchronous, never blocks) ----------------------------------------------

    def scheduled(self, pod: Pod, node: str) -> None:
        """Queue a Normal ``Scheduled`` Event."""
        message = f"Successfully assigned {pod.namespace}/{pod.name} to {node}"
        self._offer(pod, "Normal", SCHEDULED, message, None, "Binding")

    def unschedulable(self, pod: Pod, message: str) -> None:
        """Queue ``PodScheduled=False/Unschedulable`` and a Warning ``FailedScheduling``."""
        self._offer(pod, "Warning", FAILED_SCHEDULING, message, UNSCHEDULABLE, "Scheduling")

    def failed(self, pod: Pod, message: str) -> None:
        """Queue ``PodScheduled=False/SchedulerError`` and a Warning ``FailedScheduling``."""
        self._offer(pod, "Warning", FAILED_SCHEDULING, message, SCHEDULER_ERROR, "Scheduling")

    @property
    def pending(self) -> int:
        """Items queued and not yet taken by a worker."""
        return len(self._queue)

    def _offer(
        self,
        pod: Pod,
        type_: str,
        reason: str,
        message: str,
        condition_reason: str | None,
        action: str,
    ) -> None:
        now = self._clock.now()
        key = (str(pod.uid), reason, message)
        count = 1
        seen = self._recent.get(key)
        if seen is not None:
            written, suppressed = seen
            if now - written < self.dedup_seconds:
                seen[1] += 1
                self.deduplicated += 1
                return
            count += int(suppressed)  # the repeats swallowed in the last window
        self._recent[key] = [now, 0.0]
        if len(self._queue) >= self.max_queue:
            self._drop_one()
        self._queue.append(_Item(pod, type_, reason, message, count, condition_reason, action))
        self._idle.clear()
        self._wakeup.set()

    def _drop_one(self) -> None:
        victim = next((i for i in self._queue if i.condition_reason is None), None)
        if victim is None:
            victim = self._queue[0]
        self._queue.remove(victim)
        self.dropped += 1
        if self.metrics is not None:
            self.metrics.events_dropped.inc()
        if self.dropped == 1 or self.dropped % 1000 == 0:
            log.warning("report_queue_full", dropped=self.dropped, max_queue=self.max_queue)

    # -- the writer ---------------------------------------------------------------------------

    async def run(self) -> None:
        """Write queued items with ``workers`` concurrent tasks until cancelled."""
        async with asyncio.TaskGroup() as tg:
            for i in range(self.workers):
                tg.create_task(self._worker(), name=f"reporter-{i}")

    async def drain(self, timeout: float) -> bool:  # noqa: ASYNC109 - the port's API
        """Wait up to ``timeout`` s until everything queued is written; True if it was."""
        try:
            await asyncio.wait_for(self._idle.wait(), timeout)
        except TimeoutError:
            log.warning("report_drain_timeout", pending=len(self._queue), busy=self._busy)
            return False
        return True

    async def _worker(self) -> None:
        while True:
            if not self._queue:
                self._wakeup.clear()
                await self._wakeup.wait()
                continue
            item = self._queue.popleft()
            self._busy += 1
            try:
                await self._write(item)
            except Exception:  # a bug in one write must not stop the worker
                log.exception("report_crashed", pod=item.pod.key, reason=item.reason)
            finally:
                self._busy -= 1
                if not self._queue and self._busy == 0:
                    self._idle.set()

    async def _write(self, item: _Item) -> None:
        pod = item.pod
        if item.condition_reason is not None:
            path = f"/api/v1/namespaces/{pod.namespace}/pods/{pod.name}/status"
            patch = {"status": {"conditions": [self._condition(item)]}}
            if not await self._call(
                "PATCH", path, patch, pod, item, content_type=client.STRATEGIC_MERGE_PATCH
            ):
                return  # pod gone: no point in an Event about it
            self.patched += 1
        path = f"/api/v1/namespaces/{pod.namespace}/events"
        if await self._call("POST", path, self._event(item), pod, item):
            self.posted += 1

    async def _call(
        self,
        method: str,
        path: str,
        body: dict[str, Any],
        pod: Pod,
        item: _Item,
        *,
        content_type: str | None = None,
    ) -> bool:
        """One write with our own retries (the client never retries POST); True if done."""
        attempt = 0
        while True:
            try:
                await self._api.request(
                    method, path, body=body, content_type=content_type, retries=0, decode=False
                )
                return True
            except errors.NotFound:
                return False
            except errors.Conflict as e:
                if method == "POST" and e.reason == "AlreadyExists":
                    return True  # our own earlier attempt landed; names are unique per item
                self._warn(e, pod, item)
                return False
            except (errors.TooManyRequests, errors.ServerError, errors.TransportError) as e:
                if attempt >= self.retries:
                    self._warn(e, pod, item)
                    return False
                await asyncio.sleep(client.backoff_delay(attempt, retry_after=e.retry_after))
                attempt += 1
            except errors.ApiError as e:
                self._warn(e, pod, item)
                return False

    def _warn(self, error: errors.ApiError, pod: Pod, item: _Item) -> None:
        self.failed_writes += 1
        now = self._clock.now()
        last = self._warned.get(error.status)
        if last is not None and now - last < self.dedup_seconds:
            log.debug("report_failed", pod=pod.key, reason=item.reason, error=str(error))
            return
        self._warned[error.status] = now
        log.warning("report_failed", pod=pod.key, reason=item.reason, error=str(error))

    # -- payloads ---------------------------------------------------------------------------

    def _condition(self, item: _Item) -> dict[str, Any]:
        return {
            "type": "PodScheduled",
            "status": "False",
            "reason": item.condition_reason,
            "message": item.message,
            "lastTransitionTime": _rfc3339(time.time()),
            "lastProbeTime": None,
        }

    def _event(self, item: _Item) -> dict[str, Any]:
        pod = item.pod
        now = time.time()
        return {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {"name": self._event_name(pod.name), "namespace": pod.namespace},
            "involvedObject": {
                "apiVersion": "v1",
                "kind": "Pod",
                "name": pod.name,
                "namespace": pod.namespace,
                "uid": str(pod.uid),
            },
            "type": item.type,
            "reason": item.reason,
            "message": item.message,
            "action": item.action,
            "count": item.count,
            "source": {"component": self.component},
            "reportingComponent": self.component,
            "reportingInstance": self.identity,
            "firstTimestamp": _rfc3339(now),
            "lastTimestamp": _rfc3339(now),
            "eventTime": _rfc3339(now, micro=True),
        }

    def _event_name(self, pod_name: str) -> str:
        # kube's "<object>.<unix nanos in hex>"; forced strictly increasing so two events in
        # one nanosecond (coarse clocks) cannot collide.
        stamp = max(time.time_ns(), self._last_name_ns + 1)
        self._last_name_ns = stamp
        return f"{pod_name}.{stamp:x}"


def _rfc3339(epoch: float, *, micro: bool = False) -> str:
    t = datetime.datetime.fromtimestamp(epoch, tz=datetime.UTC)
    return t.strftime("%Y-%m-%dT%H:%M:%S.%fZ" if micro else "%Y-%m-%dT%H:%M:%SZ")
