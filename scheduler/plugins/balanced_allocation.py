"""NodeResourcesBalancedAllocation: favour nodes whose balance the pod would improve.

Port of kube-scheduler's noderesources/balanced_allocation.go (v1.37). For each configured
resource the fraction requests / allocatable is taken, capped at 1, and a balance
``(1 - standard deviation of the fractions) * 100`` truncated, once with the pod and once
without; the score is ``50 + (50 + with - without) / 2`` in integers: 75 when the pod leaves
the balance as it was, 100 from fully imbalanced to balanced, 50 the other way
(kubernetes#135573, since v1.36; before, the balance with the pod alone). It uses plain
requests, not the 100m/200Mi non-zero defaults (kube's ``useRequested``). A pod that
requests none of the resources is best-effort: PreScore returns Skip so such pods do not
all pile onto one node (kubernetes#129138). Neighbours: resource_allocation
(scorer, ``resources`` args), signature_fragments (the resources fragment shared with
NodeResourcesFit).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from scheduler.framework import status as st
from scheduler.framework.cycle_state import StateKey
from scheduler.framework.interfaces import MAX_NODE_SCORE
from scheduler.plugins import (
    names,
    plugin_args,
    resource_allocation,
    score_math,
    signature_fragments,
)

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


def parse_resources(args: PluginArgs) -> tuple[resource_allocation.ResourceSpec, ...]:
    """``resources`` (default cpu and memory); each weight must be 1, names unique."""
    plugin_args.check_fields(args, ARGS, ("resources",))
    where = f"{ARGS}.resources"
    resources = resource_allocation.parse_resource_specs(args.get("resources"), where)
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
        self._pod: Sequence[int] = ()
        """The pod's requests while one node is scored (scoring is synchronous)."""
        self._scorer = resource_allocation.ResourceAllocationScorer(
            self.resources,
            use_requested=True,
            scorer=self._change,
            pair_scorer=self._pair_change,
        )

    def _change(self, requested: list[int], allocatable: list[int]) -> int:
        # ``requested`` holds node + pod for every resource the scorer kept; a resource it
        # left out has allocatable 0 and is skipped by the balance either way.
        without = [req - want for req, want in zip(requested, self._pod, strict=True)]
        return _improvement(
            resource_allocation.balanced_resource_scorer(requested, allocatable),
            resource_allocation.balanced_resource_scorer(without, allocatable),
        )

    def _pair_change(self, cpu: int, cpu_cap: int, memory: int, memory_cap: int) -> int:
        pod_cpu, pod_memory = self._pod
        return resource_allocation.balanced_pair_change(
            cpu, cpu_cap, memory, memory_cap, pod_cpu, pod_memory
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
        self._pod = requests
        return self._scorer.score(node_info, requests)

    def score_nodes(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> list[int]:
        requests = state.read(_PRE_SCORE_KEY)
        if requests is None:
            return [self.score(state, pod, info) for info in nodes]
        self._pod = requests
        return self._scorer.score_nodes(nodes, requests)

    def sign_pod(self, pod: Pod) -> Hashable | None:
        return signature_fragments.resources_fragment(pod)


def _improvement(with_pod: int, without_pod: int) -> int:
    """kube's ``MaxNodeScore/2 + (MaxNodeScore/2 + with - without) / 2`` (int64 division;
    both balances are within [50, 100], so the dividend is never negative)."""
    half = MAX_NODE_SCORE // 2
    return half + score_math.go_div(half + with_pod - without_pod, 2)
