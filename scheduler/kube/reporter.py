"""Reporter: the Events and pod conditions users see, written off the hot path.

Implements ``cycle.ports.Reporter``. The three methods are synchronous and only enqueue;
once ``run()`` is started, up to ``workers`` writer tasks (a ``workers.WorkerPool``) drain
the queue, so a slow or failing API server never stalls a scheduling cycle.

What is written, as kube-scheduler writes it:

- ``scheduled``: a Normal ``Scheduled`` Event, "Successfully assigned ns/name to node".
- ``unschedulable``: ``PodScheduled=False, reason=Unschedulable`` on the pod's status (a
  strategic-merge patch of ``pods/{name}/status``, merged by condition type) and a Warning
  ``FailedScheduling`` Event with the fit message.
- ``failed``: the same with condition reason ``SchedulerError`` (an error, not a fit
  problem), as kube's ``handleSchedulingFailure`` does.

Times are those of the report (the attempt), not of the write. ``lastTransitionTime``
follows kube's ``podutil.UpdatePodCondition``: it is set when the status changes and kept
while it stays False. The Pod record does not carry its conditions, so the reporter keeps
the time of each False condition it wrote (per UID, bounded) and sends it again on every
re-report; a pod reported as scheduled is forgotten. After a restart or a fail-over the
first re-report of a still-pending pod starts a new transition time (the only difference
from kube, whose informer holds the old condition).

Write faults: a write is one request; on 429, 5xx or a lost connection the item is put
back after a backoff (``Retry-After`` honoured; ``retry_base`` doubling to ``retry_cap``,
jittered) and the worker moves on to the next item, so one slow retry does not hold up the
others. After ``max_attempts`` the item is given up (``failed_writes``), and its
de-duplication entry is forgotten so that the next scheduling attempt reports afresh. A
retry superseded by a newer report about the same pod writes no condition (the newer one
does). Order under a backlog: conditions first, then Warning Events (FailedScheduling),
then Normal ones (Scheduled); an item's Event joins its lane once its condition is written,
and a retry goes to the front of its lane (it is the oldest report there).

Backpressure: the queue is bounded; when full, the oldest Event is dropped, a Normal one
first (conditions matter more: they drive autoscalers and ``kubectl get``), and every drop
is counted (``batch_scheduler_events_dropped_total``).
``batch_scheduler_report_delay_seconds{kind,reason}`` measures report-to-write time.
De-duplication: the same (pod UID, reason, message) is written at most once per
``dedup_seconds``; repeats in that window are counted and the next write after the window
carries the count, roughly what kube's event broadcaster aggregation achieves. A first
report is never delayed by it.

404 (pod or namespace gone) is ignored quietly; other errors, and retriable ones after
``max_attempts``, are logged (at most one warning per status per window) and the item is
dropped.

Neighbours: ``client``/``errors`` for I/O, ``workers`` for the writer tasks; independent
of ``binder``, ``leader``, ``controller``. Timing goes through ``scheduler.clock`` for testability.
"""

from __future__ import annotations

import asyncio
import itertools
import random
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import cachetools

from scheduler import clock as clocks
from scheduler import logs
from scheduler.kube import client, errors, workers
from scheduler.kube.timestamps import rfc3339
from scheduler.metrics.registry import Metrics

if TYPE_CHECKING:
    from collections.abc import Callable

    from scheduler.kube.client import ApiClient
    from scheduler.model.pod import Pod

__all__ = ["Reporter", "ReporterOptions"]

log = logs.get_logger(__name__)

SCHEDULED = "Scheduled"
FAILED_SCHEDULING = "FailedScheduling"
UNSCHEDULABLE = "Unschedulable"
SCHEDULER_ERROR = "SchedulerError"
RECENT_LIMIT = 100_000
"""Reports (and condition times, and pods) remembered at most (the oldest go first)."""


@dataclass(frozen=True, slots=True)
class _Subject:
    """What a report needs of its pod. Not the Pod itself: a backlog of reports (thousands
    under load) would keep every deleted pod's whole record alive until written."""

    namespace: str
    name: str
    uid: str

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"


@dataclass(slots=True)
class _Item:
    pod: _Subject
    type: str
    """Event type: Normal or Warning."""
    reason: str
    message: str
    count: int
    condition_reason: str | None
    """Set while the pod's PodScheduled condition is to become False with this reason."""
    action: str
    offered: float
    """The reporter clock's time of the report (for the delay metric)."""
    wall: float
    """Wall-clock time of the report: the Event's timestamps, a new transition time."""
    seq: int
    """Report number; a newer report about the same pod supersedes this one's condition."""
    attempts: int = 0
    """Failed write attempts so far (retriable errors)."""
    event: dict[str, Any] | None = field(default=None)
    """The Event body, built once so that a retried POST keeps its name."""


@dataclass(frozen=True, slots=True)
class ReporterOptions:
    """The reporter's knobs (``SchedulerSettings.reporter``); the one source of their
    defaults."""

    max_queue: int = 10_000
    """Reports waiting to be written; beyond it the oldest Normal Events are dropped first
    (``batch_scheduler_events_dropped_total``)."""
    workers: int = 2
    """Writes in flight at once."""
    dedup_seconds: float = 60.0
    """A repeat of the same report about the same pod within this window is counted into the
    next Event instead of written (kube's EventCorrelator)."""
    max_attempts: int = 10
    """Attempts per write before it is given up (429, 5xx, a lost connection)."""
    retry_base: float = 0.2
    """Seconds before the first retry; doubles per attempt, with jitter."""
    retry_cap: float = 10.0
    """Longest wait between two attempts, and longest ``Retry-After`` honoured, in seconds."""


class Reporter:
    """Queued, de-duplicated Events and conditions; implements ``cycle.ports.Reporter``."""

    def __init__(
        self,
        api: ApiClient,
        *,
        identity: str,
        component: str = "batch-scheduler",
        options: ReporterOptions | None = None,
        clock: clocks.Clock | None = None,
        wall_clock: Callable[[], float] = time.time,
        metrics: Metrics | None = None,
    ) -> None:
        o = options or ReporterOptions()
        self._api = api
        self.metrics = metrics or Metrics()
        """Every count of the reporter (a registry of its own when none is given)."""
        self.identity = identity
        self.component = component
        self.max_queue = o.max_queue
        self.workers = max(1, o.workers)
        self.dedup_seconds = o.dedup_seconds
        self.max_attempts = max(1, o.max_attempts)
        self.retry_base = o.retry_base
        self.retry_cap = o.retry_cap
        self._clock = clock or clocks.MonotonicClock()
        self._wall = wall_clock
        """Epoch seconds for the timestamps written (injectable: they have 1 s resolution)."""
        self._rng = random.Random()
        # Lanes served in order: pods whose condition is still to be written, then Warning
        # Events (FailedScheduling), then Normal ones (Scheduled); beyond max_queue the
        # oldest item of the last lane is dropped. Workers start with ``run``.
        self._pool: workers.WorkerPool[_Item] = workers.WorkerPool(
            "reporter",
            self._write,
            limit=self.workers,
            lanes=3,
            capacity=self.max_queue,
            evicted=self._dropped_item,
            describe=_describe,
            started=False,
        )
        # (uid, reason, message) -> [time written, repeats suppressed since]. Kept for two
        # windows, so that a repeat just after the window can still carry the count of the
        # repeats swallowed in it; bounded, so a burst of distinct pods cannot grow it.
        self._recent: cachetools.TTLCache[tuple[str, str, str], list[float]] = cachetools.TTLCache(
            maxsize=RECENT_LIMIT, ttl=2 * o.dedup_seconds, timer=self._clock.now
        )
        self._since: cachetools.LRUCache[str, str] = cachetools.LRUCache(maxsize=RECENT_LIMIT)
        """UID -> lastTransitionTime of the PodScheduled=False we wrote."""
        self._latest: cachetools.LRUCache[str, int] = cachetools.LRUCache(maxsize=RECENT_LIMIT)
        """UID -> number of the newest report about the pod, while it is being written (a
        report older than it writes no condition; none here: superseded too)."""
        self.metrics.report_queue.set_function(lambda: self._pool.pending + self._pool.waiting)
        self._seq = itertools.count(1)
        self._last_name_ns = 0
        self._warned: dict[int, float] = {}
        self._dropped = 0

    # -- counts (read from the metrics) -------------------------------------------------------

    @property
    def posted(self) -> int:
        """Events written."""
        return int(self.metrics.total(self.metrics.report_delay, kind="event"))

    @property
    def patched(self) -> int:
        """Condition patches written."""
        return int(self.metrics.total(self.metrics.report_delay, kind="condition"))

    @property
    def deduplicated(self) -> int:
        """Reports suppressed as repeats within the window."""
        return int(self.metrics.total(self.metrics.reports_deduplicated))

    @property
    def dropped(self) -> int:
        """Items dropped because the queue was full."""
        return int(self.metrics.total(self.metrics.events_dropped))

    @property
    def retried(self) -> int:
        """Writes put back for a later attempt after a 429, 5xx or lost connection."""
        return int(self.metrics.total(self.metrics.report_retries))

    @property
    def failed_writes(self) -> int:
        """Writes given up: a non-retriable error, or ``max_attempts`` retriable ones."""
        return int(self.metrics.total(self.metrics.report_failures))

    # -- the port (synchronous, never blocks) ----------------------------------------------

    def scheduled(self, pod: Pod, node: str) -> None:
        """Queue a Normal ``Scheduled`` Event."""
        self._since.pop(str(pod.uid), None)  # PodScheduled is True now: the next False is new
        message = f"Successfully assigned {pod.namespace}/{pod.name} to {node}"
        self._offer(pod, "Normal", SCHEDULED, message, None, "Binding")

    def unschedulable(self, pod: Pod, message: str) -> None:
        """Queue ``PodScheduled=False/Unschedulable`` and a Warning ``FailedScheduling``."""
        self._offer(pod, "Warning", FAILED_SCHEDULING, message, UNSCHEDULABLE, "Scheduling")

    def failed(self, pod: Pod, message: str) -> None:
        """Queue ``PodScheduled=False/SchedulerError`` and a Warning ``FailedScheduling``."""
        self._offer(pod, "Warning", FAILED_SCHEDULING, message, SCHEDULER_ERROR, "Scheduling")

    @property
    def tracked(self) -> int:
        """Pods whose newest report is still being written."""
        return len(self._latest)

    @property
    def pending(self) -> int:
        """Items queued and not yet taken by a worker (waiting retries not included)."""
        return self._pool.pending

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
                self.metrics.reports_deduplicated.inc()
                return
            count += int(suppressed)  # the repeats swallowed in the last window
        self._recent[key] = [now, 0.0]
        seq = next(self._seq)
        self._latest[str(pod.uid)] = seq
        item = _Item(
            _Subject(pod.namespace, pod.name, str(pod.uid)),
            type_,
            reason,
            message,
            count,
            condition_reason,
            action,
            offered=self._clock.now(),
            wall=self._wall(),
            seq=seq,
        )
        self._push(item)

    def _push(self, item: _Item, *, first: bool = False) -> None:
        self._pool.submit(item, lane=_lane(item), first=first)

    def _dropped_item(self, victim: _Item) -> None:
        """The queue was full and ``victim`` (the oldest of the last lane) left it."""
        if victim.condition_reason is not None:  # unwritten: let the next attempt report it
            self._recent.pop((victim.pod.uid, victim.reason, victim.message), None)
        self._ended(victim)
        self.metrics.events_dropped.inc()
        self._dropped += 1  # for the log's throttle: reading the metric walks the registry
        if self._dropped == 1 or self._dropped % 1000 == 0:
            log.warning("report_queue_full", dropped=self._dropped, max_queue=self.max_queue)

    # -- the writer ---------------------------------------------------------------------------

    async def run(self) -> None:
        """Write queued items with up to ``workers`` concurrent tasks until cancelled; what
        is still queued then is not written."""
        self._pool.start()
        try:
            await asyncio.get_running_loop().create_future()
        finally:
            await self._pool.stop()

    async def drain(self, timeout: float) -> bool:  # noqa: ASYNC109 - the port's API
        """Wait up to ``timeout`` s until everything queued (or waiting for a retry) is written
        or given up; True if it was."""
        if await self._pool.drain(timeout):
            return True
        log.warning(
            "report_drain_timeout",
            pending=self._pool.pending,
            busy=self._pool.busy,
            retrying=self._pool.waiting,
        )
        return False

    async def _write(self, item: _Item) -> None:
        """One write; an exception is logged by the pool (``worker_crashed``)."""
        pod = item.pod
        if item.condition_reason is not None:
            if self._latest.get(pod.uid) != item.seq:
                item.condition_reason = None  # a newer report writes the condition
            else:
                path = f"/api/v1/namespaces/{pod.namespace}/pods/{pod.name}/status"
                since = self._since.get(pod.uid) or rfc3339(item.wall)
                patch = {"status": {"conditions": [self._condition(item, since)]}}
                done = await self._call(
                    "PATCH", path, patch, item, content_type=client.STRATEGIC_MERGE_PATCH
                )
                if not done:
                    return  # retried later, or ended (given up, or the pod is gone)
                self._since[pod.uid] = since
                item.condition_reason = None
                self._observe("condition", item)
                self._push(item)  # its Event, behind the other pods' conditions
                return
        if item.event is None:
            item.event = self._event(item)
        path = f"/api/v1/namespaces/{pod.namespace}/events"
        if await self._call("POST", path, item.event, item):
            self._observe("event", item)
            self._ended(item)

    def _ended(self, item: _Item) -> None:
        """``item`` is written, given up or dropped: if it was the pod's newest report, the
        pod is forgotten (a report of every bound pod would otherwise stay until
        ``RECENT_LIMIT`` pods pushed it out: 100 000 entries, about 25 MB)."""
        uid = item.pod.uid
        if self._latest.get(uid) == item.seq:
            del self._latest[uid]

    def _observe(self, kind: str, item: _Item) -> None:
        """A write done: its delay (and so the count of writes of ``kind``)."""
        delay = self._clock.now() - item.offered
        self.metrics.report_delay.labels(kind=kind, reason=item.reason).observe(delay)

    async def _call(
        self,
        method: str,
        path: str,
        body: dict[str, Any],
        item: _Item,
        *,
        content_type: str | None = None,
    ) -> bool:
        """One request; True if done. A retriable failure puts ``item`` back for later."""
        try:
            await self._api.request(
                method, path, body=body, content_type=content_type, retries=0, decode=False
            )
            return True
        except errors.NotFound:
            self._ended(item)
            return False
        except errors.Conflict as e:
            if method == "POST" and e.reason == "AlreadyExists":
                return True  # our own earlier attempt landed; the name is the item's
            self._give_up(e, item)
            return False
        except (errors.TooManyRequests, errors.ServerError, errors.TransportError) as e:
            item.attempts += 1
            if item.attempts >= self.max_attempts:
                self._give_up(e, item)
            else:
                self._retry_later(item, e.retry_after)
            return False
        except errors.ApiError as e:
            self._give_up(e, item)
            return False

    def _retry_later(self, item: _Item, retry_after: float | None) -> None:
        """Put ``item`` back after a backoff; the worker is free meanwhile."""
        delay = client.backoff_delay(
            item.attempts - 1,
            base=self.retry_base,
            cap=self.retry_cap,
            retry_after=retry_after,
            retry_after_cap=self.retry_cap,
            rng=self._rng,
        )
        self.metrics.report_retries.inc()
        self._pool.submit_later(delay, item, lane=_lane(item), first=True)  # its lane's oldest

    def _give_up(self, error: errors.ApiError, item: _Item) -> None:
        self.metrics.report_failures.inc()
        self._ended(item)
        # Not written: the next scheduling attempt must report again, not be de-duplicated.
        self._recent.pop((item.pod.uid, item.reason, item.message), None)
        now = self._clock.now()
        last = self._warned.get(error.status)
        fields = {"pod": item.pod.key, "reason": item.reason, "error": str(error)}
        if last is not None and now - last < self.dedup_seconds:
            log.debug("report_failed", attempts=item.attempts, **fields)
            return
        self._warned[error.status] = now
        log.warning("report_failed", attempts=item.attempts, **fields)

    # -- payloads ---------------------------------------------------------------------------

    def _condition(self, item: _Item, since: str) -> dict[str, Any]:
        return {
            "type": "PodScheduled",
            "status": "False",
            "reason": item.condition_reason,
            "message": item.message,
            "lastTransitionTime": since,
            "lastProbeTime": None,
        }

    def _event(self, item: _Item) -> dict[str, Any]:
        pod = item.pod
        return {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {"name": self._event_name(pod.name), "namespace": pod.namespace},
            "involvedObject": {
                "apiVersion": "v1",
                "kind": "Pod",
                "name": pod.name,
                "namespace": pod.namespace,
                "uid": pod.uid,
            },
            "type": item.type,
            "reason": item.reason,
            "message": item.message,
            "action": item.action,
            "count": item.count,
            "source": {"component": self.component},
            "reportingComponent": self.component,
            "reportingInstance": self.identity,
            "firstTimestamp": rfc3339(item.wall),
            "lastTimestamp": rfc3339(item.wall),
            "eventTime": rfc3339(item.wall, micro=True),
        }

    def _event_name(self, pod_name: str) -> str:
        # kube's "<object>.<unix nanos in hex>"; forced strictly increasing so two events in
        # one nanosecond (coarse clocks) cannot collide.
        stamp = max(time.time_ns(), self._last_name_ns + 1)
        self._last_name_ns = stamp
        return f"{pod_name}.{stamp:x}"


def _lane(item: _Item) -> int:
    """Conditions first: under a burst they are what autoscalers and users read."""
    if item.condition_reason is not None:
        return 0
    return 1 if item.type == "Warning" else 2


def _describe(item: _Item) -> dict[str, object]:
    return {"pod": item.pod.key, "reason": item.reason}
