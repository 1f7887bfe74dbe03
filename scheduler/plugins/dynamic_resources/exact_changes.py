"""DeviceChanges: which nodes' DynamicResources verdicts moved since the exact batch last looked.

The exact batch (batching/exact.py) keeps, per node, whether every node-local Filter passes
for one signature, and recomputes a node only when something that node's verdict reads has
changed. For DynamicResources that is, besides the Node itself, the devices its pools hold
and which of them allocations take. With every slice published for one node (``nodeName``)
and every pool on one node (``SliceIndex.pool_nodes``), a device taken or given back
changes the verdict of its pool's node only; a slice or DeviceClass change may change any
node's, and ends the state. A pool no slice publishes is on no node: its allocations change
no verdict.

The manager hands every allocation change to the live trackers (``allocation_changed``);
``catch_up`` turns the pools touched since into node names and forgets, in the shared
allocator, the counters it kept for those pools (kube computes them once per pod).

Neighbours: ``manager`` (feeds the trackers), ``plugin`` (``exact_watch``), ``pools``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Mapping

    from scheduler.cache.dra_objects import DraObjects
    from scheduler.model.dra_claims import AllocationResult
    from scheduler.plugins.dynamic_resources.allocation import PodAllocator
    from scheduler.plugins.dynamic_resources.pools import PoolID


class DeviceChanges:
    """The pools whose devices were taken or given back since the last ``catch_up``."""

    __slots__ = ("__weakref__", "_allocator", "_generations", "_objects", "_pool_nodes", "_pools")

    def __init__(
        self, objects: DraObjects, pool_nodes: Mapping[PoolID, str], allocator: PodAllocator
    ) -> None:
        self._objects = objects
        self._generations = (objects.slices_generation, objects.classes_generation)
        self._pool_nodes = pool_nodes
        self._allocator = allocator
        self._pools: set[PoolID] = set()

    def allocation_changed(
        self, old: AllocationResult | None, new: AllocationResult | None
    ) -> None:
        for allocation in (old, new):
            if allocation is not None:
                for result in allocation.results:
                    self._pools.add((result.driver, result.pool))

    def catch_up(self) -> list[str] | None:
        """The nodes of the pools touched since the last call; None after a slice or class
        change (the index of pools by node, or a class's selectors, may be stale)."""
        objects = self._objects
        if (objects.slices_generation, objects.classes_generation) != self._generations:
            return None
        pools, self._pools = self._pools, set()
        if not pools:
            return []
        self._allocator.forget_counters(pools)
        nodes = {self._pool_nodes[pool] for pool in pools if pool in self._pool_nodes}
        return sorted(nodes)
