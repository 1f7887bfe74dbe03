"""Which devices are taken: allocated claims plus allocations in flight (kube's
``AllocatedState``, gathered by its claim tracker).

A device is taken by an allocated claim's result unless the result has admin access
(admin access never blocks others). With consumable capacity, a result with a ``shareID``
takes a share of a device that allows multiple allocations, and its ``consumedCapacity``
adds to the device's aggregated capacity instead of taking the device whole.

The scheduler records its own allocations between Reserve and the claim's status update
(PreBind) with :meth:`AllocatedState.add` and drops them on Unreserve with
:meth:`AllocatedState.remove`, so no device is allocated twice. Counts, not sets: the same
result can be in flight and, a moment later, in the informer's copy of the claim.

Neighbours: ``allocator`` (reads it), ``model.dra_claims`` (allocation results).
"""

from __future__ import annotations

from collections import Counter
from fractions import Fraction
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

    from scheduler.model.dra_claims import AllocationResult, ResourceClaim

DeviceID = tuple[str, str, str]
"""(driver, pool, device)."""
SharedDeviceID = tuple[str, str, str, str]
"""(driver, pool, device, shareID)."""


class AllocatedState:
    """Taken devices, shares and aggregated consumed capacity; mutable, not thread-safe."""

    __slots__ = ("_capacity", "_devices", "_shared", "_shared_devices", "consumable_capacity")

    def __init__(self, *, consumable_capacity: bool = True) -> None:
        self.consumable_capacity = consumable_capacity
        self._devices: Counter[DeviceID] = Counter()
        self._shared: Counter[SharedDeviceID] = Counter()
        self._shared_devices: Counter[DeviceID] = Counter()
        self._capacity: dict[DeviceID, dict[str, Fraction]] = {}

    @classmethod
    def from_claims(
        cls, claims: Iterable[ResourceClaim], *, consumable_capacity: bool = True
    ) -> AllocatedState:
        state = cls(consumable_capacity=consumable_capacity)
        for claim in claims:
            if claim.allocation is not None:
                state.add(claim.allocation)
        return state

    def _apply(self, allocation: AllocationResult, sign: int) -> None:
        for r in allocation.results:
            if r.admin_access:
                continue
            device: DeviceID = (r.driver, r.pool, r.device)
            if self.consumable_capacity and r.share_id is not None:
                self._shared[(*device, r.share_id)] += sign
                self._shared_devices[device] += sign
                if r.consumed_capacity is not None:
                    totals = self._capacity.setdefault(device, {})
                    for name, q in r.consumed_capacity.items():
                        totals[name] = totals.get(name, Fraction(0)) + sign * q.value
                    if sign < 0 and all(v == 0 for v in totals.values()):
                        del self._capacity[device]
                continue
            self._devices[device] += sign
        # Counter keeps zero and negative counts; drop them so membership stays exact.
        for counter in (self._devices, self._shared, self._shared_devices):
            for key in [k for k, v in counter.items() if v <= 0]:
                del counter[key]

    def add(self, allocation: AllocationResult) -> None:
        """Record an allocation (a claim's, or one in flight from Reserve to PreBind)."""
        self._apply(allocation, 1)

    def remove(self, allocation: AllocationResult) -> None:
        """Forget an allocation recorded with :meth:`add` (Unreserve, claim deallocated)."""
        self._apply(allocation, -1)

    def device_taken(self, device: DeviceID) -> bool:
        """Allocated whole (kube's ``AllocatedDevices.Has``)."""
        return device in self._devices

    def is_allocated(self, device: DeviceID) -> bool:
        """kube's IsDeviceAllocated: whole, shared or with consumed capacity."""
        return device in self._devices or device in self._shared_devices or device in self._capacity

    def capacity_in_use(self, device: DeviceID) -> bool:
        """Whether a share of the device is allocated (its counters are already charged)."""
        return device in self._capacity or device in self._shared_devices

    def aggregated_capacity(self, device: DeviceID) -> Mapping[str, Fraction] | None:
        return self._capacity.get(device)
