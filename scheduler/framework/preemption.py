"""Preemption's evaluator (kube's framework/preemption): candidates, victims, the node choice.

When a pod fits no node, preemption looks for a node where evicting pods of lower priority
would let it fit:

1. potential nodes: those whose Filter failure was Unschedulable (resources, ports, pod
   anti-affinity...), never UnschedulableAndUnresolvable (taints, selectors, affinity):
   no eviction cures those;
2. dry run, from a random offset over the potential nodes, until enough candidates are
   found (``num_candidates``, and at least one that violates no PodDisruptionBudget): per
   node the minimal victim set (:func:`select_victims_on_node`);
3. the best candidate (:func:`pick_one_node`), by kube's ordered criteria.

PreFilter runs once per dry run. Per node the dry run works on a detached copy of the
NodeInfo and a clone of that state, and tells the PreFilter extensions (kube's
RemovePod/AddPod) about each victim taken off or put back, so pod affinity and spreading
see the change without recounting the cluster (kube's SelectVictimsOnNode). The live
NodeInfo, the pod index and the dry run's state are never edited.

Neighbours: ``plugins.default_preemption`` (the PostFilter plugin that drives this),
``framework.profile`` (the Handle: PreFilter, its extensions, Filter with nominated pods),
``framework.nominated`` (the detached node copy).
"""

from __future__ import annotations

import datetime
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from scheduler.framework import status as st
from scheduler.framework.cycle_state import CycleState
from scheduler.framework.nominated import detached_copy

if TYPE_CHECKING:
    from collections.abc import Sequence

    from scheduler.cache.node_info import NodeInfo
    from scheduler.framework.diagnosis import Diagnosis
    from scheduler.framework.interfaces import Handle
    from scheduler.model.disruption import PodDisruptionBudget
    from scheduler.model.pod import Pod

NO_VICTIMS = "No preemption victims found for incoming pod"
NOT_HELPFUL = "Preemption is not helpful for scheduling"
_PRIORITY_SHIFT = 2**31
"""kube adds MaxInt32+1 to every priority before summing, so negative priorities sum up
to more, not less, for more victims."""


@dataclass(frozen=True, slots=True)
class Candidate:
    """A node where preemption would make room, and the pods to evict there."""

    node: str
    victims: tuple[Pod, ...]
    """Most important first (priority, then earliest start)."""
    pdb_violations: int


def start_time(pod: Pod) -> float:
    """Seconds since the epoch the pod started; a pod not started yet counts as starting
    now, i.e. after every started one (kube's GetPodStartTime)."""
    if not pod.start_time:
        return math.inf
    try:
        return datetime.datetime.fromisoformat(pod.start_time).timestamp()
    except ValueError:  # parse_pod checked the form; a calendar oddity counts as "now"
        return math.inf


def importance(pod: Pod) -> tuple[int, float]:
    """Sort key, most important first: higher priority, then earlier start (kube's
    MoreImportantPod/MoreImportantVictim for single pods)."""
    return (-pod.priority, start_time(pod))


def potential_nodes(diagnosis: Diagnosis, nodes: Sequence[NodeInfo]) -> list[NodeInfo]:
    """Nodes whose failure eviction may cure: status Unschedulable (kube's
    NodesForStatusCode). A PreFilter rejection or an absent node's status counts for every
    node it covers."""
    if diagnosis.pre_filter_message:
        return []  # our PreFilter rejections are all UnschedulableAndUnresolvable
    absent = diagnosis.absent_nodes_status
    absent_ok = absent is not None and absent.code is st.Code.UNSCHEDULABLE
    statuses = diagnosis.node_statuses
    out: list[NodeInfo] = []
    for info in nodes:
        status = statuses.get(info.name)
        if status is None:
            if absent_ok:
                out.append(info)
        elif status.code is st.Code.UNSCHEDULABLE:
            out.append(info)
    return out


def split_by_budget(
    victims: Sequence[Pod], budgets: Sequence[PodDisruptionBudget]
) -> tuple[list[Pod], list[Pod]]:
    """(victims whose eviction would break a budget, the others), each in the given order
    (kube's FilterVictimsWithPDBViolation: each budget's allowance is spent in that order;
    a pod already in ``disruptedPods`` spends nothing; a pod without labels breaks none)."""
    allowed = [budget.disruptions_allowed for budget in budgets]
    violating: list[Pod] = []
    keeping: list[Pod] = []
    for pod in victims:
        breaks = False
        if pod.labels:
            for index, budget in enumerate(budgets):
                if not budget.selects(pod.namespace, pod.labels):
                    continue
                if pod.name in budget.disrupted_pods:
                    continue
                allowed[index] -= 1
                if allowed[index] < 0:
                    breaks = True
                    break
        if breaks:
            violating.append(pod)
        else:
            keeping.append(pod)
    return violating, keeping


def select_victims_on_node(
    handle: Handle,
    state: CycleState,
    pod: Pod,
    info: NodeInfo,
    budgets: Sequence[PodDisruptionBudget],
) -> tuple[list[Pod], int, st.Status]:
    """The fewest pods of lower priority to evict from ``info`` for ``pod`` to fit
    (kube's SelectVictimsOnNode): take every lower-priority pod off; if the pod still does
    not fit, this node cannot help. Otherwise put them back one by one, most important
    first, budget-violating ones first, keeping each that still lets the pod fit.

    ``state`` holds the pod's PreFilter results; it and ``info`` are left unchanged (the
    work happens on a clone and a detached copy). Returns (victims most important first,
    budget violations among them, status).
    """
    lower = sorted(
        (other for other in info.pods.values() if other.priority < pod.priority),
        key=importance,
    )
    if not lower:
        return [], 0, st.unresolvable(NO_VICTIMS)
    node = detached_copy(info)
    state = state.clone()
    for victim in lower:
        node.remove_pod(victim.uid)
        status = handle.run_pre_filter_extension_remove_pod(state, pod, victim, node)
        if not status.is_success:
            return [], 0, status
    status = handle.run_filters_with_nominated_pods(state, pod, node)
    if not status.is_success:
        return [], 0, status
    violating, keeping = split_by_budget(lower, budgets)
    victims: list[Pod] = []
    violations = 0
    ordered = [(victim, True) for victim in violating] + [(victim, False) for victim in keeping]
    for victim, breaks_budget in ordered:
        node.add_pod(victim)
        status = handle.run_pre_filter_extension_add_pod(state, pod, victim, node)
        if not status.is_success:
            return [], 0, status
        if handle.run_filters_with_nominated_pods(state, pod, node).is_success:
            continue  # reprieved: it stays
        node.remove_pod(victim.uid)
        status = handle.run_pre_filter_extension_remove_pod(state, pod, victim, node)
        if not status.is_success:
            return [], 0, status
        victims.append(victim)
        if breaks_budget:
            violations += 1
    if violating and keeping:
        victims.sort(key=importance)
    return victims, violations, st.SUCCESS


def dry_run(
    handle: Handle,
    pod: Pod,
    nodes: Sequence[NodeInfo],
    budgets: Sequence[PodDisruptionBudget],
    *,
    offset: int,
    num_candidates: int,
) -> tuple[list[Candidate], dict[str, st.Status]]:
    """Victims on each potential node from ``offset`` on (wrapping), until at least one
    candidate violating no budget is found and ``num_candidates`` in all (kube's
    DryRunPreemption, run in order rather than in parallel). Returns the candidates
    (non-violating first) and the statuses of the nodes that are no candidate.

    PreFilter runs once, here, against the cluster as it is; each node's dry run starts
    from a clone of that state."""
    keeping: list[Candidate] = []
    violating: list[Candidate] = []
    statuses: dict[str, st.Status] = {}
    state = CycleState()
    allowed, status = handle.run_pre_filter(state, pod)
    if not status.is_success:
        return [], {info.name: status for info in nodes}
    names = allowed.node_names
    count = len(nodes)
    for step in range(count):
        info = nodes[(offset + step) % count]
        if names is not None and info.name not in names:
            plugins = " ".join(sorted(allowed.plugins))
            statuses[info.name] = st.unresolvable(f"node(s) didn't satisfy plugin(s) [{plugins}]")
            continue
        victims, violations, status = select_victims_on_node(handle, state, pod, info, budgets)
        if status.is_success and victims:
            candidate = Candidate(info.name, tuple(victims), violations)
            (violating if violations else keeping).append(candidate)
            if keeping and len(keeping) + len(violating) >= num_candidates:
                break
            continue
        if status.is_success:
            status = st.error(f'expected at least one victim pod on node "{info.name}"')
        statuses[info.name] = status
    return [*keeping, *violating], statuses


def pick_one_node(candidates: Sequence[Candidate]) -> Candidate | None:
    """kube's pickOneNodeForPreemption: fewest budget violations, then the lowest highest
    victim priority, the smallest sum of (shifted) priorities, the fewest victims, the
    latest start among the highest-priority victims; then the first candidate."""
    if not candidates:
        return None
    criteria = (
        lambda c: -c.pdb_violations,
        lambda c: -c.victims[0].priority,
        lambda c: -sum(v.priority + _PRIORITY_SHIFT for v in c.victims),
        lambda c: -len(c.victims),
        _earliest_top_start,
    )
    remaining = list(candidates)
    for score in criteria:
        best = max(score(c) for c in remaining)
        remaining = [c for c in remaining if score(c) == best]
        if len(remaining) == 1:
            break
    return remaining[0]


def _earliest_top_start(candidate: Candidate) -> float:
    """The earliest start among the victims of the highest priority (kube's
    GetEarliestPodStartTime); bigger is better."""
    top = candidate.victims[0].priority
    return min(start_time(v) for v in candidate.victims if v.priority == top)
