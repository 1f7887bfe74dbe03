"""Inter-pod affinity terms and topology spread constraints (records only)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from scheduler.model.labels import LabelSelector


@dataclass(frozen=True, slots=True)
class PodAffinityTerm:
    """A pod (anti-)affinity term, with its namespaces already resolved.

    ``label_selector`` None (nil) matches no pod. When the API term has neither namespaces
    nor a namespaceSelector, the parser puts the pod's own namespace into ``namespaces``.
    ``namespace_selector`` not None: namespaces whose labels it matches also count (an
    empty selector matches all namespaces). ``matchLabelKeys``/``mismatchLabelKeys`` are
    already merged into ``label_selector`` by the parser, as kube-apiserver does.
    """

    label_selector: LabelSelector | None
    namespaces: frozenset[str]
    namespace_selector: LabelSelector | None
    topology_key: str


@dataclass(frozen=True, slots=True)
class WeightedPodAffinityTerm:
    weight: int
    term: PodAffinityTerm


@dataclass(frozen=True, slots=True)
class TopologySpreadConstraint:
    """``when_unsatisfiable`` is ``DoNotSchedule`` or ``ScheduleAnyway``.

    ``node_affinity_policy`` defaults to ``Honor``, ``node_taints_policy`` to ``Ignore``;
    ``matchLabelKeys`` are already merged into ``label_selector`` by the parser.
    """

    max_skew: int
    topology_key: str
    when_unsatisfiable: str
    label_selector: LabelSelector | None
    min_domains: int | None = None
    node_affinity_policy: str = "Honor"
    node_taints_policy: str = "Ignore"
