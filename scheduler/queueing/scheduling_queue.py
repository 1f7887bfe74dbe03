"""SchedulingQueue: pending pods of ours, and pod groups, in three pools; pods popped in runs
of one signature, groups whole.

- active: ordered by priority (higher first), then by the time the entity entered the pool
  (kube's PrioritySort);
- backoff: entities whose last attempt erred, was rejected (groups) or whose bind failed,
  and pods a cluster event moved out of the unschedulable pool, each until its backoff
  (``initial * 2^(attempts-1)``, capped at ``max``; a group's cap grows with the square
  root of its size, as kube's) expires. When the active pool is empty, ``pop`` takes the
  event-moved pod whose backoff ends first, at once (kube's SchedulerPopFromBackoffQ, on
  by default since v1.33; an erred pod waits its backoff out there too);
- unschedulable: pods no node fits, and groups a PreEnqueue plugin holds back (gated); a
  cluster event that may help such a pod moves it back, and so does staying longer than
  ``max_unschedulable_seconds``. Which event may help which pod is ``wakes``
  (``framework.wakes``): the events the plugins that rejected it declared.

Runs (KEP-5598 in a queue): ``pop`` pops the head; a pod comes as a :class:`Run`, and
iterating the run pops each next pod only when it asks for it, and only while the head of
the active pool has the run's priority and signature (up to ``max_group`` pods). A pod that
arrives meanwhile with a higher priority is the head at the next step, so it ends the run
and is popped next, exactly as kube's one-pod ``Pop`` would: runs never change the order
(and so never the decisions), they only let the loop count same-signature stretches.

Pod groups (the GenericWorkload gate; ``group_of`` is set): a pod of a group is never
queued alone but joins its group's entity, which waits in the same pools
(queueing/pools.py) and is popped whole, as a :class:`QueuedPodGroupInfo`, for one group
cycle; queueing/group_queue.py (``groups``) keeps them.

Held back (kube's PreEnqueue): ``hold``, when set, is asked each time a pod would enter
the active pool or the backoff pool it may be popped from early; True sends it to the
unschedulable pool instead (a pod whose preemption
is still evicting, cycle/failure.py). ``activate`` moves it back once that ends.

Nominations (``queueing.nominator``): the queue owns the Nominator; a pod that leaves the
queue for good (``delete``: deleted, bound elsewhere, gated) loses its nomination too.

Everything but ``pop`` is synchronous and await-free.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from scheduler.framework import events, wakes
from scheduler.queueing.group_queue import GroupQueue
from scheduler.queueing.nominator import Nominator
from scheduler.queueing.pools import Pools
from scheduler.queueing.queued_group import QueuedPodGroupInfo
from scheduler.queueing.queued_pod import Pool, QueuedPodInfo

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from scheduler.batching.signature import Signature
    from scheduler.clock import Clock
    from scheduler.model.keys import Uid
    from scheduler.model.pod import Pod
    from scheduler.model.pod_groups import GroupKey

DEFAULT_MAX_UNSCHEDULABLE_SECONDS = 300.0


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
        self.pools = Pools()
        self._pods: dict[Uid, QueuedPodInfo] = {}
        self._counts = dict.fromkeys(Pool, 0)
        """Pods per pool (group members are the groups' count)."""
        self._gated: set[Uid] = set()
        """Pending pods held back by scheduling gates (kube's SchedulingGates PreEnqueue):
        not queued, only counted (scheduler_pending_pods{queue="gated"})."""
        self._in_flight: set[Uid] = set()
        self._unschedulable: dict[Uid, QueuedPodInfo] = {}
        self.groups = GroupQueue(
            self.pools, clock=clock, initial_backoff=initial_backoff, max_backoff=max_backoff
        )
        """Pod groups: entities, members aside, groups in flight."""
        self.nominator = Nominator()
        """Pods nominated to nodes (by preemption, or by ``status.nominatedNodeName``)."""
        self.hold: Callable[[Pod], bool] | None = None
        """Asked before a pod enters the active pool: True keeps it unschedulable."""
        self.wakes: wakes.WakeTable = wakes.EVERY_EVENT
        """Which event may help which rejected pod; the Scheduler sets it from its profiles'
        plugins (``wakes.wake_table``). The default wakes every pod on every event."""
        self.group_of: Callable[[Pod], GroupKey | None] | None = None
        """The group a pod belongs to (None: pods are never grouped, the gate is off)."""

    # -- sizes -------------------------------------------------------------------------

    def __len__(self) -> int:
        """Queued pods and group members (not those in flight)."""
        return len(self._pods) + self.groups.count()

    def __contains__(self, uid: object) -> bool:
        return uid in self._pods or uid in self.groups.member_of

    def pending(self) -> dict[Pool, int]:
        """Pods per pool, members of groups not gated included (scheduler_pending_pods)."""
        in_groups = self.groups.by_pool()
        return {pool: count + in_groups[pool] for pool, count in self._counts.items()}

    def gated(self) -> int:
        """Pods kept out by scheduling gates, and members of gated groups."""
        return len(self._gated) + self.groups.gated()

    def incomplete(self) -> int:
        """Members waiting aside for their PodGroup to exist (kube's incompletePodGroupPods)."""
        return self.groups.incomplete()

    def pending_members(self) -> int:
        """Members that arrived, or failed, while their group was in flight; they join its
        next entity (kube's pendingPodGroupPods)."""
        return self.groups.pending()

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
        info = self._pods.get(uid)
        return info if info is not None else self.groups.get(uid)

    def queued(self) -> list[QueuedPodInfo]:
        """Every queued pod and group member, in no order (in-flight ones are not queued)."""
        return [*self._pods.values(), *self.groups.queued()]

    @property
    def in_flight(self) -> int:
        return len(self._in_flight)

    # -- producers (watch events) ------------------------------------------------------

    def add(self, pod: Pod, signature: Signature | None, refused_by: str = "") -> None:
        """A new pending pod, or one that changed: it (re)enters the active pool, or its
        group's entity."""
        self._gated.discard(pod.uid)
        key = self.group_of(pod) if self.group_of is not None else None
        if key is not None:
            self.groups.add(key, pod, signature, refused_by)
            return
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
        info = self.get(pod.uid)
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
        else:
            self.groups.delete(uid)

    def pod_group_added(self, key: GroupKey) -> None:
        """The PodGroup of ``key`` appeared or changed (group_queue.py)."""
        self.groups.pod_group_added(key)

    def pod_group_deleted(self, key: GroupKey) -> None:
        """The PodGroup of ``key`` is gone (group_queue.py)."""
        self.groups.pod_group_deleted(key)

    def group_changed(self, key: GroupKey) -> None:
        """One of GangScheduling's events concerns the group (group_queue.py)."""
        self.groups.changed(key)

    # -- consumer (the scheduling loop) -------------------------------------------------

    async def pop(self) -> Run | QueuedPodGroupInfo:
        """Wait for the head, then return it: the run a pod heads, or a whole group."""
        while True:
            popped = self.try_pop()
            if popped is not None:
                return popped
            self.pools.ready.clear()
            await self.pools.ready.wait()

    def try_pop(self, *, early: bool = True) -> Run | QueuedPodGroupInfo | None:
        """The head of the active pool, popped (as a run, or a group); when that is empty
        and ``early``, the head of the poppable backoff; None when there is none."""
        head = self.pools.peek(self._entity)
        if head is None:
            if not early:
                return None
            backed_off = self.pools.pop_backoff_head(self._entity)
            if backed_off is None:
                return None
            assert isinstance(backed_off, QueuedPodInfo)
            self._take(backed_off)
            return Run(self, backed_off)
        self.pools.drop_head()
        if isinstance(head, QueuedPodGroupInfo):
            self.groups.take(head)
            self._in_flight.update(head.members)
            return head
        assert isinstance(head, QueuedPodInfo)
        self._take(head)
        return Run(self, head)

    def pop_following(self, signature: Signature, priority: int) -> QueuedPodInfo | None:
        """Pop the head if it is a pod that continues a run of ``signature`` at ``priority``."""
        following = self.pools.peek(self._entity)
        if (
            not isinstance(following, QueuedPodInfo)
            or following.signature != signature
            or following.pod.priority != priority
        ):
            return None
        self.pools.drop_head()
        self._take(following)
        return following

    def done(self, uid: Uid) -> None:
        """The pod's cycle is over (bound, or put back by one of the requeue calls)."""
        self._in_flight.discard(uid)
        self.groups.placed(uid)

    def requeue_unschedulable(self, info: QueuedPodInfo, plugins: frozenset[str]) -> None:
        """No node fits: wait for a cluster event that may help, or the flush interval. A
        member of a group goes back to its group instead."""
        info.unschedulable_plugins = plugins
        self._in_flight.discard(info.pod.uid)
        if self.groups.requeue(info) or info.pod.uid in self._pods:
            return  # a member, or updated meanwhile: the newer version is queued already
        info.failed_at = self.clock.now()
        self._enter(info, Pool.UNSCHEDULABLE, info.failed_at)

    def requeue_backoff(self, info: QueuedPodInfo) -> None:
        """An error or a failed bind: retry after the pod's backoff (a member: with its
        group)."""
        self._in_flight.discard(info.pod.uid)
        if self.groups.requeue(info) or info.pod.uid in self._pods:
            return
        now = info.failed_at = self.clock.now()
        self._to_backoff_or_active(info, now, poppable=False)

    def put_back_group(self, group: QueuedPodGroupInfo) -> None:
        """A popped group that was not tried (leadership lost) goes back as it was."""
        self._in_flight.difference_update(group.members)
        self.groups.put_back(group)

    def attempted_group(self, group: QueuedPodGroupInfo, *, placed: bool, error: bool) -> None:
        """The group's cycle is over (kube's AddAttemptedPodGroupIfNeeded: group_queue.py)."""
        self.groups.attempted(group, placed=placed, error=error)

    # -- cluster events and timers -----------------------------------------------------

    def on_cluster_event(self, event: events.ClusterEvent) -> int:
        """Move unschedulable pods that ``event`` may help; returns how many moved."""
        wake = self.wakes
        now = self.clock.now()
        moved = 0
        for info in list(self._unschedulable.values()):
            if wake.worth_requeuing(event, info.unschedulable_plugins):
                self._leave(info)
                self._to_backoff_or_active(info, now, poppable=bool(info.unschedulable_plugins))
                moved += 1
        return moved

    def flush(self) -> None:
        """Move entities whose backoff expired and pods unschedulable for too long; check
        groups gated for too long again."""
        now = self.clock.now()
        for entity in list(self.pools.expired(now, self._entity)):
            if isinstance(entity, QueuedPodGroupInfo):
                self.groups.backed_off(entity)
            else:
                assert isinstance(entity, QueuedPodInfo)
                self._leave(entity)
                self._enter_active(entity, now)
        limit = now - self.max_unschedulable_seconds
        stale = [i for i in self._unschedulable.values() if i.pool_since <= limit]
        for info in stale:
            self._leave(info)
            self._to_backoff_or_active(info, now, poppable=bool(info.unschedulable_plugins))
        self.groups.flush_gated(limit)

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

    def _entity(self, key: str) -> QueuedPodInfo | QueuedPodGroupInfo | None:
        """A pod by uid, or a group by key (a group key holds a "/", a uid never does)."""
        pod = self._pods.get(cast("Uid", key))
        return pod if pod is not None else self.groups.entities.get(cast("GroupKey", key))

    def _to_backoff_or_active(self, info: QueuedPodInfo, now: float, *, poppable: bool) -> None:
        """``poppable``: rejected by plugins, not erred (kube's entityBackoffQ, which ``pop``
        may take from early; kube runs PreEnqueue as a pod enters it)."""
        until = info.failed_at + self.backoff_duration(info.attempts) if info.attempts else now
        if until <= now:
            self._enter_active(info, now)
        elif not poppable:
            self._enter(info, Pool.BACKOFF, now)
            self.pools.push_backoff(until, info.seq, info.pod.uid)
        elif self.hold is not None and self.hold(info.pod):
            self._enter(info, Pool.UNSCHEDULABLE, now)
        else:
            self._enter(info, Pool.BACKOFF, now)
            self.pools.push_poppable(
                until, info.pod.priority, info.failed_at, info.seq, info.pod.uid
            )

    def _enter_active(self, info: QueuedPodInfo, now: float) -> None:
        if self.hold is not None and self.hold(info.pod):
            self._enter(info, Pool.UNSCHEDULABLE, now)
            return
        info.timestamp = now
        self._enter(info, Pool.ACTIVE, now)
        self.pools.push_active(info.pod.priority, now, info.seq, info.pod.uid)

    def _enter(self, info: QueuedPodInfo, pool: Pool, now: float) -> None:
        info.seq = self.pools.next_seq()
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
