"""InterPodAffinity: required and preferred pod (anti-)affinity, both ways (kube v1.35).

What: PreFilter counts, by topology pair (key, value), (1) existing pods whose required
anti-affinity terms match the incoming pod, (2) existing pods that match all of the incoming
pod's required affinity terms and (3) existing pods that match each of its required
anti-affinity terms; Filter checks a node's labels against those counts. PreScore sums, by
topology pair, the weights of the incoming pod's preferred terms matched by existing pods
and of existing pods' terms matched by the incoming pod (their required affinity counting
``hardPodAffinityWeight``); Score reads the node's pairs and NormalizeScore scales min-max.

Why like this: kube-scheduler's interpodaffinity package computes exactly these maps, so the
same counts give the same decisions, including the "first pod of a group" rule (a pod whose
affinity matches itself may go where no matching pod exists yet, if none exists anywhere).

Namespaces: a term names its namespaces (the parser puts the owner's namespace there when
the API term names none) and may carry a namespaceSelector. kube resolves the incoming
pod's selectors into names through its namespace lister; we evaluate the selector against
``snapshot.namespace_labels`` of the namespace of the pod being matched, which is the same
test for every namespace the snapshot knows. In both directions the labels consulted are
those of the matched pod's namespace.

Sign (KEP-5598): a pod with any pod (anti-)affinity term is unsignable; otherwise its
namespace and labels are what existing pods' terms read, and form the fragment (less the
per-pod identity labels no term reads: cache/identity_labels.py); a pod the exact batch
serves signs only the labels some known term reads (``NarrowedForExact``).

Cost (issue 19): existing pods a term of the incoming pod reads are found through the
snapshot's pod index (by namespace and label), and existing pods' own terms through its term
index (each distinct term once, with the nodes whose pods carry it and how often); no cycle
walks every pod.

Neighbours: framework.interfaces (protocols), cache.snapshot (namespace labels, pod_index),
cache.term_index (existing pods' terms by term), model.affinity (terms).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from scheduler.framework import status as st
from scheduler.framework.cycle_state import StateKey
from scheduler.framework.events import ClusterEvent
from scheduler.framework.interfaces import MAX_NODE_SCORE, ExactOnly, NarrowedForExact
from scheduler.plugins import affinity_counts as counts
from scheduler.plugins import affinity_exact, names
from scheduler.plugins.affinity_exact import matches_all as _matches_all
from scheduler.plugins.affinity_exact import term_matches as _term_matches

if TYPE_CHECKING:
    from collections.abc import Hashable, Sequence

    from scheduler.cache.node_info import NodeInfo
    from scheduler.cache.snapshot import Snapshot
    from scheduler.framework.cycle_state import CycleState
    from scheduler.framework.interfaces import Handle, PluginArgs
    from scheduler.model.node import Node
    from scheduler.model.pod import Pod

NAME = names.INTER_POD_AFFINITY

ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH = (
    "node(s) didn't satisfy existing pods anti-affinity rules"
)
ERR_REASON_AFFINITY_RULES_NOT_MATCH = "node(s) didn't match pod affinity rules"
ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH = "node(s) didn't match pod anti-affinity rules"

# Filter's verdicts, stamped already, so that rejecting a node allocates nothing.
_AFFINITY_NOT_MATCH = st.unresolvable(ERR_REASON_AFFINITY_RULES_NOT_MATCH).with_plugin(NAME)
_ANTI_AFFINITY_NOT_MATCH = st.unschedulable(ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH).with_plugin(
    NAME
)
_EXISTING_ANTI_AFFINITY_NOT_MATCH = st.unschedulable(
    ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH
).with_plugin(NAME)

DEFAULT_HARD_POD_AFFINITY_WEIGHT = 1
_ARGS = "InterPodAffinityArgs"

TopologyPair = counts.TopologyPair
"""(topology key, topology value)."""


@dataclass(frozen=True, slots=True)
class _PreFilterState:
    existing_anti_affinity: dict[TopologyPair, int]
    """Existing pods whose required anti-affinity terms match the incoming pod."""
    affinity: dict[TopologyPair, int]
    """Existing pods matching all the incoming pod's required affinity terms."""
    anti_affinity: dict[TopologyPair, int]
    """Existing pods matching each of the incoming pod's required anti-affinity terms."""
    matches_own_affinity: bool
    """The incoming pod matches all of its own required affinity terms (first-pod rule)."""


@dataclass(frozen=True, slots=True)
class _PreScoreState:
    topology_score: dict[str, dict[str, int]]
    """Topology key → topology value → summed weights."""


_PRE_FILTER_KEY: StateKey[_PreFilterState] = StateKey("PreFilter" + NAME)
_PRE_SCORE_KEY: StateKey[_PreScoreState] = StateKey("PreScore" + NAME)


@dataclass(frozen=True, slots=True)
class _ExactState:
    """The exact batch's live PreScore credits and the topology keys of the existing pods'
    anti-affinity map when it began (a new one changes node keys)."""

    credits: affinity_exact.Credits
    existing_keys: frozenset[str]


_EXACT_KEY: StateKey[_ExactState] = StateKey("Exact" + NAME)


_EVENTS: Final = (
    ClusterEvent.NODE_ADD,
    ClusterEvent.NODE_UPDATE,
    ClusterEvent.ASSIGNED_POD_ADD,
    ClusterEvent.ASSIGNED_POD_LABEL_UPDATE,
    ClusterEvent.ASSIGNED_POD_DELETE,
)
"""The cluster events that may undo a rejection (see :meth:`events_to_register`)."""


class InterPodAffinity:
    """kube's InterPodAffinity: PreFilter, Filter, PreScore, Score, NormalizeScore, Sign."""

    name: str = NAME

    def __init__(self, args: PluginArgs, handle: Handle) -> None:
        self._handle = handle
        self.hard_pod_affinity_weight, self.ignore_preferred_terms_of_existing_pods = _parse_args(
            args
        )

    # -- PreFilter / Filter -----------------------------------------------------------------

    def events_to_register(self) -> tuple[ClusterEvent, ...]:
        """kube: AssignedPod/Add|UpdatePodLabel|Delete, Node/Add|UpdateNodeLabel."""
        return _EVENTS

    def pre_filter(
        self, state: CycleState, pod: Pod, snapshot: Snapshot
    ) -> tuple[frozenset[str] | None, st.Status]:
        """Count topology pairs for both directions; Skip when nothing can reject a node."""
        existing: dict[TopologyPair, int] = {}
        # Existing pods' required anti-affinity: each distinct term checked once, its
        # holders credited by count (cache/term_index.py), not a walk over every such pod.
        for term, holders in snapshot.pod_index.terms.required_anti_affinity.items():
            if _term_matches(term, pod, snapshot):
                for info, count in holders.items():
                    if info.node is not None:
                        counts.add(existing, info.node, term.topology_key, count)

        affinity_terms = pod.required_pod_affinity
        anti_terms = pod.required_pod_anti_affinity
        affinity: dict[TopologyPair, int] = {}
        anti_affinity: dict[TopologyPair, int] = {}
        # Existing pods matching the pod's terms come from the pod index, not a scan.
        if affinity_terms:
            first, rest = affinity_terms[0], affinity_terms[1:]
            for other, info in counts.matching(first, snapshot):
                node = info.node
                if node is not None and _matches_all(rest, other, snapshot):
                    for term in affinity_terms:
                        counts.add(affinity, node, term.topology_key, 1)
        for term in anti_terms:
            for _, info in counts.matching(term, snapshot):
                if info.node is not None:
                    counts.add(anti_affinity, info.node, term.topology_key, 1)

        if not existing and not affinity_terms and not anti_terms:
            return None, st.SKIP
        own = bool(affinity_terms) and _matches_all(affinity_terms, pod, snapshot)
        state.write(_PRE_FILTER_KEY, _PreFilterState(existing, affinity, anti_affinity, own))
        return None, st.SUCCESS

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> st.Status:
        """Affinity first (unresolvable), then the pod's anti-affinity, then existing pods'."""
        s = state.read(_PRE_FILTER_KEY)
        if s is None:
            return st.error(f'error reading "PreFilter{NAME}" from cycleState: not found')
        node = node_info.node
        if node is None:
            return st.error("node not found")
        # Each check is skipped outright when its counts cannot reject (per node, hot path).
        if pod.required_pod_affinity and not _satisfies_pod_affinity(s, pod, node):
            return _AFFINITY_NOT_MATCH
        if s.anti_affinity and not _satisfies_pod_anti_affinity(s, pod, node):
            return _ANTI_AFFINITY_NOT_MATCH
        if s.existing_anti_affinity and not _satisfies_existing_pods_anti_affinity(s, node):
            return _EXISTING_ANTI_AFFINITY_NOT_MATCH
        return st.SUCCESS

    # -- PreFilterExtensions ----------------------------------------------------------------

    def add_pod(self, state: CycleState, pod: Pod, to_add: Pod, node_info: NodeInfo) -> st.Status:
        """Count ``to_add`` on ``node_info`` into the PreFilter state (kube's AddPod)."""
        self._update(state, pod, to_add, node_info, 1)
        return st.SUCCESS

    def remove_pod(
        self, state: CycleState, pod: Pod, to_remove: Pod, node_info: NodeInfo
    ) -> st.Status:
        """Stop counting ``to_remove`` on ``node_info`` (kube's RemovePod)."""
        self._update(state, pod, to_remove, node_info, -1)
        return st.SUCCESS

    def _update(
        self, state: CycleState, pod: Pod, other: Pod, node_info: NodeInfo, delta: int
    ) -> None:
        """kube's updateWithPod: what PreFilter counts for ``other`` on this node, by
        ``delta``; a new state value is written (the old one may be shared by a clone)."""
        s = state.read(_PRE_FILTER_KEY)
        node = node_info.node
        if s is None or node is None:
            return
        snapshot = self._handle.snapshot
        existing = s.existing_anti_affinity
        if other.required_pod_anti_affinity:
            matched = [
                t.topology_key
                for t in other.required_pod_anti_affinity
                if _term_matches(t, pod, snapshot)
            ]
            if matched:
                existing = counts.bumped(existing, node, matched, delta)
        affinity = s.affinity
        terms = pod.required_pod_affinity
        if terms and _matches_all(terms, other, snapshot):
            affinity = counts.bumped(affinity, node, [t.topology_key for t in terms], delta)
        anti_affinity = s.anti_affinity
        matched = [
            t.topology_key
            for t in pod.required_pod_anti_affinity
            if _term_matches(t, other, snapshot)
        ]
        if matched:
            anti_affinity = counts.bumped(anti_affinity, node, matched, delta)
        if (
            existing is s.existing_anti_affinity
            and affinity is s.affinity
            and (anti_affinity is s.anti_affinity)
        ):
            return
        state.write(
            _PRE_FILTER_KEY,
            _PreFilterState(existing, affinity, anti_affinity, s.matches_own_affinity),
        )

    # -- PreScore / Score / NormalizeScore --------------------------------------------------

    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> st.Status:
        """Sum term weights by topology pair over existing pods; Skip when none applies."""
        has_preferred = bool(pod.preferred_pod_affinity or pod.preferred_pod_anti_affinity)
        if self.ignore_preferred_terms_of_existing_pods and not has_preferred:
            return st.SKIP
        scores, credited = self._credits(pod)
        if not credited:
            return st.SKIP
        state.write(_PRE_SCORE_KEY, _PreScoreState(scores))
        return st.SUCCESS

    def _credits(self, pod: Pod) -> tuple[dict[str, dict[str, int]], int]:
        """PreScore's sums by topology pair, and how many credits went into them."""
        snapshot = self._handle.snapshot
        scores: dict[str, dict[str, int]] = {}
        credited = 0
        # kube walks every pod when the pod has preferred terms, and only pods with affinity
        # terms otherwise; the same credits come from two narrower walks. First the pod's
        # preferred terms, against the existing pods the pod index finds for each.
        for weighted in pod.preferred_pod_affinity:
            credited += counts.credit_matching(scores, weighted.term, weighted.weight, snapshot)
        for weighted in pod.preferred_pod_anti_affinity:
            credited += counts.credit_matching(scores, weighted.term, -weighted.weight, snapshot)
        # Then existing pods' own terms (kube's processExistingPod), each distinct term
        # checked once and its holders credited by count (cache/term_index.py).
        for (term, weight), holders in snapshot.pod_index.terms.scoring.items():
            if weight is None:  # a required affinity term
                weight = self.hard_pod_affinity_weight
                if weight <= 0:
                    continue
            if _term_matches(term, pod, snapshot):
                credited += counts.credit_holders(scores, term.topology_key, weight, holders)
        return scores, credited

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        """Sum of the weights recorded for the node's topology pairs (may be negative)."""
        s = state.read(_PRE_SCORE_KEY)
        node = node_info.node
        if s is None or node is None:
            return 0
        total = 0
        for key, by_value in s.topology_score.items():
            value = node.labels.get(key)
            if value is not None:
                total += by_value.get(value, 0)
        return total

    def normalize_score(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo], scores: list[int]
    ) -> st.Status:
        """Min-max scaling to 0..100, truncated as Go's int64(float64) conversion."""
        s = state.read(_PRE_SCORE_KEY)
        if s is None or not s.topology_score or not scores:
            return st.SUCCESS
        low = min(scores)
        spread = max(scores) - low
        for i, raw in enumerate(scores):
            # Same float operations as kube: MaxNodeScore * ((score - min) / (max - min)).
            scores[i] = int(float(MAX_NODE_SCORE) * ((raw - low) / spread)) if spread > 0 else 0
        return st.SUCCESS

    # -- Sign (KEP-5598) --------------------------------------------------------------------

    def sign_pod(self, pod: Pod) -> Hashable | None:
        """Namespace and labels (existing pods' terms read them), less the per-pod identity
        labels no known term reads (cache/identity_labels.py: kube signs them all, so its
        StatefulSet replicas never share a signature), or for the exact batch only the
        labels some known term reads; with pod (anti-)affinity an exact-only fragment
        that adds the terms (the read labels and namespace decide which of
        them match the pod itself)."""
        labels = self._handle.snapshot.identity_labels
        read = (pod.namespace, labels.read_only(pod.labels))
        if not (pod.has_pod_affinity or pod.has_pod_anti_affinity):
            return NarrowedForExact((pod.namespace, labels.signed(pod.labels)), read)
        form = affinity_exact.term_form
        return ExactOnly(
            (
                "InterPodAffinity/exact",
                read,
                tuple(form(t) for t in pod.required_pod_affinity),
                tuple(form(t) for t in pod.required_pod_anti_affinity),
                tuple((w.weight, form(w.term)) for w in pod.preferred_pod_affinity),
                tuple((w.weight, form(w.term)) for w in pod.preferred_pod_anti_affinity),
            )
        )

    # -- the exact batch (framework.interfaces.ExactDomainPlugin) ---------------------------

    def exact_begin(self, state: CycleState, pod: Pod) -> bool:
        """Take PreScore's credits over every pod, and the topology keys the maps use."""
        snapshot = self._handle.snapshot
        if not affinity_exact.unique_hostnames(snapshot):
            return False
        has_preferred = bool(pod.preferred_pod_affinity or pod.preferred_pod_anti_affinity)
        tally = affinity_exact.Credits()
        if not (self.ignore_preferred_terms_of_existing_pods and not has_preferred):
            tally.topology_score, tally.count = self._credits(pod)
        state.write(_EXACT_KEY, _ExactState(tally, self._existing_keys(state)))
        return True

    def exact_update(
        self, state: CycleState, pod: Pod, other: Pod, node_info: NodeInfo, delta: int
    ) -> bool:
        exact = state.read(_EXACT_KEY)
        if exact is None:
            return False
        snapshot = self._handle.snapshot
        if state.read(_PRE_FILTER_KEY) is None:
            # PreFilter skipped: it would not, were ``other`` a new holder of a required
            # anti-affinity term that matches the pod.
            if delta > 0 and any(
                _term_matches(t, pod, snapshot) for t in other.required_pod_anti_affinity
            ):
                return False
        else:
            self._update(state, pod, other, node_info, delta)
            if delta > 0 and any(
                t.topology_key not in exact.existing_keys and _term_matches(t, pod, snapshot)
                for t in other.required_pod_anti_affinity
            ):
                return False  # the existing pods' anti-affinity map has a new key
        has_preferred = bool(pod.preferred_pod_affinity or pod.preferred_pod_anti_affinity)
        if self.ignore_preferred_terms_of_existing_pods and not has_preferred:
            return True
        tally = exact.credits
        affinity_exact.credit_pod(
            tally, pod, other, node_info, delta, self.hard_pod_affinity_weight, snapshot
        )
        return not tally.new_key

    def exact_node_key(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Hashable:
        node = node_info.node
        exact = state.read(_EXACT_KEY)
        if node is None or exact is None:
            return None
        labels = node.labels
        part = affinity_exact.pair_part
        parts: list[object] = []
        s = state.read(_PRE_FILTER_KEY)
        if s is not None:
            parts.extend(
                part(s.affinity, t.topology_key, labels) for t in pod.required_pod_affinity
            )
            parts.extend(
                part(s.anti_affinity, t.topology_key, labels)
                for t in pod.required_pod_anti_affinity
            )
            parts.extend(part(s.existing_anti_affinity, k, labels) for k in exact.existing_keys)
        scores = exact.credits.topology_score
        parts.extend(affinity_exact.score_part(scores[key], key, labels) for key in sorted(scores))
        return tuple(parts)

    def exact_pre_score(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo], sizes: Sequence[int]
    ) -> st.Status:
        """PreScore from the live credits (they do not depend on the scored nodes)."""
        exact = state.read(_EXACT_KEY)
        if exact is None or not exact.credits.count:
            return st.SKIP
        state.write(_PRE_SCORE_KEY, _PreScoreState(exact.credits.topology_score))
        return st.SUCCESS

    @staticmethod
    def _existing_keys(state: CycleState) -> frozenset[str]:
        s = state.read(_PRE_FILTER_KEY)
        if s is None:
            return frozenset()
        return frozenset(key for key, _ in s.existing_anti_affinity)


# -- helpers ------------------------------------------------------------------------------


def _satisfies_pod_affinity(s: _PreFilterState, pod: Pod, node: Node) -> bool:
    """Every term's key on the node and matching pods in each domain, or the first-pod rule."""
    pods_exist = True
    for term in pod.required_pod_affinity:
        value = node.labels.get(term.topology_key)
        if value is None:
            return False
        if s.affinity.get((term.topology_key, value), 0) <= 0:
            pods_exist = False
    if pods_exist:
        return True
    # The first pod of a group that has affinity to itself: no pod matches anywhere yet.
    return not s.affinity and s.matches_own_affinity


def _satisfies_pod_anti_affinity(s: _PreFilterState, pod: Pod, node: Node) -> bool:
    if not s.anti_affinity:
        return True
    for term in pod.required_pod_anti_affinity:
        value = node.labels.get(term.topology_key)
        if value is not None and s.anti_affinity.get((term.topology_key, value), 0) > 0:
            return False
    return True


def _satisfies_existing_pods_anti_affinity(s: _PreFilterState, node: Node) -> bool:
    if not s.existing_anti_affinity:
        return True
    return not any(s.existing_anti_affinity.get(pair, 0) > 0 for pair in node.labels.items())


def _parse_args(args: PluginArgs) -> tuple[int, bool]:
    """Validate InterPodAffinityArgs as kube's ValidateInterPodAffinityArgs does."""
    unknown = sorted(
        set(args)
        - {"apiVersion", "kind", "hardPodAffinityWeight", "ignorePreferredTermsOfExistingPods"}
    )
    if unknown:
        raise ValueError(f"{_ARGS}: unknown field(s): {', '.join(unknown)}")
    weight = args.get("hardPodAffinityWeight", DEFAULT_HARD_POD_AFFINITY_WEIGHT)
    if not isinstance(weight, int) or isinstance(weight, bool):
        raise ValueError(f"{_ARGS}.hardPodAffinityWeight: must be an integer")
    if not 0 <= weight <= 100:
        raise ValueError(f"{_ARGS}.hardPodAffinityWeight: not in valid range [0, 100]")
    ignore = args.get("ignorePreferredTermsOfExistingPods", False)
    if not isinstance(ignore, bool):
        raise ValueError(f"{_ARGS}.ignorePreferredTermsOfExistingPods: must be a boolean")
    return weight, ignore
