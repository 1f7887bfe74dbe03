"""PodTopologySpread: spread a pod's group evenly over topology domains (kube v1.37).

What: PreFilter counts, per hard (``DoNotSchedule``) constraint of the incoming pod, the
matching pods in every topology domain over the nodes that pass the constraint's node
inclusion policies, and keeps the global minimum; Filter rejects a node whose domain would
exceed ``maxSkew``. PreScore/Score/NormalizeScore do the same for soft (``ScheduleAnyway``)
constraints, weighting each constraint by ``log(domains + 2)`` and reversing the counts so
that the emptiest domain scores highest.

Why like this: the arithmetic (integer skew, float weights rounded half away from zero,
integer normalization) follows kube-scheduler's podtopologyspread package so that our
decisions are kube's.

Default constraints, as kube: a pod without constraints of its own gets the default ones
(``defaultingType: System``: soft hostname maxSkew 3 and zone maxSkew 5; ``List``: the
configured ``defaultConstraints``), all with the pod's DefaultSelector
(``cache.workloads``: the Services of its namespace that select it, and the RC, ReplicaSet
or StatefulSet that controls it). An empty DefaultSelector means no default applies. Only
under System defaults may a node lack a topology key in PreScore: it then counts under the
empty value and its own Score leaves that constraint out (kube's ``requireAllTopologies``).

Sign (KEP-5598), a documented departure: a pod with constraints of its own, or one to
which default constraints apply, is unsignable; every other pod signs as ``()``. kube's
SignPod refuses every pod once defaults are configured (always, under System), even pods
nothing selects, such as a Job's; those read nothing here, so we batch them. A Service or
controller that comes or goes re-signs the queued pods of its namespace
(``Scheduler.resign``).

Cost (issue 19): the matching pods come from the snapshot's pod index (by namespace and
label), counted per NodeInfo: for a one-label selector the index keeps those counts, so a
cycle visits nodes, not pods; for others, the pods the selector matches. The number of
domains comes from the snapshot's node-label counts when every node has the keys and no
inclusion policy can exclude a node, otherwise from a scan of the nodes (not their pods).

Neighbours: framework.interfaces (the protocols implemented here), cache.node_info,
cache.snapshot and cache.workloads (what is counted, and the DefaultSelector),
model.affinity (TopologySpreadConstraint records), pod_topology_spread_args (the args).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from scheduler.framework import status as st
from scheduler.framework.cycle_state import StateKey
from scheduler.framework.events import ClusterEvent
from scheduler.framework.interfaces import MAX_NODE_SCORE, ExactOnly
from scheduler.plugins import names, score_math, spread_exact
from scheduler.plugins.pod_topology_spread_args import (
    DO_NOT_SCHEDULE,
    HONOR,
    IGNORE,
    LABEL_HOSTNAME,
    LIST_DEFAULTING,
    SCHEDULE_ANYWAY,
    SYSTEM_DEFAULTING,
    DefaultConstraint,
    effective_defaults,
    parse_args,
)
from scheduler.plugins.spread_constraints import (
    Constraint,
    eligible_domains,
    from_default,
    has_all_keys,
    inclusion_matters,
    node_included,
    own_constraints,
    pods_by_node_info,
    topology_weights,
)

if TYPE_CHECKING:
    from collections.abc import Hashable, Sequence

    from scheduler.cache.node_info import NodeInfo
    from scheduler.cache.snapshot import Snapshot
    from scheduler.cache.workloads import Workloads
    from scheduler.framework.cycle_state import CycleState
    from scheduler.framework.interfaces import Handle, PluginArgs
    from scheduler.model.pod import Pod

__all__ = [
    "DO_NOT_SCHEDULE",
    "HONOR",
    "IGNORE",
    "LABEL_HOSTNAME",
    "LIST_DEFAULTING",
    "NAME",
    "SCHEDULE_ANYWAY",
    "SYSTEM_DEFAULTING",
    "DefaultConstraint",
    "PodTopologySpread",
]

NAME = names.POD_TOPOLOGY_SPREAD

ERR_REASON_CONSTRAINTS_NOT_MATCH = "node(s) didn't match pod topology spread constraints"
ERR_REASON_NODE_LABEL_NOT_MATCH = ERR_REASON_CONSTRAINTS_NOT_MATCH + " (missing required label)"

# Filter's verdicts, stamped already, so that rejecting a node allocates nothing.
_MISSING_LABEL = st.unresolvable(ERR_REASON_NODE_LABEL_NOT_MATCH).with_plugin(NAME)
_SKEWED = st.unschedulable(ERR_REASON_CONSTRAINTS_NOT_MATCH).with_plugin(NAME)

_MAX_INT32 = 2**31 - 1


@dataclass(frozen=True, slots=True)
class _PreFilterState:
    """Per hard constraint: matching pods by topology value (domains without any left out),
    how many domains the eligible nodes form, and the global minimum."""

    constraints: tuple[Constraint, ...]
    counts: tuple[dict[str, int], ...]
    domains: tuple[int, ...]
    minimums: tuple[int, ...]
    checks: tuple[tuple[str, dict[str, int], int], ...]
    """Per constraint (topology key, counts, limit): Filter rejects a node whose domain
    holds more than ``limit`` matching pods. ``limit`` is maxSkew + the global minimum (0
    with fewer domains than minDomains) - 1 if the pod matches its own selector, which is
    kube's ``count + selfMatch - minimum > maxSkew`` with everything but the count known
    once per cycle."""


@dataclass(frozen=True, slots=True)
class _PreScoreState:
    """Per soft constraint: matching pods by topology value (hostname counted in Score),
    the constraint's weight, and the filtered nodes that lack a topology key."""

    constraints: tuple[Constraint, ...]
    counts: tuple[dict[str, int], ...]
    weights: tuple[float, ...]
    ignored_nodes: frozenset[str]
    host_counts: tuple[dict[str, int], ...] = ()
    """Per hostname constraint: matching pods by node name, whatever the node's policies
    (what Score counts on each node; empty for other keys)."""


_PRE_FILTER_KEY: StateKey[_PreFilterState] = StateKey("PreFilter" + NAME)
_PRE_SCORE_KEY: StateKey[_PreScoreState] = StateKey("PreScore" + NAME)
_EXACT_KEY: StateKey[spread_exact.SoftCounts] = StateKey("Exact" + NAME)


_EVENTS: Final = (
    ClusterEvent.NODE_ADD,
    ClusterEvent.NODE_UPDATE,
    ClusterEvent.NODE_DELETE,
    ClusterEvent.ASSIGNED_POD_ADD,
    ClusterEvent.ASSIGNED_POD_LABEL_UPDATE,
    ClusterEvent.ASSIGNED_POD_DELETE,
)
"""The cluster events that may undo a rejection (see :meth:`events_to_register`)."""


class PodTopologySpread:
    """kube's PodTopologySpread: PreFilter, Filter, PreScore, Score, NormalizeScore, Sign."""

    name: str = NAME

    def __init__(self, args: PluginArgs, handle: Handle) -> None:
        self._handle = handle
        self.defaulting_type, configured = parse_args(args)
        self.default_constraints = effective_defaults(self.defaulting_type, configured)
        """What a pod without constraints of its own gets (kube's pl.defaultConstraints)."""
        self._system_defaulted = self.defaulting_type == SYSTEM_DEFAULTING
        self._defaults_by_action = {
            action: tuple(c for c in self.default_constraints if c.when_unsatisfiable == action)
            for action in (DO_NOT_SCHEDULE, SCHEDULE_ANYWAY)
        }

    def events_to_register(self) -> tuple[ClusterEvent, ...]:
        """kube: AssignedPod/Add|UpdatePodLabel|Delete,
        Node/Add|Delete|UpdateNodeLabel|UpdateNodeTaint."""
        return _EVENTS

    def _constraints(self, pod: Pod, action: str, workloads: Workloads) -> tuple[Constraint, ...]:
        """kube's getConstraints: the pod's own constraints with ``whenUnsatisfiable ==
        action``; without any, the default ones with the pod's DefaultSelector (none when
        that selector is empty)."""
        if pod.topology_spread_constraints:
            return own_constraints(pod, action)
        defaults = self._defaults_by_action[action]
        if not defaults:
            return ()
        selector = workloads.default_selector(pod)
        if selector.empty:
            return ()
        return tuple(from_default(c, selector) for c in defaults)

    # -- PreFilter / Filter (DoNotSchedule) -------------------------------------------------

    def pre_filter(
        self, state: CycleState, pod: Pod, snapshot: Snapshot
    ) -> tuple[frozenset[str] | None, st.Status]:
        """Count matching pods per domain for the hard constraints; Skip without any."""
        constraints = self._constraints(pod, DO_NOT_SCHEDULE, snapshot.workloads)
        if not constraints:
            return None, st.SKIP
        domains = eligible_domains(pod, constraints, snapshot)
        counts: tuple[dict[str, int], ...] = tuple({} for _ in constraints)
        for i, c in enumerate(constraints):
            # Per NodeInfo from the pod index (kept counts or matching pods), not every pod.
            counted = counts[i]
            check = inclusion_matters(c, pod)
            for info, n in pods_by_node_info(snapshot, c, pod.namespace).items():
                node = info.node
                if node is None or not has_all_keys(node.labels, constraints):
                    continue
                if check and not node_included(c, pod, node):
                    continue
                value = node.labels[c.topology_key]
                counted[value] = counted.get(value, 0) + n
        state.write(_PRE_FILTER_KEY, _filter_state(pod, constraints, counts, domains))
        return None, st.SUCCESS

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> st.Status:
        """Reject a node without every topology key, or whose domain would exceed maxSkew."""
        s = state.read(_PRE_FILTER_KEY)
        if s is None:
            return st.error(f'reading "PreFilter{NAME}" from cycleState: not found')
        node = node_info.node
        if node is None:
            return st.error("node not found")
        labels = node.labels
        for key, counts, limit in s.checks:
            value = labels.get(key)
            if value is None:
                return _MISSING_LABEL
            if counts.get(value, 0) > limit:
                return _SKEWED
        return st.SUCCESS

    # -- PreFilterExtensions ----------------------------------------------------------------

    def add_pod(self, state: CycleState, pod: Pod, to_add: Pod, node_info: NodeInfo) -> st.Status:
        """Count ``to_add`` in its domains (kube's AddPod)."""
        _update(state, pod, to_add, node_info, 1)
        return st.SUCCESS

    def remove_pod(
        self, state: CycleState, pod: Pod, to_remove: Pod, node_info: NodeInfo
    ) -> st.Status:
        """Stop counting ``to_remove`` in its domains (kube's RemovePod)."""
        _update(state, pod, to_remove, node_info, -1)
        return st.SUCCESS

    # -- PreScore / Score / NormalizeScore (ScheduleAnyway) ---------------------------------

    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> st.Status:
        """Count matching pods per domain seen among ``nodes``; Skip without soft constraints."""
        snapshot = self._handle.snapshot
        all_nodes = snapshot.node_infos
        if not all_nodes:
            return st.SKIP
        constraints = self._constraints(pod, SCHEDULE_ANYWAY, snapshot.workloads)
        if not constraints:
            return st.SKIP
        # Nodes need every topology key, except under the System defaults: then a node
        # without the zone label still gets hostname spreading, its zone counting as "".
        require_all = bool(pod.topology_spread_constraints) or not self._system_defaulted
        kept = [info.node for info in nodes if info.node is not None]
        ignored: set[str] = set()
        if require_all:
            ignored = {n.name for n in kept if not has_all_keys(n.labels, constraints)}
            if ignored:
                kept = [n for n in kept if n.name not in ignored]
        # Every domain's count (as the exact path keeps them), then the domains of the
        # filtered nodes only; the hostname domain is counted per node in Score.
        every = spread_exact.count_soft(pod, constraints, require_all, snapshot)
        counts = tuple(
            {}
            if c.topology_key == LABEL_HOSTNAME
            else {
                value: every.counts[i].get(value, 0)
                for value in {n.labels.get(c.topology_key, "") for n in kept}
            }
            for i, c in enumerate(constraints)
        )
        weights = topology_weights(
            constraints, [len(counted) for counted in counts], len(nodes) - len(ignored)
        )
        state.write(
            _PRE_SCORE_KEY,
            _PreScoreState(constraints, counts, weights, frozenset(ignored), every.host_counts),
        )
        return st.SUCCESS

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        """Weighted matching-pod count of the node's domains (lower is better until normalized)."""
        return self.score_nodes(state, pod, (node_info,))[0]

    def score_nodes(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> list[int]:
        """``score`` of each node, the state read and each constraint's lookups once."""
        s = state.read(_PRE_SCORE_KEY)
        if s is None:
            return [0] * len(nodes)
        terms = [
            # maxSkew - 1 waters down differences between domains (kube's scoreForCount).
            (c.topology_key, host, s.host_counts[i] if host else s.counts[i], float(c.max_skew - 1))
            for i, c in enumerate(s.constraints)
            for host in (c.topology_key == LABEL_HOSTNAME,)
        ]
        ignored = s.ignored_nodes
        scores: list[int] = []
        for info in nodes:
            node = info.node
            if node is None or node.name in ignored:
                scores.append(0)
                continue
            labels = node.labels
            total = 0.0
            for (key, host, counted, watered), weight in zip(terms, s.weights, strict=True):
                value = labels.get(key)
                if value is not None:
                    found = counted.get(node.name if host else value, 0)
                    total += float(found) * weight + watered
            scores.append(score_math.round_half_away(total))
        return scores

    def normalize_score(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo], scores: list[int]
    ) -> st.Status:
        """Reverse min-max scaling: the least crowded node gets 100; ignored nodes get 0."""
        s = state.read(_PRE_SCORE_KEY)
        if s is None:
            return st.SUCCESS
        ignored = [info.name in s.ignored_nodes for info in nodes]
        counted = [score for score, skip in zip(scores, ignored, strict=True) if not skip]
        min_score = min(counted, default=0)
        max_score = max(counted, default=0)
        for i, skip in enumerate(ignored):
            if skip:
                scores[i] = 0
            elif max_score == 0:
                scores[i] = MAX_NODE_SCORE
            else:
                # Integer division as in Go; every operand is non-negative.
                scores[i] = MAX_NODE_SCORE * (max_score + min_score - scores[i]) // max_score
        return st.SUCCESS

    # -- Sign (KEP-5598) --------------------------------------------------------------------

    def sign_pod(self, pod: Pod) -> Hashable | None:
        """When constraints apply (its own, or defaults with a non-empty DefaultSelector),
        an exact-only fragment: the namespace, the resolved constraints of both kinds
        (selectors after matchLabelKeys or the DefaultSelector), whether each selects the
        pod itself, and what the inclusion policies read of the pod. Otherwise the plugin
        reads nothing of the pod."""
        workloads = self._handle.snapshot.workloads
        hard = self._constraints(pod, DO_NOT_SCHEDULE, workloads)
        soft = self._constraints(pod, SCHEDULE_ANYWAY, workloads)
        if not hard and not soft:
            return ()
        policies = (
            tuple(sorted(pod.node_selector.items())),
            repr(pod.required_node_affinity),
            repr(sorted(map(repr, pod.tolerations))),
        )
        return ExactOnly(
            (
                "PodTopologySpread/exact",
                pod.namespace,
                bool(pod.topology_spread_constraints),
                tuple((repr(c), c.selects(pod.labels)) for c in hard),
                tuple((repr(c), c.selects(pod.labels)) for c in soft),
                policies,
            )
        )

    # -- the exact batch (framework.interfaces.ExactDomainPlugin) ---------------------------

    def exact_begin(self, state: CycleState, pod: Pod) -> bool:
        """Count the soft constraints over every domain; the hard ones are PreFilter's."""
        snapshot = self._handle.snapshot
        hard = state.read(_PRE_FILTER_KEY)
        keys = [c.topology_key for c in hard.constraints] if hard is not None else []
        soft = self._constraints(pod, SCHEDULE_ANYWAY, snapshot.workloads)
        if LABEL_HOSTNAME in keys and not spread_exact.unique_hostnames(snapshot):
            return False
        require_all = bool(pod.topology_spread_constraints) or not self._system_defaulted
        state.write(_EXACT_KEY, spread_exact.count_soft(pod, soft, require_all, snapshot))
        return True

    def exact_update(
        self, state: CycleState, pod: Pod, other: Pod, node_info: NodeInfo, delta: int
    ) -> bool:
        _update(state, pod, other, node_info, delta)
        soft = state.read(_EXACT_KEY)
        if soft is not None and soft.constraints:
            spread_exact.update_soft(soft, pod, other, node_info, delta)
        return True

    def exact_node_key(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Hashable:
        node = node_info.node
        if node is None:
            return None
        hard = state.read(_PRE_FILTER_KEY)
        soft = state.read(_EXACT_KEY)
        return (
            spread_exact.hard_node_key(hard.checks, node.labels) if hard is not None else (),
            spread_exact.soft_node_key(soft, node.labels, node.name)
            if soft is not None and soft.constraints
            else (),
        )

    def exact_pre_score(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo], sizes: Sequence[int]
    ) -> st.Status:
        """PreScore for a scored set of ``sum(sizes)`` nodes, ``sizes[i]`` of them equal to
        ``nodes[i]``: the domains they cover and their number give the weights; the counts
        are the live ones (a scored node reads only its own domain)."""
        soft = state.read(_EXACT_KEY)
        if soft is None or not soft.constraints or not self._handle.snapshot.node_infos:
            return st.SKIP
        ignored, scored, domains = spread_exact.scored_domains(soft, nodes, sizes)
        weights = topology_weights(soft.constraints, domains, scored)
        state.write(
            _PRE_SCORE_KEY,
            _PreScoreState(soft.constraints, soft.counts, weights, ignored, soft.host_counts),
        )
        return st.SUCCESS


# -- helpers ------------------------------------------------------------------------------


def _filter_state(
    pod: Pod,
    constraints: tuple[Constraint, ...],
    counts: tuple[dict[str, int], ...],
    domains: tuple[int, ...],
) -> _PreFilterState:
    """The PreFilter state from the counts: the global minimums and Filter's limits."""
    # kube's critical path [0] starts at MaxInt32; with no domain at all the minimum is
    # replaced by 0 in Filter anyway (fewer domains than minDomains >= 1). A domain
    # without matching pods makes the minimum 0.
    minimums = tuple(
        0 if len(counted) < size else min(counted.values(), default=_MAX_INT32)
        for counted, size in zip(counts, domains, strict=True)
    )
    checks = tuple(
        (
            c.topology_key,
            counts[i],
            c.max_skew
            + (minimums[i] if domains[i] >= c.min_domains else 0)
            - (1 if c.selects(pod.labels) else 0),
        )
        for i, c in enumerate(constraints)
    )
    return _PreFilterState(constraints, counts, domains, minimums, checks)


def _update(state: CycleState, pod: Pod, other: Pod, node_info: NodeInfo, delta: int) -> None:
    """kube's updateWithPod: move ``other``'s count in the domains of its node by ``delta``,
    counting exactly what PreFilter counts; a new state value is written (the old one may
    be shared by a clone)."""
    s = state.read(_PRE_FILTER_KEY)
    node = node_info.node
    if s is None or node is None or other.namespace != pod.namespace or other.deleting:
        return
    if not has_all_keys(node.labels, s.constraints):
        return
    counts = list(s.counts)
    changed = False
    for i, c in enumerate(s.constraints):
        selector = c.selector
        if selector is None or selector.empty or not selector.matches(other.labels):
            continue
        if inclusion_matters(c, pod) and not node_included(c, pod, node):
            continue
        value = node.labels[c.topology_key]
        counted = dict(counts[i])
        total = counted.get(value, 0) + delta
        if total > 0:
            counted[value] = total
        else:
            counted.pop(value, None)
        counts[i] = counted
        changed = True
    if changed:
        state.write(_PRE_FILTER_KEY, _filter_state(pod, s.constraints, tuple(counts), s.domains))
