"""NodeResourcesFit: the pod's requests must fit the node's free allocatable; nodes are
scored by a configurable strategy.

Port of kube-scheduler's plugins/noderesources/fit.go (v1.35). Filter checks the pod count
and then cpu, memory, ephemeral-storage and every scalar (extended, hugepages) resource the
pod requests, and returns *all* insufficient reasons in one Status ("Too many pods",
"Insufficient cpu", ...). The code is Unschedulable, or UnschedulableAndUnresolvable when
some request exceeds the node's whole allocatable (no preemption can help there), as kube
does since v1.32. Score uses ``resource_allocation.ResourceAllocationScorer`` with the
LeastAllocated, MostAllocated or RequestedToCapacityRatio strategy. Neighbours:
resource_allocation (the scorer), plugin_args, signature_fragments (the resources fragment
shared with BalancedAllocation), model.parse_common (resource names), cache.node_info.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from scheduler.framework import status as st
from scheduler.framework.cycle_state import StateKey
from scheduler.framework.events import ClusterEvent
from scheduler.model import parse_common
from scheduler.plugins import names, plugin_args, resource_allocation, signature_fragments

if TYPE_CHECKING:
    from collections.abc import Callable, Hashable, Sequence

    from scheduler.cache.node_info import NodeInfo
    from scheduler.cache.snapshot import Snapshot
    from scheduler.framework.cycle_state import CycleState
    from scheduler.framework.interfaces import Handle, PluginArgs
    from scheduler.model.pod import Pod

ARGS: Final = "NodeResourcesFitArgs"
LEAST_ALLOCATED: Final = "LeastAllocated"
MOST_ALLOCATED: Final = "MostAllocated"
REQUESTED_TO_CAPACITY_RATIO: Final = "RequestedToCapacityRatio"
STRATEGIES: Final = (LEAST_ALLOCATED, MOST_ALLOCATED, REQUESTED_TO_CAPACITY_RATIO)

TOO_MANY_PODS: Final = "Too many pods"
INSUFFICIENT_CPU: Final = "Insufficient cpu"
INSUFFICIENT_MEMORY: Final = "Insufficient memory"
INSUFFICIENT_EPHEMERAL: Final = "Insufficient ephemeral-storage"


def is_extended_resource_name(name: str) -> bool:
    """kube's v1helper.IsExtendedResourceName: a domain outside ``*kubernetes.io/``, and a
    valid quota name once prefixed with ``requests.`` (the only names ``ignoredResources``
    and ``ignoredResourceGroups`` apply to)."""
    if "/" not in name or "kubernetes.io/" in name or name.startswith("requests."):
        return False
    return parse_common.is_qualified_name("requests." + name)


@dataclass(frozen=True, slots=True)
class FitArgs:
    """Validated NodeResourcesFitArgs with kube's defaults applied."""

    ignored_resources: frozenset[str]
    ignored_resource_groups: frozenset[str]
    strategy: str
    resources: tuple[resource_allocation.ResourceSpec, ...]
    shape: tuple[tuple[int, int], ...]
    """(utilization 0..100, score 0..10) points; only for RequestedToCapacityRatio."""


def parse_args(args: PluginArgs) -> FitArgs:
    """Validate ``args``; messages start with the field path (ValueError)."""
    plugin_args.check_fields(
        args, ARGS, ("ignoredResources", "ignoredResourceGroups", "scoringStrategy")
    )
    ignored = []
    where = f"{ARGS}.ignoredResources"
    for i, item in enumerate(plugin_args.as_list(args.get("ignoredResources") or [], where)):
        name = plugin_args.as_str(item, f"{where}[{i}]")
        if not parse_common.is_qualified_name(name):
            raise ValueError(f'{where}[{i}]: invalid resource name "{name}"')
        ignored.append(name)
    groups = []
    where = f"{ARGS}.ignoredResourceGroups"
    for i, item in enumerate(plugin_args.as_list(args.get("ignoredResourceGroups") or [], where)):
        group = plugin_args.as_str(item, f"{where}[{i}]")
        if "/" in group:
            raise ValueError(f"{where}[{i}]: resource group name can't contain '/'")
        if not parse_common.is_qualified_name(group):
            raise ValueError(f'{where}[{i}]: invalid resource group name "{group}"')
        groups.append(group)

    where = f"{ARGS}.scoringStrategy"
    raw_strategy = args.get("scoringStrategy")
    if raw_strategy is None:
        return FitArgs(
            frozenset(ignored),
            frozenset(groups),
            LEAST_ALLOCATED,
            resource_allocation.DEFAULT_RESOURCES,
            (),
        )
    strategy = plugin_args.as_mapping(raw_strategy, where)
    plugin_args.check_fields(strategy, where, ("type", "resources", "requestedToCapacityRatio"))
    kind = plugin_args.as_str(strategy.get("type", ""), f"{where}.type")
    if kind not in STRATEGIES:
        supported = ", ".join(f'"{s}"' for s in STRATEGIES)
        raise ValueError(f'{where}.type: unknown value "{kind}" (supported: {supported})')
    resources = resource_allocation.parse_resource_specs(
        strategy.get("resources"), f"{where}.resources"
    )
    for i, spec in enumerate(resources):
        if not 0 < spec.weight <= 100:
            raise ValueError(
                f"{where}.resources[{i}].weight: resource weight of {spec.name} "
                f"not in valid range [1, 100]: {spec.weight}"
            )
    shape: tuple[tuple[int, int], ...] = ()
    raw_ratio = strategy.get("requestedToCapacityRatio")
    if raw_ratio is not None:
        ratio = plugin_args.as_mapping(raw_ratio, f"{where}.requestedToCapacityRatio")
        plugin_args.check_fields(ratio, f"{where}.requestedToCapacityRatio", ("shape",))
        shape = _parse_shape(ratio.get("shape"), f"{where}.requestedToCapacityRatio.shape")
    elif kind == REQUESTED_TO_CAPACITY_RATIO:
        raise ValueError(f"{where}.requestedToCapacityRatio: required for type {kind}")
    return FitArgs(frozenset(ignored), frozenset(groups), kind, resources, shape)


def _parse_shape(value: object, where: str) -> tuple[tuple[int, int], ...]:
    points = []
    for i, item in enumerate(plugin_args.as_list(value if value is not None else [], where)):
        point = plugin_args.as_mapping(item, f"{where}[{i}]")
        plugin_args.check_fields(point, f"{where}[{i}]", ("utilization", "score"))
        utilization = plugin_args.as_int(point.get("utilization", 0), f"{where}[{i}].utilization")
        score = plugin_args.as_int(point.get("score", 0), f"{where}[{i}].score")
        points.append((utilization, score))
    if not points:
        raise ValueError(f"{where}: at least one point must be specified")
    for i in range(1, len(points)):
        if points[i - 1][0] >= points[i][0]:
            raise ValueError(f"{where}[{i}].utilization: values must be sorted in increasing order")
    top = resource_allocation.MAX_CUSTOM_PRIORITY_SCORE
    for i, (utilization, score) in enumerate(points):
        if not 0 <= utilization <= resource_allocation.MAX_UTILIZATION:
            raise ValueError(f"{where}[{i}].utilization: {utilization} not in valid range [0, 100]")
        if not 0 <= score <= top:
            raise ValueError(f"{where}[{i}].score: {score} not in valid range [0, {top}]")
    return tuple(points)


@dataclass(frozen=True, slots=True)
class _Request:
    """What Filter compares, precomputed per pod: ignored and zero scalars already dropped."""

    milli_cpu: int
    memory: int
    ephemeral_storage: int
    scalar: tuple[tuple[str, int], ...]


_PRE_FILTER_KEY: Final[StateKey[_Request]] = StateKey("PreFilter" + names.NODE_RESOURCES_FIT)
_PRE_SCORE_KEY: Final[StateKey[tuple[int, ...]]] = StateKey("PreScore" + names.NODE_RESOURCES_FIT)


_EVENTS: Final = (
    ClusterEvent.NODE_ADD,
    ClusterEvent.NODE_UPDATE,
    ClusterEvent.ASSIGNED_POD_SCALE_DOWN,
    ClusterEvent.ASSIGNED_POD_DELETE,
)
"""The cluster events that may undo a rejection (see :meth:`events_to_register`)."""


class NodeResourcesFit:
    """PreFilter, Filter, PreScore, Score, Sign.

    Args (NodeResourcesFitArgs): ``ignoredResources``, ``ignoredResourceGroups``,
    ``scoringStrategy: {type, resources: [{name, weight}], requestedToCapacityRatio:
    {shape: [{utilization, score}]}}``.
    """

    name: str = names.NODE_RESOURCES_FIT

    def __init__(self, args: PluginArgs, handle: Handle) -> None:
        self.args = parse_args(args)
        a = self.args
        pair: resource_allocation.PairScorer | None = None
        if a.strategy == MOST_ALLOCATED:
            scorer = resource_allocation.most_allocated_scorer(a.resources)
        elif a.strategy == REQUESTED_TO_CAPACITY_RATIO:
            scorer = resource_allocation.requested_to_capacity_ratio_scorer(a.resources, a.shape)
        else:
            scorer = resource_allocation.least_allocated_scorer(a.resources)
            if len(a.resources) == 2:
                pair = resource_allocation.least_allocated_pair_scorer(a.resources)
        self._scorer = resource_allocation.ResourceAllocationScorer(
            a.resources, use_requested=False, scorer=scorer, pair_scorer=pair
        )

    def events_to_register(self) -> tuple[ClusterEvent, ...]:
        """kube: Node/Add|UpdateNodeAllocatable, AssignedPod/Delete|UpdatePodScaleDown (free
        requests; the scale-down with InPlacePodVerticalScaling, GA and on)."""
        return _EVENTS

    def _ignored(self, name: str) -> bool:
        if not is_extended_resource_name(name):
            return False
        a = self.args
        return name in a.ignored_resources or (
            bool(a.ignored_resource_groups) and name.split("/", 1)[0] in a.ignored_resource_groups
        )

    def _request(self, pod: Pod) -> _Request:
        r = pod.requests
        scalar = (
            tuple(
                sorted(
                    (name, amount)
                    for name, amount in r.scalar.items()
                    if amount
                    and parse_common.is_scalar_resource_name(name)
                    and not self._ignored(name)
                )
            )
            if r.scalar
            else ()
        )
        return _Request(r.milli_cpu, r.memory, r.ephemeral_storage, scalar)

    def pre_filter(
        self, state: CycleState, pod: Pod, snapshot: Snapshot
    ) -> tuple[frozenset[str] | None, st.Status]:
        state.write(_PRE_FILTER_KEY, self._request(pod))
        return None, st.SUCCESS

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> st.Status:
        want = state.read(_PRE_FILTER_KEY)
        if want is None:  # a recheck on a fresh CycleState
            want = self._request(pod)
        node = node_info.node
        if node is None:
            return st.error("node not found")
        alloc = node.allocatable
        used = node_info.requested
        reasons: list[str] | None = None
        unresolvable = False
        if len(node_info.pods) + 1 > alloc.allowed_pod_number:
            reasons = [TOO_MANY_PODS]
        if want.milli_cpu > 0 and want.milli_cpu > alloc.milli_cpu - used.milli_cpu:
            reasons = [*(reasons or ()), INSUFFICIENT_CPU]
            unresolvable |= want.milli_cpu > alloc.milli_cpu
        if want.memory > 0 and want.memory > alloc.memory - used.memory:
            reasons = [*(reasons or ()), INSUFFICIENT_MEMORY]
            unresolvable |= want.memory > alloc.memory
        eph = want.ephemeral_storage
        if eph > 0 and eph > alloc.ephemeral_storage - used.ephemeral_storage:
            reasons = [*(reasons or ()), INSUFFICIENT_EPHEMERAL]
            unresolvable |= eph > alloc.ephemeral_storage
        for name, amount in want.scalar:
            have = alloc.scalar.get(name, 0)
            if amount > have - used.scalar.get(name, 0):
                reasons = [*(reasons or ()), f"Insufficient {name}"]
                unresolvable |= amount > have
        if reasons is None:
            return st.SUCCESS
        code = st.Code.UNSCHEDULABLE_AND_UNRESOLVABLE if unresolvable else st.Code.UNSCHEDULABLE
        return st.Status(code, tuple(reasons))

    def precheck(self, state: CycleState, pod: Pod) -> Callable[[NodeInfo], bool] | None:
        """True for a node whose pod count, free cpu or free memory Filter rejects: the
        nodes a filling cluster is full of, tested without a Status (``framework.feasible``)."""
        want = state.read(_PRE_FILTER_KEY)
        if want is None:
            return None
        cpu = want.milli_cpu if want.milli_cpu > 0 else None
        memory = want.memory if want.memory > 0 else None

        def rejects(node_info: NodeInfo) -> bool:
            node = node_info.node
            if node is None:
                return False  # Filter's Error, not a rejection
            alloc = node.allocatable
            used = node_info.requested
            return (
                len(node_info.pods) >= alloc.allowed_pod_number
                or (cpu is not None and cpu > alloc.milli_cpu - used.milli_cpu)
                or (memory is not None and memory > alloc.memory - used.memory)
            )

        return rejects

    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> st.Status:
        state.write(_PRE_SCORE_KEY, self._scorer.pod_requests(pod))
        return st.SUCCESS

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        requests = state.read(_PRE_SCORE_KEY)
        if requests is None:
            requests = self._scorer.pod_requests(pod)
        return self._scorer.score(node_info, requests)

    def score_nodes(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> list[int]:
        requests = state.read(_PRE_SCORE_KEY)
        if requests is None:
            requests = self._scorer.pod_requests(pod)
        return self._scorer.score_nodes(nodes, requests)

    def sign_pod(self, pod: Pod) -> Hashable | None:
        return signature_fragments.resources_fragment(pod)
