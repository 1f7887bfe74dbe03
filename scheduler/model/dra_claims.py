"""resource.k8s.io/v1 ResourceClaim, ResourceClaimTemplate and DeviceClass as records.

A claim asks for devices: each request is either ``exactly`` one device spec (ExactCount
with a count, or All) or a ``firstAvailable`` list of sub-requests tried in order
(prioritized list). Requests carry CEL selectors, admin access, tolerations for device
taints and capacity requests (consumable capacity); constraints tie requests together
(``matchAttribute``, ``distinctAttribute``). Opaque configuration is kept as written: the
scheduler only copies it into the allocation. ``status.allocation`` and ``reservedFor``
say whether the claim is already allocated and to whom it is reserved. The pod's own
``spec.resourceClaims`` and ``status.resourceClaimStatuses`` are here too.

Neighbours: ``parse_dra_claims`` (dict → record), ``dra_devices`` (the slice side).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Mapping

    from scheduler.model.dra_devices import RawQuantity


class AllocationMode(StrEnum):
    EXACT_COUNT = "ExactCount"
    ALL = "All"


@dataclass(frozen=True, slots=True)
class DeviceToleration:
    """``operator`` "" means Equal; ``effect`` "" tolerates every effect (kube)."""

    key: str = ""
    operator: str = ""
    value: str = ""
    effect: str = ""
    toleration_seconds: int | None = None


@dataclass(frozen=True, slots=True)
class DeviceConfiguration:
    """A class or claim configuration entry: the requests it applies to and its opaque part."""

    requests: tuple[str, ...]
    opaque: Mapping[str, object] | None


@dataclass(frozen=True, slots=True)
class DeviceRequestSpec:
    """What ``exactly`` and each ``firstAvailable`` entry share (kube's requestAccessor).

    ``selectors`` are CEL expressions; ``None`` stands for a selector without ``cel``
    (a future selector type, which the allocator refuses). ``admin_access`` is None when
    unset (sub-requests never have it).
    """

    name: str
    device_class_name: str
    selectors: tuple[str | None, ...] = ()
    allocation_mode: AllocationMode | str = AllocationMode.EXACT_COUNT
    """An unknown mode (a newer API) is kept as written: the allocator refuses it."""
    count: int = 1
    admin_access: bool | None = None
    tolerations: tuple[DeviceToleration, ...] = ()
    capacity_requests: Mapping[str, RawQuantity] | None = None
    has_derived_attributes: bool = False


@dataclass(frozen=True, slots=True)
class DeviceRequest:
    """Exactly one of ``exactly`` and ``first_available`` is set for a valid request."""

    name: str
    exactly: DeviceRequestSpec | None
    first_available: tuple[DeviceRequestSpec, ...] = ()


@dataclass(frozen=True, slots=True)
class DeviceConstraint:
    requests: tuple[str, ...]
    match_attribute: str | None = None
    distinct_attribute: str | None = None


@dataclass(frozen=True, slots=True)
class ResourceClaimSpec:
    requests: tuple[DeviceRequest, ...]
    constraints: tuple[DeviceConstraint, ...] = ()
    config: tuple[DeviceConfiguration, ...] = ()


@dataclass(frozen=True, slots=True)
class DeviceRequestAllocationResult:
    """One allocated device as ``status.allocation.devices.results[]`` holds it."""

    request: str
    driver: str
    pool: str
    device: str
    admin_access: bool | None = None
    tolerations: tuple[DeviceToleration, ...] = ()
    binding_conditions: tuple[str, ...] = ()
    binding_failure_conditions: tuple[str, ...] = ()
    share_id: str | None = None
    consumed_capacity: Mapping[str, RawQuantity] | None = None


@dataclass(frozen=True, slots=True)
class AllocationResult:
    """``status.allocation``; ``node_selector`` is the API shape (plain JSON) or None."""

    results: tuple[DeviceRequestAllocationResult, ...]
    config: tuple[Mapping[str, object], ...] = ()
    node_selector: Mapping[str, object] | None = None
    allocation_timestamp: str | None = None
    """``allocationTimestamp`` as written (PreBind sets it when it is missing)."""


@dataclass(frozen=True, slots=True)
class ConsumerReference:
    """A ``reservedFor`` entry (a pod: resource "pods", empty group)."""

    api_group: str
    resource: str
    name: str
    uid: str


@dataclass(frozen=True, slots=True)
class ResourceClaim:
    namespace: str
    name: str
    uid: str
    spec: ResourceClaimSpec
    allocation: AllocationResult | None = None
    reserved_for: tuple[ConsumerReference, ...] = ()
    deleting: bool = False
    owner_pod_uid: str | None = None
    """The controlling owner's uid when it is a Pod (claims made from a template)."""
    resource_version: str = ""
    finalizers: tuple[str, ...] = ()
    """``metadata.finalizers``: PreBind adds kube's delete protection before allocating."""

    @property
    def key(self) -> str:
        """``namespace/name`` as kube's klog.KObj prints it (just the name without one)."""
        return f"{self.namespace}/{self.name}" if self.namespace else self.name


@dataclass(frozen=True, slots=True)
class ResourceClaimTemplate:
    namespace: str
    name: str
    spec: ResourceClaimSpec


@dataclass(frozen=True, slots=True)
class DeviceClass:
    name: str
    selectors: tuple[str | None, ...] = ()
    config: tuple[DeviceConfiguration, ...] = ()
    extended_resource_name: str | None = None
    resource_version: str = ""


@dataclass(frozen=True, slots=True)
class PodResourceClaim:
    """A pod's ``spec.resourceClaims[]``: exactly one source is set."""

    name: str
    resource_claim_name: str | None
    resource_claim_template_name: str | None


@dataclass(frozen=True, slots=True)
class PodResourceClaimStatus:
    """``status.resourceClaimStatuses[]``: the claim generated for a template (or None)."""

    name: str
    resource_claim_name: str | None


@dataclass(frozen=True, slots=True)
class PodClaims:
    claims: tuple[PodResourceClaim, ...]
    statuses: tuple[PodResourceClaimStatus, ...]
