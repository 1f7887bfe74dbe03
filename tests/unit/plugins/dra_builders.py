"""Builders for the DRA allocator tests: kube's allocator_testing.go helpers as raw API dicts.

Names follow kube's test helpers (``claim_with_request``, ``slice_with_devices``,
``device``, ``alloc_result`` …) so a ported case reads like its original.
"""

from __future__ import annotations

from typing import Any

from scheduler.model.dra_claims import DeviceClass, ResourceClaim
from scheduler.model.dra_devices import ResourceSlice
from scheduler.model.parse_dra_claims import device_class_from_raw, resource_claim_from_raw
from scheduler.model.parse_dra_slices import resource_slice_from_raw
from scheduler.plugins.dynamic_resources import cel_env
from scheduler.plugins.dynamic_resources.allocated_state import AllocatedState
from scheduler.plugins.dynamic_resources.allocation import Allocated, PodAllocator
from scheduler.plugins.dynamic_resources.allocator import AllocationTimeout
from scheduler.plugins.dynamic_resources.pools import SliceIndex
from scheduler.plugins.dynamic_resources.requests import AllocationError, Features
from scheduler.plugins.dynamic_resources.result_api import allocation_to_api

J = dict[str, Any]

REGION1, REGION2 = "region-1", "region-2"
NODE1, NODE2 = "node-1", "node-2"
CLASS_A, CLASS_B = "class-a", "class-b"
DRIVER_A, DRIVER_B = "driver-a", "driver-b"
POOL1, POOL2, POOL3, POOL4 = "pool-1", "pool-2", "pool-3", "pool-4"
REQ0, REQ1, REQ2 = "req-0", "req-1", "req-2"
SUB0, SUB1 = "subReq-0", "subReq-1"
CLAIM0, CLAIM1 = "claim-0", "claim-1"
SLICE1, SLICE2, SLICE3 = "slice-1", "slice-2", "slice-3"
DEVICE0, DEVICE1, DEVICE2, DEVICE3, DEVICE4 = (f"device-{i}" for i in range(5))
COUNTER_SET1, COUNTER_SET2 = "counter-set-1", "counter-set-2"
CAPACITY0 = "capacity-0"
FIXED_SHARE_ID = "aaaaaaaa-aaaa-aaaa-aaaa-aaaaaaaaaaaa"
ALL_NODES = object()
PER_DEVICE = object()


def node_labels(region: str) -> dict[str, str]:
    return {"region": region, "planet": "earth"}


def cel(expression: str) -> J:
    return {"cel": {"expression": expression}}


def class_(
    name: str, driver: str, *, config_attr: str | None = None, multi: bool | None = None
) -> J:
    expr = f'device.driver == "{driver}"'
    if multi is not None:
        expr += f" && device.allowMultipleAllocations == {str(multi).lower()}"
    spec: J = {"selectors": [cel(expr)]}
    if config_attr is not None:
        spec["config"] = [device_config(driver, config_attr)]
    return {"metadata": {"name": name}, "spec": spec}


def device_config(driver: str, attribute: str) -> J:
    return {"opaque": {"driver": driver, "parameters": {attribute: attribute + "Value"}}}


def request(name: str, cls: str, count: int = 1, *selectors: J, **extra: Any) -> J:
    exactly: J = {"deviceClassName": cls, "allocationMode": "ExactCount", "count": count}
    if selectors:
        exactly["selectors"] = list(selectors)
    exactly.update(extra)
    return {"name": name, "exactly": exactly}


def all_request(name: str, cls: str, **extra: Any) -> J:
    return {"name": name, "exactly": {"deviceClassName": cls, "allocationMode": "All", **extra}}


def sub_request(name: str, cls: str, count: int = 1, *selectors: J, **extra: Any) -> J:
    sub: J = {"name": name, "deviceClassName": cls, "allocationMode": "ExactCount", "count": count}
    if selectors:
        sub["selectors"] = list(selectors)
    sub.update(extra)
    return sub


def prioritized(name: str, *subs: J) -> J:
    return {"name": name, "firstAvailable": list(subs)}


def claim(
    name: str, *requests: J, constraints: list[J] | None = None, config: list[J] | None = None
) -> J:
    devices: J = {"requests": list(requests)}
    if constraints:
        devices["constraints"] = constraints
    if config:
        devices["config"] = config
    return {"metadata": {"name": name}, "spec": {"devices": devices}}


def claim_with_request(name: str, req: str, cls: str, *constraints: J) -> J:
    return claim(name, request(req, cls, 1), constraints=list(constraints) or None)


def match_attribute(attribute: str, *requests: str) -> J:
    return {"requests": list(requests), "matchAttribute": attribute}


def distinct_attribute(attribute: str, *requests: str) -> J:
    return {"requests": list(requests), "distinctAttribute": attribute}


def device(
    name: str,
    capacity: dict[str, Any] | None = None,
    attributes: dict[str, J] | None = None,
    **extra: Any,
) -> J:
    out: J = {"name": name}
    if capacity:
        out["capacity"] = {
            k: v if isinstance(v, dict) else {"value": v} for k, v in capacity.items()
        }
    if attributes:
        out["attributes"] = attributes
    out.update(extra)
    return out


def counters(set_name: str, values: dict[str, str]) -> J:
    return {"counterSet": set_name, "counters": {k: {"value": v} for k, v in values.items()}}


def counter_set(name: str, values: dict[str, str]) -> J:
    return {"name": name, "counters": {k: {"value": v} for k, v in values.items()}}


def pool(name: str, count: int = 1, generation: int = 1) -> J:
    return {"name": name, "resourceSliceCount": count, "generation": generation}


def _selection(node_selection: object) -> J:
    if node_selection is ALL_NODES:
        return {"allNodes": True}
    if node_selection is PER_DEVICE:
        return {"perDeviceNodeSelection": True}
    if isinstance(node_selection, dict):
        return {"nodeSelector": node_selection}
    return {"nodeName": node_selection}


def slice_with_devices(
    name: str, node_selection: object, pool_: str | J, driver: str, *devices: J
) -> J:
    spec: J = {"driver": driver, "pool": pool(pool_) if isinstance(pool_, str) else pool_}
    spec.update(_selection(node_selection))
    if devices:
        spec["devices"] = list(devices)
    return {"metadata": {"name": name}, "spec": spec}


def slice_with_one_device(name: str, node_selection: object, pool_: str | J, driver: str) -> J:
    return slice_with_devices(name, node_selection, pool_, driver, device(DEVICE1))


def slice_with_multiple_devices(
    name: str, node_selection: object, pool_: str | J, driver: str, count: int
) -> J:
    return slice_with_devices(
        name, node_selection, pool_, driver, *(device(f"device-{i}") for i in range(count))
    )


def slice_with_counter_sets(
    name: str, node_selection: object, pool_: str | J, driver: str, *sets: J
) -> J:
    out = slice_with_devices(name, node_selection, pool_, driver)
    out["spec"]["sharedCounters"] = list(sets)
    return out


def node_label_selector(key: str, *values: str) -> J:
    return {
        "nodeSelectorTerms": [
            {"matchExpressions": [{"key": key, "operator": "In", "values": list(values)}]}
        ]
    }


def local_node_selector(node: str) -> J:
    return {
        "nodeSelectorTerms": [
            {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}
        ]
    }


def result(req: str, driver: str, pool_: str, dev: str, admin: bool = False, **extra: Any) -> J:
    out: J = {"request": req, "driver": driver, "pool": pool_, "device": dev}
    if admin:
        out["adminAccess"] = True
    out.update(extra)
    return out


def alloc_result(node_selector: J | None, *results: J, config: list[J] | None = None) -> J:
    devices: J = {}
    if results:
        devices["results"] = list(results)
    if config:
        devices["config"] = config
    out: J = {"devices": devices}
    if node_selector is not None:
        out["nodeSelector"] = node_selector
    return out


def _canonical(allocation: J) -> J:
    """Results in any order (kube's ConsistOf); shareIDs fixed as kube's test fixes them."""
    devices = dict(allocation.get("devices", {}))
    results = []
    for r in devices.get("results", []):
        r = dict(r)
        if "shareID" in r:
            r["shareID"] = FIXED_SHARE_ID
        results.append(r)
    if results:
        devices["results"] = sorted(results, key=repr)
    return {**allocation, "devices": devices}


def run_allocate(
    *,
    claims: list[J],
    classes: list[J],
    slices: list[J],
    node: str = NODE1,
    region: str = REGION1,
    allocated: list[tuple[str, str, str]] = (),  # type: ignore[assignment]
    allocated_claims: list[J] = (),  # type: ignore[assignment]
    features: Features = Features(),  # noqa: B008
    deadline: float | None = None,
) -> list[J] | str:
    """Allocate on one node: the canonical results, the unschedulable reason,
    ``"error: <text>"`` for an AllocationError, or ``"timeout"`` past ``deadline``."""
    parsed_claims: list[ResourceClaim] = [resource_claim_from_raw(c) for c in claims]
    parsed_classes: dict[str, DeviceClass] = {
        c.name: c for c in (device_class_from_raw(c) for c in classes)
    }
    parsed_slices: list[ResourceSlice] = [resource_slice_from_raw(s) for s in slices]
    state = AllocatedState.from_claims(
        (resource_claim_from_raw(c) for c in allocated_claims),
        consumable_capacity=features.consumable_capacity,
    )
    for driver, pool_, dev in allocated:
        state.add(_one_device_allocation(driver, pool_, dev))
    allocator = PodAllocator(
        parsed_claims,
        classes=parsed_classes,
        slices=SliceIndex(parsed_slices, partitionable=features.partitionable_devices),
        allocated=state,
        selectors=cel_env.SelectorCache(),
        devices=cel_env.DeviceVariables(),
        features=features,
        share_id=lambda: FIXED_SHARE_ID,
    )
    try:
        outcome = allocator.allocate(node, node_labels(region), deadline=deadline)
    except AllocationError as exc:
        return f"error: {exc}"
    except AllocationTimeout:
        return "timeout"
    if isinstance(outcome, Allocated):
        return [_canonical(allocation_to_api(a)) for a in outcome.results]
    return outcome.reason


def _one_device_allocation(driver: str, pool_: str, dev: str) -> Any:
    from scheduler.model.dra_claims import AllocationResult, DeviceRequestAllocationResult

    return AllocationResult((DeviceRequestAllocationResult("r", driver, pool_, dev),))


def expect(*allocations: J) -> list[J]:
    return [_canonical(a) for a in allocations]
