"""PodDisruptionBudget (policy/v1): the fields preemption reads, as a record.

Preemption prefers victims whose eviction keeps every budget intact (kube's
``FilterVictimsWithPDBViolation``): it needs the budget's namespace, selector, how many
disruptions its status still allows, and which pods are already being disrupted.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Mapping

    from scheduler.model.labels import LabelSelector

__all__ = ["PodDisruptionBudget"]


@dataclass(frozen=True, slots=True)
class PodDisruptionBudget:
    namespace: str
    name: str
    uid: str
    resource_version: str
    selector: LabelSelector | None
    """``spec.selector``; None when unset. Preemption ignores a budget with no or an empty
    selector, as kube's preemption does."""
    disruptions_allowed: int
    """``status.disruptionsAllowed`` as the disruption controller last computed it."""
    disrupted_pods: frozenset[str]
    """Names in ``status.disruptedPods``: evictions already counted against the budget."""

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    def selects(self, namespace: str, labels: Mapping[str, str]) -> bool:
        """Whether a pod of ``namespace`` with ``labels`` counts against this budget."""
        if namespace != self.namespace or self.selector is None or self.selector.empty:
            return False
        return self.selector.matches(labels)
