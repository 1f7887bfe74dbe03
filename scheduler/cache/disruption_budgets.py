"""DisruptionBudgets: the PodDisruptionBudgets the watch delivered, for preemption.

kube's preemption lists every budget through an informer each time it runs; ours keeps them
here, fed by the watch (``kube.controller``) or by ``simulate``'s input, and lent to plugins
through ``Snapshot.disruption_budgets``. Budgets change rarely and preemption is rare, so a
plain mapping by key is enough.

Neighbours: ``model.disruption`` (the record), ``plugins.default_preemption`` (the reader).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from scheduler.model.disruption import PodDisruptionBudget

__all__ = ["DisruptionBudgets"]


class DisruptionBudgets:
    """PodDisruptionBudgets by ``namespace/name``."""

    __slots__ = ("_budgets",)

    def __init__(self) -> None:
        self._budgets: dict[str, PodDisruptionBudget] = {}

    def add(self, budget: PodDisruptionBudget) -> None:
        """Add or replace (upsert) a budget as the watch delivers it."""
        self._budgets[budget.key] = budget

    def remove(self, namespace: str, name: str) -> None:
        self._budgets.pop(f"{namespace}/{name}", None)

    def keys(self) -> set[str]:
        """Keys of every budget held (for reconciling after a re-list)."""
        return set(self._budgets)

    def list(self) -> list[PodDisruptionBudget]:
        """Every budget, in the order they were first added."""
        return list(self._budgets.values())

    def __len__(self) -> int:
        return len(self._budgets)
