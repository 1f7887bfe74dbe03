"""NodeAffinity: nodeSelector and required node affinity fence nodes off; preferred node
affinity scores them. ``addedAffinity`` in the args applies to every pod of the profile.

Port of kube-scheduler's plugins/nodeaffinity (v1.35). PreFilter returns the node names a
pod pins itself to through ``matchFields metadata.name In [...]`` in every required term
(kube's PreFilterResult), so the runner filters only those nodes; it returns Skip when
there is nothing to check. Filter checks addedAffinity first ("node(s) didn't match
scheduler-enforced node affinity"), then the pod's nodeSelector and required terms
("node(s) didn't match Pod's node affinity/selector"); both UnschedulableAndUnresolvable.
Score sums the weights of matching preferred terms; NormalizeScore scales by the maximum.
Neighbours: model.labels (matching records), score_math (normalization), plugin_args.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from scheduler.framework import status as st
from scheduler.framework.events import ClusterEvent
from scheduler.framework.interfaces import MAX_NODE_SCORE
from scheduler.model import parse_common
from scheduler.model.labels import (
    NodeSelector,
    NodeSelectorTerm,
    Operator,
    PreferredSchedulingTerm,
    Requirement,
)
from scheduler.plugins import names, plugin_args, score_math, signature_fragments

if TYPE_CHECKING:
    from collections.abc import Hashable, Mapping, Sequence

    from scheduler.cache.node_info import NodeInfo
    from scheduler.cache.snapshot import Snapshot
    from scheduler.framework.cycle_state import CycleState
    from scheduler.framework.interfaces import Handle, PluginArgs
    from scheduler.model.pod import Pod

ARGS: Final = "NodeAffinityArgs"
ERR_REASON_POD: Final = "node(s) didn't match Pod's node affinity/selector"
ERR_REASON_ENFORCED: Final = "node(s) didn't match scheduler-enforced node affinity"
ERR_REASON_CONFLICT: Final = "pod affinity terms conflict"
OBJECT_NAME_FIELD: Final = "metadata.name"

_REJECT_POD: Final = st.unresolvable(ERR_REASON_POD)
_REJECT_ENFORCED: Final = st.unresolvable(ERR_REASON_ENFORCED)
_REJECT_CONFLICT: Final = st.unresolvable(ERR_REASON_CONFLICT)

# -- addedAffinity: raw args → records ---------------------------------------------------------

_REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"
_PREFERRED = "preferredDuringSchedulingIgnoredDuringExecution"


def _parse_requirement(value: object, where: str, *, field: bool) -> Requirement:
    raw = plugin_args.as_mapping(value, where)
    plugin_args.check_fields(raw, where, ("key", "operator", "values"))
    key = plugin_args.as_str(raw.get("key", ""), f"{where}.key")
    op_name = plugin_args.as_str(raw.get("operator", ""), f"{where}.operator")
    values = tuple(
        plugin_args.as_str(v, f"{where}.values[{i}]")
        for i, v in enumerate(plugin_args.as_list(raw.get("values") or [], f"{where}.values"))
    )
    try:
        op = Operator(op_name)
    except ValueError:
        raise ValueError(f'{where}.operator: unknown value "{op_name}"') from None
    if field:
        if key != OBJECT_NAME_FIELD:
            raise ValueError(f'{where}.key: "{key}" is not a valid field selector key')
        if op not in (Operator.IN, Operator.NOT_IN):
            raise ValueError(
                f'{where}.operator: "{op_name}" is not a valid field selector operator'
            )
        if len(values) != 1:
            raise ValueError(f"{where}.values: must have one element for a field selector")
        return Requirement(key, op, values)
    if not parse_common.is_qualified_name(key):
        raise ValueError(f'{where}.key: invalid label key "{key}"')
    if op in (Operator.IN, Operator.NOT_IN) and not values:
        raise ValueError(f"{where}.values: must be specified when `operator` is 'In' or 'NotIn'")
    if op in (Operator.EXISTS, Operator.DOES_NOT_EXIST) and values:
        raise ValueError(
            f"{where}.values: may not be specified when `operator` is 'Exists' or 'DoesNotExist'"
        )
    if op in (Operator.GT, Operator.LT):
        if len(values) != 1:
            raise ValueError(
                f"{where}.values: must be specified single value when `operator` is 'Lt' or 'Gt'"
            )
        try:
            int(values[0])
        except ValueError:
            raise ValueError(f'{where}.values[0]: "{values[0]}" is not an integer') from None
    return Requirement(key, op, values)


def _parse_term(value: object, where: str) -> NodeSelectorTerm:
    raw = plugin_args.as_mapping(value, where)
    plugin_args.check_fields(raw, where, ("matchExpressions", "matchFields"))
    parts = []
    for name, is_field in (("matchExpressions", False), ("matchFields", True)):
        at = f"{where}.{name}"
        items = plugin_args.as_list(raw.get(name) or [], at)
        parts.append(
            tuple(_parse_requirement(v, f"{at}[{i}]", field=is_field) for i, v in enumerate(items))
        )
    return NodeSelectorTerm(parts[0], parts[1])


def parse_added_affinity(
    args: PluginArgs,
) -> tuple[NodeSelector | None, tuple[PreferredSchedulingTerm, ...]]:
    """``addedAffinity`` → (required selector or None, preferred terms); ValueError names
    the field."""
    plugin_args.check_fields(args, ARGS, ("addedAffinity",))
    raw = args.get("addedAffinity")
    if raw is None:
        return None, ()
    where = f"{ARGS}.addedAffinity"
    added = plugin_args.as_mapping(raw, where)
    plugin_args.check_fields(added, where, (_REQUIRED, _PREFERRED))
    required: NodeSelector | None = None
    if added.get(_REQUIRED) is not None:
        at = f"{where}.{_REQUIRED}"
        selector = plugin_args.as_mapping(added[_REQUIRED], at)
        plugin_args.check_fields(selector, at, ("nodeSelectorTerms",))
        at = f"{at}.nodeSelectorTerms"
        terms = plugin_args.as_list(selector.get("nodeSelectorTerms") or [], at)
        if not terms:
            raise ValueError(f"{at}: must have at least one node selector term")
        required = NodeSelector(tuple(_parse_term(t, f"{at}[{i}]") for i, t in enumerate(terms)))
    preferred = []
    at = f"{where}.{_PREFERRED}"
    for i, item in enumerate(plugin_args.as_list(added.get(_PREFERRED) or [], at)):
        entry = plugin_args.as_mapping(item, f"{at}[{i}]")
        plugin_args.check_fields(entry, f"{at}[{i}]", ("weight", "preference"))
        weight = plugin_args.as_int(entry.get("weight", 0), f"{at}[{i}].weight")
        if not 1 <= weight <= 100:
            raise ValueError(f"{at}[{i}].weight: {weight} must be in the range 1-100")
        term = _parse_term(entry.get("preference") or {}, f"{at}[{i}].preference")
        preferred.append(PreferredSchedulingTerm(weight, term))
    return required, tuple(preferred)


# -- canonical forms for sign_pod ----------------------------------------------------------------


def _requirement_form(r: Requirement) -> tuple[str, str, tuple[str, ...]]:
    # In/NotIn values are a set; Gt/Lt hold one number; Exists/DoesNotExist none.
    values = (
        tuple(sorted(set(r.values))) if r.operator in (Operator.IN, Operator.NOT_IN) else r.values
    )
    return (r.key, str(r.operator), values)


def _term_form(t: NodeSelectorTerm) -> Hashable:
    # Requirements are ANDed: order and repeats carry no meaning.
    return (
        tuple(sorted({_requirement_form(r) for r in t.match_expressions})),
        tuple(sorted({_requirement_form(r) for r in t.match_fields})),
    )


def _selector_form(selector: NodeSelector | None) -> Hashable:
    if selector is None:
        return None
    # Terms are ORed: a sorted set. (Hashable forms of strings compare; repr keeps it total.)
    return tuple(sorted({_term_form(t) for t in selector.terms}, key=repr))


def _preferred_form(terms: Sequence[PreferredSchedulingTerm]) -> Hashable:
    # Weights of matching terms add up, so repeats count: sorted, not deduplicated.
    return tuple(sorted(((p.weight, _term_form(p.term)) for p in terms), key=repr))


# -- the plugin ----------------------------------------------------------------------------------


def _matches_selector(selector: Mapping[str, str], labels: Mapping[str, str]) -> bool:
    # A nodeSelector entry needs the label present (an empty value does not match absence).
    for key, value in selector.items():
        if labels.get(key) != value or key not in labels:
            return False
    return True


def _preferred_score(
    terms: Sequence[PreferredSchedulingTerm], labels: Mapping[str, str], node_name: str
) -> int:
    total = 0
    for p in terms:
        if p.term.matches(labels, node_name):
            total += p.weight
    return total


_EVENTS: Final = (ClusterEvent.NODE_ADD, ClusterEvent.NODE_UPDATE)
"""The cluster events that may undo a rejection (see :meth:`events_to_register`)."""


class NodeAffinity:
    """PreFilter, Filter, PreScore, Score, NormalizeScore, Sign.

    Args (NodeAffinityArgs): ``addedAffinity: {requiredDuringSchedulingIgnoredDuringExecution:
    {nodeSelectorTerms: [...]}, preferredDuringSchedulingIgnoredDuringExecution: [...]}``.
    """

    name: str = names.NODE_AFFINITY

    def __init__(self, args: PluginArgs, handle: Handle) -> None:
        self.added_required, self.added_preferred = parse_added_affinity(args)
        self._added_form = (
            _selector_form(self.added_required),
            _preferred_form(self.added_preferred),
        )

    def events_to_register(self) -> tuple[ClusterEvent, ...]:
        """kube: Node/Add|UpdateNodeLabel."""
        return _EVENTS

    def pre_filter(
        self, state: CycleState, pod: Pod, snapshot: Snapshot
    ) -> tuple[frozenset[str] | None, st.Status]:
        required = pod.required_node_affinity
        if required is None and self.added_required is None and not pod.node_selector:
            return None, st.SKIP
        if required is None or not required.terms:
            return None, st.SUCCESS
        node_names: set[str] = set()
        for term in required.terms:
            term_names: set[str] | None = None
            for r in term.match_fields:
                if r.key == OBJECT_NAME_FIELD and r.operator == Operator.IN:
                    # Requirements are ANDed: intersect.
                    values = set(r.values)
                    term_names = values if term_names is None else term_names & values
            if term_names is None:
                return None, st.SUCCESS  # this term may match any node (terms are ORed)
            node_names |= term_names
        if not node_names:
            return None, _REJECT_CONFLICT
        return frozenset(node_names), st.SUCCESS

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> st.Status:
        node = node_info.node
        if node is None:
            return st.error("node not found")
        labels = node.labels
        added = self.added_required
        if added is not None and not added.matches(labels, node.name):
            return _REJECT_ENFORCED
        if pod.node_selector and not _matches_selector(pod.node_selector, labels):
            return _REJECT_POD
        required = pod.required_node_affinity
        if required is not None and not required.matches(labels, node.name):
            return _REJECT_POD
        return st.SUCCESS

    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> st.Status:
        if not pod.preferred_node_affinity and not self.added_preferred:
            return st.SKIP
        return st.SUCCESS

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        node = node_info.node
        if node is None:
            return 0
        total = 0
        if self.added_preferred:
            total += _preferred_score(self.added_preferred, node.labels, node.name)
        if pod.preferred_node_affinity:
            total += _preferred_score(pod.preferred_node_affinity, node.labels, node.name)
        return total

    def normalize_score(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo], scores: list[int]
    ) -> st.Status:
        score_math.default_normalize_score(MAX_NODE_SCORE, False, scores)
        return st.SUCCESS

    def sign_pod(self, pod: Pod) -> Hashable | None:
        value = (
            tuple(sorted(pod.node_selector.items())),
            _selector_form(pod.required_node_affinity),
            _preferred_form(pod.preferred_node_affinity),
            self._added_form,
        )
        return (signature_fragments.NODE_AFFINITY_SIGNER, value)
