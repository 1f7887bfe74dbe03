"""GroupQueue: the pod-group side of the scheduling queue (kube v1.37 with GenericWorkload).

A pod of a group is never queued alone: it joins its group's entity
(queueing/queued_group.py), which waits in the pools (queueing/pools.py) like a pod and is
popped whole for one group cycle (cycle/schedule_group.py). Members the queue knows no
PodGroup for wait aside (incomplete), and so do members that arrive, or fail, while their
group is in flight (pending: queueing/group_members.py); ``attempted`` makes the group's
next entity of them (kube's AddAttemptedPodGroupIfNeeded):

- after a placement, at once, keeping the group's place in the order if some of them failed
  in it (so that preemption for them runs next), else as a newcomer;
- after a rejection or an error, after the group's backoff, which doubles per failed
  attempt up to the maximum times the square root of the group's size (kube's
  calculateBackoffDuration). A rejected group is not parked for a cluster event, as in
  kube: it retries when its backoff ends.

``gate`` runs the PreEnqueue plugins over every member (a scheduling gate, GangScheduling's
count below minCount): one held member holds the group in the unschedulable pool, counted
as gated, until ``changed`` (a member added or bound, its PodGroup added, minCount lowered:
GangScheduling's events) or the periodic flush finds it free.

Neighbours: queueing/scheduling_queue.py (the façade, which owns this and the pods).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scheduler.model.pod_groups import GroupApi
from scheduler.queueing.group_members import GroupMembers
from scheduler.queueing.queued_group import QueuedPodGroupInfo
from scheduler.queueing.queued_pod import Pool, QueuedPodInfo

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from scheduler.batching.signature import Signature
    from scheduler.clock import Clock
    from scheduler.model.keys import Uid
    from scheduler.model.pod import Pod
    from scheduler.model.pod_groups import GroupKey, PodGroup
    from scheduler.queueing.pools import Pools


class GroupQueue:
    """Group entities, members aside, groups in flight; see the module docstring."""

    def __init__(
        self, pools: Pools, *, clock: Clock, initial_backoff: float, max_backoff: float
    ) -> None:
        self.pools = pools
        self.clock = clock
        self.initial_backoff = initial_backoff
        self.max_backoff = max_backoff
        self.entities: dict[GroupKey, QueuedPodGroupInfo] = {}
        """Group entities in a pool (not in flight)."""
        self.members = GroupMembers()
        self.member_of: dict[Uid, GroupKey] = {}
        """Every member the queue holds or has in flight, by uid."""
        self.in_flight: set[GroupKey] = set()
        self.pod_group: Callable[[GroupKey], PodGroup | None] = lambda key: None
        """The PodGroup of a key as the cache holds it (None: not seen yet)."""
        self.gate: Callable[[QueuedPodGroupInfo], str] = lambda group: ""
        """The PreEnqueue plugin that holds a group back ("" when none does)."""

    # -- reads -----------------------------------------------------------------------------

    def get(self, uid: Uid) -> QueuedPodInfo | None:
        """A member waiting in an entity, or aside (not one in flight)."""
        key = self.member_of.get(uid)
        if key is None:
            return None
        group = self.entities.get(key)
        if group is not None and uid in group.members:
            return group.members[uid]
        return self.members.get(key, uid)

    def queued(self) -> Iterator[QueuedPodInfo]:
        for group in self.entities.values():
            yield from group.members.values()
        yield from self.members

    def count(self) -> int:
        """Members waiting (in entities or aside)."""
        aside = self.members.count(self.members.incomplete)
        return sum(g.size for g in self.entities.values()) + aside + self.pending()

    def pending(self) -> int:
        return self.members.count(self.members.pending)

    def incomplete(self) -> int:
        return self.members.count(self.members.incomplete)

    def by_pool(self) -> dict[Pool, int]:
        """Members of entities that are not gated, per pool."""
        counts = dict.fromkeys(Pool, 0)
        for group in self.entities.values():
            if not group.gated_by:
                counts[group.pool] += group.size
        return counts

    def gated(self) -> int:
        return sum(g.size for g in self.entities.values() if g.gated_by)

    # -- members ---------------------------------------------------------------------------

    def add(self, key: GroupKey, pod: Pod, signature: Signature | None, refused_by: str) -> None:
        """A pending pod of ``key``'s group, new or changed."""
        info = self.get(pod.uid)
        if info is not None and self.member_of.get(pod.uid) == key:
            info.pod, info.signature, info.refused_by = pod, signature, refused_by
            group = self.entities.get(key)
            if group is not None and pod.uid in group.members:
                self._regate(group)  # a gate may have gone, or come
            return
        now = self.clock.now()
        info = QueuedPodInfo(pod, signature, refused_by, timestamp=now)
        self.member_of[pod.uid] = key
        if key in self.in_flight:
            self.members.add(self.members.pending, key, info)
        else:
            self._join(key, info, now)

    def requeue(self, info: QueuedPodInfo) -> bool:
        """A member whose attempt failed goes back to its group: pending while the group is
        in flight (its cycle), else into its entity (a bind that failed later: kube's
        addPodGroupMember). False for a pod of no group."""
        uid = info.pod.uid
        key = self.member_of.get(uid)
        if key is None:
            return False
        if self.get(uid) is not None:
            return True  # updated meanwhile: the newer version is its group's already
        now = info.timestamp = info.failed_at = self.clock.now()
        if key in self.in_flight:
            self.members.add(self.members.pending, key, info)
        else:
            self._join(key, info, now)
        return True

    def placed(self, uid: Uid) -> None:
        """A member's cycle is over and it is in no entity: no longer the queue's."""
        if uid in self.member_of and self.get(uid) is None:
            del self.member_of[uid]

    def delete(self, uid: Uid) -> None:
        key = self.member_of.pop(uid, None)
        if key is None:
            return
        group = self.entities.get(key)
        if group is not None and group.members.pop(uid, None) is not None:
            if group.members:
                self._regate(group)
            else:
                self._leave(group)
            return
        self.members.remove(key, uid)

    # -- PodGroups (the watch) and GangScheduling's events ---------------------------------

    def pod_group_added(self, key: GroupKey) -> None:
        """The PodGroup of ``key`` appeared (or changed): its incomplete members form its
        entity (ordered from the earliest one's time), and a gated entity is checked again."""
        incomplete = self.members.take(self.members.incomplete, key)
        group = self.entities.get(key)
        if incomplete and key in self.in_flight:
            self.members.pending.setdefault(key, {}).update(incomplete)
        elif incomplete and group is None:
            group = self._new(key, min(i.timestamp for i in incomplete.values()))
            group.members.update(incomplete)
            self._enter(group, self.clock.now())
            return
        elif incomplete and group is not None:
            group.members.update(incomplete)
        self.changed(key)

    def pod_group_deleted(self, key: GroupKey) -> None:
        """The PodGroup of ``key`` is gone: its members wait, incomplete, for a new one."""
        group = self.entities.get(key)
        if group is not None:
            self._leave(group)
            self.members.incomplete.setdefault(key, {}).update(group.members)
        pending = self.members.take(self.members.pending, key)
        if pending:
            self.members.incomplete.setdefault(key, {}).update(pending)

    def changed(self, key: GroupKey) -> None:
        """One of GangScheduling's events concerns the group: a gated entity is checked."""
        group = self.entities.get(key)
        if group is not None and group.gated_by:
            self._regate(group)

    # -- the cycle -------------------------------------------------------------------------

    def take(self, group: QueuedPodGroupInfo) -> None:
        """Popped whole: the group and each member one more attempt; the group in flight."""
        self._leave(group)
        self.in_flight.add(group.key)
        now = self.clock.now()
        group.attempts += 1
        if group.initial_attempt is None:
            group.initial_attempt = now
        for info in group.members.values():
            info.attempts += 1
            if info.initial_attempt is None:
                info.initial_attempt = now

    def attempted(self, group: QueuedPodGroupInfo, *, placed: bool, error: bool) -> None:
        """The group's cycle is over: its pending members form its next entity (see the
        module docstring)."""
        key = group.key
        self.in_flight.discard(key)
        pending = self.members.take(self.members.pending, key)
        if not pending:
            return
        if self.pod_group(key) is None:
            self.members.incomplete.setdefault(key, {}).update(pending)
            return
        now = self.clock.now()
        failed_here = any(uid in group.members for uid in pending)
        after = self._new(key, group.timestamp if placed and failed_here else now)
        after.members.update(pending)
        after.attempts, after.initial_attempt = group.attempts, group.initial_attempt
        if not placed:
            after.unschedulable_count = group.unschedulable_count + (0 if error else 1)
            after.consecutive_errors = group.consecutive_errors + 1 if error else 0
        after.failed_at = now
        self._enter(after, now, backoff=not placed)

    def put_back(self, group: QueuedPodGroupInfo) -> None:
        """Popped but never tried (leadership lost): back as it was, its attempt undone."""
        self.in_flight.discard(group.key)
        group.members.update(self.members.take(self.members.pending, group.key))
        group.attempts -= 1
        for info in group.members.values():
            info.attempts -= 1
        self._enter(group, self.clock.now())

    # -- timers ----------------------------------------------------------------------------

    def backed_off(self, group: QueuedPodGroupInfo) -> None:
        """Its backoff ended (the façade's flush found it)."""
        self._leave(group)
        self._enter(group, self.clock.now())

    def flush_gated(self, limit: float) -> None:
        """Groups gated since before ``limit`` are checked again (kube's flush of the
        unschedulable pool: a group still gated returns with a fresh time)."""
        for group in [g for g in self.entities.values() if g.gated_by and g.pool_since <= limit]:
            self._leave(group)
            self._enter(group, self.clock.now(), backoff=True)

    # -- internals -------------------------------------------------------------------------

    def _join(self, key: GroupKey, info: QueuedPodInfo, now: float) -> None:
        """``info`` into its group's entity (made if need be), or incomplete while the
        queue knows no PodGroup of ``key``."""
        group = self.entities.get(key)
        if group is not None:
            group.members[info.pod.uid] = info
            self._regate(group)
            return
        if self.pod_group(key) is None:
            self.members.add(self.members.incomplete, key, info)
            return
        group = self._new(key, now)
        group.members[info.pod.uid] = info
        self._enter(group, now)

    def _new(self, key: GroupKey, timestamp: float) -> QueuedPodGroupInfo:
        pod_group = self.pod_group(key)
        priority = pod_group.priority if pod_group is not None else 0
        return QueuedPodGroupInfo(key, priority, timestamp=timestamp)

    def _enter(self, group: QueuedPodGroupInfo, now: float, *, backoff: bool = False) -> None:
        """Into the pool the group belongs in: unschedulable while a PreEnqueue plugin holds
        a member, backoff while its backoff runs (``backoff``), else active."""
        pools = self.pools
        group.seq = pools.next_seq()
        group.pool_since = now
        pod_group = self.pod_group(group.key)
        if pod_group is not None and pod_group.api is GroupApi.COSCHEDULING:
            # Coscheduling's PodGroup has no priority: its pods' order it (their priority).
            group.priority = max(info.pod.priority for info in group.members.values())
        self.entities[group.key] = group
        group.gated_by = self.gate(group)
        if group.gated_by:
            group.pool = Pool.UNSCHEDULABLE
            return
        until = group.failed_at + group.backoff(self.initial_backoff, self.max_backoff)
        if backoff and until > now:
            group.pool = Pool.BACKOFF
            pools.push_backoff(until, group.seq, group.key)
            return
        group.pool = Pool.ACTIVE
        pools.push_active(group.priority, group.timestamp, group.seq, group.key)

    def _leave(self, group: QueuedPodGroupInfo) -> None:
        del self.entities[group.key]
        group.seq = -1  # its heap entries are stale from now on

    def _regate(self, group: QueuedPodGroupInfo) -> None:
        """Run the group's PreEnqueue again; a group that is now gated leaves its pool, one
        no longer gated leaves the unschedulable pool (kube's requeue, moveToActiveQ)."""
        gated_by = self.gate(group)
        if bool(gated_by) == bool(group.gated_by):
            group.gated_by = gated_by
            return
        self._leave(group)
        self._enter(group, self.clock.now(), backoff=True)
