"""NodeResourcesBalancedAllocation: favour nodes whose resources would be used evenly.

Port of kube-scheduler's noderesources/balanced_allocation.go (v1.35). For each configured
resource the fraction (node requests + pod request) / allocatable is taken, capped at 1;
the score is ``(1 - standard deviation of the fractions) * 100`` truncated. It uses plain
requests, not the 100m/200Mi non-zero defaults (kube's ``useRequested``). A pod that
requests none of the resources is best-effort: PreScore returns Skip so such pods do not
all pile onto one node (kubernetes#129138). Neighbours: helpers (scorer, args readers,
resources fragment shared with NodeResourcesFit).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from scheduler.framework import status as st
from scheduler.framework.cycle_state import StateKey
from scheduler.plugins import helpers, names

if TYPE_CHECKING:
    from collections.abc import Hashable, Sequence

    from scheduler.cache.node_info import NodeInfo
    from scheduler.framework.cycle_state import CycleState
    from scheduler.framework.interfaces import Handle, PluginArgs
    from scheduler.model.pod import Pod

ARGS: Final = "NodeResourcesBalancedAllocationArgs"

_PRE_SCORE_KEY: Final[StateKey[tuple[int, ...]]] = StateKey(
    "PreScore" + names.NODE_RESOURCES_BALANCED_ALLOCATION
)


def parse_resources(args: PluginArgs) -> tuple[helpers.ResourceSpec, ...]:
    """``resources`` (default cpu and memory); each weight must be 1, names unique."""
    helpers.check_fields(args, ARGS, ("resources",))
    where = f"{ARGS}.resources"
    resources = helpers.parse_resource_specs(args.get("resources"), where)
    seen: set[str] = set()
    for i, spec in enumerate(resources):
        if spec.name in seen:
            raise ValueError(f'{where}[{i}].name: duplicate value "{spec.name}"')
        seen.add(spec.name)
        if spec.weight != 1:
            raise ValueError(f"{where}[{i}].weight: must be 1, got {spec.weight}")
    return resources


class NodeResourcesBalancedAllocation:
    """PreScore (Skip for best-effort pods), Score, Sign.

    Args (NodeResourcesBalancedAllocationArgs): ``resources: [{name, weight: 1}]``.
    """

    name: str = names.NODE_RESOURCES_BALANCED_ALLOCATION

    def __init__(self, args: PluginArgs, handle: Handle) -> None:
        self.resources = parse_resources(args)
        self._scorer = helpers.ResourceAllocationScorer(
            self.resources,
            use_requested=True,
            scorer=helpers.balanced_resource_scorer,
            pair_scorer=helpers.balanced_pair_scorer,
        )

    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> st.Status:
        requests = self._scorer.pod_requests(pod)
        if not any(requests):
            return st.SKIP
        state.write(_PRE_SCORE_KEY, requests)
        return st.SUCCESS

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        requests = state.read(_PRE_SCORE_KEY)
        if requests is None:
            requests = self._scorer.pod_requests(pod)
            if not any(requests):
                return 0
        return self._scorer.score(node_info, requests)

    def sign_pod(self, pod: Pod) -> Hashable | None:
        return helpers.resources_fragment(pod)
