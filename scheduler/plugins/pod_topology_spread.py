"""PodTopologySpread: spread a pod's group evenly over topology domains (kube v1.35).

What: PreFilter counts, per hard (``DoNotSchedule``) constraint of the incoming pod, the
matching pods in every topology domain over the nodes that pass the constraint's node
inclusion policies, and keeps the global minimum; Filter rejects a node whose domain would
exceed ``maxSkew``. PreScore/Score/NormalizeScore do the same for soft (``ScheduleAnyway``)
constraints, weighting each constraint by ``log(domains + 2)`` and reversing the counts so
that the emptiest domain scores highest. Sign: a pod with constraints is unsignable.

Why like this: the arithmetic (integer skew, float weights rounded half away from zero,
integer normalization) follows kube-scheduler's podtopologyspread package so that our
decisions are kube's.

Default constraints: kube applies ``defaultConstraints`` (or, with ``defaultingType:
System``, its built-in hostname/zone pair) only to pods without constraints of their own,
and builds their selector from the Services, ReplicationControllers, ReplicaSets and
StatefulSets that select the pod. We do not watch those objects, so no default constraint
is ever applied here: with ``System`` there is nothing to apply, and with ``List`` a pod
without constraints is treated as having none. Such pods stay unsignable under ``List``
(KEP-5598: a pod is unsignable when constraints are set or defaults are configured), so
batching never groups pods whose placement kube would spread. Under ``System`` kube's
SignPod also refuses every pod (its built-in defaults count as configured); we sign such
pods, because here no default ever applies and the plugin reads nothing of them.

Neighbours: framework.interfaces (the protocols implemented here), cache.node_info and
cache.snapshot (what is counted), model.affinity (TopologySpreadConstraint records).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from scheduler.framework import status as st
from scheduler.framework.cycle_state import StateKey
from scheduler.framework.interfaces import MAX_NODE_SCORE
from scheduler.model.taints import Effect

if TYPE_CHECKING:
    from collections.abc import Hashable, Iterable, Sequence

    from scheduler.cache.node_info import NodeInfo
    from scheduler.cache.snapshot import Snapshot
    from scheduler.framework.cycle_state import CycleState
    from scheduler.framework.interfaces import Handle, PluginArgs
    from scheduler.model.labels import LabelSelector
    from scheduler.model.node import Node
    from scheduler.model.pod import Pod

NAME = "PodTopologySpread"

ERR_REASON_CONSTRAINTS_NOT_MATCH = "node(s) didn't match pod topology spread constraints"
ERR_REASON_NODE_LABEL_NOT_MATCH = ERR_REASON_CONSTRAINTS_NOT_MATCH + " (missing required label)"

DO_NOT_SCHEDULE = "DoNotSchedule"
SCHEDULE_ANYWAY = "ScheduleAnyway"
HONOR = "Honor"
IGNORE = "Ignore"
SYSTEM_DEFAULTING = "System"
LIST_DEFAULTING = "List"
LABEL_HOSTNAME = "kubernetes.io/hostname"

_MAX_INT32 = 2**31 - 1
_ARGS = "PodTopologySpreadArgs"
_BLOCKING_EFFECTS = (Effect.NO_SCHEDULE, Effect.NO_EXECUTE)


@dataclass(frozen=True, slots=True)
class _Constraint:
    """A constraint as the plugin uses it: defaults resolved (minDomains 1, policies)."""

    max_skew: int
    topology_key: str
    selector: LabelSelector | None
    min_domains: int
    honor_node_affinity: bool
    honor_node_taints: bool

    def selects(self, labels: Mapping[str, str]) -> bool:
        # A nil selector matches nothing (metav1.LabelSelectorAsSelector(nil)).
        return self.selector is not None and self.selector.matches(labels)


@dataclass(frozen=True, slots=True)
class _PreFilterState:
    """Per hard constraint: matching pods by topology value, and the global minimum."""

    constraints: tuple[_Constraint, ...]
    counts: tuple[dict[str, int], ...]
    minimums: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class _PreScoreState:
    """Per soft constraint: matching pods by topology value (hostname counted in Score),
    the constraint's weight, and the filtered nodes that lack a topology key."""

    constraints: tuple[_Constraint, ...]
    counts: tuple[dict[str, int], ...]
    weights: tuple[float, ...]
    ignored_nodes: frozenset[str]


_PRE_FILTER_KEY: StateKey[_PreFilterState] = StateKey("PreFilter" + NAME)
_PRE_SCORE_KEY: StateKey[_PreScoreState] = StateKey("PreScore" + NAME)


class PodTopologySpread:
    """kube's PodTopologySpread: PreFilter, Filter, PreScore, Score, NormalizeScore, Sign."""

    name: str = NAME

    def __init__(self, args: PluginArgs, handle: Handle) -> None:
        self._handle = handle
        self.defaulting_type, self.default_constraints = _parse_args(args)

    # -- PreFilter / Filter (DoNotSchedule) -------------------------------------------------

    def pre_filter(
        self, state: CycleState, pod: Pod, snapshot: Snapshot
    ) -> tuple[frozenset[str] | None, st.Status]:
        """Count matching pods per domain for the hard constraints; Skip without any."""
        constraints = _constraints_of(pod, DO_NOT_SCHEDULE)
        if not constraints:
            return None, st.SKIP
        counts: tuple[dict[str, int], ...] = tuple({} for _ in constraints)
        for info in snapshot.node_infos:
            node = info.node
            if node is None or not _has_all_keys(node.labels, constraints):
                continue
            for i, c in enumerate(constraints):
                if not _node_included(c, pod, node):
                    continue
                value = node.labels[c.topology_key]
                found = _count_matching(info.pods.values(), c, pod.namespace)
                counts[i][value] = counts[i].get(value, 0) + found
        # kube's critical path [0] starts at MaxInt32; with no domain at all the minimum is
        # replaced by 0 in Filter anyway (fewer domains than minDomains >= 1).
        minimums = tuple(min(c.values(), default=_MAX_INT32) for c in counts)
        state.write(_PRE_FILTER_KEY, _PreFilterState(constraints, counts, minimums))
        return None, st.SUCCESS

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> st.Status:
        """Reject a node without every topology key, or whose domain would exceed maxSkew."""
        s = state.read(_PRE_FILTER_KEY)
        if s is None:
            return st.error(f'reading "PreFilter{NAME}" from cycleState: not found')
        node = node_info.node
        if node is None:
            return st.error("node not found")
        for i, c in enumerate(s.constraints):
            value = node.labels.get(c.topology_key)
            if value is None:
                return st.unresolvable(ERR_REASON_NODE_LABEL_NOT_MATCH)
            # With fewer eligible domains than minDomains the global minimum counts as 0.
            minimum = s.minimums[i] if len(s.counts[i]) >= c.min_domains else 0
            self_match = 1 if c.selects(pod.labels) else 0
            skew = s.counts[i].get(value, 0) + self_match - minimum
            if skew > c.max_skew:
                return st.unschedulable(ERR_REASON_CONSTRAINTS_NOT_MATCH)
        return st.SUCCESS

    # -- PreScore / Score / NormalizeScore (ScheduleAnyway) ---------------------------------

    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> st.Status:
        """Count matching pods per domain seen among ``nodes``; Skip without soft constraints."""
        all_nodes = self._handle.snapshot.node_infos
        if not all_nodes:
            return st.SKIP
        constraints = _constraints_of(pod, SCHEDULE_ANYWAY)
        if not constraints:
            return st.SKIP
        # Only domains that hold a filtered node are counted; the hostname domain is counted
        # per node in Score. kube requires every topology key on a node unless the
        # constraints came from the System defaults, which we never apply.
        counts: tuple[dict[str, int], ...] = tuple({} for _ in constraints)
        ignored: set[str] = set()
        for info in nodes:
            node = info.node
            if node is None:
                continue
            if not _has_all_keys(node.labels, constraints):
                ignored.add(node.name)
                continue
            for i, c in enumerate(constraints):
                if c.topology_key != LABEL_HOSTNAME:
                    counts[i].setdefault(node.labels[c.topology_key], 0)
        weights = tuple(
            _topology_weight(
                len(nodes) - len(ignored) if c.topology_key == LABEL_HOSTNAME else len(counts[i])
            )
            for i, c in enumerate(constraints)
        )
        for info in all_nodes:
            node = info.node
            if node is None or not _has_all_keys(node.labels, constraints):
                continue
            for i, c in enumerate(constraints):
                if not _node_included(c, pod, node):
                    continue
                value = node.labels[c.topology_key]
                if value not in counts[i]:
                    continue
                counts[i][value] += _count_matching(info.pods.values(), c, pod.namespace)
        state.write(
            _PRE_SCORE_KEY, _PreScoreState(constraints, counts, weights, frozenset(ignored))
        )
        return st.SUCCESS

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        """Weighted matching-pod count of the node's domains (lower is better until normalized)."""
        s = state.read(_PRE_SCORE_KEY)
        node = node_info.node
        if s is None or node is None or node.name in s.ignored_nodes:
            return 0
        total = 0.0
        for i, c in enumerate(s.constraints):
            value = node.labels.get(c.topology_key)
            if value is None:
                continue
            if c.topology_key == LABEL_HOSTNAME:
                found = _count_matching(node_info.pods.values(), c, pod.namespace)
            else:
                found = s.counts[i].get(value, 0)
            # maxSkew - 1 waters down differences between domains (kube's scoreForCount).
            total += float(found) * s.weights[i] + float(c.max_skew - 1)
        return _round_half_away(total)

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
        """Unsignable with constraints or configured default constraints; else nothing read."""
        if pod.topology_spread_constraints or self.default_constraints:
            return None
        return ()


# -- helpers ------------------------------------------------------------------------------


def _constraints_of(pod: Pod, action: str) -> tuple[_Constraint, ...]:
    """The pod's own constraints with ``whenUnsatisfiable == action`` (no defaults: see top)."""
    return tuple(
        _Constraint(
            max_skew=c.max_skew,
            topology_key=c.topology_key,
            selector=c.label_selector,
            min_domains=c.min_domains if c.min_domains is not None else 1,
            honor_node_affinity=c.node_affinity_policy == HONOR,
            honor_node_taints=c.node_taints_policy == HONOR,
        )
        for c in pod.topology_spread_constraints
        if c.when_unsatisfiable == action
    )


def _has_all_keys(labels: Mapping[str, str], constraints: tuple[_Constraint, ...]) -> bool:
    return all(c.topology_key in labels for c in constraints)


def _node_included(c: _Constraint, pod: Pod, node: Node) -> bool:
    """Node inclusion policies: nodeAffinityPolicy and nodeTaintsPolicy set to Honor."""
    if c.honor_node_affinity and not _matches_required_node_affinity(pod, node):
        return False
    if c.honor_node_taints:
        for taint in node.taints:
            if taint.effect in _BLOCKING_EFFECTS and not any(
                t.tolerates(taint) for t in pod.tolerations
            ):
                return False
    return True


def _matches_required_node_affinity(pod: Pod, node: Node) -> bool:
    """The pod's nodeSelector and required node affinity (kube's GetRequiredNodeAffinity)."""
    labels = node.labels
    for key, value in pod.node_selector.items():
        if labels.get(key) != value:
            return False
    required = pod.required_node_affinity
    return required is None or required.matches(labels, node.name)


def _count_matching(pods: Iterable[Pod], c: _Constraint, namespace: str) -> int:
    """Pods of ``namespace`` that the selector matches, terminating ones excluded (#87621)."""
    return sum(
        1 for p in pods if not p.deleting and p.namespace == namespace and c.selects(p.labels)
    )


def _topology_weight(size: int) -> float:
    """log(size + 2): counts in smaller topologies are not watered down by bigger ones."""
    return math.log(float(size + 2))


def _round_half_away(value: float) -> int:
    """Go's math.Round for a non-negative float (Python's round() rounds half to even)."""
    whole = math.floor(value)
    return int(whole) + (1 if value - whole >= 0.5 else 0)


# -- args ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class DefaultConstraint:
    """One ``defaultConstraints`` entry (validated; kept to decide signability)."""

    max_skew: int
    topology_key: str
    when_unsatisfiable: str


_CONSTRAINT_FIELDS = frozenset(
    {
        "maxSkew",
        "topologyKey",
        "whenUnsatisfiable",
        "labelSelector",
        "minDomains",
        "nodeAffinityPolicy",
        "nodeTaintsPolicy",
        "matchLabelKeys",
    }
)


def _parse_args(args: PluginArgs) -> tuple[str, tuple[DefaultConstraint, ...]]:
    """Validate PodTopologySpreadArgs as kube's ValidatePodTopologySpreadArgs does."""
    unknown = sorted(set(args) - {"apiVersion", "kind", "defaultingType", "defaultConstraints"})
    if unknown:
        raise ValueError(f"{_ARGS}: unknown field(s): {', '.join(unknown)}")
    defaulting = args.get("defaultingType", SYSTEM_DEFAULTING)
    if defaulting not in (SYSTEM_DEFAULTING, LIST_DEFAULTING):
        raise ValueError(
            f'{_ARGS}.defaultingType: unsupported value {defaulting!r}: must be "System" or "List"'
        )
    raw = args.get("defaultConstraints")
    if raw is None:
        raw = []
    if not isinstance(raw, list):
        raise ValueError(f"{_ARGS}.defaultConstraints: must be a list")
    if defaulting == SYSTEM_DEFAULTING and raw:
        raise ValueError(
            f'{_ARGS}.defaultingType: invalid value "System":'
            " when .defaultConstraints are not empty"
        )
    parsed: list[DefaultConstraint] = []
    for i, entry in enumerate(raw):
        parsed.append(_parse_default_constraint(f"{_ARGS}.defaultConstraints[{i}]", entry))
    seen: set[tuple[str, str]] = set()
    for i, c in enumerate(parsed):
        pair = (c.topology_key, c.when_unsatisfiable)
        if pair in seen:
            raise ValueError(
                f"{_ARGS}.defaultConstraints[{i}]: duplicate topologyKey {c.topology_key!r}"
                f" with whenUnsatisfiable {c.when_unsatisfiable!r}"
            )
        seen.add(pair)
    return str(defaulting), tuple(parsed)


def _parse_default_constraint(path: str, entry: object) -> DefaultConstraint:
    if not isinstance(entry, Mapping):
        raise ValueError(f"{path}: must be a mapping")
    unknown = sorted(str(k) for k in entry if k not in _CONSTRAINT_FIELDS)
    if unknown:
        raise ValueError(f"{path}: unknown field(s): {', '.join(unknown)}")
    max_skew = entry.get("maxSkew")
    if not isinstance(max_skew, int) or isinstance(max_skew, bool) or max_skew <= 0:
        raise ValueError(f"{path}.maxSkew: must be greater than zero")
    topology_key = entry.get("topologyKey")
    if not isinstance(topology_key, str) or not topology_key:
        raise ValueError(f"{path}.topologyKey: must be a non-empty string")
    when = entry.get("whenUnsatisfiable")
    if when not in (DO_NOT_SCHEDULE, SCHEDULE_ANYWAY):
        raise ValueError(
            f'{path}.whenUnsatisfiable: unsupported value {when!r}: must be "DoNotSchedule"'
            ' or "ScheduleAnyway"'
        )
    if entry.get("labelSelector") is not None:
        raise ValueError(
            f"{path}.labelSelector: forbidden: constraint must not define a selector,"
            " as they deduced for each pod"
        )
    for policy in ("nodeAffinityPolicy", "nodeTaintsPolicy"):
        value = entry.get(policy)
        if value is not None and value not in (HONOR, IGNORE):
            raise ValueError(
                f'{path}.{policy}: unsupported value {value!r}: must be "Honor" or "Ignore"'
            )
    min_domains = entry.get("minDomains")
    if min_domains is not None and (
        not isinstance(min_domains, int) or isinstance(min_domains, bool) or min_domains <= 0
    ):
        raise ValueError(f"{path}.minDomains: must be greater than zero")
    return DefaultConstraint(max_skew, topology_key, str(when))
