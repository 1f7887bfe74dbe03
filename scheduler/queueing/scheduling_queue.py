"""SchedulingQueue: pending pods of ours in three pools, popped in groups of one signature.

- active: ordered by priority (higher first), then by the time the pod entered the pool
  (kube's PrioritySort);
- backoff: pods whose last attempt erred or whose bind failed, each until its backoff
  (``initial * 2^(attempts-1)``, capped at ``max``) expires;
- unschedulable: pods no node fits; a cluster event that may help them moves them back, and
  so does staying longer than ``max_unschedulable_seconds``. Which event may help which pod
  is ``wakes`` (``framework.wakes``): the events the plugins that rejected it declared.

Runs (KEP-5598 in a queue): ``pop_group`` pops the head and returns it as a :class:`Run`;
iterating the run pops each next pod only when it asks for it, and only while the head of
the active pool has the run's priority and signature (up to ``max_group`` pods). A pod that
arrives meanwhile with a higher priority is the head at the next step, so it ends the run
and is popped next, exactly as kube's one-pod ``Pop`` would: runs never change the order
(and so never the decisions), they only let the loop count same-signature stretches.

Held back (kube's PreEnqueue): ``hold``, when set, is asked each time a pod would enter
the active pool; True sends it to the unschedulable pool instead (a pod whose preemption
is still evicting, cycle/schedule_one.py). ``activate`` moves it back once that ends.

Nominations (``queueing.nominator``): the queue owns the Nominator; a pod that leaves the
queue for good (``delete``: deleted, bound elsewhere, gated) loses its nomination too.

Everything but ``pop_group`` is synchronous and await-free.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING

from scheduler.framework import events, wakes
from scheduler.queueing.nominator import Nominator

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from scheduler.batching.signature import Signature
    from scheduler.clock import Clock
    from scheduler.model.keys import Uid
    from scheduler.model.pod import Pod

DEFAULT_MAX_UNSCHEDULABLE_SECONDS = 300.0


class Pool(StrEnum):
    ACTIVE = "active"
    BACKOFF = "backoff"
    UNSCHEDULABLE = "unschedulable"


@dataclass(slots=True)
class QueuedPodInfo:
    pod: Pod
    signature: Signature | None
    refused_by: str = ""
    """Why the pod has no signature (a plugin name or a pod-level rule)."""
    timestamp: float = 0.0
    """When it last entered the active pool (queue order)."""
    initial_attempt: float | None = None
    """When it was first popped (scheduling SLI starts at the first attempt)."""
    attempts: int = 0
    seq: int = 0
    pool: Pool = Pool.ACTIVE
    unschedulable_plugins: frozenset[str] = frozenset()
    """The plugins that rejected it in its last attempt (they choose the events that wake it)."""
    failed_at: float = 0.0
    """When its last attempt failed: backoff runs from there (kube's podInfo.Timestamp)."""
    pool_since: float = 0.0


class SchedulingQueue:
    def __init__(
        self,
        *,
        clock: Clock,
        initial_backoff: float = 1.0,
        max_backoff: float = 10.0,
        max_unschedulable_seconds: float = DEFAULT_MAX_UNSCHEDULABLE_SECONDS,
        max_group: int = 256,
    ) -> None:
        self.clock = clock
        self.initial_backoff = initial_backoff
        self.max_backoff = max_backoff
        self.max_unschedulable_seconds = max_unschedulable_seconds
        self.max_group = max_group
        self._pods: dict[Uid, QueuedPodInfo] = {}
        self._heap: list[tuple[int, float, int, Uid]] = []
        self._backoff: list[tuple[float, int, Uid]] = []
        self._counts = dict.fromkeys(Pool, 0)
        self._gated: set[Uid] = set()
        """Pending pods held back by scheduling gates (kube's SchedulingGates PreEnqueue):
        not queued, only counted (scheduler_pending_pods{queue="gated"})."""
        self._in_flight: set[Uid] = set()
        self._unschedulable: dict[Uid, QueuedPodInfo] = {}
        self._seq = itertools.count()
        self._ready = asyncio.Event()
        self.nominator = Nominator()
        """Pods nominated to nodes (by preemption, or by ``status.nominatedNodeName``)."""
        self.hold: Callable[[Pod], bool] | None = None
        """Asked before a pod enters the active pool: True keeps it unschedulable."""
        self.wakes: wakes.WakeTable = wakes.EVERY_EVENT
        """Which event may help which rejected pod; the Scheduler sets it from its profiles'
        plugins (``wakes.wake_table``). The default wakes every pod on every event."""

    # -- sizes -------------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self._pods)

    def __contains__(self, uid: object) -> bool:
        return uid in self._pods

    def pending(self) -> dict[Pool, int]:
        """Pods per pool (scheduler_pending_pods)."""
        return dict(self._counts)

    def gated(self) -> int:
        """Pods kept out by scheduling gates (see :meth:`gate`)."""
        return len(self._gated)

    def gate(self, uid: Uid) -> None:
        """The pod has scheduling gates: out of every pool, counted as gated until it is
        added (ungated) or deleted."""
        self.delete(uid)
        self._gated.add(uid)

    def unschedulable_by_plugin(self) -> dict[tuple[str, str], int]:
        """(profile, rejecting plugin) → unschedulable pods (scheduler_unschedulable_pods)."""
        counts: dict[tuple[str, str], int] = {}
        for info in self._unschedulable.values():
            for plugin in info.unschedulable_plugins:
                key = (info.pod.scheduler_name, plugin)
                counts[key] = counts.get(key, 0) + 1
        return counts

    def get(self, uid: Uid) -> QueuedPodInfo | None:
        return self._pods.get(uid)

    def queued(self) -> list[QueuedPodInfo]:
        """Every queued pod, in no particular order (in-flight pods are not queued)."""
        return list(self._pods.values())

    @property
    def in_flight(self) -> int:
        return len(self._in_flight)

    # -- producers (watch events) ------------------------------------------------------

    def add(self, pod: Pod, signature: Signature | None, refused_by: str = "") -> None:
        """A new pending pod, or one that changed: it (re)enters the active pool."""
        self._gated.discard(pod.uid)
        now = self.clock.now()
        info = self._pods.get(pod.uid)
        if info is None:
            # A pod in flight (popped, not yet decided) that changed is queued anew; when
            # its cycle ends, the requeue calls leave the queued newer copy in place.
            info = QueuedPodInfo(pod, signature, refused_by)
        else:
            self._leave(info)
            info.pod, info.signature, info.refused_by = pod, signature, refused_by
        self._enter_active(info, now)

    def refresh(self, pod: Pod) -> bool:
        """A queued pod changed in nothing scheduling reads (a status patch): hold the newer
        copy where the old one is, same place and pool (kube's ``isPodUpdated`` false).
        False when it is not queued. The caller decides "nothing changed"; priority, which
        orders the active pool, must be among what it compares."""
        info = self._pods.get(pod.uid)
        if info is None:
            return False
        info.pod = pod
        return True

    def update_signature(
        self, info: QueuedPodInfo, pod: Pod, signature: Signature | None, refused_by: str
    ) -> None:
        """``info`` (queued or in flight) signed anew, with ``pod`` its new copy (a nomination
        added or cleared, or what selects it changed), in place: a signature orders nothing,
        it only decides which pods form a run."""
        info.pod, info.signature, info.refused_by = pod, signature, refused_by

    def delete(self, uid: Uid) -> None:
        """The pod is gone or no longer pending: drop it wherever it is."""
        self._gated.discard(uid)
        self.nominator.delete(uid)
        info = self._pods.get(uid)
        if info is not None:
            self._leave(info)

    # -- consumer (the scheduling loop) -------------------------------------------------

    async def pop_group(self) -> Run:
        """Wait for a pod, then return the run it heads."""
        while True:
            run = self.try_pop_group()
            if run is not None:
                return run
            self._ready.clear()
            await self._ready.wait()

    def try_pop_group(self) -> Run | None:
        """The run headed by the head of the active pool (popped), or None when it is empty."""
        head = self._pop_head()
        return None if head is None else Run(self, head)

    def pop_following(self, signature: Signature, priority: int) -> QueuedPodInfo | None:
        """Pop the head if it continues a run of ``signature`` at ``priority``."""
        following = self._peek_head()
        if (
            following is None
            or following.signature != signature
            or following.pod.priority != priority
        ):
            return None
        heapq.heappop(self._heap)
        self._take(following)
        return following

    def done(self, uid: Uid) -> None:
        """The pod's cycle is over (bound, or put back by one of the requeue calls)."""
        self._in_flight.discard(uid)

    def requeue_unschedulable(self, info: QueuedPodInfo, plugins: frozenset[str]) -> None:
        """No node fits: wait for a cluster event that may help, or the flush interval."""
        self._in_flight.discard(info.pod.uid)
        if info.pod.uid in self._pods:
            return  # updated meanwhile: the newer version is queued already
        info.unschedulable_plugins = plugins
        info.failed_at = self.clock.now()
        self._enter(info, Pool.UNSCHEDULABLE, info.failed_at)

    def requeue_backoff(self, info: QueuedPodInfo) -> None:
        """An error or a failed bind: retry after the pod's backoff."""
        self._in_flight.discard(info.pod.uid)
        if info.pod.uid in self._pods:
            return
        now = info.failed_at = self.clock.now()
        self._to_backoff_or_active(info, now)

    # -- cluster events and timers -----------------------------------------------------

    def on_cluster_event(self, event: events.ClusterEvent) -> int:
        """Move unschedulable pods that ``event`` may help; returns how many moved."""
        wakes = self.wakes
        now = self.clock.now()
        moved = 0
        for info in list(self._unschedulable.values()):
            if wakes.worth_requeuing(event, info.unschedulable_plugins):
                self._leave(info)
                self._to_backoff_or_active(info, now)
                moved += 1
        return moved

    def flush(self) -> None:
        """Move pods whose backoff expired, and pods unschedulable for too long."""
        now = self.clock.now()
        while self._backoff and self._backoff[0][0] <= now:
            _, seq, uid = heapq.heappop(self._backoff)
            info = self._pods.get(uid)
            if info is not None and info.seq == seq and info.pool is Pool.BACKOFF:
                self._leave(info)
                self._enter_active(info, now)
        limit = now - self.max_unschedulable_seconds
        stale = [i for i in self._unschedulable.values() if i.pool_since <= limit]
        for info in stale:
            self._leave(info)
            self._to_backoff_or_active(info, now)

    def activate(self, uid: Uid) -> bool:
        """Move an unschedulable pod to the active pool now (kube's Activate); True if
        moved. ``hold`` still applies."""
        info = self._pods.get(uid)
        if info is None or info.pool is not Pool.UNSCHEDULABLE:
            return False
        self._leave(info)
        self._enter_active(info, self.clock.now())
        return uid not in self._unschedulable

    def backoff_duration(self, attempts: int) -> float:
        if attempts <= 0:
            return 0.0
        return float(min(self.initial_backoff * 2 ** (attempts - 1), self.max_backoff))

    # -- internals ---------------------------------------------------------------------

    def _to_backoff_or_active(self, info: QueuedPodInfo, now: float) -> None:
        until = info.failed_at + self.backoff_duration(info.attempts) if info.attempts else now
        if until > now:
            self._enter(info, Pool.BACKOFF, now)
            heapq.heappush(self._backoff, (until, info.seq, info.pod.uid))
        else:
            self._enter_active(info, now)

    def _enter_active(self, info: QueuedPodInfo, now: float) -> None:
        if self.hold is not None and self.hold(info.pod):
            self._enter(info, Pool.UNSCHEDULABLE, now)
            return
        info.timestamp = now
        self._enter(info, Pool.ACTIVE, now)
        pod = info.pod
        heapq.heappush(self._heap, (-pod.priority, now, info.seq, pod.uid))
        self._ready.set()

    def _enter(self, info: QueuedPodInfo, pool: Pool, now: float) -> None:
        info.seq = next(self._seq)
        info.pool = pool
        info.pool_since = now
        uid = info.pod.uid
        self._pods[uid] = info
        self._counts[pool] += 1
        if pool is Pool.UNSCHEDULABLE:
            self._unschedulable[uid] = info

    def _leave(self, info: QueuedPodInfo) -> None:
        uid = info.pod.uid
        del self._pods[uid]
        self._counts[info.pool] -= 1
        if info.pool is Pool.UNSCHEDULABLE:
            del self._unschedulable[uid]

    def _take(self, info: QueuedPodInfo) -> None:
        """Popped: in flight, and one more attempt (kube counts attempts at Pop)."""
        self._leave(info)
        self._in_flight.add(info.pod.uid)
        info.attempts += 1
        if info.initial_attempt is None:
            info.initial_attempt = self.clock.now()

    def _peek_head(self) -> QueuedPodInfo | None:
        """The valid head of the active heap, dropping stale entries on the way."""
        heap = self._heap
        while heap:
            _, _, seq, uid = heap[0]
            info = self._pods.get(uid)
            if info is not None and info.seq == seq and info.pool is Pool.ACTIVE:
                return info
            heapq.heappop(heap)
        return None

    def _pop_head(self) -> QueuedPodInfo | None:
        heap = self._heap
        while heap:
            _, _, seq, uid = heapq.heappop(heap)
            info = self._pods.get(uid)
            if info is not None and info.seq == seq and info.pool is Pool.ACTIVE:
                self._take(info)
                return info
        return None


class Run:
    """A popped head and the pods of its signature and priority, popped as iteration asks.

    Each next pod is popped only when the previous one has been handled (the caller's loop
    body ran), so whatever entered the queue meanwhile is ordered against it.
    """

    __slots__ = ("_head", "_queue", "taken")

    def __init__(self, queue: SchedulingQueue, head: QueuedPodInfo) -> None:
        self._queue = queue
        self._head = head
        self.taken = 0
        """Pods popped by this run so far."""

    def __iter__(self) -> Iterator[QueuedPodInfo]:
        head, queue = self._head, self._queue
        self.taken = 1
        yield head
        signature, priority = head.signature, head.pod.priority
        while signature is not None and self.taken < queue.max_group:
            following = queue.pop_following(signature, priority)
            if following is None:
                return
            self.taken += 1
            yield following
