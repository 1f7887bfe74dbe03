"""The counts InterPodAffinity keeps by topology pair (kube's interpodaffinity maps), and
how existing pods are found for them: a term's matching pods from the snapshot's pod index
(only the term's namespaces, and in each only the pods its label selector can match),
pairs moved by one pod (AddPod/RemovePod and the exact batch), and PreScore's credits.

Neighbours: plugins.inter_pod_affinity (the plugin, the only user), cache.pod_index and
cache.term_index (where existing pods and their terms are found).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator

    from scheduler.cache.pod_index import Entry
    from scheduler.cache.snapshot import Snapshot
    from scheduler.cache.term_index import Holders
    from scheduler.model.affinity import PodAffinityTerm
    from scheduler.model.node import Node

TopologyPair = tuple[str, str]


def matching(term: PodAffinityTerm, snapshot: Snapshot) -> Iterator[Entry]:
    """Every cached pod ``term`` matches (as ``affinity_exact.term_matches``), with its node,
    from the snapshot's pod index: only the term's namespaces are visited, and in each only
    the pods its label selector can match."""
    selector = term.label_selector
    if selector is None:
        return
    index = snapshot.pod_index
    namespaces: Iterable[str] = term.namespaces
    by_labels = term.namespace_selector
    if by_labels is not None:
        namespaces = [
            ns
            for ns in index.namespaces()
            if ns in term.namespaces
            or by_labels.empty
            or by_labels.matches(snapshot.namespace_labels(ns))
        ]
    for namespace in namespaces:
        yield from index.matching(namespace, selector)


def add(counts: dict[TopologyPair, int], node: Node, key: str, delta: int) -> None:
    value = node.labels.get(key)
    if value is not None:
        pair = (key, value)
        counts[pair] = counts.get(pair, 0) + delta


def bumped(
    counts: dict[TopologyPair, int], node: Node, keys: Iterable[str], delta: int
) -> dict[TopologyPair, int]:
    """A copy of ``counts`` with each key's pair on ``node`` moved by ``delta``; pairs that
    reach zero are dropped, as a fresh PreFilter would not have them."""
    out = dict(counts)
    for key in keys:
        value = node.labels.get(key)
        if value is None:
            continue
        pair = (key, value)
        total = out.get(pair, 0) + delta
        if total:
            out[pair] = total
        else:
            out.pop(pair, None)
    return out


def credit_holders(
    scores: dict[str, dict[str, int]], key: str, weight: int, holders: Holders
) -> int:
    """Add ``weight`` to each holder node's pair for ``key``, once per pod carrying the term
    (processTerm for each); kube skips nodes without labels. Returns the credits made."""
    touched = 0
    for info, count in holders.items():
        node = info.node
        if node is None or not node.labels:
            continue
        value = node.labels.get(key)
        if value is None:
            continue
        by_value = scores.setdefault(key, {})
        by_value[value] = by_value.get(value, 0) + weight * count
        touched += count
    return touched


def credit_matching(
    scores: dict[str, dict[str, int]], term: PodAffinityTerm, weight: int, snapshot: Snapshot
) -> int:
    """Add ``weight`` to the pair of every node holding a pod ``term`` matches, per pod;
    returns the credits made."""
    key = term.topology_key
    touched = 0
    by_value = scores.get(key)
    for _, info in matching(term, snapshot):
        node = info.node
        value = node.labels.get(key) if node is not None else None
        if value is None:
            continue
        if by_value is None:
            by_value = scores[key] = {}
        by_value[value] = by_value.get(value, 0) + weight
        touched += 1
    return touched
