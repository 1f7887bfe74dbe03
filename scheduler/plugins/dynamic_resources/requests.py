"""What the allocator knows about one request or sub-request, and the features it obeys.

kube's incubating allocator (``k8s.io/dynamic-resource-allocation/structured``) is the
one v1.37.2 uses with its default feature gates; :class:`Features` holds those gates with
their v1.37.2 defaults. :class:`RequestData` is kube's ``requestData``: the (sub-)request,
its parent, its class, how many devices it needs and, for ``All``, which ones.

Neighbours: ``allocator`` (the search), ``allocation`` (the per-pod entry point).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from scheduler.model.dra_claims import DeviceClass, DeviceRequestSpec
    from scheduler.model.dra_devices import Device, ResourceSlice
    from scheduler.plugins.dynamic_resources.allocated_state import DeviceID
    from scheduler.plugins.dynamic_resources.pools import Pool

ALLOCATION_RESULTS_MAX_SIZE = 32
"""kube's ``resourceapi.AllocationResultsMaxSize``: devices per claim."""


@dataclass(frozen=True, slots=True)
class Features:
    """The allocator's feature switches; defaults are kube-scheduler v1.37.2's gates.

    On by default in v1.37.2: DRAAdminAccess (GA), DRAPrioritizedList (GA), DRADeviceTaints
    (GA), DRAPartitionableDevices, DRAConsumableCapacity, DRAFractionalCapacityRange,
    DRADeviceBindingConditions with DRAResourceClaimDeviceStatus. Off (alpha): the rest;
    the allocator here does not implement them (docs/dra.md).
    """

    admin_access: bool = True
    prioritized_list: bool = True
    partitionable_devices: bool = True
    device_taints: bool = True
    device_binding_and_status: bool = True
    consumable_capacity: bool = True
    fractional_capacity_range: bool = True


class AllocationError(Exception):
    """A problem with a claim, class or pool that stops scheduling the pod (kube returns it
    from Allocate, and the plugin turns it into an Error status). The text is kube's."""


@dataclass(frozen=True, slots=True)
class Candidate:
    """A device where the search found it: kube's ``deviceWithID``."""

    device_id: DeviceID
    device: Device
    slice: ResourceSlice
    pool: Pool


RequestKey = tuple[int, int, int]
"""(claim index, request index, sub-request index)."""


@dataclass(slots=True)
class RequestData:
    spec: DeviceRequestSpec
    parent: str | None
    """The parent request's name for a sub-request, None for a plain request."""
    device_class: DeviceClass | None
    num_devices: int = 0
    all_devices: list[Candidate] | None = None
    selected_sub_request: int = 0
    """Set on the first sub-request's entry: which sub-request the search chose."""
    selector_key: tuple[str | None, ...] = ()
    """The class's selectors, a separator, the request's: what a device's verdict is kept by."""

    @property
    def name(self) -> str:
        """``request`` or ``request/sub`` as results and constraints name it."""
        return self.spec.name if self.parent is None else f"{self.parent}/{self.spec.name}"

    @property
    def admin_access(self) -> bool:
        return bool(self.spec.admin_access)
