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

The dry run edits the live NodeInfo (takes the victims off and puts them back, PreFilter
re-run each time so pod affinity and spreading see the change, as kube's RemovePod/AddPod
extensions make them) and restores it before returning: it runs inside the await-free
cycle, so nothing else ever sees the edit. kube clones the NodeInfo instead; our snapshot
is live (cache/snapshot.py) and plugins read it beyond the one node.

Neighbours: ``plugins.default_preemption`` (the PostFilter plugin that drives this),
``framework.profile`` (the Handle whose ``refilter`` answers "does it fit now?").
"""

from __future__ import annotations

import datetime
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from scheduler.framework import status as st

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
    pod: Pod,
    info: NodeInfo,
    budgets: Sequence[PodDisruptionBudget],
) -> tuple[list[Pod], int, st.Status]:
    """The fewest pods of lower priority to evict from ``info`` for ``pod`` to fit
    (kube's SelectVictimsOnNode): take every lower-priority pod off; if the pod still does
    not fit, this node cannot help. Otherwise put them back one by one, most important
    first, budget-violating ones first, keeping each that still lets the pod fit.

    Returns (victims most important first, budget violations among them, status). The
    node is restored before returning, whatever happens.
    """
    lower = sorted(
        (other for other in info.pods.values() if other.priority < pod.priority),
        key=importance,
    )
    if not lower:
        return [], 0, st.unresolvable(NO_VICTIMS)
    off: dict[str, Pod] = {}
    try:
        for victim in lower:
            _take_off(handle, info, victim)
            off[victim.uid] = victim
        status = handle.refilter(pod, info)
        if not status.is_success:
            return [], 0, status
        violating, keeping = split_by_budget(lower, budgets)
        victims: list[Pod] = []
        violations = 0

        def reprieve(victim: Pod) -> bool:
            _put_back(handle, info, victim)
            del off[victim.uid]
            if handle.refilter(pod, info).is_success:
                return True
            _take_off(handle, info, victim)
            off[victim.uid] = victim
            victims.append(victim)
            return False

        for victim in violating:
            if not reprieve(victim):
                violations += 1
        for victim in keeping:
            reprieve(victim)
        if violating and keeping:
            victims.sort(key=importance)
        return victims, violations, st.SUCCESS
    finally:
        for victim in off.values():
            _put_back(handle, info, victim)


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
    (non-violating first) and the statuses of the nodes that are no candidate."""
    keeping: list[Candidate] = []
    violating: list[Candidate] = []
    statuses: dict[str, st.Status] = {}
    count = len(nodes)
    for step in range(count):
        info = nodes[(offset + step) % count]
        victims, violations, status = select_victims_on_node(handle, pod, info, budgets)
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


def _take_off(handle: Handle, info: NodeInfo, pod: Pod) -> None:
    info.remove_pod(pod.uid)
    if pod.has_pod_affinity or pod.has_pod_anti_affinity:
        handle.snapshot.track_affinity(info)


def _put_back(handle: Handle, info: NodeInfo, pod: Pod) -> None:
    info.add_pod(pod)
    if pod.has_pod_affinity or pod.has_pod_anti_affinity:
        handle.snapshot.track_affinity(info)
