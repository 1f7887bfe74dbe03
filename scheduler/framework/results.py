"""What a full pass produces: the weighted scores of the feasible nodes and the node chosen
(kube's ScheduleResult and the NodePluginScores of prioritizeNodes), or why no node was.

framework/profile.py makes them; batching keeps the scores to rescore one node later
(KEP-5598), the cycle assumes the chosen node, explain and the decision log read both.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from scheduler.framework.diagnosis import FitError, SchedulingError

if TYPE_CHECKING:
    from scheduler.cache.node_info import NodeInfo
    from scheduler.framework.interfaces import NormalizeScorePlugin, ScoreNodesPlugin, ScorePlugin


@dataclass(frozen=True, slots=True)
class WeightedScore:
    plugin: ScorePlugin
    weight: int
    normalizer: NormalizeScorePlugin | None
    score_nodes: ScoreNodesPlugin | None = None
    """The plugin again when it scores all nodes in one call."""


@dataclass(slots=True)
class Scores:
    """Result of prioritize: ``totals[i]`` is the weighted sum for ``nodes[i]``.

    ``raw[p][i]`` is score plugin ``plugins[p]``'s raw (pre-normalize) score for ``nodes[i]``;
    batching keeps it to rescore one node later without rescoring all (KEP-5598).
    """

    nodes: list[NodeInfo]
    totals: list[int]
    raw: list[list[int]]
    plugins: list[WeightedScore]


@dataclass(slots=True)
class ScheduleResult:
    node: NodeInfo
    evaluated: int
    """Nodes filtered (plus those excluded by a PreFilter result)."""
    feasible: int
    scores: Scores | None
    """None when only one node was feasible (kube skips scoring then)."""
    chosen: int
    """Index of ``node`` in ``scores.nodes``."""


Outcome = ScheduleResult | FitError | SchedulingError
