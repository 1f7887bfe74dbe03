"""One scheduling cycle for a whole pod group (kube v1.37's schedule_one_podgroup.go, the
GenericWorkload gate).

A group is popped whole (queueing/group_queue.py) and placed against one view of the
cluster in one synchronous, await-free stretch:

1. **Validate** (kube's validatePodGroup): every member, queued or already placed, has the
   first queued member's scheduler name, the PodGroup's priority and one preemption policy;
   else every member fails with kube's message (SchedulerError) and nothing is tried.
2. **Members in order** (queueing/queued_group.py: kube's order, then gathered by signature),
   deleting ones skipped. Before the first and after each, GangScheduling's
   PlacementFeasible says whether ``minCount`` can still be reached: the cycle stops as soon
   as it cannot (the rest are never tried). Each member is decided as a plain pod is (the
   batch's hint, the exact path or a full pass: cycle/schedule_one.py), assumed on its node
   and reserved, so the next member sees it — the members of one signature share one batch
   state, which the group's single cycle number keeps valid (kube's batchStateCompatible
   with GenericWorkload). No PostFilter runs per member.
3. **All or nothing**: the group is placed when ``minCount`` members are (assumed or bound),
   counting those placed before; then each placed member goes through Permit (GangScheduling
   allows them all in this loop turn) to its binding cycle, and members that did not fit are
   requeued with the group. Otherwise every member assumed in this cycle is unreserved and
   forgotten before the cycle returns: a failed group holds no node, no volume, no device.
   Unlike kube, a placed group's assumptions are kept rather than undone and made again.
4. **Report**, with kube's texts: a member that did not fit gets its own FitError (without
   the preemption clause), one never tried the group's status, one placed in a group that
   failed ``pod group is unschedulable, <the group's message>``; the PodGroup gets its
   ``PodGroupInitiallyScheduled`` condition (True once, never back), and the group's
   metrics (``scheduler_podgroup_*``).
5. **Requeue** (``SchedulingQueue.attempted_group``): the members that failed, and those that
   arrived meanwhile, form the group's next entity.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Protocol

from scheduler import logs
from scheduler.cycle.group_preemption import PREFIX, Preemption, actuate, preempt_for_group
from scheduler.framework import status as st
from scheduler.framework.diagnosis import FitError, SchedulingError
from scheduler.framework.results import ScheduleResult
from scheduler.model.pod import PREEMPT_LOWER_PRIORITY
from scheduler.model.pod_groups import INITIALLY_SCHEDULED, GroupApi, GroupCondition
from scheduler.model.resources import Resources

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from scheduler.cache.cluster_state import ClusterState
    from scheduler.cycle.decision import Decision, Reserved
    from scheduler.cycle.failure import FailureHandler
    from scheduler.cycle.ports import GroupReporter, Reporter
    from scheduler.framework.profile import Profile
    from scheduler.metrics.registry import Metrics
    from scheduler.model.pod_groups import PodGroup
    from scheduler.queueing.queued_group import QueuedPodGroupInfo
    from scheduler.queueing.queued_pod import QueuedPodInfo
    from scheduler.queueing.scheduling_queue import SchedulingQueue

log = logs.get_logger(__name__)

UNSCHEDULABLE_GROUP = "pod group is unschedulable"
"""kube's errPodGroupUnschedulable."""
SCHEDULED = "Scheduled"
UNSCHEDULABLE = "Unschedulable"
SCHEDULER_ERROR = "SchedulerError"


class PodCycles(Protocol):
    """What the group cycle uses of the pod cycle (cycle/schedule_one.py's Scheduler)."""

    def decide(self, info: QueuedPodInfo, cycle: int) -> Decision: ...

    def store(
        self, info: QueuedPodInfo, decision: Decision, cycle: int, elapsed: float
    ) -> None: ...

    def reserve(
        self, info: QueuedPodInfo, outcome: ScheduleResult, decision: Decision
    ) -> Reserved: ...

    def release(self, reserved: Reserved) -> None: ...

    def end_batch(self, profile: str) -> None: ...

    def permit_and_bind(
        self,
        info: QueuedPodInfo,
        reserved: Reserved,
        decision: Decision,
        cycle: int,
        elapsed: float,
        *,
        in_group: bool = False,
    ) -> None: ...


@dataclass(slots=True)
class _Member:
    """One member's part of the cycle: how it went, and what it holds meanwhile."""

    info: QueuedPodInfo
    decision: Decision | None = None
    reserved: Reserved | None = None
    status: st.Status | None = None
    """Its own verdict (None: never tried in this cycle)."""
    elapsed: float = 0.0


@dataclass(frozen=True, slots=True)
class GroupAttempt:
    """What one group's algorithm did (``explain`` reports it)."""

    tried: int
    """Members tried, in order, until minCount was reached or out of reach."""
    found: int
    """Placements found among them (kept on success, released on failure)."""


class GroupCycle:
    """Places whole pod groups; see the module docstring."""

    def __init__(
        self,
        pods: PodCycles,
        *,
        profiles: Mapping[str, Profile],
        cluster: ClusterState,
        queue: SchedulingQueue,
        metrics: Metrics,
        reporter: Reporter,
        group_reporter: GroupReporter,
        failures: FailureHandler,
    ) -> None:
        self.pods = pods
        self.profiles = profiles
        self.cluster = cluster
        self.queue = queue
        self.metrics = metrics
        self.reporter = reporter
        self.group_reporter = group_reporter
        self.failures = failures

    def schedule(self, group: QueuedPodGroupInfo, cycle: int) -> GroupAttempt | None:
        """Place ``group`` (popped whole) in cycle number ``cycle``; what the algorithm
        found (None: no member was tried)."""
        started = time.perf_counter()
        pod_group = self.cluster.pod_groups.pod_group(group.key)
        members = group.ordered()
        problem = self._invalid(group, pod_group, members)
        if problem:
            self._failed_before(group, pod_group, members, problem, started)
            return None
        assert pod_group is not None
        live = [info for info in members if not self._skipped(info)]
        if not live:
            self.queue.attempted_group(group, placed=True, error=False)
            return None
        tried, status = self._place(pod_group, live, cycle)
        self.metrics.podgroup_algorithm_duration.observe(time.perf_counter() - started)
        placed = status.is_success
        if not placed:
            self._release(tried)
        unplaced = status.message()  # what a member never tried is told (kube's clone)
        preemption = None
        if status.code is st.Code.UNSCHEDULABLE:
            preemption = self._post_filter(pod_group, live, cycle)
            if preemption.status.code is st.Code.ERROR:
                status = preemption.status
            else:
                text = preemption.status.message()
                status = st.Status(status.code, (*status.reasons, PREFIX + text if text else ""))
        self._submit(group, pod_group, tried, status, cycle, unplaced, preemption)
        waiting = preemption is not None and preemption.status.is_success
        if placed:
            result = "scheduled"
        elif waiting:
            result = "waiting_on_preemption"
        else:
            result = "error" if status.code is st.Code.ERROR else "unschedulable"
        profile = live[0].pod.scheduler_name
        self.metrics.podgroup_schedule_attempts.labels(result=result, profile=profile).inc()
        self.metrics.podgroup_attempt_duration.labels(result=result, profile=profile).observe(
            time.perf_counter() - started
        )
        found = sum(1 for m in tried if m.status is not None and m.status.is_success)
        log.info(
            "group_placed" if placed else "group_unschedulable",
            group=group.key,
            members=len(live),
            placed=found,
            min_count=pod_group.min_count,
            reason=None if placed else status.message(),
        )
        self.queue.attempted_group(group, placed=placed, error=status.code is st.Code.ERROR)
        return GroupAttempt(tried=sum(1 for m in tried if m.status is not None), found=found)

    # -- the algorithm (kube's podGroupSchedulingDefaultAlgorithm) -------------------------

    def _place(
        self, pod_group: PodGroup, live: Sequence[QueuedPodInfo], cycle: int
    ) -> tuple[list[_Member], st.Status]:
        """Try the members in order until minCount cannot be reached; the members (tried
        or not) and the group's status."""
        members = [_Member(info) for info in live]
        profile = self.profiles[live[0].pod.scheduler_name]
        groups = self.cluster.pod_groups
        state = groups.get(pod_group.key)
        scheduled = state.scheduled_count if state is not None else 0
        remaining = len(live)
        status = self._feasible(profile, pod_group, scheduled, remaining)
        if status.code is st.Code.UNSCHEDULABLE:  # no member could make minCount: none tried
            return members, _group_status(status.reasons)
        gap = self._resource_gap(pod_group)
        if gap:  # Coscheduling's minResources: the cluster cannot hold the group at all
            return members, _group_status((gap,))
        any_placed = False
        for member in members:
            verdict = self._try(member, cycle)
            if verdict.code is st.Code.ERROR:
                message = f"failed to schedule other pod from a pod group: {verdict.message()}"
                return members, st.error(message)
            remaining -= 1
            if verdict.is_success:
                scheduled += 1
            status = self._feasible(profile, pod_group, scheduled, remaining)
            if status.code is st.Code.UNSCHEDULABLE:
                break  # kube keeps the plugin's status as it is here
            any_placed = any_placed or verdict.is_success
        if status.code is st.Code.WAIT:
            return members, _group_status(status.reasons)
        if status.is_success and not any_placed:
            return members, _group_status(())
        return members, status

    def _release(self, members: Sequence[_Member]) -> None:
        """Undo every member assumed and reserved in this cycle, last first. The batch state
        ranked the nodes with them assumed: it ends (as after a failed bind)."""
        for member in reversed(members):
            if member.reserved is not None and member.reserved.status.is_success:
                self.pods.release(member.reserved)
        if members:
            self.pods.end_batch(members[0].info.pod.scheduler_name)

    def _try(self, member: _Member, cycle: int) -> st.Status:
        """Decide, assume and reserve one member; its verdict."""
        began = time.perf_counter()
        info = member.info
        decision = self.pods.decide(info, cycle)
        member.decision = decision
        member.elapsed = time.perf_counter() - began
        self.metrics.decision_duration.labels(path=decision.path).observe(member.elapsed)
        outcome = decision.outcome
        if isinstance(outcome, ScheduleResult):
            self.pods.store(info, decision, cycle, member.elapsed)
            member.reserved = self.pods.reserve(info, outcome, decision)
            verdict = member.reserved.status
        elif isinstance(outcome, FitError):
            verdict = st.Status(st.Code.UNSCHEDULABLE, (outcome.message(),))
        else:
            verdict = st.error(outcome.message)
        member.status = verdict
        return verdict

    def _resource_gap(self, pod_group: PodGroup) -> str:
        """Coscheduling's minResources check: what the cluster's free capacity (allocatable
        less what its pods request, the group's own members left out) lacks; "" when
        nothing is missing, or the group asks for no minimum."""
        wanted = pod_group.min_resources
        if wanted is None:
            return ""
        groups = self.cluster.pod_groups
        free = Resources()
        for info in self.cluster.snapshot.node_infos:
            if info.node is None:
                continue
            free.add(info.node.allocatable)
            for pod in info.pods.values():
                if groups.key_of(pod) != pod_group.key:
                    free.sub(pod.requests)
        missing = [
            f"{name} {amount - free.get(name)}"
            for name, amount in (
                ("cpu", wanted.milli_cpu),
                ("memory", wanted.memory),
                ("ephemeral-storage", wanted.ephemeral_storage),
                *sorted(wanted.scalar.items()),
            )
            if amount > free.get(name)
        ]
        return f"resource gap: {', '.join(missing)}" if missing else ""

    def _feasible(
        self, profile: Profile, pod_group: PodGroup, scheduled: int, remaining: int
    ) -> st.Status:
        """GangScheduling's PlacementFeasible (kube runs the plugin named so; without it,
        Success: any member placed places the group)."""
        gang = profile.placement_feasible
        if gang is None:
            return st.SUCCESS
        return gang.placement_feasible(pod_group.min_count, scheduled, remaining)

    # -- validation and skips --------------------------------------------------------------

    def _invalid(
        self,
        group: QueuedPodGroupInfo,
        pod_group: PodGroup | None,
        members: Sequence[QueuedPodInfo],
    ) -> str:
        """kube's validatePodGroup (and a PodGroup gone since the pop): "" when valid."""
        if pod_group is None:
            return f"pod group object not found for pod group {group.key}"
        baseline = members[0].pod
        state = self.cluster.pod_groups.get(group.key)
        placed = [self.cluster.get_pod(uid) for uid in state.scheduled] if state else []
        for pod in [info.pod for info in members] + [p for p in placed if p is not None]:
            if pod.scheduler_name != baseline.scheduler_name:
                return (
                    "all pods in a single pod group should have the same .spec.schedulerName "
                    f'set, got: "{pod.scheduler_name}" and "{baseline.scheduler_name}"'
                )
            if pod_group.api is GroupApi.KUBE and pod.priority != pod_group.priority:
                return (
                    "all pods in a single pod group should have the same priority as the pod "
                    f"group's priority, got {pod.priority} and {pod_group.priority}"
                )
            if _policy(pod) != _policy(baseline):
                return (
                    "all pods in a single pod group should have the same preemption policy, "
                    f"got {_policy(pod)} and {_policy(baseline)}"
                )
        if baseline.scheduler_name not in self.profiles:
            return f'profile not found for scheduler name "{baseline.scheduler_name}"'
        return ""

    def _skipped(self, info: QueuedPodInfo) -> bool:
        """A member deleting, or assumed already (kube's skipPodSchedule)."""
        pod = info.pod
        if pod.deleting:
            self.reporter.failed(pod, f"skip schedule deleting pod: {pod.key}")
            self.queue.done(pod.uid)
            return True
        if self.cluster.is_assumed(pod.uid):
            self.queue.done(pod.uid)
            return True
        return False

    def _failed_before(
        self,
        group: QueuedPodGroupInfo,
        pod_group: PodGroup | None,
        members: Sequence[QueuedPodInfo],
        problem: str,
        started: float,
    ) -> None:
        """kube's handlePodGroupFailureBeforeScheduling: every member an error."""
        for info in members:
            elapsed = time.perf_counter() - started
            self.failures.not_placed(
                info, SchedulingError(info.pod.key, problem), elapsed, _NO_STATE
            )
        if pod_group is not None:
            self._condition(pod_group, "False", SCHEDULER_ERROR, problem)
        log.warning("group_error", group=group.key, error=problem)
        self.queue.attempted_group(group, placed=False, error=True)

    # -- submit (kube's submitPodGroupAlgorithmResult) -------------------------------------

    def _submit(
        self,
        group: QueuedPodGroupInfo,
        pod_group: PodGroup,
        members: Sequence[_Member],
        status: st.Status,
        cycle: int,
        unplaced: str,
        preemption: Preemption | None,
    ) -> None:
        error = status.code is st.Code.ERROR
        message = status.message()
        waiting = preemption is not None and preemption.status.is_success
        if waiting:
            assert preemption is not None
            actuate(
                pod_group,
                [member.info for member in members],
                preemption,
                queue=self.queue,
                preemptor=self.failures.preemptor,
            )
        for member in members:
            info, own = member.info, member.status
            if error:
                text = own.message() if own is not None and own.code is st.Code.ERROR else message
                failure = SchedulingError(info.pod.key, text)
                self.failures.not_placed(info, failure, member.elapsed, _NO_STATE)
            elif own is None:
                # Never tried: the group's status as the algorithm left it (kube's clone).
                self.failures.group_member_rejected(info, unplaced, member.elapsed)
            elif own.is_success and status.is_success:
                assert member.decision is not None
                assert member.reserved is not None
                self.pods.permit_and_bind(
                    info, member.reserved, member.decision, cycle, member.elapsed, in_group=True
                )
            elif own.is_success:
                text = message if waiting else f"{UNSCHEDULABLE_GROUP}, {message}"
                self.failures.group_member_rejected(info, text, member.elapsed)
            else:
                self._member_failed(member)
        if status.is_success:
            self._condition(pod_group, "True", SCHEDULED, "")
        elif error:
            self._condition(pod_group, "False", SCHEDULER_ERROR, message)
        else:
            self._condition(pod_group, "False", UNSCHEDULABLE, message)

    # -- workload-aware preemption (DefaultPreemption's PodGroupPostFilter) ----------------

    def _post_filter(
        self, pod_group: PodGroup, live: Sequence[QueuedPodInfo], cycle: int
    ) -> Preemption:
        """kube's RunPodGroupPostFilterPlugins: DefaultPreemption's, unless the profile
        disables it at podGroupPostFilter (then no reason at all, as kube's)."""
        profile = self.profiles[live[0].pod.scheduler_name]
        if not profile.workload_preemption:
            return Preemption(st.unschedulable(""))
        result = preempt_for_group(
            pod_group,
            live,
            cluster=self.cluster,
            profile=profile,
            place=lambda: self._place(pod_group, live, cycle),
            release=self.pods.release,
        )
        # The dry run ranked nodes without the victims: no batch state may outlive it.
        self.pods.end_batch(profile.scheduler_name)
        code = st.CODE_LABELS[result.status.code]
        self.metrics.workload_preemption_attempts.labels(result=code).inc()
        return result

    def _member_failed(self, member: _Member) -> None:
        """A member that did not fit: its own FitError (PostFilter does not run for group
        members, so no preemption clause), or its Reserve or Permit rejection."""
        decision, info = member.decision, member.info
        if decision is not None and isinstance(decision.outcome, FitError):
            self.failures.not_placed(
                info, decision.outcome, member.elapsed, decision.state, post_filter=False
            )
            return
        status = member.status or st.unschedulable()
        self.failures.group_member_rejected(info, status.message(), member.elapsed)

    def _condition(self, pod_group: PodGroup, status: str, reason: str, message: str) -> None:
        """Write ``PodGroupInitiallyScheduled`` unless it would change nothing, or would take
        a True back (kube: terminal once True, updatePodGroupCondition in
        schedule_one_podgroup.go:944-962), judged against the condition as last written
        (by us, ahead of the watch: a member left over from a placed group is retried at
        once, before the True comes back). Coscheduling's PodGroups are left to its own
        controller, which owns their status."""
        if pod_group.api is not GroupApi.KUBE:
            return
        groups = self.cluster.pod_groups
        old = groups.condition(pod_group)
        if old is not None and old.status == "True" and status != "True":
            return
        if (
            old is not None
            and (old.status, old.reason, old.message) == (status, reason, message)
            and old.observed_generation == pod_group.generation
        ):
            return
        condition = GroupCondition(status, reason, message, pod_group.generation)
        groups.condition_written(pod_group, condition)
        known = replace(pod_group, condition=old)  # what the writer diffs against
        self.group_reporter.pod_group_condition(known, INITIALLY_SCHEDULED, condition)


def _group_status(reasons: Sequence[str]) -> st.Status:
    """kube's ``NewStatus(Unschedulable, reasons...).WithError(errPodGroupUnschedulable)``:
    the error's text leads the message."""
    return st.Status(st.Code.UNSCHEDULABLE, (UNSCHEDULABLE_GROUP, *reasons))


def _policy(pod: object) -> str:
    return getattr(pod, "preemption_policy", "") or PREEMPT_LOWER_PRIORITY


_NO_STATE = None
