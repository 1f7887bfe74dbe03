"""TermIndex: the pod (anti-)affinity terms of cached pods, by term (issue 19).

For every pod it places, InterPodAffinity asks which existing pods' terms the pod matches:
their required anti-affinity terms (PreFilter) and their required affinity and preferred
terms (PreScore). kube walks every pod that has such terms; a Deployment of 5000 replicas
with required anti-affinity makes that 5000 checks of one and the same term per cycle.
Here each distinct term is kept once, with the NodeInfos whose pods carry it and how many
times, so a cycle checks each distinct term once and credits its holders by count.

Kept by ``PodIndex.add``/``remove`` (``NodeInfo.add_pod``/``remove_pod``), per NodeInfo and
pod: a uid two NodeInfos hold counts on both, as a walk over every NodeInfo's pods would
count it; ghosts are included (readers skip a NodeInfo whose ``node`` is None).
O(terms) per pod with terms, nothing for the others.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TypeAlias, TypeVar

if TYPE_CHECKING:
    from collections.abc import Iterator

    from scheduler.cache.node_info import NodeInfo
    from scheduler.model.affinity import PodAffinityTerm
    from scheduler.model.pod import Pod

Holders: TypeAlias = "dict[NodeInfo, int]"
"""The NodeInfos holding pods that carry one term, and how many times they carry it."""

ScoringTerm: TypeAlias = "tuple[PodAffinityTerm, int | None]"
"""A term and the weight it credits when the incoming pod matches it: signed for preferred
terms (anti-affinity negative), None for a required affinity term (its weight is the
plugin's ``hardPodAffinityWeight``)."""


K = TypeVar("K")


class TermIndex:
    """Distinct affinity terms of the indexed pods, each with its holders."""

    __slots__ = ("required_anti_affinity", "scoring")

    def __init__(self) -> None:
        self.required_anti_affinity: dict[PodAffinityTerm, Holders] = {}
        """Required anti-affinity terms (InterPodAffinity's PreFilter)."""
        self.scoring: dict[ScoringTerm, Holders] = {}
        """Required affinity and preferred terms (InterPodAffinity's PreScore)."""

    def add(self, pod: Pod, info: NodeInfo) -> None:
        self._count(pod, info, 1)

    def remove(self, pod: Pod, info: NodeInfo) -> None:
        self._count(pod, info, -1)

    def _count(self, pod: Pod, info: NodeInfo, delta: int) -> None:
        if pod.has_pod_affinity or pod.has_pod_anti_affinity:
            for term in pod.required_pod_anti_affinity:
                _bump(self.required_anti_affinity, term, info, delta)
            for key in scoring_terms(pod):
                _bump(self.scoring, key, info, delta)


def scoring_terms(pod: Pod) -> Iterator[ScoringTerm]:
    """The pod's terms PreScore credits, each with its weight (see ``ScoringTerm``)."""
    for term in pod.required_pod_affinity:
        yield term, None
    for weighted in pod.preferred_pod_affinity:
        yield weighted.term, weighted.weight
    for weighted in pod.preferred_pod_anti_affinity:
        yield weighted.term, -weighted.weight


def _bump(index: dict[K, Holders], key: K, info: NodeInfo, delta: int) -> None:
    holders = index.get(key)
    if holders is None:
        holders = index[key] = {}
    left = holders.get(info, 0) + delta
    if left > 0:
        holders[info] = left
        return
    holders.pop(info, None)
    if not holders:
        del index[key]
