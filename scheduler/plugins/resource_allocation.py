"""The resource-allocation scorer (kube's noderesources/resource_allocation.go) and its
strategies: LeastAllocated, MostAllocated, RequestedToCapacityRatio, and BalancedAllocation's.

Ports ``noderesources/{resource_allocation,least_allocated,most_allocated,
requested_to_capacity_ratio,balanced_allocation}.go`` with Go's integer semantics (division
truncates toward zero, ``math.Round`` rounds half away from zero), so scores match kube's byte
for byte. Neighbours: node_resources_fit.py and balanced_allocation.py build a scorer from
their args (``parse_resource_specs``); score_math.py has the Go division.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from scheduler.framework.interfaces import MAX_NODE_SCORE
from scheduler.model import parse_common
from scheduler.model import resources as res
from scheduler.plugins.plugin_args import as_int, as_list, as_mapping, as_str, check_fields
from scheduler.plugins.score_math import go_div

if TYPE_CHECKING:
    from scheduler.cache.node_info import NodeInfo
    from scheduler.model.pod import Pod


@dataclass(frozen=True, slots=True)
class ResourceSpec:
    """One entry of ``resources: [{name, weight}]`` in NodeResourcesFit/BalancedAllocation args."""

    name: str
    weight: int


DEFAULT_RESOURCES: Final = (ResourceSpec(res.CPU, 1), ResourceSpec(res.MEMORY, 1))


def parse_resource_specs(value: object, where: str) -> tuple[ResourceSpec, ...]:
    """``resources`` with kube's defaulting: empty → cpu and memory, weight 0 (unset) → 1."""
    if value is None:
        return DEFAULT_RESOURCES
    items = as_list(value, where)
    if not items:
        return DEFAULT_RESOURCES
    specs = []
    for i, item in enumerate(items):
        at = f"{where}[{i}]"
        entry = as_mapping(item, at)
        check_fields(entry, at, ("name", "weight"))
        name = as_str(entry.get("name"), f"{at}.name")
        if not name:
            raise ValueError(f"{at}.name: required")
        weight = as_int(entry.get("weight", 0), f"{at}.weight") or 1
        specs.append(ResourceSpec(name, weight))
    return tuple(specs)


# -- the scorer --------------------------------------------------------------------------------

Scorer = Callable[[list[int], list[int]], int]
"""(requested, allocatable) per configured resource → node score; allocatable 0 = skip."""
PairScorer = Callable[[int, int, int, int], int]
"""A Scorer specialised to (cpu, memory): requested cpu, allocatable cpu, requested memory,
allocatable memory. The default resources are exactly these two, and this path, per node in
every full pass, is the scheduler's hottest; it must return what the Scorer returns."""
"""(requested, allocatable) per configured resource → node score; allocatable 0 = skip."""

_CPU, _MEMORY, _EPHEMERAL, _SCALAR, _NONE = range(5)


def _kind(name: str) -> int:
    if name == res.CPU:
        return _CPU
    if name == res.MEMORY:
        return _MEMORY
    if name == res.EPHEMERAL_STORAGE:
        return _EPHEMERAL
    if parse_common.is_scalar_resource_name(name):
        return _SCALAR
    return _NONE  # "pods", "storage", ...: kube finds no allocatable for them and skips


class ResourceAllocationScorer:
    """Collects (requested incl. the pod, allocatable) per configured resource and scores.

    ``use_requested`` False (NodeResourcesFit): cpu and memory use the non-zero requests
    (100m / 200Mi for containers without a request) of the node and of the pod; True
    (BalancedAllocation): plain requests. Ephemeral storage and scalars always use plain
    requests. A scalar resource the pod does not request, or that the node does not have,
    is left out of the score.
    """

    __slots__ = (
        "_allocatable",
        "_kinds",
        "_pair",
        "_requested",
        "_scorer",
        "resources",
        "use_requested",
    )

    def __init__(
        self,
        resources: Sequence[ResourceSpec],
        *,
        use_requested: bool,
        scorer: Scorer,
        pair_scorer: PairScorer | None = None,
    ) -> None:
        self.resources = tuple(resources)
        self.use_requested = use_requested
        self._scorer = scorer
        self._kinds = tuple(_kind(r.name) for r in self.resources)
        self._pair = pair_scorer if self._kinds == (_CPU, _MEMORY) else None
        # Scratch rows reused for every node: scoring is synchronous, one node at a time.
        self._requested = [0] * len(self.resources)
        self._allocatable = [0] * len(self.resources)

    def pod_requests(self, pod: Pod) -> tuple[int, ...]:
        """The pod's request per configured resource (cpu in millicores)."""
        out = []
        for spec, kind in zip(self.resources, self._kinds, strict=True):
            if kind == _CPU:
                out.append(pod.requests.milli_cpu if self.use_requested else pod.non_zero_milli_cpu)
            elif kind == _MEMORY:
                out.append(pod.requests.memory if self.use_requested else pod.non_zero_memory)
            elif kind == _NONE:
                out.append(0)
            else:
                out.append(pod.requests.get(spec.name))
        return tuple(out)

    def score_nodes(self, nodes: Sequence[NodeInfo], pod_requests: Sequence[int]) -> list[int]:
        """:meth:`score` for each node, in order: the cpu/memory pair's lookups hoisted out of
        the loop (every feasible node of every full pass comes through here)."""
        pair = self._pair
        if pair is None:
            return [self.score(info, pod_requests) for info in nodes]
        want_cpu, want_memory = pod_requests
        plain = self.use_requested
        out: list[int] = []
        append = out.append
        for info in nodes:
            node = info.node
            if node is None:
                append(0)
                continue
            allocatable = node.allocatable
            used = info.requested if plain else info.non_zero_requested
            append(
                pair(
                    used.milli_cpu + want_cpu,
                    allocatable.milli_cpu,
                    used.memory + want_memory,
                    allocatable.memory,
                )
            )
        return out

    def score(self, node_info: NodeInfo, pod_requests: Sequence[int]) -> int:
        node = node_info.node
        if node is None:
            return 0
        allocatable = node.allocatable
        used = node_info.requested if self.use_requested else node_info.non_zero_requested
        pair = self._pair
        if pair is not None:
            return pair(
                used.milli_cpu + pod_requests[0],
                allocatable.milli_cpu,
                used.memory + pod_requests[1],
                allocatable.memory,
            )
        plain = node_info.requested
        requested_row = self._requested
        allocatable_row = self._allocatable
        for i, kind in enumerate(self._kinds):
            want = pod_requests[i]
            if kind == _CPU:
                alloc, req = allocatable.milli_cpu, used.milli_cpu + want
            elif kind == _MEMORY:
                alloc, req = allocatable.memory, used.memory + want
            elif kind == _EPHEMERAL:
                alloc, req = allocatable.ephemeral_storage, plain.ephemeral_storage + want
            elif kind == _SCALAR and want != 0:
                name = self.resources[i].name
                alloc = allocatable.scalar.get(name, 0)
                req = plain.scalar.get(name, 0) + want
            else:
                alloc = req = 0
            if alloc == 0:
                alloc = req = 0
            requested_row[i] = req
            allocatable_row[i] = alloc
        return self._scorer(requested_row, allocatable_row)


def least_allocated_scorer(resources: Sequence[ResourceSpec]) -> Scorer:
    """Favours free capacity: per resource ``(capacity - requested) * 100 / capacity``."""
    weights = tuple(r.weight for r in resources)

    def scorer(requested: list[int], allocatable: list[int]) -> int:
        node_score = weight_sum = 0
        for req, cap, weight in zip(requested, allocatable, weights, strict=True):
            if cap == 0:
                continue
            if req <= cap:
                node_score += go_div((cap - req) * MAX_NODE_SCORE, cap) * weight
            weight_sum += weight
        return go_div(node_score, weight_sum) if weight_sum else 0

    return scorer


def least_allocated_pair_scorer(resources: Sequence[ResourceSpec]) -> PairScorer:
    """least_allocated_scorer for (cpu, memory), unrolled (all operands are non-negative)."""
    cpu_weight, memory_weight = (r.weight for r in resources)

    def scorer(cpu: int, cpu_cap: int, memory: int, memory_cap: int) -> int:
        node_score = weight_sum = 0
        if cpu_cap:
            if cpu <= cpu_cap:
                node_score += (cpu_cap - cpu) * MAX_NODE_SCORE // cpu_cap * cpu_weight
            weight_sum += cpu_weight
        if memory_cap:
            if memory <= memory_cap:
                node_score += (memory_cap - memory) * MAX_NODE_SCORE // memory_cap * memory_weight
            weight_sum += memory_weight
        return node_score // weight_sum if weight_sum else 0

    return scorer


def most_allocated_scorer(resources: Sequence[ResourceSpec]) -> Scorer:
    """Favours full nodes: per resource ``min(requested, capacity) * 100 / capacity``."""
    weights = tuple(r.weight for r in resources)

    def scorer(requested: list[int], allocatable: list[int]) -> int:
        node_score = weight_sum = 0
        for req, cap, weight in zip(requested, allocatable, weights, strict=True):
            if cap == 0:
                continue
            # Requested may pass capacity: pods without requests count 100m / 200Mi.
            node_score += go_div(min(req, cap) * MAX_NODE_SCORE, cap) * weight
            weight_sum += weight
        return go_div(node_score, weight_sum) if weight_sum else 0

    return scorer


MAX_CUSTOM_PRIORITY_SCORE: Final = 10
"""Shape scores are 0..10 in the args and scaled by MAX_NODE_SCORE / 10 before use."""
MAX_UTILIZATION: Final = 100


def broken_linear(shape: Sequence[tuple[int, int]]) -> Callable[[int], int]:
    """kube's helper.BuildBrokenLinearFunction over (utilization, score) points."""

    def value(p: int) -> int:
        for i, (utilization, score) in enumerate(shape):
            if p <= utilization:
                if i == 0:
                    return score
                u0, s0 = shape[i - 1]
                return s0 + go_div((score - s0) * (p - u0), utilization - u0)
        return shape[-1][1]

    return value


def requested_to_capacity_ratio_scorer(
    resources: Sequence[ResourceSpec], shape: Sequence[tuple[int, int]]
) -> Scorer:
    """Scores utilization along the configured shape; resources scoring 0 carry no weight."""
    weights = tuple(r.weight for r in resources)
    scale = MAX_NODE_SCORE // MAX_CUSTOM_PRIORITY_SCORE
    raw = broken_linear(tuple((u, s * scale) for u, s in shape))

    def scorer(requested: list[int], allocatable: list[int]) -> int:
        node_score = weight_sum = 0
        for req, cap, weight in zip(requested, allocatable, weights, strict=True):
            if cap == 0:
                continue
            if req > cap:
                resource_score = raw(MAX_UTILIZATION)
            else:
                resource_score = raw(go_div(req * MAX_UTILIZATION, cap))
            if resource_score > 0:
                node_score += resource_score * weight
                weight_sum += weight
        if weight_sum == 0:
            return 0
        # Go's math.Round(float(n)/float(d)), half away from zero; both are non-negative.
        return (2 * node_score + weight_sum) // (2 * weight_sum)

    return scorer


_MAX_SCORE_F = float(MAX_NODE_SCORE)


def balanced_pair_change(
    cpu: int, cpu_cap: int, memory: int, memory_cap: int, pod_cpu: int, pod_memory: int
) -> int:
    """BalancedAllocation's score for (cpu, memory): balanced_resource_scorer with the pod
    (``cpu``, ``memory`` include it) and without, unrolled with the same float steps, and
    ``50 + (50 + with - without) / 2``; both balances lie in [50, 100], so ``//`` is Go's
    division. One call per node: this runs for every feasible node of every full pass."""
    if not (cpu_cap and memory_cap):
        return 75  # one fraction or none: std 0 with and without the pod
    # min(x, 1.0) and abs() spelled as comparisons: the same floats, without the calls.
    cpu_cap_f = float(cpu_cap)
    memory_cap_f = float(memory_cap)
    first = float(cpu) / cpu_cap_f
    if first > 1.0:
        first = 1.0
    second = float(memory) / memory_cap_f
    if second > 1.0:
        second = 1.0
    half_gap = (first - second) / 2
    with_pod = int((1 - (half_gap if half_gap >= 0 else -half_gap)) * _MAX_SCORE_F)
    first = float(cpu - pod_cpu) / cpu_cap_f
    if first > 1.0:
        first = 1.0
    second = float(memory - pod_memory) / memory_cap_f
    if second > 1.0:
        second = 1.0
    half_gap = (first - second) / 2
    without_pod = int((1 - (half_gap if half_gap >= 0 else -half_gap)) * _MAX_SCORE_F)
    return 50 + (50 + with_pod - without_pod) // 2


def balanced_resource_scorer(requested: list[int], allocatable: list[int]) -> int:
    """``(1 - std of requested/allocatable fractions) * 100``, fractions capped at 1."""
    fractions: list[float] = []
    total = 0.0
    for req, cap in zip(requested, allocatable, strict=True):
        if cap == 0:
            continue
        fraction = min(float(req) / float(cap), 1.0)
        total += fraction
        fractions.append(fraction)
    std = 0.0
    if len(fractions) == 2:
        std = abs((fractions[0] - fractions[1]) / 2)
    elif len(fractions) > 2:
        mean = total / len(fractions)
        squares = 0.0
        for fraction in fractions:
            squares += (fraction - mean) * (fraction - mean)
        std = math.sqrt(squares / len(fractions))
    return int((1 - std) * float(MAX_NODE_SCORE))
