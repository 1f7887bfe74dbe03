"""How many nodes to look at, and which of the best-scored nodes to pick.

kube-scheduler's ``numFeasibleNodesToFind`` (adaptive percentageOfNodesToScore) and
``selectHost`` (reservoir sampling among the nodes with the top total score).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    import random
    from collections.abc import Sequence

MIN_FEASIBLE_NODES_TO_FIND = 100
MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND = 5

T = TypeVar("T")


def num_feasible_nodes_to_find(percentage: int, num_all_nodes: int) -> int:
    """Stop filtering after this many feasible nodes (percentage 0 means adaptive)."""
    if num_all_nodes < MIN_FEASIBLE_NODES_TO_FIND:
        return num_all_nodes
    if percentage == 0:
        percentage = max(50 - num_all_nodes // 125, MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND)
    found = num_all_nodes * percentage // 100
    return max(found, MIN_FEASIBLE_NODES_TO_FIND)


def pick_top(totals: Sequence[int], rng: random.Random) -> int:
    """Index of a highest total; ties broken uniformly at random (kube samples a reservoir)."""
    best = max(totals)
    ties = [index for index, total in enumerate(totals) if total == best]
    return ties[0] if len(ties) == 1 else rng.choice(ties)
