"""Why did ours decide so: our profile's per-plugin weighted scores for one pod, replayed
offline on the cluster state it met (the admitted objects the API server returned).

:mod:`bench.parity` prints these next to kube-scheduler's ``Plugin scored node for pod`` lines
for every disagreement, so the plugin that differs is named in the report itself.
"""

from __future__ import annotations

import random
from typing import Any

from scheduler.cache.cluster_state import ClusterState
from scheduler.framework.config import default_config
from scheduler.framework.cycle_state import CycleState
from scheduler.framework.diagnosis import FitError
from scheduler.framework.explanation import explain_pod
from scheduler.framework.profile import build_profile
from scheduler.framework.results import ScheduleResult
from scheduler.model.parse import node_from_raw, pod_from_raw
from scheduler.plugins import in_tree_registry


def explain(
    nodes: list[dict[str, Any]], assigned: list[dict[str, Any]], pod: dict[str, Any]
) -> dict[str, Any]:
    """``{"outcome": node | message, "scores": {node: {plugin: weighted score, "total": n}}}``
    of our default profile for ``pod`` on ``nodes`` running ``assigned``."""
    cluster = ClusterState()
    for raw in nodes:
        cluster.add_node(node_from_raw(raw))
    for raw in assigned:
        cluster.add_pod(pod_from_raw(raw))
    config = default_config()
    profile = build_profile(
        config.profiles[0],
        registry=in_tree_registry(),
        snapshot=cluster.snapshot,
        default_percentage=config.percentage_of_nodes_to_score,
        rng=random.Random(0),
    )
    parsed = pod_from_raw(pod)
    outcome = profile.schedule(CycleState(), parsed)
    if isinstance(outcome, FitError):
        return {"outcome": outcome.message(), "scores": {}}
    if not isinstance(outcome, ScheduleResult):
        return {"outcome": f"error: {outcome.message}", "scores": {}}
    scores: dict[str, dict[str, int]] = {}
    if outcome.scores is not None:
        # Every plugin's weighted column on the nodes the pass scored (explain's breakdown).
        scored = {info.name for info in outcome.scores.nodes}
        for verdict in explain_pod(profile, parsed).feasible:
            if verdict.node in scored and verdict.total is not None:
                row = {score.plugin: score.weighted for score in verdict.scores}
                scores[verdict.node] = {**row, "total": verdict.total}
    return {"outcome": outcome.node.name, "scores": scores}
