"""DefaultPreemption (PostFilter): evict lower-priority pods so that a pod that fits nowhere
can fit on one node next time (kube's plugins/defaultpreemption plus its Evaluator).

On a FitError: is the pod eligible (not ``preemptionPolicy: Never``; no victim of an earlier
preemption still terminating on its nominated node)? Then the dry run over the nodes whose
failure eviction may cure (``framework.preemption``), from a random offset, for
``max(minCandidateNodesAbsolute, minCandidateNodesPercentage % of them)`` candidates, and
kube's choice among them. The result names the node to nominate and the victims; the cycle
evicts them through its Preemptor port (this plugin does no I/O).

Messages are kube's, prefixed ``preemption: `` (they end the FailedScheduling message):
``preemption: 0/5 nodes are available: 2 Insufficient cpu, 3 Preemption is not helpful for
scheduling.`` or ``preemption: found a potential placement for pod on node n1, preempting 2
victims``.
"""

from __future__ import annotations

import random
from typing import TYPE_CHECKING, Final

from scheduler.framework import preemption
from scheduler.framework import status as st
from scheduler.framework.diagnosis import Diagnosis, FitError
from scheduler.framework.events import ClusterEvent
from scheduler.framework.interfaces import PostFilterResult
from scheduler.model.pod import PREEMPT_NEVER
from scheduler.plugins import names, plugin_args

if TYPE_CHECKING:
    from scheduler.framework.cycle_state import CycleState
    from scheduler.framework.interfaces import Handle, PluginArgs
    from scheduler.model.pod import Pod

_ARGS = "DefaultPreemptionArgs"
DEFAULT_MIN_CANDIDATE_NODES_PERCENTAGE = 10
DEFAULT_MIN_CANDIDATE_NODES_ABSOLUTE = 100
PREFIX = "preemption: "
NOT_ELIGIBLE_NEVER = "not eligible due to preemptionPolicy=Never."
NOT_ELIGIBLE_TERMINATING = "not eligible due to a terminating pod on the nominated node."
NO_CANDIDATE = "no candidate node for preemption"
_OFFSET_SALT = 0x5EED_0FF5E7


def parse_args(args: PluginArgs) -> tuple[int, int]:
    """(minCandidateNodesPercentage, minCandidateNodesAbsolute), validated as kube's
    ValidateDefaultPreemptionArgs."""
    plugin_args.check_fields(
        args, _ARGS, ("minCandidateNodesPercentage", "minCandidateNodesAbsolute")
    )
    percentage = plugin_args.as_int(
        args.get("minCandidateNodesPercentage", DEFAULT_MIN_CANDIDATE_NODES_PERCENTAGE),
        f"{_ARGS}.minCandidateNodesPercentage",
    )
    absolute = plugin_args.as_int(
        args.get("minCandidateNodesAbsolute", DEFAULT_MIN_CANDIDATE_NODES_ABSOLUTE),
        f"{_ARGS}.minCandidateNodesAbsolute",
    )
    if not 0 <= percentage <= 100:
        raise ValueError(f"{_ARGS}.minCandidateNodesPercentage: not in valid range [0, 100]")
    if absolute < 0:
        raise ValueError(f"{_ARGS}.minCandidateNodesAbsolute: not in valid range [0, inf)")
    if percentage == 0 and absolute == 0:
        raise ValueError(
            f"{_ARGS}.minCandidateNodesPercentage: cannot be zero at the same time as "
            "minCandidateNodesAbsolute"
        )
    return percentage, absolute


_EVENTS: Final = (ClusterEvent.ASSIGNED_POD_DELETE,)
"""The cluster events that may undo a rejection (see :meth:`events_to_register`)."""


class DefaultPreemption:
    name = names.DEFAULT_PREEMPTION

    def __init__(self, args: PluginArgs, handle: Handle) -> None:
        self.min_percentage, self.min_absolute = parse_args(args)
        self.handle = handle
        # Draws the dry run's offset (kube's getOffsetRand). Seeded from the first draw of a
        # copy of the profile's source: reproducible with the profile's seed, a sequence of
        # its own (not a replay of the profile's tie-breaks), and the profile's state unmoved.
        source = random.Random()
        source.setstate(handle.rng.getstate())
        self.rng = random.Random(source.getrandbits(64) ^ _OFFSET_SALT)

    def events_to_register(self) -> tuple[ClusterEvent, ...]:
        """kube (SchedulerAsyncPreemption, on by default): AssignedPod/Delete, the
        victims' deletion lets the preemptor go."""
        return _EVENTS

    # -- PostFilter ----------------------------------------------------------------------

    def post_filter(self, state: CycleState, pod: Pod, fit: FitError) -> PostFilterResult:
        result = self.preempt(pod, fit)
        message = result.status.message()
        if not message:
            return result
        return PostFilterResult(
            st.Status(result.status.code, (PREFIX + message,)),
            result.nominated_node,
            result.victims,
            result.pdb_violations,
        )

    def preempt(self, pod: Pod, fit: FitError) -> PostFilterResult:
        """kube's Evaluator.Preempt, without the API calls (the cycle makes them)."""
        eligible, reason = self.eligible(pod, fit.diagnosis)
        if not eligible:
            return PostFilterResult(st.unschedulable(reason))
        snapshot = self.handle.snapshot
        nodes = snapshot.node_infos
        if not nodes:
            return PostFilterResult(st.error("no nodes available"))
        potential = preemption.potential_nodes(fit.diagnosis, nodes)
        candidates: list[preemption.Candidate] = []
        statuses: dict[str, st.Status] = {}
        if potential:
            offset, count = self.offset_and_num_candidates(len(potential))
            candidates, statuses = preemption.dry_run(
                self.handle,
                pod,
                potential,
                snapshot.disruption_budgets.list(),
                offset=offset,
                num_candidates=count,
            )
        if not candidates:
            errors = [s for s in statuses.values() if s.code is st.Code.ERROR]
            if errors:
                return PostFilterResult(errors[0])
            diagnosis = Diagnosis(
                node_statuses=statuses,
                absent_nodes_status=st.unresolvable(preemption.NOT_HELPFUL),
            )
            # Clear the pod's nomination, if it had one: no node can take it now.
            message = FitError(pod.key, len(nodes), diagnosis).message()
            return PostFilterResult(st.unschedulable(message), nominated_node="")
        best = preemption.pick_one_node(candidates)
        if best is None or not best.node:
            return PostFilterResult(st.unschedulable(NO_CANDIDATE))
        return PostFilterResult(
            st.Status(
                st.Code.SUCCESS,
                (
                    f"found a potential placement for pod on node {best.node}, "
                    f"preempting {len(best.victims)} victims",
                ),
            ),
            nominated_node=best.node,
            victims=best.victims,
            pdb_violations=best.pdb_violations,
        )

    # -- kube's DefaultPreemption pieces --------------------------------------------------

    def eligible(self, pod: Pod, diagnosis: Diagnosis) -> tuple[bool, str]:
        """kube's PodEligibleToPreemptOthers: not with ``preemptionPolicy: Never``; and not
        while a lower-priority victim of an earlier preemption is still terminating on the
        pod's nominated node (unless that node now fails unresolvably: then try again)."""
        if pod.preemption_policy == PREEMPT_NEVER:
            return False, NOT_ELIGIBLE_NEVER
        nominated = pod.nominated_node_name
        if nominated:
            # A node the pass did not evaluate counts as UnschedulableAndUnresolvable (kube's
            # default for absent nodes; our absent-node statuses are all of that code).
            status = diagnosis.node_statuses.get(nominated)
            if status is None or status.code is st.Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
                return True, ""
            info = self.handle.snapshot.get(nominated)
            if info is not None:
                for other in info.pods.values():
                    if other.priority < pod.priority and other.deleting and other.preempted:
                        return False, NOT_ELIGIBLE_TERMINATING
        return True, ""

    def num_candidates(self, num_nodes: int) -> int:
        """kube's calculateNumCandidates: the percentage of the nodes, at least the absolute
        minimum, at most all nodes."""
        count = num_nodes * self.min_percentage // 100
        count = max(count, self.min_absolute)
        return min(count, num_nodes)

    def offset_and_num_candidates(self, num_nodes: int) -> tuple[int, int]:
        """A random start for the dry run, and how many candidates it should find."""
        return self.rng.randrange(num_nodes), self.num_candidates(num_nodes)
