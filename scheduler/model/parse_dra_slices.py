"""Parse resource.k8s.io/v1 ResourceSlices into ``dra_devices`` records.

Bad input raises ``ModelError`` naming the slice and the field path (``spec.devices[2].
capacity.memory.value``), so one broken driver's slice is reported and the others are
still used. Unknown fields are ignored (newer API fields the allocator does not read).

Neighbours: ``dra_devices`` (the records), ``parse_selectors`` (node selectors),
``parse_dra_claims`` (the claim side, which shares :func:`raw_quantity`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scheduler.model.dra_devices import (
    AttributeKind,
    AttributeScalar,
    AttributeValue,
    CapacityRequestPolicy,
    CapacityRequestPolicyRange,
    CounterSet,
    Device,
    DeviceAttribute,
    DeviceCapacity,
    DeviceCounterConsumption,
    DeviceTaint,
    NodeSelection,
    RawQuantity,
    ResourcePool,
    ResourceSlice,
)
from scheduler.model.parse_common import Reader, kind_of, named_reader
from scheduler.model.parse_selectors import node_selector_from_raw

if TYPE_CHECKING:
    from collections.abc import Mapping
    from fractions import Fraction

__all__ = ["raw_quantity", "resource_slice_from_raw"]

_SCALAR_KINDS: dict[str, tuple[AttributeKind, type]] = {
    "int": (AttributeKind.INT, int),
    "bool": (AttributeKind.BOOL, bool),
    "string": (AttributeKind.STRING, str),
    "version": (AttributeKind.VERSION, str),
}
_LIST_KINDS: dict[str, tuple[AttributeKind, type]] = {
    "ints": (AttributeKind.INTS, int),
    "bools": (AttributeKind.BOOLS, bool),
    "strings": (AttributeKind.STRINGS, str),
    "versions": (AttributeKind.VERSIONS, str),
}


def raw_quantity(r: Reader, value: object, field: str) -> RawQuantity:
    """A required quantity with its text (``"1Gi"``; a JSON number as ``str(number)``)."""
    if value is None:
        raise r.error(field, "is required")
    return RawQuantity(r.quantity(value, field), value if isinstance(value, str) else str(value))


def _optional_quantity(r: Reader, value: object, field: str) -> RawQuantity | None:
    return None if value is None else raw_quantity(r, value, field)


def _typed(r: Reader, value: object, want: type, field: str) -> AttributeScalar:
    # bool is an int subclass in Python: an int attribute must not accept true/false.
    if (
        not isinstance(value, int | bool | str)
        or not isinstance(value, want)
        or (want is int and isinstance(value, bool))
    ):
        raise r.error(field, f"expected {want.__name__}, got {kind_of(value)}")
    return value


def _attribute(r: Reader, raw: object, field: str) -> DeviceAttribute:
    m = r.mapping(raw, field)
    found: list[DeviceAttribute] = []
    for key, (kind, want) in _SCALAR_KINDS.items():
        if m.get(key) is not None:
            found.append(DeviceAttribute(kind, _typed(r, m[key], want, f"{field}.{key}")))
    for key, (kind, want) in _LIST_KINDS.items():
        if m.get(key) is not None:
            items = r.sequence(m[key], f"{field}.{key}")
            value: AttributeValue = tuple(
                _typed(r, item, want, f"{field}.{key}[{i}]") for i, item in enumerate(items)
            )
            found.append(DeviceAttribute(kind, value))
    if len(found) != 1:
        raise r.error(field, f"must have exactly one value, got {len(found)}")
    return found[0]


def _policy(r: Reader, raw: object, field: str) -> CapacityRequestPolicy | None:
    m = r.optional_mapping(raw, field)
    if m is None:
        return None
    valid_range = None
    rng = r.optional_mapping(m.get("validRange"), f"{field}.validRange")
    if rng is not None:
        path = f"{field}.validRange"
        valid_range = CapacityRequestPolicyRange(
            min=_optional_quantity(r, rng.get("min"), f"{path}.min"),
            max=_optional_quantity(r, rng.get("max"), f"{path}.max"),
            step=_optional_quantity(r, rng.get("step"), f"{path}.step"),
        )
    values_field = f"{field}.validValues"
    return CapacityRequestPolicy(
        default=_optional_quantity(r, m.get("default"), f"{field}.default"),
        valid_values=tuple(
            raw_quantity(r, v, f"{values_field}[{i}]")
            for i, v in enumerate(r.sequence(m.get("validValues"), values_field))
        ),
        valid_range=valid_range,
    )


def _counters(r: Reader, raw: object, field: str) -> dict[str, Fraction]:
    out: dict[str, Fraction] = {}
    for name, counter in r.mapping(raw, field).items():
        path = f"{field}.{name}"
        out[str(name)] = raw_quantity(
            r, r.mapping(counter, path).get("value"), f"{path}.value"
        ).value
    return out


def _node_selection(r: Reader, m: Mapping[str, object], field: str) -> NodeSelection:
    prefix = f"{field}." if field else ""
    raw_selector = r.optional_mapping(m.get("nodeSelector"), f"{prefix}nodeSelector")
    return NodeSelection(
        node_name=r.string(m.get("nodeName"), f"{prefix}nodeName") or None,
        node_selector=None
        if raw_selector is None
        else node_selector_from_raw(raw_selector, obj=r.obj, field=f"{prefix}nodeSelector"),
        node_selector_raw=raw_selector,
        all_nodes=r.boolean(m.get("allNodes"), f"{prefix}allNodes"),
    )


def _device(r: Reader, m: Mapping[str, object], field: str) -> Device:
    attributes = {
        str(name): _attribute(r, value, f"{field}.attributes.{name}")
        for name, value in r.mapping(m.get("attributes"), f"{field}.attributes").items()
    }
    capacity: dict[str, DeviceCapacity] = {}
    for name, value in r.mapping(m.get("capacity"), f"{field}.capacity").items():
        path = f"{field}.capacity.{name}"
        cm = r.mapping(value, path)
        capacity[str(name)] = DeviceCapacity(
            raw_quantity(r, cm.get("value"), f"{path}.value"),
            _policy(r, cm.get("requestPolicy"), f"{path}.requestPolicy"),
        )
    consumes = tuple(
        DeviceCounterConsumption(
            counter_set=r.required_string(c.get("counterSet"), f"{path}.counterSet"),
            counters=_counters(r, c.get("counters"), f"{path}.counters"),
            compatibility_groups=r.strings(
                c.get("compatibilityGroups"), f"{path}.compatibilityGroups"
            ),
        )
        for path, c in r.objects(m.get("consumesCounters"), f"{field}.consumesCounters")
    )
    taints = tuple(
        DeviceTaint(
            key=r.required_string(t.get("key"), f"{path}.key"),
            value=r.string(t.get("value"), f"{path}.value"),
            effect=r.required_string(t.get("effect"), f"{path}.effect"),
        )
        for path, t in r.objects(m.get("taints"), f"{field}.taints")
    )
    raw_conditions = m.get("bindingConditions")
    multi = m.get("allowMultipleAllocations")
    return Device(
        name=r.required_string(m.get("name"), f"{field}.name"),
        attributes=attributes,
        capacity=capacity,
        consumes_counters=consumes,
        node=_node_selection(r, m, field),
        taints=taints,
        binds_to_node=r.boolean(m.get("bindsToNode"), f"{field}.bindsToNode"),
        binding_conditions=None
        if raw_conditions is None
        else r.strings(raw_conditions, f"{field}.bindingConditions"),
        binding_failure_conditions=r.strings(
            m.get("bindingFailureConditions"), f"{field}.bindingFailureConditions"
        ),
        allow_multiple_allocations=None
        if multi is None
        else r.boolean(multi, f"{field}.allowMultipleAllocations"),
    )


def resource_slice_from_raw(raw: object) -> ResourceSlice:
    """A ResourceSlice; ``ModelError`` names the slice and the field on bad input."""
    r, meta = named_reader(raw, "ResourceSlice", namespaced=False)
    assert isinstance(raw, dict)  # named_reader checked it
    spec = r.mapping(raw.get("spec"), "spec")
    pool = r.mapping(spec.get("pool"), "spec.pool")
    per_device = spec.get("perDeviceNodeSelection")
    return ResourceSlice(
        name=str(meta["name"]),
        driver=r.required_string(spec.get("driver"), "spec.driver"),
        pool=ResourcePool(
            name=r.required_string(pool.get("name"), "spec.pool.name"),
            generation=r.integer(pool.get("generation"), "spec.pool.generation"),
            resource_slice_count=r.integer(
                pool.get("resourceSliceCount"), "spec.pool.resourceSliceCount"
            ),
        ),
        node=_node_selection(r, spec, "spec"),
        per_device_node_selection=r.boolean(per_device, "spec.perDeviceNodeSelection"),
        per_device_node_selection_set=per_device is not None,
        devices=tuple(
            _device(r, d, path) for path, d in r.objects(spec.get("devices"), "spec.devices")
        ),
        shared_counters=tuple(
            CounterSet(
                name=r.required_string(c.get("name"), f"{path}.name"),
                counters=_counters(r, c.get("counters"), f"{path}.counters"),
            )
            for path, c in r.objects(spec.get("sharedCounters"), "spec.sharedCounters")
        ),
        resource_version=r.string(meta.get("resourceVersion"), "metadata.resourceVersion"),
    )
