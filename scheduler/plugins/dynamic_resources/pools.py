"""Resource pools as one node sees them: kube's ``GatherPools`` (incubating allocator).

A pool is a driver's set of devices published in one or more ResourceSlices that share a
pool name and generation. For a node, the relevant slices are those for the node
(``nodeName``), those whose ``nodeSelector``/``allNodes`` covers it, and per-device
slices with at least one device for it. A pool is *incomplete* while not all of its
``resourceSliceCount`` slices of the newest generation are seen (the allocator does not
use it, and "All" requests fail), *obsolete* when a newer generation exists somewhere
(ignored), *invalid* on duplicate device names or counters that do not exist. Pools come
sorted by driver and pool name, the pools with binding conditions last.

:class:`SliceIndex` holds the slices of one cluster state, indexed once so that gathering
a node's pools costs only that node's slices, and remembers each node's pools.

Neighbours: ``allocator`` (uses the pools), ``model.dra_devices`` (slices).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping
    from fractions import Fraction

    from scheduler.model.dra_devices import ResourceSlice

PoolID = tuple[str, str]
"""(driver, pool name)."""


@dataclass(slots=True)
class Pool:
    pool_id: PoolID
    incomplete: bool = False
    invalid: bool = False
    invalid_reason: str = ""
    slices: tuple[ResourceSlice, ...] = ()
    """The device slices for the node, sorted by name (kube's DeviceSlicesTargetingNode)."""
    other_slices: tuple[ResourceSlice, ...] = ()
    """The pool's device slices for other nodes: their allocated devices use counters too."""
    counter_sets: Mapping[str, Mapping[str, Fraction]] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return f"{self.pool_id[0]}/{self.pool_id[1]}"


def _uses_compatibility_groups(s: ResourceSlice) -> bool:
    return any(c.compatibility_groups for d in s.devices for c in d.consumes_counters)


def _has_binding_conditions(pool: Pool) -> bool:
    return any(d.binding_conditions is not None for s in pool.slices for d in s.devices)


def _invalid(pool_id: PoolID, reason: str) -> Pool:
    return Pool(pool_id, invalid=True, invalid_reason=reason)


def _validate_consumption(
    counter_sets: Mapping[str, Mapping[str, Fraction]], slices: Iterable[ResourceSlice]
) -> str | None:
    for s in slices:
        for device in s.devices:
            for consumption in device.consumes_counters:
                counters = counter_sets.get(consumption.counter_set)
                if counters is None:
                    return f"counter set {consumption.counter_set} not found"
                for name in consumption.counters:
                    if name not in counters:
                        return f"counter {name} not found in counter set {consumption.counter_set}"
    return None


def _build_pool(
    pool_id: PoolID,
    slices: list[ResourceSlice],
    all_slices: list[ResourceSlice] | None,
    *,
    partitionable: bool,
) -> Pool:
    slices.sort(key=lambda s: s.name)
    device_slices: list[ResourceSlice] = []
    counter_slices: list[ResourceSlice] = []
    for s in slices:
        (counter_slices if partitionable and s.shared_counters else device_slices).append(s)
    other: list[ResourceSlice] = []
    if all_slices is not None and len(slices) < len(all_slices):
        names = {s.name for s in slices}
        for s in all_slices:
            if s.name not in names:
                (counter_slices if partitionable and s.shared_counters else other).append(s)
    seen: set[str] = set()
    for s in device_slices:
        for device in s.devices:
            if device.name in seen:
                return _invalid(pool_id, f"duplicate device name {device.name}")
            seen.add(device.name)
    if not partitionable:
        return Pool(pool_id, slices=tuple(device_slices))
    counter_sets: dict[str, Mapping[str, Fraction]] = {}
    for s in counter_slices:
        for counter_set in s.shared_counters:
            if counter_set.name in counter_sets:
                return _invalid(pool_id, f"duplicate counter set name {counter_set.name}")
            counter_sets[counter_set.name] = counter_set.counters
    reason = _validate_consumption(counter_sets, device_slices) or _validate_consumption(
        counter_sets, other
    )
    if reason is not None:
        return _invalid(pool_id, reason)
    return Pool(
        pool_id, slices=tuple(device_slices), other_slices=tuple(other), counter_sets=counter_sets
    )


class SliceIndex:
    """All ResourceSlices of one cluster state, indexed for :meth:`pools_for_node`.

    Immutable once built: the integration builds a new one when slices change (or keeps
    one per slice generation) and the per-node pools it remembers stay valid.
    """

    __slots__ = (
        "_by_pool",
        "_cache",
        "_on_node",
        "_partitionable",
        "_pool_nodes",
        "_shared",
        "compat_groups",
    )

    def __init__(
        self,
        slices: Iterable[ResourceSlice],
        *,
        partitionable: bool = True,
        compat_groups: bool = False,
    ) -> None:
        self._on_node: dict[str, list[ResourceSlice]] = {}
        self._shared: list[ResourceSlice] = []
        self._by_pool: dict[PoolID, list[ResourceSlice]] = {}
        self._partitionable = partitionable
        self.compat_groups = compat_groups
        self._cache: dict[tuple[str, tuple[tuple[str, str], ...]], tuple[Pool, ...]] = {}
        self._pool_nodes: dict[PoolID, str] | None = None
        for s in slices:
            if s.node.node_name:
                self._on_node.setdefault(s.node.node_name, []).append(s)
            else:
                self._shared.append(s)
            self._by_pool.setdefault((s.driver, s.pool.name), []).append(s)

    def pool_nodes(self) -> Mapping[PoolID, str] | None:
        """Each pool's node when every slice names one node (``nodeName``) and no pool spans
        two nodes; None otherwise (a device taken may then change other nodes' pools: a
        network-attached slice, or counters shared across nodes)."""
        if self._pool_nodes is None:
            if self._shared:
                return None
            found: dict[PoolID, str] = {}
            for pool_id, slices in self._by_pool.items():
                nodes = {s.node.node_name for s in slices}
                if len(nodes) != 1:
                    return None
                found[pool_id] = str(nodes.pop())
            self._pool_nodes = found
        return self._pool_nodes

    def pools_for_node(self, node_name: str, labels: Mapping[str, str]) -> tuple[Pool, ...]:
        """kube's GatherPools for one node; remembered per node name and labels."""
        # Labels only matter to selector-based slices; without them the name is the key.
        key = (node_name, tuple(sorted(labels.items())) if self._shared else ())
        found = self._cache.get(key)
        if found is None:
            found = self._cache[key] = self._gather(node_name, labels)
        return found

    def _relevant(self, s: ResourceSlice, node_name: str, labels: Mapping[str, str]) -> bool:
        if not self._partitionable and (s.per_device_node_selection_set or s.shared_counters):
            return False
        if not self.compat_groups and _uses_compatibility_groups(s):
            return False
        if s.node.is_set:
            return s.node.matches(node_name, labels)
        if s.per_device_node_selection:
            return any(d.node.matches(node_name, labels) for d in s.devices)
        return False

    def _gather(self, node_name: str, labels: Mapping[str, str]) -> tuple[Pool, ...]:
        found: dict[PoolID, list[ResourceSlice]] = {}
        for s in (*self._on_node.get(node_name, ()), *self._shared):
            if not self._relevant(s, node_name, labels):
                continue
            pool_id = (s.driver, s.pool.name)
            current = found.get(pool_id)
            if current is None or s.pool.generation > current[0].pool.generation:
                found[pool_id] = [s]
            elif s.pool.generation == current[0].pool.generation:
                current.append(s)
        plain: list[Pool] = []
        with_conditions: list[Pool] = []
        for pool_id, slices in found.items():
            generation = slices[0].pool.generation
            wanted = slices[0].pool.resource_slice_count
            all_slices: list[ResourceSlice] | None = None
            if len(slices) != wanted:
                everything = self._by_pool.get(pool_id, [])
                if any(s.pool.generation > generation for s in everything):
                    continue  # obsolete: a newer generation is being published
                all_slices = [s for s in everything if s.pool.generation == generation]
                if not self.compat_groups:
                    all_slices = [s for s in all_slices if not _uses_compatibility_groups(s)]
                if len(all_slices) != wanted:
                    plain.append(Pool(pool_id, incomplete=True))
                    continue
            pool = _build_pool(pool_id, slices, all_slices, partitionable=self._partitionable)
            (with_conditions if _has_binding_conditions(pool) else plain).append(pool)
        plain.sort(key=lambda p: p.pool_id)
        with_conditions.sort(key=lambda p: p.pool_id)
        return (*plain, *with_conditions)
