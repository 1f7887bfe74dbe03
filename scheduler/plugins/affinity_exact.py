"""InterPodAffinity's credits and node keys kept live for the exact batch (batching/exact.py).

PreFilter's three pair maps move by one pod through the plugin's AddPod/RemovePod
(``_update``). PreScore's ``topology_score`` is kept here: ``Credits`` holds it with the
number of credits that built it (PreScore is skipped when nothing was credited), and
``credit_pod`` adds or takes away exactly what a fresh PreScore credits for one existing
pod: the incoming pod's preferred terms it matches, and its own required affinity and
preferred terms that match the incoming pod (kube's processExistingPod).

Keys: a node's key holds, per topology key the maps use, the node's value — or, for the
hostname key, the count at the node's own pair (one node per value, checked by the
caller), so that nodes of one zone with equal per-node counts share a key. A pod that
brings a topology key the maps did not have changes every node's key: the update says so
and the state is rebuilt.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from scheduler.cache.term_index import scoring_terms

if TYPE_CHECKING:
    from collections.abc import Hashable, Iterable, Mapping

    from scheduler.cache.node_info import NodeInfo
    from scheduler.cache.snapshot import Snapshot
    from scheduler.model.affinity import PodAffinityTerm
    from scheduler.model.pod import Pod

LABEL_HOSTNAME = "kubernetes.io/hostname"

TopologyPair = tuple[str, str]


def term_matches(term: PodAffinityTerm, pod: Pod, snapshot: Snapshot) -> bool:
    """kube's AffinityTerm.Matches: namespace (by name or selector), then label selector."""
    if pod.namespace not in term.namespaces:
        selector = term.namespace_selector
        if selector is None:
            return False
        # An empty selector matches every namespace, known to the snapshot or not.
        if not selector.empty and not selector.matches(snapshot.namespace_labels(pod.namespace)):
            return False
    # A nil label selector matches no pod.
    return term.label_selector is not None and term.label_selector.matches(pod.labels)


def matches_all(terms: Iterable[PodAffinityTerm], pod: Pod, snapshot: Snapshot) -> bool:
    """kube's podMatchesAllAffinityTerms for a non-empty ``terms``."""
    return all(term_matches(term, pod, snapshot) for term in terms)


def term_form(term: PodAffinityTerm) -> Hashable:
    """A canonical form of a term, for signatures."""
    return (
        repr(term.label_selector),
        tuple(sorted(term.namespaces)),
        repr(term.namespace_selector),
        term.topology_key,
    )


@dataclass(slots=True)
class Credits:
    """PreScore's topology_score, live, and how many credits went into it."""

    topology_score: dict[str, dict[str, int]] = field(default_factory=dict)
    count: int = 0
    new_key: bool = False
    """A credit used a topology key the scores did not have: node keys are stale."""

    def credit(self, key: str, labels: Mapping[str, str], amount: int, delta: int) -> None:
        value = labels.get(key)
        if value is None:
            return
        by_value = self.topology_score.get(key)
        if by_value is None:
            by_value = self.topology_score[key] = {}
            self.new_key = True
        by_value[value] = by_value.get(value, 0) + amount * delta
        self.count += delta


def credit_pod(
    tally: Credits,
    pod: Pod,
    other: Pod,
    info: NodeInfo,
    delta: int,
    hard_weight: int,
    snapshot: Snapshot,
) -> None:
    """Credit (``delta`` 1) or take back (-1) what PreScore credits for ``other`` on ``info``."""
    node = info.node
    if node is None:
        return
    labels = node.labels
    for weighted in pod.preferred_pod_affinity:
        if term_matches(weighted.term, other, snapshot):
            tally.credit(weighted.term.topology_key, labels, weighted.weight, delta)
    for weighted in pod.preferred_pod_anti_affinity:
        if term_matches(weighted.term, other, snapshot):
            tally.credit(weighted.term.topology_key, labels, -weighted.weight, delta)
    if not labels or not (other.has_pod_affinity or other.has_pod_anti_affinity):
        return  # kube skips existing pods' terms on a node without labels
    for term, weight in scoring_terms(other):
        if weight is None:  # a required affinity term
            weight = hard_weight
            if weight <= 0:
                continue
        if term_matches(term, pod, snapshot):
            tally.credit(term.topology_key, labels, weight, delta)


def pair_part(counts: Mapping[TopologyPair, int], key: str, labels: Mapping[str, str]) -> object:
    """A node's part of a key for one filter map: its value, or (hostname) whether its own
    pair has a count; None without the key."""
    value = labels.get(key)
    if value is None:
        return None
    if key == LABEL_HOSTNAME:
        return counts.get((key, value), 0) > 0
    return value


def score_part(by_value: Mapping[str, int], key: str, labels: Mapping[str, str]) -> object:
    """A node's part of a key for one scored topology key: its value, or (hostname) its
    own score."""
    value = labels.get(key)
    if value is None:
        return None
    if key == LABEL_HOSTNAME:
        return by_value.get(value, 0)
    return value


def unique_hostnames(snapshot: Snapshot) -> bool:
    """Every node's hostname label is its own (a count keyed by it moves one node only)."""
    values = snapshot.label_values(LABEL_HOSTNAME)
    return len(values) == snapshot.num_nodes_with_label(LABEL_HOSTNAME)
