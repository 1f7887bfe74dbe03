"""How many nodes to look at, where to start, and which of the best-scored nodes to pick.

kube-scheduler's ``numFeasibleNodesToFind`` (adaptive percentageOfNodesToScore), its
rotating ``nextStartNodeIndex``, and its choice among the nodes with the top total score:
kube pops a max-heap ordered by total score, then a per-node random ``Randomizer``, so equal
totals leave in random order. We draw uniformly among the tied best, which has the same
distribution (kube v1.37 fills the Randomizer only when extenders score, see kubernetes
PR #141024; without them the tie order comes from its parallel Filter, random in effect).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Sequence

MIN_FEASIBLE_NODES_TO_FIND = 100
MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND = 5


def num_feasible_nodes_to_find(percentage: int, num_all_nodes: int) -> int:
    """Stop filtering after this many feasible nodes (percentage 0 means adaptive)."""
    if num_all_nodes < MIN_FEASIBLE_NODES_TO_FIND:
        return num_all_nodes
    if percentage == 0:
        percentage = max(50 - num_all_nodes // 125, MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND)
    found = num_all_nodes * percentage // 100
    return max(found, MIN_FEASIBLE_NODES_TO_FIND)


def pick_top(totals: Sequence[int], rng: random.Random) -> int:
    """Index of a highest total; ties broken uniformly at random (one draw, only if tied)."""
    best = max(totals)
    ties = [index for index, total in enumerate(totals) if total == best]
    return ties[0] if len(ties) == 1 else rng.choice(ties)


@dataclass(slots=True)
class Selector:
    """The mutable part of node selection: the rotating start and the random source.

    A profile's full passes and batch hints share one; a verifying pass uses another, so that
    checking a decision never moves the start or the draws of the next real one.
    """

    rng: random.Random = field(default_factory=random.Random)
    next_start: int = 0
