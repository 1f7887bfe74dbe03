"""The Filter phase of a full pass: kube's ``findNodesThatPassFilters``, with its
``numFeasibleNodesToFind`` (adaptive percentageOfNodesToScore) and rotating
``nextStartNodeIndex`` (the ``Selector``, whose random source also breaks the Score phase's
ties: framework/scoring.py).

Nodes are filtered from the rotating start until ``num_feasible_nodes_to_find`` pass; each
rejected node's Status goes into the Diagnosis, the first rejecting plugin's, as kube's.

Unlike kube, a filling cluster does not make us run every Filter on every full node: a
plugin may offer a precheck (``FilterPrecheck``), a cheap test that is true only for nodes
its Filter rejects. Such a node is infeasible whatever the other plugins say, so it is
counted as processed (the rotation and ``evaluated`` are kube's) and its Status is computed
only when somebody reads the Diagnosis: when no node fits. A placed pod's Diagnosis is
never read (kube keeps only its size). One difference remains: a Filter that would have
returned Error on a prechecked node is not run while other nodes fit (kube would fail the
cycle); Filter errors are internal faults (a missing node, missing PreFilter state).

With the one-pod-per-node burst at 5000 nodes a full node costs one predicate call instead
of the Filter chain and a Status (docs/performance.md, issue 19).
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from scheduler.framework import status as st
from scheduler.framework.diagnosis import SchedulingError
from scheduler.framework.plugin_failures import plugin_raised, wrong_result

if TYPE_CHECKING:
    from scheduler.cache.node_info import NodeInfo
    from scheduler.framework.cycle_state import CycleState
    from scheduler.framework.diagnosis import Diagnosis
    from scheduler.framework.interfaces import FilterPlugin, FilterPrecheck, NominatedPods
    from scheduler.model.pod import Pod

Filter = Callable[["CycleState", "Pod", "NodeInfo"], st.Status]

MIN_FEASIBLE_NODES_TO_FIND = 100
MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND = 5


def num_feasible_nodes_to_find(percentage: int, num_all_nodes: int) -> int:
    """Stop filtering after this many feasible nodes (percentage 0 means adaptive)."""
    if num_all_nodes < MIN_FEASIBLE_NODES_TO_FIND:
        return num_all_nodes
    if percentage == 0:
        percentage = max(50 - num_all_nodes // 125, MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND)
    found = num_all_nodes * percentage // 100
    return max(found, MIN_FEASIBLE_NODES_TO_FIND)


@dataclass(slots=True)
class Selector:
    """The mutable part of node selection: the rotating start and the random source.

    A profile's full passes and batch hints share one; a verifying pass uses another, so that
    checking a decision never moves the start or the draws of the next real one.
    """

    rng: random.Random = field(default_factory=random.Random)
    next_start: int = 0


class Filters(Protocol):
    """What the Filter phase reads of a profile (framework.profile.Profile)."""

    @property
    def percentage_of_nodes_to_score(self) -> int: ...

    @property
    def filter_plugins(self) -> Sequence[FilterPlugin]: ...

    @property
    def filter_prechecks(self) -> Sequence[FilterPrecheck]: ...

    @property
    def nominator(self) -> NominatedPods | None: ...

    def run_filters_with_nominated_pods(
        self, state: CycleState, pod: Pod, node_info: NodeInfo
    ) -> st.Status: ...


def find_feasible(
    profile: Filters,
    state: CycleState,
    pod: Pod,
    nodes: list[NodeInfo],
    diagnosis: Diagnosis,
    selector: Selector,
    num_all: int,
) -> tuple[list[NodeInfo] | SchedulingError, int]:
    """Filter ``nodes`` (all ``num_all`` nodes, or those PreFilter left) from the rotating
    start until enough feasible nodes are found; also returns how many nodes were processed
    (prechecked ones included: kube's evaluated count). As kube's ``nextStartNodeIndex``, the
    start then moves on by that count, modulo all nodes, even when a Filter errs."""
    outcome, processed = _filter(profile, state, pod, nodes, diagnosis, selector.next_start)
    selector.next_start = (selector.next_start + processed) % num_all
    return outcome, processed


def _filter(
    profile: Filters,
    state: CycleState,
    pod: Pod,
    nodes: list[NodeInfo],
    diagnosis: Diagnosis,
    next_start: int,
) -> tuple[list[NodeInfo] | SchedulingError, int]:
    """The feasible nodes (or the first Filter error) and how many nodes were processed
    (kube's count: an erring node is not)."""
    count = len(nodes)
    if count == 0:
        return [], 0
    to_find = num_feasible_nodes_to_find(profile.percentage_of_nodes_to_score, count)
    skip = state.skip_filter_plugins
    filters = [(p.name, p.filter) for p in profile.filter_plugins if p.name not in skip]
    prechecks = [
        check
        for p in profile.filter_prechecks
        if p.name not in skip and (check := p.precheck(state, pod)) is not None
    ]
    rejects = prechecks[0] if len(prechecks) == 1 else _any_of(prechecks) if prechecks else None
    start = next_start % count
    feasible: list[NodeInfo] = []
    prechecked: list[NodeInfo] = []
    statuses = diagnosis.node_statuses
    success = st.SUCCESS
    status_type = st.Status
    ok = st.Code.SUCCESS
    error = st.Code.ERROR
    processed = 0
    busy: Collection[str] = (
        profile.nominator.nominated_node_names() if profile.nominator is not None else ()
    )
    # From the rotating start, wrapping around (two slices chained, not copied into a third
    # sequence: a pass over 5000 nodes usually stops after the first tenth).
    for info in itertools.chain(nodes[start:], nodes[:start]) if start else nodes:
        processed += 1
        if rejects is not None and rejects(info):
            prechecked.append(info)
            continue
        if busy and info.name in busy:
            # Pods are nominated here: the two passes (rare, so off the fast path).
            status = profile.run_filters_with_nominated_pods(state, pod, info)
            if status.is_success:
                feasible.append(info)
                if len(feasible) >= to_find:
                    break
                continue
            if status.code is error:
                return SchedulingError(pod.key, status.message()), processed - 1
            statuses[info.name] = status
            diagnosis.unschedulable_plugins.add(status.plugin)
            continue
        for name, run in filters:
            try:
                status = run(state, pod, info)
            except Exception as exc:  # a plugin's bug fails this pod's cycle, not the loop
                status = plugin_raised(name, "Filter", exc)
            if status is success:
                continue
            if type(status) is not status_type:  # the plugin's bug: an Error naming it
                status = wrong_result(name, "Filter", status, "a Status")
            if status.code is ok:
                continue
            if status.code is error:
                return SchedulingError(pod.key, status.message()), processed - 1
            statuses[info.name] = status
            diagnosis.unschedulable_plugins.add(name)
            break
        else:
            feasible.append(info)
            if len(feasible) >= to_find:
                break
    if feasible:
        return feasible, processed
    for info in prechecked:  # nothing fits: the Diagnosis will be read, make it kube's
        rejection, plugin = _rejection(profile, state, pod, info, filters, busy)
        if rejection.code is error:  # the loop would have stopped at this node
            before = (nodes.index(info) - start) % count
            return SchedulingError(pod.key, rejection.message()), before
        statuses[info.name] = rejection
        diagnosis.unschedulable_plugins.add(plugin)
    return feasible, processed


def _rejection(
    profile: Filters,
    state: CycleState,
    pod: Pod,
    info: NodeInfo,
    filters: Sequence[tuple[str, Filter]],
    busy: Collection[str],
) -> tuple[st.Status, str]:
    """The rejecting Status the loop would have recorded for ``info``, and the plugin it
    counts (never Success: a precheck only rejects nodes its Filter rejects)."""
    if busy and info.name in busy:
        status = profile.run_filters_with_nominated_pods(state, pod, info)
        return status, status.plugin
    for name, run in filters:
        try:
            status = run(state, pod, info)
        except Exception as exc:  # as in the loop above
            status = plugin_raised(name, "Filter", exc)
        if type(status) is not st.Status:
            status = wrong_result(name, "Filter", status, "a Status")
        if not status.is_success:
            return status, name
    raise AssertionError(f"a Filter precheck rejected node {info.name!r}, which passes")


def _any_of(checks: list[Callable[[NodeInfo], bool]]) -> Callable[[NodeInfo], bool]:
    def rejects(info: NodeInfo) -> bool:
        return any(check(info) for check in checks)

    return rejects
