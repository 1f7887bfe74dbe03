"""GangScheduling: a PodGroup's pods are placed all together or not at all (kube v1.37's
plugins/gangscheduling, with the GenericWorkload gate).

- **PreEnqueue** holds a member back while its PodGroup does not exist yet, or while a gang
  has fewer members than ``minCount`` (kube's messages). The queue asks it for every member
  of a group entity (queueing/scheduling_queue.py): one held member holds the group.
- **PlacementFeasible** (kube's pseudo extension point, run by the group cycle after every
  member it tries: cycle/schedule_group.py): Unschedulable once ``minCount`` cannot be
  reached any more (the cycle stops there), Wait while it is not reached yet, else Success.
- **Permit**: a member waits until ``minCount`` members are assumed or bound, counted in the
  live cache; the member that reaches it allows the waiting ones. In the group cycle every
  placed member passes Permit in one loop turn, so the barrier holds nothing across turns;
  it still guards a member placed on its own (a late member of a placed gang passes at
  once, as in kube). Members and groups are counted in cache/pod_groups.py.

Coscheduling's PodGroups (scheduling.x-k8s.io, mapped by model.parse_pod_groups) are gangs
of ``minMember``; their Permit waits ``scheduleTimeoutSeconds`` (Coscheduling's default
60 s when unset) instead of kube's fixed 5 minutes.

No EnqueueExtensions: kube's queueing hints (a member added or bound, the PodGroup added,
its minCount lowered) concern one group; the queue re-checks exactly that group's entity
on those events (``SchedulingQueue.group_changed``), which is what the hints decide.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scheduler.framework import status as st
from scheduler.model.pod_groups import GroupApi
from scheduler.plugins import names, plugin_args

if TYPE_CHECKING:
    from scheduler.cache.pod_groups import PodGroups
    from scheduler.framework.cycle_state import CycleState
    from scheduler.framework.interfaces import Handle, PluginArgs, WaitingPod
    from scheduler.model.pod import Pod

PERMIT_TIMEOUT_SECONDS = 5 * 60.0
"""kube's permitTimeoutDuration (not configurable)."""
COSCHEDULING_PERMIT_SECONDS = 60.0
"""Coscheduling's permitWaitingTimeSeconds default."""
WAITING_FOR_MIN_COUNT = "waiting for minCount pods from a gang to appear in scheduling queue"
WAITING_TO_BE_SCHEDULED = "waiting for minCount pods from a gang to be scheduled"


class GangScheduling:
    """PreEnqueue, Permit and PlacementFeasible; see the module docstring. No args."""

    name: str = names.GANG_SCHEDULING

    def __init__(self, args: PluginArgs, handle: Handle) -> None:
        plugin_args.check_fields(args, "GangSchedulingArgs", ())
        self._handle = handle

    @property
    def _groups(self) -> PodGroups:
        return self._handle.snapshot.pod_groups

    def pre_enqueue(self, pod: Pod) -> st.Status:
        groups = self._groups
        key = groups.key_of(pod)
        if key is None:
            return st.SUCCESS
        state = groups.get(key)
        pod_group = state.pod_group if state is not None else None
        if state is None or pod_group is None:
            group = pod.scheduling_group or key.rpartition("/")[2]
            return st.unresolvable(
                f'waiting for pods\'s pod group "{group}" to appear in scheduling queue'
            )
        if not pod_group.gang:
            return st.SUCCESS
        if state.all_count < pod_group.min_count:
            return st.unresolvable(WAITING_FOR_MIN_COUNT)
        return st.SUCCESS

    def permit(self, state: CycleState, pod: Pod, node_name: str) -> tuple[st.Status, float]:
        groups = self._groups
        key = groups.key_of(pod)
        if key is None:
            return st.SUCCESS, 0.0
        group = groups.get(key)
        pod_group = group.pod_group if group is not None else None
        if group is None or pod_group is None:
            name = key.rpartition("/")[2]
            return (
                st.error(
                    f"failed to get podGroup {pod.namespace}/{name}: podgroup.scheduling.k8s.io "
                    f'"{name}" not found'
                ),
                0.0,
            )
        if not pod_group.gang:
            return st.SUCCESS, 0.0
        if group.scheduled_count < pod_group.min_count:
            timeout = PERMIT_TIMEOUT_SECONDS
            if pod_group.api is GroupApi.COSCHEDULING:
                timeout = pod_group.schedule_timeout or COSCHEDULING_PERMIT_SECONDS
            return st.Status(st.Code.WAIT, (WAITING_TO_BE_SCHEDULED,)), timeout

        def allow(waiting: WaitingPod) -> None:
            if groups.key_of(waiting.pod) == key:
                waiting.allow(self.name)

        self._handle.iterate_over_waiting_pods(allow)
        return st.SUCCESS, 0.0

    def placement_feasible(self, min_count: int, scheduled: int, remaining: int) -> st.Status:
        """kube's PlacementFeasible: can ``minCount`` still be reached, is it reached?"""
        if remaining + scheduled < min_count:
            return st.unschedulable(
                f"minCount ({min_count}) cannot be satisfied: {scheduled} scheduled, "
                f"{remaining} remaining"
            )
        if scheduled < min_count:
            return st.Status(
                st.Code.WAIT,
                (
                    f"minCount ({min_count}) is not yet satisfied: {scheduled} scheduled, "
                    f"{remaining} remaining",
                ),
            )
        return st.SUCCESS
