"""Parsing resource.k8s.io/v1 objects: records as the allocator reads them, and bad input
reported with the object and the field."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import pytest

from scheduler.model.dra_claims import AllocationMode
from scheduler.model.dra_devices import AttributeKind
from scheduler.model.errors import ModelError
from scheduler.model.parse_dra_claims import (
    device_class_from_raw,
    pod_claims_from_raw,
    resource_claim_from_raw,
    resource_claim_template_from_raw,
)
from scheduler.model.parse_dra_slices import resource_slice_from_raw

SLICE: dict[str, Any] = {
    "metadata": {"name": "s1", "resourceVersion": "7"},
    "spec": {
        "driver": "gpu.example.com",
        "pool": {"name": "node-1", "generation": 2, "resourceSliceCount": 1},
        "nodeName": "node-1",
        "devices": [
            {
                "name": "gpu-0",
                "attributes": {
                    "model": {"string": "a100"},
                    "numa": {"int": 1},
                    "dra.example.com/ok": {"bool": True},
                    "driverVersion": {"version": "1.2.3"},
                },
                "capacity": {
                    "memory": {
                        "value": "40Gi",
                        "requestPolicy": {
                            "default": "1Gi",
                            "validRange": {"min": "1Gi", "step": "1Gi", "max": "40Gi"},
                        },
                    }
                },
                "consumesCounters": [{"counterSet": "cs", "counters": {"mem": {"value": "40Gi"}}}],
                "taints": [{"key": "k", "value": "v", "effect": "NoSchedule"}],
                "allowMultipleAllocations": True,
                "bindingConditions": ["ready"],
            }
        ],
    },
}


def test_slice_fields() -> None:
    """A slice's pool, node, devices, attributes, capacities and counters are read exactly."""
    s = resource_slice_from_raw(SLICE)
    assert (s.name, s.driver, s.pool.name, s.pool.generation, s.node.node_name) == (
        "s1",
        "gpu.example.com",
        "node-1",
        2,
        "node-1",
    )
    d = s.devices[0]
    assert d.attributes["numa"].kind is AttributeKind.INT
    assert d.attributes["driverVersion"].value == "1.2.3"
    assert d.capacity["memory"].value.value == Fraction(40 * 2**30)
    policy = d.capacity["memory"].request_policy
    assert policy is not None
    assert policy.valid_range is not None
    assert policy.valid_range.step is not None
    assert policy.valid_range.step.text == "1Gi"
    assert d.consumes_counters[0].counters == {"mem": Fraction(40 * 2**30)}
    assert d.taints[0].effect == "NoSchedule"
    assert d.allow_multiple_allocations is True
    assert d.binding_conditions == ("ready",)


def _broken(path: list[Any], value: object) -> dict[str, Any]:
    import copy

    raw = copy.deepcopy(SLICE)
    target: Any = raw
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return raw


@pytest.mark.parametrize(
    ("path", "value", "message"),
    [
        pytest.param(
            ["spec", "devices", 0, "attributes", "numa"],
            {"int": 1, "string": "x"},
            "ResourceSlice s1: spec.devices[0].attributes.numa: must have exactly one value, got 2",
            id="attribute-two-values",
        ),
        pytest.param(
            ["spec", "devices", 0, "attributes", "numa"],
            {"int": True},
            "ResourceSlice s1: spec.devices[0].attributes.numa.int: expected int, got a boolean",
            id="attribute-wrong-type",
        ),
        pytest.param(
            ["spec", "devices", 0, "capacity", "memory", "value"],
            "lots",
            "ResourceSlice s1: spec.devices[0].capacity.memory.value: quantity 'lots' does not",
            id="bad-quantity",
        ),
        pytest.param(
            ["spec", "driver"], "", "ResourceSlice s1: spec.driver: is required", id="no-driver"
        ),
        pytest.param(
            ["spec", "nodeSelector"],
            {"nodeSelectorTerms": []},
            "ResourceSlice s1: spec.nodeSelector.nodeSelectorTerms: must have at least one term",
            id="empty-node-selector",
        ),
    ],
)
def test_slice_errors_name_field(path: list[Any], value: object, message: str) -> None:
    """Bad slice input is a ModelError naming the slice and the field."""
    with pytest.raises(ModelError) as info:
        resource_slice_from_raw(_broken(path, value))
    assert str(info.value).startswith(message)


CLAIM: dict[str, Any] = {
    "metadata": {
        "name": "c",
        "namespace": "ns",
        "uid": "u1",
        "ownerReferences": [{"kind": "Pod", "name": "p", "uid": "pod-uid", "controller": True}],
    },
    "spec": {
        "devices": {
            "requests": [
                {
                    "name": "gpu",
                    "exactly": {"deviceClassName": "gpu", "count": 2, "adminAccess": False},
                },
                {
                    "name": "alt",
                    "firstAvailable": [
                        {"name": "big", "deviceClassName": "gpu", "allocationMode": "All"},
                        {
                            "name": "small",
                            "deviceClassName": "gpu",
                            "capacity": {"requests": {"memory": "1Gi"}},
                        },
                    ],
                },
            ],
            "constraints": [{"requests": ["gpu"], "matchAttribute": "gpu.example.com/numa"}],
            "config": [
                {"requests": ["gpu"], "opaque": {"driver": "d", "parameters": {"any": ["thing"]}}}
            ],
        }
    },
    "status": {
        "allocation": {
            "devices": {
                "results": [
                    {"request": "gpu", "driver": "d", "pool": "p", "device": "x", "shareID": "s"}
                ]
            },
            "nodeSelector": {"nodeSelectorTerms": [{}]},
        },
        "reservedFor": [{"resource": "pods", "name": "p", "uid": "pod-uid"}],
    },
}


def test_claim_fields() -> None:
    """Requests (exactly and firstAvailable), constraints, config, allocation and reservations."""
    c = resource_claim_from_raw(CLAIM)
    assert c.key == "ns/c"
    assert c.owner_pod_uid == "pod-uid"
    gpu, alt = c.spec.requests
    assert gpu.exactly is not None
    assert (gpu.exactly.count, gpu.exactly.admin_access) == (2, False)
    assert [s.name for s in alt.first_available] == ["big", "small"]
    assert alt.first_available[0].allocation_mode is AllocationMode.ALL
    small = alt.first_available[1].capacity_requests
    assert small is not None
    assert small["memory"].value == 2**30
    assert c.spec.constraints[0].match_attribute == "gpu.example.com/numa"
    assert c.spec.config[0].opaque == {"driver": "d", "parameters": {"any": ["thing"]}}
    assert c.allocation is not None
    assert c.allocation.results[0].share_id == "s"
    assert c.reserved_for[0].uid == "pod-uid"


def test_claim_errors_name_field() -> None:
    """A wrongly typed count names the claim and the request's field."""
    raw = {
        "metadata": {"name": "c", "namespace": "ns"},
        "spec": {
            "devices": {
                "requests": [{"name": "r", "exactly": {"deviceClassName": "x", "count": "2"}}]
            }
        },
    }
    with pytest.raises(
        ModelError,
        match=r"ResourceClaim ns/c: spec.devices.requests\[0\].exactly.count: expected an integer",
    ):
        resource_claim_from_raw(raw)


def test_template_and_class() -> None:
    """A template's claim spec and a class's selectors and config are read."""
    template = resource_claim_template_from_raw(
        {"metadata": {"name": "t", "namespace": "ns"}, "spec": {"spec": CLAIM["spec"]}}
    )
    assert template.spec.requests[0].name == "gpu"
    cls = device_class_from_raw(
        {"metadata": {"name": "gpu"}, "spec": {"selectors": [{"cel": {"expression": "true"}}, {}]}}
    )
    assert cls.selectors == ("true", None)


@pytest.mark.parametrize(
    ("claims", "message"),
    [
        pytest.param([{"name": "a"}], "must set exactly one of", id="no-source"),
        pytest.param(
            [{"name": "a", "resourceClaimName": "x", "resourceClaimTemplateName": "t"}],
            "must set exactly one of",
            id="two-sources",
        ),
    ],
)
def test_pod_claims_errors(claims: list[dict[str, Any]], message: str) -> None:
    """A pod claim must name a claim or a template, not both, not none."""
    with pytest.raises(ModelError, match=message):
        pod_claims_from_raw(
            {"metadata": {"name": "p", "namespace": "ns"}, "spec": {"resourceClaims": claims}}
        )


def test_pod_claims() -> None:
    """A pod's claims and the names kube-controller-manager gave the templated ones."""
    got = pod_claims_from_raw(
        {
            "metadata": {"name": "p", "namespace": "ns"},
            "spec": {"resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "t"}]},
            "status": {"resourceClaimStatuses": [{"name": "gpu", "resourceClaimName": "p-gpu-x"}]},
        }
    )
    assert got.claims[0].resource_claim_template_name == "t"
    assert got.statuses[0].resource_claim_name == "p-gpu-x"
