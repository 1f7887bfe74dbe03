"""resource.k8s.io/v1 ResourceSlice and its devices as records (Dynamic Resource Allocation).

A ResourceSlice publishes a driver's devices for one pool: per node (``nodeName``), for a set
of nodes (``nodeSelector``, network-attached), for every node (``allNodes``) or per device
(``perDeviceNodeSelection``). Devices carry typed attributes, capacities (quantities, with a
``requestPolicy`` when the capacity is consumable), counters they consume from the pool's
shared counter sets (partitionable devices), taints and binding conditions. These records
hold what the structured allocator reads; quantities are exact ``Fraction`` as everywhere in
the model.

Neighbours: ``parse_dra_slices`` (dict → record), ``dra_claims`` (the claim side),
``plugins.dynamic_resources`` (the allocator and the CEL environment that read them).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Mapping
    from fractions import Fraction

    from scheduler.model.labels import NodeSelector


class AttributeKind(StrEnum):
    """Which ``DeviceAttribute`` field is set (exactly one is, per API validation)."""

    INT = "int"
    BOOL = "bool"
    STRING = "string"
    VERSION = "version"
    INTS = "ints"
    BOOLS = "bools"
    STRINGS = "strings"
    VERSIONS = "versions"


AttributeScalar = int | bool | str
AttributeValue = AttributeScalar | tuple[AttributeScalar, ...]


@dataclass(frozen=True, slots=True)
class DeviceAttribute:
    """One typed attribute value; versions stay strings (semver 2.0.0, minimal form)."""

    kind: AttributeKind
    value: AttributeValue


@dataclass(frozen=True, slots=True)
class RawQuantity:
    """A quantity's exact value and the text it was written as (kept for write-back)."""

    value: Fraction
    text: str


@dataclass(frozen=True, slots=True)
class CapacityRequestPolicyRange:
    min: RawQuantity | None
    max: RawQuantity | None
    step: RawQuantity | None


@dataclass(frozen=True, slots=True)
class CapacityRequestPolicy:
    """How a request for a consumable capacity is rounded and validated."""

    default: RawQuantity | None
    valid_values: tuple[RawQuantity, ...]
    valid_range: CapacityRequestPolicyRange | None


@dataclass(frozen=True, slots=True)
class DeviceCapacity:
    value: RawQuantity
    request_policy: CapacityRequestPolicy | None = None


@dataclass(frozen=True, slots=True)
class DeviceCounterConsumption:
    counter_set: str
    counters: Mapping[str, Fraction]
    compatibility_groups: tuple[str, ...] = ()


class DeviceTaintEffect(StrEnum):
    NONE = "None"
    NO_SCHEDULE = "NoSchedule"
    NO_EXECUTE = "NoExecute"


@dataclass(frozen=True, slots=True)
class DeviceTaint:
    """``effect`` is kept as written: unknown effects never prevent allocation (kube)."""

    key: str
    value: str
    effect: str


@dataclass(frozen=True, slots=True)
class NodeSelection:
    """Where a slice's (or a device's) devices are reachable: one of the four ways.

    ``node_selector_raw`` is the selector as written, for the allocation's node selector.
    """

    node_name: str | None = None
    node_selector: NodeSelector | None = None
    node_selector_raw: Mapping[str, object] | None = None
    all_nodes: bool = False

    def matches(self, node_name: str, labels: Mapping[str, str]) -> bool:
        """kube's ``NodeMatches``: name, then allNodes, then the selector; none → False."""
        if self.node_name:
            return node_name == self.node_name
        if self.all_nodes:
            return True
        if self.node_selector is not None:
            return self.node_selector.matches(labels, node_name)
        return False

    @property
    def is_set(self) -> bool:
        return bool(self.node_name) or self.all_nodes or self.node_selector is not None


@dataclass(frozen=True, slots=True)
class Device:
    name: str
    attributes: Mapping[str, DeviceAttribute]
    capacity: Mapping[str, DeviceCapacity]
    consumes_counters: tuple[DeviceCounterConsumption, ...] = ()
    node: NodeSelection = NodeSelection()
    """Only read when the slice has ``perDeviceNodeSelection``."""
    taints: tuple[DeviceTaint, ...] = ()
    binds_to_node: bool = False
    binding_conditions: tuple[str, ...] | None = None
    """None when absent: kube tells "no conditions" from "an empty list" for pool order."""
    binding_failure_conditions: tuple[str, ...] = ()
    allow_multiple_allocations: bool | None = None


@dataclass(frozen=True, slots=True)
class CounterSet:
    name: str
    counters: Mapping[str, Fraction]


@dataclass(frozen=True, slots=True)
class ResourcePool:
    name: str
    generation: int
    resource_slice_count: int


@dataclass(frozen=True, slots=True)
class ResourceSlice:
    name: str
    driver: str
    pool: ResourcePool
    node: NodeSelection
    """nodeName / nodeSelector / allNodes of the slice (unset with per-device selection)."""
    per_device_node_selection: bool
    per_device_node_selection_set: bool
    """Whether the field was present at all (kube drops such slices without the feature)."""
    devices: tuple[Device, ...]
    shared_counters: tuple[CounterSet, ...] = ()
    resource_version: str = ""
