"""PodGroups: the groups the cluster holds and, per group, which pods are its members
(kube's podGroupState: ``AllPodsCount``, ``ScheduledPodsCount``).

A member is *unscheduled* while pending and ours (queued, gated or in flight: the event
handlers say so), *scheduled* once assumed by us or assigned by anyone (ClusterState says
so as it attaches the pod to a node); a forgotten assumption is unscheduled again, a
deleted or finished pod is no member. GangScheduling's PreEnqueue counts all members
against ``minCount`` and its Permit the scheduled ones; the group cycle reads both, and
keeps here the ``PodGroupInitiallyScheduled`` condition it last wrote until the PodGroup
goes (``condition``: the watch brings the write back only later).

Which group a pod is in is ``model.pod_groups.group_of``: its ``spec.schedulingGroup``,
and the Coscheduling label once ``coscheduling`` is on (the cluster serves that CRD).
Nothing here is read unless the ``GenericWorkload`` gate is on; with it off no pod names
a group (the API server drops the field) and nothing is counted.

Neighbours: ``cache.cluster_state`` (the scheduled side), ``cycle.eventhandlers`` (the
unscheduled side and the PodGroup objects), ``plugins.gang_scheduling`` (the reader).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scheduler.model.pod_groups import group_of

if TYPE_CHECKING:
    from collections.abc import Iterator

    from scheduler.model.keys import Uid
    from scheduler.model.pod import Pod
    from scheduler.model.pod_groups import GroupCondition, GroupKey, PodGroup

__all__ = ["GroupState", "PodGroups"]


class GroupState:
    """One group: its PodGroup (None while only pods name it) and its members by state."""

    __slots__ = ("pod_group", "scheduled", "unscheduled", "written")

    def __init__(self) -> None:
        self.pod_group: PodGroup | None = None
        self.unscheduled: set[Uid] = set()
        """Pending members of ours: queued, gated or being scheduled."""
        self.scheduled: set[Uid] = set()
        """Members assumed by us or assigned (bound by anyone)."""
        self.written: GroupCondition | None = None
        """The ``PodGroupInitiallyScheduled`` condition this scheduler last wrote on this
        PodGroup (same uid): the watch brings it back only later, and the next attempt
        must not decide against an older one (kube's does when its informer lags)."""

    @property
    def all_count(self) -> int:
        """kube's AllPodsCount: every member the scheduler knows of."""
        return len(self.unscheduled) + len(self.scheduled)

    @property
    def scheduled_count(self) -> int:
        """kube's ScheduledPodsCount: assumed plus assigned members."""
        return len(self.scheduled)

    def empty(self) -> bool:
        return self.pod_group is None and not self.unscheduled and not self.scheduled


class PodGroups:
    """Every group by key; see the module docstring."""

    __slots__ = ("_groups", "coscheduling", "generation")

    def __init__(self) -> None:
        self._groups: dict[GroupKey, GroupState] = {}
        self.coscheduling = False
        """The cluster serves Coscheduling's PodGroup CRD: its label makes members too."""
        self.generation = 0
        """Moves on with every change of a PodGroup object."""

    def key_of(self, pod: Pod) -> GroupKey | None:
        return group_of(pod, coscheduling=self.coscheduling)

    def get(self, key: GroupKey) -> GroupState | None:
        return self._groups.get(key)

    def pod_group(self, key: GroupKey) -> PodGroup | None:
        state = self._groups.get(key)
        return state.pod_group if state is not None else None

    def __iter__(self) -> Iterator[PodGroup]:
        """Every PodGroup object held."""
        return (s.pod_group for s in self._groups.values() if s.pod_group is not None)

    # -- PodGroup objects (the watch) ------------------------------------------------------

    def set_pod_group(self, pod_group: PodGroup) -> PodGroup | None:
        """Add or update a PodGroup; returns the version it replaces (None: new)."""
        state = self._state(pod_group.key)
        old, state.pod_group = state.pod_group, pod_group
        if old is None or old.uid != pod_group.uid:
            state.written = None  # another PodGroup of that name: not ours to remember
        self.generation += 1
        return old

    def condition(self, pod_group: PodGroup) -> GroupCondition | None:
        """The group's ``PodGroupInitiallyScheduled`` as last known: the one this
        scheduler wrote, else the one the watch brought (None: none yet)."""
        state = self._groups.get(pod_group.key)
        written = state.written if state is not None else None
        return written if written is not None else pod_group.condition

    def condition_written(self, pod_group: PodGroup, condition: GroupCondition) -> None:
        """This scheduler writes ``condition`` on ``pod_group`` (see ``condition``)."""
        state = self._groups.get(pod_group.key)
        held = state.pod_group if state is not None else None
        if state is not None and held is not None and held.uid == pod_group.uid:
            state.written = condition

    def remove_pod_group(self, key: GroupKey) -> PodGroup | None:
        state = self._groups.get(key)
        if state is None or state.pod_group is None:
            return None
        old, state.pod_group, state.written = state.pod_group, None, None
        self.generation += 1
        self._drop_if_empty(key, state)
        return old

    # -- members ---------------------------------------------------------------------------

    def pending(self, pod: Pod) -> GroupKey | None:
        """``pod`` is a pending pod of ours (queued, gated or in flight); its group's key."""
        key = self.key_of(pod)
        if key is not None:
            state = self._state(key)
            state.scheduled.discard(pod.uid)
            state.unscheduled.add(pod.uid)
        return key

    def scheduled(self, pod: Pod) -> None:
        """``pod`` is assumed or assigned (ClusterState attaches it to a node)."""
        key = self.key_of(pod)
        if key is not None:
            state = self._state(key)
            state.unscheduled.discard(pod.uid)
            state.scheduled.add(pod.uid)

    def forgotten(self, pod: Pod) -> None:
        """An assumption of ``pod`` was dropped: pending again."""
        self.pending(pod)

    def gone(self, pod: Pod) -> None:
        """``pod`` is deleted, finished, or no longer pending and ours."""
        key = self.key_of(pod)
        state = self._groups.get(key) if key is not None else None
        if key is None or state is None:
            return
        state.unscheduled.discard(pod.uid)
        state.scheduled.discard(pod.uid)
        self._drop_if_empty(key, state)

    def _state(self, key: GroupKey) -> GroupState:
        state = self._groups.get(key)
        if state is None:
            state = self._groups[key] = GroupState()
        return state

    def _drop_if_empty(self, key: GroupKey, state: GroupState) -> None:
        if state.empty():
            del self._groups[key]
