"""DraManager: what the allocator needs besides the pod's claims, kept current between cycles
(kube's DRA manager: the claim tracker's allocated devices, the slice lister, the CEL cache).

kube's PreFilter gathers, for every pod, the devices taken by all allocated claims and by
the allocations in flight, and lists every ResourceSlice. Here those are kept, not gathered:

* ``allocated`` (``AllocatedState``) follows ``cache.dra_objects``' allocation changes as an
  observer (claims allocated, deallocated or deleted; allocations entering or leaving the
  in-flight set), so building a pod's allocator costs nothing per claim in the cluster;
* the ``SliceIndex`` is rebuilt only when a slice changed (``slices_generation``), and the
  pools it gathers per node stay valid until then;
* the compiled selectors (``SelectorCache``) and the devices' CEL variables
  (``DeviceVariables``, with each selector's verdict on each device) outlive pods;
* the exact batch's trackers (``exact_changes.DeviceChanges``) hear of every allocation
  change, to recompute only the nodes whose devices changed.

Everything is synchronous; the cycle never awaits while a pod's allocator is in use, so the
live ``allocated`` state is exactly what kube's per-pod copy would hold.

Neighbours: ``allocation`` (``PodAllocator``), ``cache.dra_objects`` (the objects), ``plugin``
(one manager per DynamicResources instance).
"""

from __future__ import annotations

import weakref
from typing import TYPE_CHECKING

from scheduler.plugins.dynamic_resources.allocated_state import AllocatedState
from scheduler.plugins.dynamic_resources.allocation import PodAllocator
from scheduler.plugins.dynamic_resources.cel_env import DeviceVariables, SelectorCache
from scheduler.plugins.dynamic_resources.exact_changes import DeviceChanges
from scheduler.plugins.dynamic_resources.pools import SliceIndex

if TYPE_CHECKING:
    from collections.abc import Sequence

    from scheduler.cache.dra_objects import DraObjects
    from scheduler.model.dra_claims import AllocationResult, ResourceClaim
    from scheduler.plugins.dynamic_resources.requests import Features


class DraManager:
    """The allocator's inputs for one DynamicResources plugin; see the module docstring."""

    def __init__(self, objects: DraObjects, *, features: Features) -> None:
        self.objects = objects
        self.features = features
        self.allocated = AllocatedState(consumable_capacity=features.consumable_capacity)
        """Devices taken by allocated claims and by allocations in flight."""
        for allocation in objects.allocations():
            self.allocated.add(allocation)
        objects.observers.append(self)
        self.selectors = SelectorCache()
        self.devices = DeviceVariables()
        self._index: SliceIndex | None = None
        self._index_generation = -1
        self._watchers: weakref.WeakSet[DeviceChanges] = weakref.WeakSet()
        """The exact batch's trackers (one per live signature; gone with its state)."""

    def allocation_changed(
        self, old: AllocationResult | None, new: AllocationResult | None
    ) -> None:
        """``cache.dra_objects``' observer call."""
        if old is not None:
            self.allocated.remove(old)
        if new is not None:
            self.allocated.add(new)
        for watcher in self._watchers:
            watcher.allocation_changed(old, new)

    def watch_devices(self, allocator: PodAllocator) -> DeviceChanges | None:
        """A tracker of the nodes whose devices change from now on, for the exact batch
        that keeps ``allocator``; None when the slices are not all node-local."""
        pool_nodes = self.slice_index.pool_nodes()
        if pool_nodes is None:
            return None
        changes = DeviceChanges(self.objects, pool_nodes, allocator)
        self._watchers.add(changes)
        return changes

    @property
    def slice_index(self) -> SliceIndex:
        """Every slice, indexed by node; rebuilt after a slice changed."""
        generation = self.objects.slices_generation
        if self._index is None or self._index_generation != generation:
            self._index = SliceIndex(
                self.objects.slices(), partitionable=self.features.partitionable_devices
            )
            self._index_generation = generation
        return self._index

    def allocator(self, claims: Sequence[ResourceClaim]) -> PodAllocator:
        """kube's NewAllocator for the claims of one pod that still need devices."""
        return PodAllocator(
            claims,
            classes=self.objects.classes,
            slices=self.slice_index,
            allocated=self.allocated,
            selectors=self.selectors,
            devices=self.devices,
            features=self.features,
        )
