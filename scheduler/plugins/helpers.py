"""Shared plugin math and plumbing: score normalization, the resource-allocation scorer,
signature fragments read by more than one plugin, and plugin-args readers.

Plugin modules never import each other (an import-linter contract); what two of them share
lives here. The score math ports kube-scheduler's ``helper.DefaultNormalizeScore`` and
``noderesources/{resource_allocation,least_allocated,most_allocated,
requested_to_capacity_ratio,balanced_allocation}.go`` with Go's integer semantics (division
truncates toward zero, ``math.Round`` rounds half away from zero), so scores match kube's
byte for byte. Neighbours: node_resources_fit.py and balanced_allocation.py use the scorer;
taint_toleration.py and node_affinity.py use default_normalize_score.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from scheduler.framework.interfaces import MAX_NODE_SCORE
from scheduler.model import resources as res

if TYPE_CHECKING:
    from scheduler.cache.node_info import NodeInfo
    from scheduler.model.pod import Pod

# -- Go arithmetic ---------------------------------------------------------------------------


def go_div(a: int, b: int) -> int:
    """``a / b`` on Go integers: the quotient truncated toward zero (Python's ``//`` floors)."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def default_normalize_score(max_priority: int, reverse: bool, scores: list[int]) -> None:
    """kube's helper.DefaultNormalizeScore, in place: scale to 0..max_priority by the maximum.

    All zero: unchanged, or all ``max_priority`` when ``reverse`` (fewest bad things wins).
    """
    max_count = 0
    for value in scores:
        if value > max_count:
            max_count = value
    if max_count == 0:
        if reverse:
            for i in range(len(scores)):
                scores[i] = max_priority
        return
    for i, value in enumerate(scores):
        scaled = go_div(max_priority * value, max_count)
        scores[i] = max_priority - scaled if reverse else scaled


# -- signature fragments shared by several plugins (KEP-5598) ---------------------------------
# A fragment is ``(signer key, canonical value)``. The keys are kube's signer names, so two
# plugins reading the same pod fields (NodeResourcesFit and BalancedAllocation; TaintToleration
# and NodeUnschedulable) give the same fragment and the signature can keep it once.

NODE_NAME_SIGNER: Final = "v1.Pod.Spec.NodeName"
NODE_AFFINITY_SIGNER: Final = "v1.Pod.Spec.Affinity.NodeAffinity"
HOST_PORTS_SIGNER: Final = "v1.Pod.Spec.HostPorts()"
RESOURCES_SIGNER: Final = "v1.Pod.Spec.ContainerRequestsAndOverheads()"
TOLERATIONS_SIGNER: Final = "v1.Pod.Spec.Tolerations"
IMAGE_NAMES_SIGNER: Final = "v1.Pod.Spec.CanonicalImageNames()"


def tolerations_fragment(pod: Pod) -> Hashable:
    """The pod's tolerations as a sorted set of what matching reads.

    ``tolerationSeconds`` is left out (no scheduling decision reads it); the operator is
    spelled out (empty means Equal) and Exists drops the value (matching ignores it).
    """
    items = set()
    for t in pod.tolerations:
        operator = t.operator or "Equal"
        value = "" if operator == "Exists" else t.value
        items.add((t.key, operator, value, t.effect.value if t.effect is not None else ""))
    return (TOLERATIONS_SIGNER, tuple(sorted(items)))


def resources_fragment(pod: Pod) -> Hashable:
    """Effective requests plus the non-zero cpu/memory used by scoring (zero scalars dropped:
    a zero request changes no filter or score)."""
    r = pod.requests
    scalar = tuple(sorted((name, amount) for name, amount in r.scalar.items() if amount))
    value = (
        r.milli_cpu,
        r.memory,
        r.ephemeral_storage,
        scalar,
        pod.non_zero_milli_cpu,
        pod.non_zero_memory,
    )
    return (RESOURCES_SIGNER, value)


# -- resource names (k8s.io/kubernetes/pkg/apis/core/v1/helper) -------------------------------


def is_extended_resource_name(name: str) -> bool:
    """Has a domain prefix outside ``*kubernetes.io/`` and is not a quota ``requests.`` name."""
    if "/" not in name or "kubernetes.io/" in name or name.startswith("requests."):
        return False
    return is_qualified_name("requests." + name)


def is_scalar_resource_name(name: str) -> bool:
    """Resources kube keeps in ``ScalarResources``: extended, hugepages, prefixed native,
    attachable volumes."""
    return (
        is_extended_resource_name(name)
        or name.startswith(("hugepages-", "attachable-volumes-"))
        or "kubernetes.io/" in name
    )


_NAME_PART = re.compile(r"^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$")
_DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")


def is_qualified_name(value: str) -> bool:
    """apimachinery's IsQualifiedName: ``[prefix/]name``, name <= 63 chars, DNS-1123 prefix."""
    prefix, slash, name = value.rpartition("/")
    if slash and (not prefix or len(prefix) > 253 or not _DNS_SUBDOMAIN.match(prefix)):
        return False
    return 0 < len(name) <= 63 and bool(_NAME_PART.match(name))


# -- plugin args readers ---------------------------------------------------------------------
# Args arrive as the YAML mapping under pluginConfig[i].args. Errors are ValueErrors whose
# message starts with the field path (``NodeResourcesFitArgs.scoringStrategy.type: ...``).


def check_fields(args: Mapping[str, object], where: str, allowed: Iterable[str]) -> None:
    """Reject fields we do not know: a typo must not silently fall back to a default."""
    known = set(allowed)
    for key in args:
        if key not in known:
            raise ValueError(f'{where}: unknown field "{key}"')


def as_mapping(value: object, where: str) -> Mapping[str, object]:
    if not isinstance(value, Mapping) or not all(isinstance(k, str) for k in value):
        raise ValueError(f"{where}: must be a mapping, got {type(value).__name__}")
    return value


def as_list(value: object, where: str) -> list[object]:
    if not isinstance(value, list | tuple):
        raise ValueError(f"{where}: must be a list, got {type(value).__name__}")
    return list(value)


def as_int(value: object, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{where}: must be an integer, got {value!r}")
    return value


def as_str(value: object, where: str) -> str:
    if not isinstance(value, str):
        raise ValueError(f"{where}: must be a string, got {value!r}")
    return value


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


# -- the resource-allocation scorer (noderesources/resource_allocation.go) --------------------

Scorer = Callable[[list[int], list[int]], int]
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
    if is_scalar_resource_name(name):
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


def balanced_pair_scorer(cpu: int, cpu_cap: int, memory: int, memory_cap: int) -> int:
    """balanced_resource_scorer for (cpu, memory), unrolled with the same float steps."""
    if cpu_cap and memory_cap:
        first = min(float(cpu) / float(cpu_cap), 1.0)
        second = min(float(memory) / float(memory_cap), 1.0)
        return int((1 - abs((first - second) / 2)) * float(MAX_NODE_SCORE))
    return MAX_NODE_SCORE  # one fraction or none: std 0


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
