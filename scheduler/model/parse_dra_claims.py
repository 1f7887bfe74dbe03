"""Parse ResourceClaims, ResourceClaimTemplates, DeviceClasses and a pod's claims.

``ModelError`` names the object and the field path (``spec.devices.requests[1].exactly.
count``). Configuration is read leniently: its opaque part is kept as written, whatever
it holds, because the scheduler only copies it into the allocation.

Neighbours: ``dra_claims`` (the records), ``parse_dra_slices`` (quantities, the slice
side).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scheduler.model.dra_claims import (
    AllocationMode,
    AllocationResult,
    ConsumerReference,
    DeviceClass,
    DeviceConfiguration,
    DeviceConstraint,
    DeviceRequest,
    DeviceRequestAllocationResult,
    DeviceRequestSpec,
    DeviceToleration,
    PodClaims,
    PodResourceClaim,
    PodResourceClaimStatus,
    ResourceClaim,
    ResourceClaimSpec,
    ResourceClaimTemplate,
)
from scheduler.model.parse_common import Reader, named_reader
from scheduler.model.parse_dra_slices import raw_quantity

if TYPE_CHECKING:
    from collections.abc import Mapping

    from scheduler.model.dra_devices import RawQuantity

__all__ = [
    "device_class_from_raw",
    "pod_claims_from_raw",
    "pod_resource_claim_statuses",
    "pod_resource_claims",
    "resource_claim_from_raw",
    "resource_claim_template_from_raw",
]


def _selectors(r: Reader, raw: object, field: str) -> tuple[str | None, ...]:
    out: list[str | None] = []
    for path, selector in r.objects(raw, field):
        cel = r.optional_mapping(selector.get("cel"), f"{path}.cel")
        out.append(
            None
            if cel is None
            else r.required_string(cel.get("expression"), f"{path}.cel.expression")
        )
    return tuple(out)


def _tolerations(r: Reader, raw: object, field: str) -> tuple[DeviceToleration, ...]:
    return tuple(
        DeviceToleration(
            key=r.string(t.get("key"), f"{path}.key"),
            operator=r.string(t.get("operator"), f"{path}.operator"),
            value=r.string(t.get("value"), f"{path}.value"),
            effect=r.string(t.get("effect"), f"{path}.effect"),
            toleration_seconds=r.optional_integer(
                t.get("tolerationSeconds"), f"{path}.tolerationSeconds"
            ),
        )
        for path, t in r.objects(raw, field)
    )


def _capacity_requests(r: Reader, raw: object, field: str) -> dict[str, RawQuantity] | None:
    m = r.optional_mapping(raw, field)
    if m is None:
        return None
    requests = r.optional_mapping(m.get("requests"), f"{field}.requests")
    if requests is None:
        return None
    return {
        str(name): raw_quantity(r, value, f"{field}.requests.{name}")
        for name, value in requests.items()
    }


def _spec(r: Reader, m: Mapping[str, object], field: str, *, name: str) -> DeviceRequestSpec:
    mode_text = r.string(m.get("allocationMode"), f"{field}.allocationMode") or "ExactCount"
    mode: AllocationMode | str = mode_text
    if mode_text in AllocationMode.__members__.values():
        mode = AllocationMode(mode_text)
    count = r.optional_integer(m.get("count"), f"{field}.count")
    admin = m.get("adminAccess")
    return DeviceRequestSpec(
        name=name,
        device_class_name=r.string(m.get("deviceClassName"), f"{field}.deviceClassName"),
        selectors=_selectors(r, m.get("selectors"), f"{field}.selectors"),
        allocation_mode=mode,
        # The API defaults count to 1 for ExactCount; All ignores it.
        count=1 if count is None and mode == AllocationMode.EXACT_COUNT else (count or 0),
        admin_access=None if admin is None else r.boolean(admin, f"{field}.adminAccess"),
        tolerations=_tolerations(r, m.get("tolerations"), f"{field}.tolerations"),
        capacity_requests=_capacity_requests(r, m.get("capacity"), f"{field}.capacity"),
        has_derived_attributes=bool(
            r.sequence(m.get("derivedAttributes"), f"{field}.derivedAttributes")
        ),
    )


def _request(r: Reader, m: Mapping[str, object], field: str) -> DeviceRequest:
    name = r.required_string(m.get("name"), f"{field}.name")
    exactly = r.optional_mapping(m.get("exactly"), f"{field}.exactly")
    first = tuple(
        _spec(r, sub, path, name=r.required_string(sub.get("name"), f"{path}.name"))
        for path, sub in r.objects(m.get("firstAvailable"), f"{field}.firstAvailable")
    )
    return DeviceRequest(
        name=name,
        exactly=None if exactly is None else _spec(r, exactly, f"{field}.exactly", name=name),
        first_available=first,
    )


def _configs(r: Reader, raw: object, field: str) -> tuple[DeviceConfiguration, ...]:
    return tuple(
        DeviceConfiguration(
            requests=r.strings(c.get("requests"), f"{path}.requests"),
            opaque=r.optional_mapping(c.get("opaque"), f"{path}.opaque"),
        )
        for path, c in r.objects(raw, field)
    )


def _claim_spec(r: Reader, raw: object, field: str) -> ResourceClaimSpec:
    spec = r.mapping(raw, field)
    devices = r.mapping(spec.get("devices"), f"{field}.devices")
    path = f"{field}.devices"
    return ResourceClaimSpec(
        requests=tuple(
            _request(r, q, p) for p, q in r.objects(devices.get("requests"), f"{path}.requests")
        ),
        constraints=tuple(
            DeviceConstraint(
                requests=r.strings(c.get("requests"), f"{p}.requests"),
                match_attribute=r.string(c.get("matchAttribute"), f"{p}.matchAttribute") or None,
                distinct_attribute=r.string(c.get("distinctAttribute"), f"{p}.distinctAttribute")
                or None,
            )
            for p, c in r.objects(devices.get("constraints"), f"{path}.constraints")
        ),
        config=_configs(r, devices.get("config"), f"{path}.config"),
    )


def _allocation(r: Reader, raw: object, field: str) -> AllocationResult | None:
    m = r.optional_mapping(raw, field)
    if m is None:
        return None
    devices = r.mapping(m.get("devices"), f"{field}.devices")
    results = []
    for path, d in r.objects(devices.get("results"), f"{field}.devices.results"):
        consumed = r.optional_mapping(d.get("consumedCapacity"), f"{path}.consumedCapacity")
        admin = d.get("adminAccess")
        results.append(
            DeviceRequestAllocationResult(
                request=r.string(d.get("request"), f"{path}.request"),
                driver=r.required_string(d.get("driver"), f"{path}.driver"),
                pool=r.required_string(d.get("pool"), f"{path}.pool"),
                device=r.required_string(d.get("device"), f"{path}.device"),
                admin_access=None if admin is None else r.boolean(admin, f"{path}.adminAccess"),
                tolerations=_tolerations(r, d.get("tolerations"), f"{path}.tolerations"),
                binding_conditions=r.strings(
                    d.get("bindingConditions"), f"{path}.bindingConditions"
                ),
                binding_failure_conditions=r.strings(
                    d.get("bindingFailureConditions"), f"{path}.bindingFailureConditions"
                ),
                share_id=r.string(d.get("shareID"), f"{path}.shareID") or None,
                consumed_capacity=None
                if consumed is None
                else {
                    str(k): raw_quantity(r, v, f"{path}.consumedCapacity.{k}")
                    for k, v in consumed.items()
                },
            )
        )
    config = tuple(c for _, c in r.objects(devices.get("config"), f"{field}.devices.config"))
    return AllocationResult(
        results=tuple(results),
        config=config,
        node_selector=r.optional_mapping(m.get("nodeSelector"), f"{field}.nodeSelector"),
        allocation_timestamp=r.string(m.get("allocationTimestamp"), f"{field}.allocationTimestamp")
        or None,
    )


def _pod_owner_uid(r: Reader, meta: Mapping[str, object]) -> str | None:
    for path, ref in r.objects(meta.get("ownerReferences"), "metadata.ownerReferences"):
        if r.boolean(ref.get("controller"), f"{path}.controller") and ref.get("kind") == "Pod":
            return r.string(ref.get("uid"), f"{path}.uid")
    return None


def resource_claim_from_raw(raw: object) -> ResourceClaim:
    """A ResourceClaim with its allocation and reservations, if any."""
    r, meta = named_reader(raw, "ResourceClaim", namespaced=True)
    assert isinstance(raw, dict)  # named_reader checked it
    status = r.mapping(raw.get("status"), "status")
    return ResourceClaim(
        namespace=r.string(meta.get("namespace"), "metadata.namespace"),
        name=str(meta["name"]),
        uid=r.string(meta.get("uid"), "metadata.uid"),
        spec=_claim_spec(r, raw.get("spec"), "spec"),
        allocation=_allocation(r, status.get("allocation"), "status.allocation"),
        reserved_for=tuple(
            ConsumerReference(
                api_group=r.string(c.get("apiGroup"), f"{path}.apiGroup"),
                resource=r.string(c.get("resource"), f"{path}.resource"),
                name=r.string(c.get("name"), f"{path}.name"),
                uid=r.string(c.get("uid"), f"{path}.uid"),
            )
            for path, c in r.objects(status.get("reservedFor"), "status.reservedFor")
        ),
        deleting=meta.get("deletionTimestamp") is not None,
        owner_pod_uid=_pod_owner_uid(r, meta),
        resource_version=r.string(meta.get("resourceVersion"), "metadata.resourceVersion"),
        finalizers=r.strings(meta.get("finalizers"), "metadata.finalizers"),
    )


def resource_claim_template_from_raw(raw: object) -> ResourceClaimTemplate:
    r, meta = named_reader(raw, "ResourceClaimTemplate", namespaced=True)
    assert isinstance(raw, dict)
    spec = r.mapping(raw.get("spec"), "spec")
    return ResourceClaimTemplate(
        namespace=r.string(meta.get("namespace"), "metadata.namespace") or "default",
        name=str(meta["name"]),
        spec=_claim_spec(r, spec.get("spec"), "spec.spec"),
    )


def device_class_from_raw(raw: object) -> DeviceClass:
    r, meta = named_reader(raw, "DeviceClass", namespaced=False)
    assert isinstance(raw, dict)
    spec = r.mapping(raw.get("spec"), "spec")
    return DeviceClass(
        name=str(meta["name"]),
        selectors=_selectors(r, spec.get("selectors"), "spec.selectors"),
        config=_configs(r, spec.get("config"), "spec.config"),
        extended_resource_name=r.string(
            spec.get("extendedResourceName"), "spec.extendedResourceName"
        )
        or None,
        resource_version=r.string(meta.get("resourceVersion"), "metadata.resourceVersion"),
    )


def pod_claims_from_raw(raw: object) -> PodClaims:
    """A pod's ``spec.resourceClaims`` and ``status.resourceClaimStatuses``."""
    r, _ = named_reader(raw, "Pod", namespaced=True)
    assert isinstance(raw, dict)
    spec = r.mapping(raw.get("spec"), "spec")
    status = r.mapping(raw.get("status"), "status")
    return PodClaims(pod_resource_claims(r, spec), pod_resource_claim_statuses(r, status))


def pod_resource_claims(r: Reader, spec: Mapping[str, object]) -> tuple[PodResourceClaim, ...]:
    """``spec.resourceClaims``: each names exactly one source (API validation's rule)."""
    claims = []
    for path, c in r.objects(spec.get("resourceClaims"), "spec.resourceClaims"):
        claim_name = r.string(c.get("resourceClaimName"), f"{path}.resourceClaimName") or None
        template = (
            r.string(c.get("resourceClaimTemplateName"), f"{path}.resourceClaimTemplateName")
            or None
        )
        if (claim_name is None) == (template is None):
            raise r.error(
                path, "must set exactly one of resourceClaimName and resourceClaimTemplateName"
            )
        claims.append(
            PodResourceClaim(r.required_string(c.get("name"), f"{path}.name"), claim_name, template)
        )
    return tuple(claims)


def pod_resource_claim_statuses(
    r: Reader, status: Mapping[str, object]
) -> tuple[PodResourceClaimStatus, ...]:
    """``status.resourceClaimStatuses``: the claims generated for the pod's templates."""
    return tuple(
        PodResourceClaimStatus(
            name=r.required_string(s.get("name"), f"{path}.name"),
            resource_claim_name=r.string(s.get("resourceClaimName"), f"{path}.resourceClaimName")
            or None,
        )
        for path, s in r.objects(
            status.get("resourceClaimStatuses"), "status.resourceClaimStatuses"
        )
    )
