"""The structured allocator against kube's allocator test table (v1.37.2).

Cases ported in our own words from ``structured/internal/allocatortesting/
allocator_testing.go`` (names kept, so each maps to its original): each gives claims,
classes, slices, devices already allocated and the node, and expects kube's allocation,
its unschedulable outcome or its error text. Like kube's table, a case runs with the
features it names and every other feature off.
"""

from __future__ import annotations

import time
from typing import Any

import pytest

from scheduler.plugins.dynamic_resources.allocation import CANNOT_ALLOCATE, INVALID_POOLS
from scheduler.plugins.dynamic_resources.requests import Features
from tests.unit.plugins.dra_builders import (
    ALL_NODES,
    CLAIM0,
    CLAIM1,
    CLASS_A,
    CLASS_B,
    DEVICE1,
    DEVICE2,
    DRIVER_A,
    DRIVER_B,
    NODE1,
    NODE2,
    POOL1,
    POOL2,
    REGION2,
    REQ0,
    REQ1,
    REQ2,
    SLICE1,
    SLICE2,
    SUB0,
    SUB1,
    all_request,
    alloc_result,
    cel,
    claim,
    claim_with_request,
    class_,
    counter_set,
    counters,
    device,
    device_config,
    expect,
    local_node_selector,
    match_attribute,
    node_label_selector,
    pool,
    prioritized,
    request,
    result,
    run_allocate,
    slice_with_counter_sets,
    slice_with_devices,
    slice_with_multiple_devices,
    slice_with_one_device,
    sub_request,
)

OFF = dict.fromkeys(
    (
        "admin_access",
        "prioritized_list",
        "partitionable_devices",
        "device_taints",
        "device_binding_and_status",
        "consumable_capacity",
        "fractional_capacity_range",
    ),
    False,
)


def features(*on: str) -> Features:
    """kube's test ``Features{...}``: the named ones on, every other off."""
    return Features(**{**OFF, **dict.fromkeys(on, True)})


def case(id_: str, want: Any, **kwargs: Any) -> Any:
    kwargs.setdefault("features", features())
    return pytest.param(kwargs, want, id=id_)


def admin(req: dict[str, Any]) -> dict[str, Any]:
    req["exactly"]["adminAccess"] = True
    return req


LOCAL1 = local_node_selector(NODE1)
AT_LEAST_1GI = cel('device.capacity["driver-a"].memory.compareTo(quantity("1Gi")) >= 0')
AT_LEAST_2GI = cel('device.capacity["driver-a"].memory.compareTo(quantity("2Gi")) >= 0')
CLASSES_A = [class_(CLASS_A, DRIVER_A)]

BASICS = [
    case(
        "simple",
        expect(alloc_result(LOCAL1, result(REQ0, DRIVER_A, POOL1, DEVICE1))),
        claims=[claim_with_request(CLAIM0, REQ0, CLASS_A)],
        classes=CLASSES_A,
        slices=[slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A)],
    ),
    case(
        "other-node",
        expect(alloc_result(local_node_selector(NODE2), result(REQ0, DRIVER_A, POOL2, DEVICE1))),
        claims=[claim_with_request(CLAIM0, REQ0, CLASS_A)],
        classes=CLASSES_A,
        slices=[
            slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_B),
            slice_with_one_device(SLICE2, NODE2, POOL2, DRIVER_A),
        ],
        node=NODE2,
        region=REGION2,
    ),
    *(
        case(
            name,
            expect(
                alloc_result(
                    LOCAL1,
                    result(REQ0, DRIVER_A, POOL1, DEVICE1),
                    result(REQ1, DRIVER_A, POOL1, DEVICE2),
                )
            )
            if name != "small-and-large-backtrack-claims"
            else expect(
                alloc_result(LOCAL1, result(REQ0, DRIVER_A, POOL1, DEVICE1)),
                alloc_result(LOCAL1, result(REQ1, DRIVER_A, POOL1, DEVICE2)),
            ),
            claims=[
                claim(
                    CLAIM0,
                    request(
                        REQ0,
                        CLASS_A,
                        1,
                        AT_LEAST_1GI,
                    ),
                    request(
                        REQ1,
                        CLASS_A,
                        1,
                        AT_LEAST_2GI,
                    ),
                )
            ]
            if name != "small-and-large-backtrack-claims"
            else [
                claim(
                    CLAIM0,
                    request(
                        REQ0,
                        CLASS_A,
                        1,
                        AT_LEAST_1GI,
                    ),
                ),
                claim(
                    CLAIM1,
                    request(
                        REQ1,
                        CLASS_A,
                        1,
                        AT_LEAST_2GI,
                    ),
                ),
            ],
            classes=CLASSES_A,
            slices=[
                slice_with_devices(
                    SLICE1,
                    NODE1,
                    POOL1,
                    DRIVER_A,
                    *(
                        [device(DEVICE1, {"memory": "1Gi"}), device(DEVICE2, {"memory": "2Gi"})]
                        if name == "small-and-large"
                        else [
                            device(DEVICE2, {"memory": "2Gi"}),
                            device(DEVICE1, {"memory": "1Gi"}),
                        ]
                    ),
                )
            ],
        )
        for name in (
            "small-and-large",
            "small-and-large-backtrack-requests",
            "small-and-large-backtrack-claims",
        )
    ),
    case(
        "devices-split-across-different-slices",
        expect(
            alloc_result(
                LOCAL1,
                result(REQ0, DRIVER_A, POOL1, DEVICE1),
                result(REQ0, DRIVER_A, POOL2, DEVICE1),
            )
        ),
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 2))],
        classes=CLASSES_A,
        slices=[
            slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A),
            slice_with_one_device(SLICE2, NODE1, POOL2, DRIVER_A),
        ],
    ),
    case(
        "obsolete-slice",
        CANNOT_ALLOCATE,
        claims=[claim_with_request(CLAIM0, REQ0, CLASS_A)],
        classes=CLASSES_A,
        slices=[
            slice_with_devices(
                "slice-1-obsolete", NODE1, pool(POOL1, 2), DRIVER_A, device(DEVICE1)
            ),
            slice_with_devices(
                "slice-1-obsolete", NODE1, pool(POOL1, 2, 2), DRIVER_A, device(DEVICE2)
            ),
        ],
    ),
    case(
        "duplicate-slice",
        INVALID_POOLS,
        claims=[claim_with_request(CLAIM0, REQ0, CLASS_A)],
        classes=CLASSES_A,
        slices=[
            slice_with_one_device(SLICE1, NODE1, pool(POOL1, 2), DRIVER_A),
            slice_with_one_device(SLICE1 + "-2", NODE1, pool(POOL1, 2), DRIVER_A),
        ],
    ),
    case(
        "no-slices",
        CANNOT_ALLOCATE,
        claims=[claim_with_request(CLAIM0, REQ0, CLASS_A)],
        classes=CLASSES_A,
        slices=[],
    ),
    case(
        "not-enough-suitable-devices",
        CANNOT_ALLOCATE,
        claims=[
            claim_with_request(CLAIM0, REQ0, CLASS_A),
            claim_with_request(CLAIM0, REQ1, CLASS_A),
        ],
        classes=CLASSES_A,
        slices=[slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A)],
    ),
    case(
        "no-classes",
        "error: claim claim-0, request req-0: could not retrieve device class class-a: "
        'deviceclass.resource.k8s.io "class-a" not found',
        claims=[claim_with_request(CLAIM0, REQ0, CLASS_A)],
        classes=[],
        slices=[slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A)],
    ),
    case(
        "empty-class",
        "error: claim claim-0, request req-0: missing device class name "
        "(unsupported request type?)",
        claims=[claim_with_request(CLAIM0, REQ0, "")],
        classes=CLASSES_A,
        slices=[slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A)],
    ),
    case(
        "no-claims-to-allocate",
        [],
        claims=[],
        classes=CLASSES_A,
        slices=[slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A)],
    ),
]

ALL_MODE = [
    case(
        "all-devices-single",
        expect(alloc_result(LOCAL1, result(REQ0, DRIVER_A, POOL1, DEVICE1))),
        claims=[claim(CLAIM0, all_request(REQ0, CLASS_A))],
        classes=CLASSES_A,
        slices=[slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A)],
    ),
    case(
        "all-devices-with-consumed-counters",
        expect(alloc_result(LOCAL1, result(REQ0, DRIVER_A, POOL1, DEVICE1))),
        features=features("partitionable_devices"),
        claims=[claim(CLAIM0, all_request(REQ0, CLASS_A))],
        classes=CLASSES_A,
        slices=[
            slice_with_devices(
                SLICE1,
                NODE1,
                pool(POOL1, 2),
                DRIVER_A,
                device(DEVICE1, consumesCounters=[counters("counter-set-1", {"memory": "4Gi"})]),
            ),
            slice_with_counter_sets(
                SLICE2,
                NODE1,
                pool(POOL1, 2),
                DRIVER_A,
                counter_set("counter-set-1", {"memory": "8Gi"}),
            ),
        ],
    ),
    case(
        "all-devices-many",
        expect(
            alloc_result(
                LOCAL1,
                result(REQ0, DRIVER_A, POOL1, DEVICE1),
                result(REQ0, DRIVER_A, POOL2, DEVICE1),
            )
        ),
        claims=[claim(CLAIM0, all_request(REQ0, CLASS_A))],
        classes=CLASSES_A,
        slices=[
            slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A),
            slice_with_one_device(SLICE1, NODE1, POOL2, DRIVER_A),
        ],
    ),
    case(
        "all-devices-of-the-incomplete-pool",
        "error: claim claim-0, request req-0: asks for all devices, but resource pool "
        "driver-a/pool-1 is currently being updated",
        claims=[claim(CLAIM0, all_request(REQ0, CLASS_A, count=1))],
        classes=CLASSES_A,
        slices=[slice_with_one_device(SLICE1, NODE1, pool(POOL1, 2), DRIVER_A)],
    ),
    case(
        "all-devices-plus-another",
        expect(
            alloc_result(LOCAL1, result(REQ0, DRIVER_A, POOL1, DEVICE1)),
            alloc_result(LOCAL1, result(REQ0, DRIVER_B, POOL1, DEVICE1)),
        ),
        claims=[
            claim(CLAIM0, all_request(REQ0, CLASS_A)),
            claim(CLAIM1, request(REQ0, CLASS_B, 1)),
        ],
        classes=[class_(CLASS_A, DRIVER_A), class_(CLASS_B, DRIVER_B)],
        slices=[
            slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A),
            slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_B),
        ],
    ),
    case(
        "all-devices-many-plus-another-reversed",
        expect(
            alloc_result(LOCAL1, result(REQ0, DRIVER_B, POOL1, DEVICE1)),
            alloc_result(
                LOCAL1,
                result(REQ0, DRIVER_A, POOL1, DEVICE1),
                result(REQ0, DRIVER_A, POOL1, DEVICE2),
            ),
        ),
        claims=[
            claim(CLAIM1, request(REQ0, CLASS_B, 1)),
            claim(CLAIM0, all_request(REQ0, CLASS_A)),
        ],
        classes=[class_(CLASS_A, DRIVER_A), class_(CLASS_B, DRIVER_B)],
        slices=[
            slice_with_devices(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1), device(DEVICE2)),
            slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_B),
        ],
    ),
    case(
        "all-devices-no-solution",
        CANNOT_ALLOCATE,
        claims=[
            claim(CLAIM1, request(REQ0, CLASS_A, 1)),
            claim(CLAIM0, all_request(REQ0, CLASS_A)),
        ],
        classes=CLASSES_A,
        slices=[slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A)],
    ),
    case(
        "all-devices-no-solution-reversed",
        CANNOT_ALLOCATE,
        claims=[
            claim(CLAIM0, all_request(REQ0, CLASS_A)),
            claim(CLAIM1, request(REQ0, CLASS_A, 1)),
        ],
        classes=CLASSES_A,
        slices=[slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A)],
    ),
    case(
        "all-devices-slice-without-devices",
        CANNOT_ALLOCATE,
        claims=[claim(CLAIM0, all_request(REQ0, CLASS_A))],
        classes=CLASSES_A,
        slices=[slice_with_devices(SLICE1, NODE1, POOL1, DRIVER_A)],
    ),
    case(
        "all-devices-some-allocated",
        CANNOT_ALLOCATE,
        claims=[claim(CLAIM0, all_request(REQ0, CLASS_A))],
        allocated=[(DRIVER_A, POOL1, DEVICE1)],
        classes=CLASSES_A,
        slices=[
            slice_with_devices(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1), device(DEVICE2))
        ],
    ),
    case(
        "all-devices-some-allocated-admin-access",
        expect(
            alloc_result(
                LOCAL1,
                result(REQ0, DRIVER_A, POOL1, DEVICE1, admin=True),
                result(REQ0, DRIVER_A, POOL1, DEVICE2, admin=True),
            )
        ),
        features=features("admin_access"),
        claims=[claim(CLAIM0, admin(all_request(REQ0, CLASS_A)))],
        allocated=[(DRIVER_A, POOL1, DEVICE1)],
        classes=CLASSES_A,
        slices=[
            slice_with_devices(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1), device(DEVICE2))
        ],
    ),
    case(
        "all-devices-some-allocating-admin-access",
        CANNOT_ALLOCATE,
        features=features("admin_access"),
        claims=[claim(CLAIM0, admin(request(REQ0, CLASS_A, 1)), admin(all_request(REQ1, CLASS_A)))],
        classes=CLASSES_A,
        slices=[
            slice_with_devices(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1), device(DEVICE2))
        ],
    ),
]

ATTRS = {
    "driverVersion": {"version": "1.0.0"},
    "numa": {"int": 1},
    "stringAttribute": {"string": "stringAttributeValue"},
    "boolAttribute": {"bool": True},
}

ADMIN_AND_NODES = [
    case(
        "count-devices-some-allocated-admin-access",
        expect(
            alloc_result(
                LOCAL1,
                result(REQ0, DRIVER_A, POOL1, DEVICE1, admin=True),
                result(REQ0, DRIVER_A, POOL1, DEVICE2, admin=True),
            )
        ),
        features=features("admin_access"),
        claims=[claim(CLAIM0, admin(request(REQ0, CLASS_A, 2)))],
        allocated=[(DRIVER_A, POOL1, DEVICE1)],
        classes=CLASSES_A,
        slices=[
            slice_with_devices(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1), device(DEVICE2))
        ],
    ),
    case(
        "separate-claims-share-device-admin-access",
        expect(
            alloc_result(LOCAL1, result(REQ0, DRIVER_A, POOL1, DEVICE1, admin=True)),
            alloc_result(LOCAL1, result(REQ0, DRIVER_A, POOL1, DEVICE1, admin=True)),
        ),
        features=features("admin_access"),
        claims=[
            claim(CLAIM0, admin(request(REQ0, CLASS_A, 1))),
            claim(CLAIM1, admin(request(REQ0, CLASS_A, 1))),
        ],
        classes=CLASSES_A,
        slices=[
            slice_with_devices(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1), device(DEVICE2))
        ],
    ),
    case(
        "admin-access-claims-device-allocating-for-non-admin-access",
        expect(
            alloc_result(LOCAL1, result(REQ0, DRIVER_A, POOL1, DEVICE1)),
            alloc_result(LOCAL1, result(REQ0, DRIVER_A, POOL1, DEVICE1, admin=True)),
        ),
        features=features("admin_access"),
        claims=[
            claim_with_request(CLAIM0, REQ0, CLASS_A),
            claim(CLAIM1, admin(request(REQ0, CLASS_A, 1))),
        ],
        classes=CLASSES_A,
        slices=[
            slice_with_devices(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1), device(DEVICE2))
        ],
    ),
    case(
        "network-attached-device",
        expect(
            alloc_result(
                node_label_selector("region", "region-1"), result(REQ0, DRIVER_A, POOL1, DEVICE1)
            )
        ),
        claims=[claim_with_request(CLAIM0, REQ0, CLASS_A)],
        classes=CLASSES_A,
        slices=[
            slice_with_one_device(
                SLICE1, node_label_selector("region", "region-1"), POOL1, DRIVER_A
            )
        ],
    ),
    case(
        "unsuccessful-allocation-network-attached-device",
        CANNOT_ALLOCATE,
        claims=[claim_with_request(CLAIM0, REQ0, CLASS_A)],
        classes=CLASSES_A,
        slices=[
            slice_with_one_device(
                SLICE1, node_label_selector("region", "region-1"), POOL1, DRIVER_A
            )
        ],
        node=NODE2,
        region=REGION2,
    ),
    case(
        "many-network-attached-devices",
        expect(
            alloc_result(
                {
                    "nodeSelectorTerms": [
                        {
                            "matchExpressions": [
                                {"key": "region", "operator": "In", "values": ["region-1"]},
                                {"key": "planet", "operator": "In", "values": ["earth"]},
                            ],
                            "matchFields": [
                                {"key": "metadata.name", "operator": "In", "values": [NODE1]}
                            ],
                        }
                    ]
                },
                result(REQ0, DRIVER_A, POOL1, DEVICE1),
                result(REQ0, DRIVER_A, POOL2, DEVICE1),
                result(REQ0, DRIVER_A, "pool-3", DEVICE1),
                result(REQ0, DRIVER_A, "pool-4", DEVICE1),
            )
        ),
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 4))],
        classes=CLASSES_A,
        slices=[
            slice_with_one_device(
                SLICE1, node_label_selector("region", "region-1"), POOL1, DRIVER_A
            ),
            slice_with_one_device(SLICE1, ALL_NODES, POOL2, DRIVER_A),
            slice_with_one_device(
                SLICE1, node_label_selector("planet", "earth"), "pool-3", DRIVER_A
            ),
            slice_with_one_device(SLICE1, local_node_selector(NODE1), "pool-4", DRIVER_A),
        ],
    ),
    case(
        "local-and-network-attached-devices",
        expect(
            alloc_result(
                LOCAL1,
                result(REQ0, DRIVER_A, POOL1, DEVICE1),
                result(REQ0, DRIVER_A, POOL2, DEVICE1),
            )
        ),
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 2))],
        classes=CLASSES_A,
        slices=[
            slice_with_one_device(
                SLICE1, node_label_selector("region", "region-1"), POOL1, DRIVER_A
            ),
            slice_with_one_device(SLICE1, NODE1, POOL2, DRIVER_A),
        ],
    ),
    case(
        "several-different-drivers",
        expect(
            alloc_result(LOCAL1, result(REQ0, DRIVER_A, POOL1, DEVICE1)),
            alloc_result(LOCAL1, result(REQ0, DRIVER_B, POOL1, DEVICE1)),
        ),
        claims=[
            claim_with_request(CLAIM0, REQ0, CLASS_A),
            claim_with_request(CLAIM0, REQ0, CLASS_B),
        ],
        classes=[class_(CLASS_A, DRIVER_A), class_(CLASS_B, DRIVER_B)],
        slices=[
            slice_with_devices(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1), device(DEVICE2)),
            slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_B),
        ],
    ),
    case(
        "already-allocated-devices",
        CANNOT_ALLOCATE,
        claims=[claim_with_request(CLAIM0, REQ0, CLASS_A)],
        allocated=[(DRIVER_A, POOL1, DEVICE1), (DRIVER_A, POOL1, DEVICE2)],
        classes=CLASSES_A,
        slices=[slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A)],
    ),
    case(
        "admin-access-disabled",
        "error: claim claim-0, request req-0: admin access is requested, "
        "but the feature is disabled",
        claims=[claim(CLAIM0, admin(request(REQ0, CLASS_A, 1)))],
        classes=CLASSES_A,
        slices=[slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A)],
    ),
    case(
        "admin-access-enabled",
        expect(alloc_result(LOCAL1, result(REQ0, DRIVER_A, POOL1, DEVICE1, admin=True))),
        features=features("admin_access"),
        claims=[claim(CLAIM0, admin(request(REQ0, CLASS_A, 1)))],
        allocated=[(DRIVER_A, POOL1, DEVICE1), (DRIVER_A, POOL1, DEVICE2)],
        classes=CLASSES_A,
        slices=[slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A)],
    ),
    case(
        "with-constraint",
        expect(
            alloc_result(
                LOCAL1,
                result(REQ0, DRIVER_A, POOL1, DEVICE1),
                result(REQ1, DRIVER_A, POOL1, DEVICE2),
            )
        ),
        claims=[
            claim(
                CLAIM0,
                request(REQ0, CLASS_A, 1),
                request(REQ1, CLASS_A, 1),
                constraints=[
                    match_attribute("driver-a/numa"),
                    match_attribute("driver-a/driverVersion"),
                    match_attribute("driver-a/stringAttribute"),
                    match_attribute("driver-a/boolAttribute"),
                ],
            )
        ],
        classes=CLASSES_A,
        slices=[
            slice_with_devices(
                SLICE1,
                NODE1,
                POOL1,
                DRIVER_A,
                device(DEVICE1, attributes=ATTRS),
                device(DEVICE2, attributes=ATTRS),
            )
        ],
    ),
    case(
        "with-constraint-non-existent-attribute",
        CANNOT_ALLOCATE,
        claims=[
            claim_with_request(
                CLAIM0, REQ0, CLASS_A, match_attribute("driver-a/NonExistentAttribute")
            )
        ],
        classes=CLASSES_A,
        slices=[slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A)],
    ),
    *(
        case(
            f"with-constraint-not-matching-{kind}-attribute",
            CANNOT_ALLOCATE,
            claims=[
                claim(
                    CLAIM0,
                    request(REQ0, CLASS_A, 2),
                    constraints=[match_attribute(f"driver-a/{name}")],
                )
            ],
            classes=[class_(CLASS_A, DRIVER_A), class_(CLASS_B, DRIVER_B)],
            slices=[
                slice_with_devices(
                    SLICE1,
                    NODE1,
                    POOL1,
                    DRIVER_A,
                    device(DEVICE1, attributes={name: {kind: one}}),
                    device(DEVICE2, attributes={name: {kind: two}}),
                )
            ],
        )
        for kind, name, one, two in (
            ("int", "numa", 1, 2),
            ("string", "stringAttribute", "stringAttributeValue", "stringAttributeValue2"),
            ("bool", "boolAttribute", True, False),
            ("version", "driverVersion", "1.0.0", "2.0.0"),
        )
    ),
]


def with_selectors(req: dict[str, Any], *selectors: dict[str, Any]) -> dict[str, Any]:
    req["exactly"]["selectors"] = list(selectors)
    return req


MULTI_A = slice_with_multiple_devices(SLICE1, NODE1, POOL1, DRIVER_A, 3)

CONSTRAINTS_CONFIG_ERRORS = [
    case(
        "with-constraint-for-request",
        expect(
            alloc_result(
                LOCAL1,
                result(REQ0, DRIVER_A, POOL1, DEVICE1),
                result(REQ1, DRIVER_A, POOL1, DEVICE2),
            )
        ),
        claims=[
            claim(
                CLAIM0,
                request(REQ0, CLASS_A, 1),
                request(REQ1, CLASS_A, 1),
                constraints=[match_attribute("driver-a/driverVersion", REQ0)],
            )
        ],
        classes=[class_(CLASS_A, DRIVER_A), class_(CLASS_B, DRIVER_B)],
        slices=[
            slice_with_devices(
                SLICE1,
                NODE1,
                POOL1,
                DRIVER_A,
                device(DEVICE1, attributes={"driverVersion": {"version": "1.0.0"}}),
                device(DEVICE2, attributes={"driverVersion": {"version": "2.0.0"}}),
            )
        ],
    ),
    case(
        "with-constraint-for-request-retry",
        expect(
            alloc_result(
                LOCAL1,
                result(REQ0, DRIVER_A, POOL1, DEVICE2),
                result(REQ1, DRIVER_A, POOL1, "device-3"),
            )
        ),
        claims=[
            claim(
                CLAIM0,
                request(REQ0, CLASS_A, 1),
                request(REQ1, CLASS_A, 1),
                constraints=[
                    match_attribute("driver-a/driverVersion", REQ0),
                    match_attribute("driver-a/stringAttribute"),
                ],
            )
        ],
        classes=[class_(CLASS_A, DRIVER_A), class_(CLASS_B, DRIVER_B)],
        slices=[
            slice_with_devices(
                SLICE1,
                NODE1,
                POOL1,
                DRIVER_A,
                *(
                    device(
                        dev,
                        attributes={
                            "driverVersion": {"version": v},
                            "stringAttribute": {"string": a},
                        },
                    )
                    for dev, v, a in (
                        (DEVICE1, "1.0.0", "a"),
                        (DEVICE2, "2.0.0", "b"),
                        ("device-3", "3.0.0", "b"),
                    )
                ),
            )
        ],
    ),
    case(
        "with-class-device-config",
        expect(
            alloc_result(
                LOCAL1,
                result(REQ0, DRIVER_A, POOL1, DEVICE1),
                config=[{"source": "FromClass", **device_config(DRIVER_A, "classAttribute")}],
            )
        ),
        claims=[claim_with_request(CLAIM0, REQ0, CLASS_A)],
        classes=[class_(CLASS_A, DRIVER_A, config_attr="classAttribute")],
        slices=[slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A)],
    ),
    case(
        "with-class-device-config-with-multiple-request-and-configs",
        expect(
            alloc_result(
                LOCAL1,
                result(REQ0, DRIVER_A, POOL1, "device-0"),
                result(REQ1, DRIVER_A, POOL1, DEVICE1),
                result(REQ2, DRIVER_B, POOL1, DEVICE1),
                config=[
                    {
                        "source": "FromClass",
                        "requests": [REQ0, REQ1],
                        **device_config(DRIVER_A, "classAttribute-A"),
                    },
                    {
                        "source": "FromClass",
                        "requests": [REQ2],
                        **device_config(DRIVER_B, "classAttribute-B"),
                    },
                ],
            )
        ),
        claims=[
            claim(
                CLAIM0,
                request(REQ0, CLASS_A, 1),
                request(REQ1, CLASS_A, 1),
                request(REQ2, CLASS_B, 1),
            )
        ],
        classes=[
            class_(CLASS_A, DRIVER_A, config_attr="classAttribute-A"),
            class_(CLASS_B, DRIVER_B, config_attr="classAttribute-B"),
        ],
        slices=[
            slice_with_multiple_devices(SLICE1, NODE1, POOL1, DRIVER_A, 2),
            slice_with_one_device(SLICE2, NODE1, POOL1, DRIVER_B),
        ],
    ),
    case(
        "with-claim-config-for-two-requests",
        expect(
            alloc_result(
                LOCAL1,
                result(REQ0, DRIVER_A, POOL1, "device-0"),
                result(REQ1, DRIVER_A, POOL1, DEVICE1),
                result(REQ2, DRIVER_A, POOL1, DEVICE2),
                config=[
                    {
                        "source": "FromClaim",
                        "requests": [REQ0, REQ1],
                        **device_config(DRIVER_A, "deviceAttribute"),
                    }
                ],
            )
        ),
        claims=[
            claim(
                CLAIM0,
                request(REQ0, CLASS_A, 1),
                request(REQ1, CLASS_A, 1),
                request(REQ2, CLASS_A, 1),
                config=[{"requests": [REQ0, REQ1], **device_config(DRIVER_A, "deviceAttribute")}],
            )
        ],
        classes=CLASSES_A,
        slices=[MULTI_A],
    ),
    case(
        "claim-with-device-config",
        expect(
            alloc_result(
                LOCAL1,
                result(REQ0, DRIVER_A, POOL1, DEVICE1),
                config=[{"source": "FromClaim", **device_config(DRIVER_A, "deviceAttribute")}],
            )
        ),
        claims=[
            claim(
                CLAIM0,
                request(REQ0, CLASS_A, 1),
                config=[device_config(DRIVER_A, "deviceAttribute")],
            )
        ],
        classes=CLASSES_A,
        slices=[slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A)],
    ),
    case(
        "unknown-selector",
        "error~ CEL expression empty (unsupported selector type?)",
        claims=[claim(CLAIM0, with_selectors(request(REQ0, CLASS_A, 1), {}))],
        classes=CLASSES_A,
        slices=[slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A)],
    ),
    case(
        "unknown-allocation-mode",
        "error~ unsupported count mode future-mode",
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 1, allocationMode="future-mode"))],
        classes=CLASSES_A,
        slices=[slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A)],
    ),
    case(
        "unknown-constraint",
        "error~ empty constraint (unsupported constraint type?)",
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 1), constraints=[{"requests": []}])],
        classes=CLASSES_A,
        slices=[slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A)],
    ),
    case(
        "invalid-CEL-one-device",
        "error: claim claim-0: selector #0: CEL compile error: compilation failed: ERROR: "
        "<input>:1:1: undeclared reference to 'noSuchVar' (in container '')\n | noSuchVar\n | ^",
        claims=[
            claim(
                CLAIM0,
                with_selectors(request(REQ0, CLASS_A, 1), {"cel": {"expression": "noSuchVar"}}),
            )
        ],
        classes=CLASSES_A,
        slices=[slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A)],
    ),
    case(
        "invalid-CEL-one-device-class",
        "error~ class class-a: selector #0: CEL compile error: compilation failed: ERROR: "
        "<input>:1:1: undeclared reference to 'noSuchVar'",
        claims=[claim_with_request(CLAIM0, REQ0, CLASS_A)],
        classes=[
            {
                "metadata": {"name": CLASS_A},
                "spec": {"selectors": [{"cel": {"expression": "noSuchVar"}}]},
            }
        ],
        slices=[slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A)],
    ),
    case(
        "invalid-CEL-all-devices",
        "error~ undeclared reference",
        claims=[
            claim(
                CLAIM0, all_request(REQ0, CLASS_A, selectors=[{"cel": {"expression": "noSuchVar"}}])
            )
        ],
        classes=CLASSES_A,
        slices=[slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A)],
    ),
    case(
        "too-many-devices-single-request",
        "error: claim claim-0, request req-0: adding 500 devices exceeds the claim limit of 32, "
        "with 0 already accounted for",
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 500))],
        classes=CLASSES_A,
        slices=[],
    ),
    case(
        "many-devices-okay",
        CANNOT_ALLOCATE,
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 32))],
        classes=CLASSES_A,
        slices=[],
    ),
    case(
        "too-many-devices-total",
        "error~ exceeds the claim limit",
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 32), request(REQ1, CLASS_A, 1))],
        classes=CLASSES_A,
        slices=[slice_with_multiple_devices(SLICE1, NODE1, POOL1, DRIVER_A, 33)],
    ),
    case(
        "exact-count-total-overflows-claim-limit",
        "error~ exceeds the claim limit",
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 2**62), request(REQ1, CLASS_A, 2**62))],
        classes=CLASSES_A,
        slices=[],
    ),
    case(
        "exact-count-sum-exceeds-claim-limit",
        "error: claim claim-0, request req-1: adding 20 devices exceeds the claim limit of 32, "
        "with 20 already accounted for",
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 20), request(REQ1, CLASS_A, 20))],
        classes=CLASSES_A,
        slices=[],
    ),
    case(
        "exact-count-sum-exactly-fills-claim-limit",
        expect(
            alloc_result(
                LOCAL1,
                *(result(REQ0, DRIVER_A, POOL1, f"device-{i}") for i in range(16)),
                *(result(REQ1, DRIVER_A, POOL1, f"device-{i}") for i in range(16, 32)),
            )
        ),
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 16), request(REQ1, CLASS_A, 16))],
        classes=CLASSES_A,
        slices=[slice_with_multiple_devices(SLICE1, NODE1, POOL1, DRIVER_A, 32)],
    ),
]


def mem_at_least(size: str) -> dict[str, Any]:
    return cel(f'device.capacity["driver-a"].memory.compareTo(quantity("{size}")) >= 0')


PL = features("prioritized_list")
R0S0, R0S1, R1S1 = f"{REQ0}/{SUB0}", f"{REQ0}/{SUB1}", f"{REQ1}/{SUB1}"
CLASSES_AB = [class_(CLASS_A, DRIVER_A), class_(CLASS_B, DRIVER_B)]

PRIORITIZED = [
    case(
        "prioritized-list-first-unavailable",
        expect(alloc_result(LOCAL1, result(R0S1, DRIVER_A, POOL1, DEVICE1))),
        features=PL,
        claims=[
            claim(CLAIM0, prioritized(REQ0, sub_request(SUB0, CLASS_B), sub_request(SUB1, CLASS_A)))
        ],
        classes=CLASSES_AB,
        slices=[slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A)],
    ),
    case(
        "prioritized-list-non-available",
        CANNOT_ALLOCATE,
        features=PL,
        claims=[
            claim(
                CLAIM0,
                prioritized(REQ0, sub_request(SUB0, CLASS_B, 2), sub_request(SUB1, CLASS_A, 2)),
            )
        ],
        classes=CLASSES_AB,
        slices=[
            slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A),
            slice_with_one_device(SLICE2, NODE1, POOL2, DRIVER_B),
        ],
    ),
    case(
        "prioritized-list-device-config",
        expect(
            alloc_result(
                LOCAL1,
                result(R0S1, DRIVER_B, POOL1, DEVICE1),
                result(R0S1, DRIVER_B, POOL1, DEVICE2),
                config=[{"source": "FromClaim", **device_config(DRIVER_B, "bar")}],
            )
        ),
        features=PL,
        claims=[
            claim(
                CLAIM0,
                prioritized(REQ0, sub_request(SUB0, CLASS_A, 1), sub_request(SUB1, CLASS_B, 2)),
                config=[
                    {"requests": [R0S0], **device_config(DRIVER_A, "foo")},
                    {"requests": [R0S1], **device_config(DRIVER_B, "bar")},
                ],
            )
        ],
        classes=CLASSES_AB,
        slices=[
            slice_with_devices(SLICE1, NODE1, POOL1, DRIVER_B, device(DEVICE1), device(DEVICE2))
        ],
    ),
    case(
        "prioritized-list-subrequests-with-expressions",
        expect(
            alloc_result(
                LOCAL1,
                result(REQ0, DRIVER_A, POOL1, "device-3"),
                result(R1S1, DRIVER_A, POOL1, DEVICE1),
                result(R1S1, DRIVER_A, POOL1, DEVICE2),
            )
        ),
        features=PL,
        claims=[
            claim(
                CLAIM0,
                request(REQ0, CLASS_A, 1, mem_at_least("1Gi")),
                prioritized(
                    REQ1,
                    sub_request(SUB0, CLASS_A, 1, mem_at_least("4Gi")),
                    sub_request(SUB1, CLASS_A, 2, mem_at_least("2Gi")),
                ),
            )
        ],
        classes=CLASSES_A,
        slices=[
            slice_with_devices(
                SLICE1,
                NODE1,
                POOL1,
                DRIVER_A,
                device(DEVICE1, {"memory": "2Gi"}),
                device(DEVICE2, {"memory": "2Gi"}),
                device("device-3", {"memory": "1Gi"}),
            )
        ],
    ),
    case(
        "prioritized-list-subrequests-with-allocation-mode-all",
        expect(alloc_result(LOCAL1, result(R0S1, DRIVER_A, POOL1, DEVICE2))),
        features=PL,
        claims=[
            claim(
                CLAIM0,
                prioritized(
                    REQ0,
                    sub_request(SUB0, CLASS_A, 0, allocationMode="All"),
                    sub_request(SUB1, CLASS_A, 1),
                ),
            )
        ],
        allocated=[(DRIVER_A, POOL1, DEVICE1)],
        classes=CLASSES_A,
        slices=[
            slice_with_devices(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1), device(DEVICE2))
        ],
    ),
    case(
        "prioritized-list-allocation-mode-all-multiple-requests",
        expect(
            alloc_result(
                LOCAL1,
                result(REQ0, DRIVER_A, POOL1, DEVICE1),
                result(R1S1, DRIVER_A, POOL1, DEVICE2),
            )
        ),
        features=PL,
        claims=[
            claim(
                CLAIM0,
                request(REQ0, CLASS_A, 1),
                prioritized(
                    REQ1,
                    sub_request(SUB0, CLASS_A, 0, allocationMode="All"),
                    sub_request(SUB1, CLASS_A, 1),
                ),
            )
        ],
        classes=CLASSES_A,
        slices=[
            slice_with_devices(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1), device(DEVICE2))
        ],
    ),
    case(
        "prioritized-list-disabled",
        "error: claim claim-0, request req-0: has subrequests, but the DRAPrioritizedList "
        "feature is disabled",
        claims=[claim(CLAIM0, prioritized(REQ0, sub_request(SUB0, CLASS_A)))],
        classes=CLASSES_A,
        slices=[slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A)],
    ),
    *(
        case(
            name,
            expect(
                alloc_result(
                    LOCAL1,
                    result(REQ1, DRIVER_A, POOL1, DEVICE1),
                    result(R0S1, DRIVER_A, POOL2, DEVICE2),
                )
            ),
            features=PL,
            claims=[
                claim(
                    CLAIM0,
                    *(
                        reversed(requests)
                        if name == "prioritized-list-with-backtracking"
                        else requests
                    ),
                )
            ],
            classes=CLASSES_A,
            slices=[
                slice_with_devices(
                    SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1, {"memory": "8Gi"})
                ),
                slice_with_devices(
                    SLICE2, NODE1, POOL2, DRIVER_A, device(DEVICE2, {"memory": "4Gi"})
                ),
            ],
        )
        for name in ("prioritized-list-multi-request", "prioritized-list-with-backtracking")
        for requests in [
            (
                request(REQ1, CLASS_A, 1, mem_at_least("8Gi")),
                prioritized(
                    REQ0,
                    sub_request(SUB0, CLASS_A, 1, mem_at_least("8Gi")),
                    sub_request(SUB1, CLASS_A, 1, mem_at_least("4Gi")),
                ),
            )
        ]
    ),
    case(
        "prioritized-list-too-many-in-first-subrequest",
        expect(alloc_result(LOCAL1, result(R0S1, DRIVER_A, POOL1, DEVICE1))),
        features=PL,
        claims=[
            claim(
                CLAIM0,
                prioritized(REQ0, sub_request(SUB0, CLASS_B, 500), sub_request(SUB1, CLASS_A)),
            )
        ],
        classes=CLASSES_AB,
        slices=[slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A)],
    ),
    case(
        "prioritized-list-minimum-sum-exceeds-claim-limit",
        "error: claim claim-0, request req-1: adding 20 devices exceeds the claim limit of 32, "
        "with 20 already accounted for",
        features=PL,
        claims=[
            claim(
                CLAIM0,
                request(REQ0, CLASS_A, 20),
                prioritized(REQ1, sub_request(SUB0, CLASS_A, 20), sub_request(SUB1, CLASS_A, 24)),
            )
        ],
        classes=CLASSES_A,
        slices=[],
    ),
    case(
        "prioritized-list-overflowing-first-subrequest-is-pruned",
        expect(
            alloc_result(
                LOCAL1,
                result(REQ0, DRIVER_A, POOL1, DEVICE1),
                result(R1S1, DRIVER_A, POOL1, DEVICE2),
            )
        ),
        features=PL,
        claims=[
            claim(
                CLAIM0,
                request(REQ0, CLASS_A, 1),
                prioritized(
                    REQ1, sub_request(SUB0, CLASS_A, 2**63 - 1), sub_request(SUB1, CLASS_A, 1)
                ),
            )
        ],
        classes=CLASSES_A,
        slices=[
            slice_with_devices(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1), device(DEVICE2))
        ],
    ),
]


TAINT_NO_SCHEDULE = {"key": "taint-key", "value": "taint-value", "effect": "NoSchedule"}
TAINT_NO_EXECUTE = {"key": "taint-key", "value": "taint-value-2", "effect": "NoExecute"}
TAINT_NONE = {"key": "taint-key", "value": "taint-value", "effect": "None"}
TOLERATE_NO_SCHEDULE = {"operator": "Exists", "key": "taint-key", "effect": "NoSchedule"}
TOLERATE_NO_EXECUTE = {
    "operator": "Equal",
    "key": "taint-key",
    "value": "taint-value-2",
    "effect": "NoExecute",
}
TAINTED_PAIR = slice_with_devices(
    SLICE1,
    NODE1,
    POOL1,
    DRIVER_A,
    device(DEVICE1, taints=[TAINT_NO_SCHEDULE]),
    device(DEVICE2, taints=[TAINT_NO_EXECUTE]),
)
ONE_TAINTED = slice_with_devices(
    SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1, taints=[TAINT_NO_SCHEDULE])
)
TAINTS = features("device_taints")

TAINTS_CASES = [
    case(
        "tainted-two-devices",
        CANNOT_ALLOCATE,
        features=TAINTS,
        claims=[claim_with_request(CLAIM0, REQ0, CLASS_A)],
        classes=CLASSES_A,
        slices=[TAINTED_PAIR],
    ),
    case(
        "tainted-one-device-two-taints",
        CANNOT_ALLOCATE,
        features=TAINTS,
        claims=[claim_with_request(CLAIM0, REQ0, CLASS_A)],
        classes=CLASSES_A,
        slices=[
            slice_with_devices(
                SLICE1,
                NODE1,
                POOL1,
                DRIVER_A,
                device(DEVICE1, taints=[TAINT_NO_SCHEDULE, TAINT_NO_EXECUTE]),
            )
        ],
    ),
    case(
        "tainted-two-devices-tolerated",
        expect(
            alloc_result(
                LOCAL1, result(REQ0, DRIVER_A, POOL1, DEVICE2, tolerations=[TOLERATE_NO_EXECUTE])
            )
        ),
        features=TAINTS,
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 1, tolerations=[TOLERATE_NO_EXECUTE]))],
        classes=CLASSES_A,
        slices=[TAINTED_PAIR],
    ),
    case(
        "tainted-two-devices-prioritized-list-tolerated",
        expect(
            alloc_result(
                LOCAL1, result(R0S1, DRIVER_A, POOL1, DEVICE2, tolerations=[TOLERATE_NO_EXECUTE])
            )
        ),
        features=features("device_taints", "prioritized_list"),
        claims=[
            claim(
                CLAIM0,
                prioritized(
                    REQ0,
                    sub_request(SUB0, CLASS_A),
                    sub_request(SUB1, CLASS_A, tolerations=[TOLERATE_NO_EXECUTE]),
                ),
            )
        ],
        classes=CLASSES_A,
        slices=[TAINTED_PAIR],
    ),
    case(
        "tainted-no-effect",
        expect(alloc_result(LOCAL1, result(REQ0, DRIVER_A, POOL1, DEVICE1))),
        features=TAINTS,
        claims=[claim_with_request(CLAIM0, REQ0, CLASS_A)],
        classes=CLASSES_A,
        slices=[
            slice_with_devices(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1, taints=[TAINT_NONE]))
        ],
    ),
    case(
        "tainted-one-device-two-taints-both-tolerated",
        expect(
            alloc_result(
                LOCAL1,
                result(
                    REQ0,
                    DRIVER_A,
                    POOL1,
                    DEVICE1,
                    tolerations=[TOLERATE_NO_SCHEDULE, TOLERATE_NO_EXECUTE],
                ),
            )
        ),
        features=TAINTS,
        claims=[
            claim(
                CLAIM0,
                request(REQ0, CLASS_A, 1, tolerations=[TOLERATE_NO_SCHEDULE, TOLERATE_NO_EXECUTE]),
            )
        ],
        classes=CLASSES_A,
        slices=[
            slice_with_devices(
                SLICE1,
                NODE1,
                POOL1,
                DRIVER_A,
                device(DEVICE1, taints=[TAINT_NO_SCHEDULE, TAINT_NO_EXECUTE]),
            )
        ],
    ),
    case(
        "tainted-disabled",
        expect(alloc_result(LOCAL1, result(REQ0, DRIVER_A, POOL1, DEVICE1))),
        claims=[claim_with_request(CLAIM0, REQ0, CLASS_A)],
        classes=CLASSES_A,
        slices=[
            slice_with_devices(
                SLICE1,
                NODE1,
                POOL1,
                DRIVER_A,
                device(DEVICE1, taints=[TAINT_NO_SCHEDULE, TAINT_NO_EXECUTE]),
            )
        ],
    ),
    case(
        "tainted-prioritized-list",
        CANNOT_ALLOCATE,
        features=features("device_taints", "prioritized_list"),
        claims=[
            claim(CLAIM0, prioritized(REQ0, sub_request(SUB0, CLASS_B), sub_request(SUB1, CLASS_A)))
        ],
        classes=CLASSES_AB,
        slices=[ONE_TAINTED],
    ),
    case(
        "tainted-prioritized-list-disabled",
        expect(alloc_result(LOCAL1, result(R0S1, DRIVER_A, POOL1, DEVICE1))),
        features=PL,
        claims=[
            claim(CLAIM0, prioritized(REQ0, sub_request(SUB0, CLASS_B), sub_request(SUB1, CLASS_A)))
        ],
        classes=CLASSES_AB,
        slices=[ONE_TAINTED],
    ),
    case(
        "tainted-admin-access",
        CANNOT_ALLOCATE,
        features=features("device_taints", "admin_access"),
        claims=[claim(CLAIM0, admin(request(REQ0, CLASS_A, 1)))],
        allocated=[(DRIVER_A, POOL1, DEVICE1), (DRIVER_A, POOL1, DEVICE2)],
        classes=CLASSES_A,
        slices=[ONE_TAINTED],
    ),
    case(
        "tainted-admin-access-disabled",
        expect(alloc_result(LOCAL1, result(REQ0, DRIVER_A, POOL1, DEVICE1, admin=True))),
        features=features("admin_access"),
        claims=[claim(CLAIM0, admin(request(REQ0, CLASS_A, 1)))],
        allocated=[(DRIVER_A, POOL1, DEVICE1), (DRIVER_A, POOL1, DEVICE2)],
        classes=CLASSES_A,
        slices=[ONE_TAINTED],
    ),
    case(
        "tainted-all-devices-single",
        CANNOT_ALLOCATE,
        features=TAINTS,
        claims=[claim(CLAIM0, all_request(REQ0, CLASS_A))],
        classes=CLASSES_A,
        slices=[ONE_TAINTED],
    ),
    case(
        "tainted-all-devices-single-disabled",
        expect(alloc_result(LOCAL1, result(REQ0, DRIVER_A, POOL1, DEVICE1))),
        claims=[claim(CLAIM0, all_request(REQ0, CLASS_A))],
        classes=CLASSES_A,
        slices=[ONE_TAINTED],
    ),
]

PART = features("partitionable_devices")


def counter_pool(
    *devices: dict[str, Any], total: dict[str, str], name: str = POOL1
) -> list[dict[str, Any]]:
    """One pool of two slices: the devices, and the counter set they consume."""
    return [
        slice_with_devices(SLICE1, NODE1, pool(name, 2), DRIVER_A, *devices),
        slice_with_counter_sets(
            SLICE2, NODE1, pool(name, 2), DRIVER_A, counter_set("counter-set-1", total)
        ),
    ]


def consuming(name: str, amounts: dict[str, str], **extra: Any) -> dict[str, Any]:
    return device(name, consumesCounters=[counters("counter-set-1", amounts)], **extra)


PARTITIONABLE = [
    case(
        "partitionable-devices-single-device",
        expect(alloc_result(LOCAL1, result(REQ0, DRIVER_A, POOL1, DEVICE1))),
        features=PART,
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 1))],
        classes=CLASSES_A,
        slices=counter_pool(consuming(DEVICE1, {"memory": "4Gi"}), total={"memory": "8Gi"}),
    ),
    case(
        "partitionable-devices-counter-quantities-are-not-modified",
        expect(alloc_result(LOCAL1, result(REQ0, DRIVER_A, POOL1, DEVICE2))),
        features=PART,
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 1))],
        allocated=[(DRIVER_A, POOL1, DEVICE1)],
        classes=CLASSES_A,
        slices=counter_pool(
            consuming(DEVICE1, {"c": "9000000000000000000"}),
            consuming(DEVICE2, {"c": "1"}),
            total={"c": "10000000000000000000"},
        ),
    ),
]


BINDING = features("device_binding_and_status")


def with_conditions(name: str, ready: str, failed: str) -> dict[str, Any]:
    return device(name, bindingConditions=[ready], bindingFailureConditions=[failed])


def conditions_result(req: str, dev: str, ready: str, failed: str) -> dict[str, Any]:
    return result(
        req, DRIVER_A, POOL1, dev, bindingConditions=[ready], bindingFailureConditions=[failed]
    )


BINDING_CONDITIONS = [
    case(
        "device-binding-conditions",
        expect(
            alloc_result(LOCAL1, conditions_result(REQ0, DEVICE1, "IsPrepare", "BindingFailed"))
        ),
        features=BINDING,
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 1))],
        classes=CLASSES_A,
        slices=[
            slice_with_devices(
                SLICE1,
                NODE1,
                POOL1,
                DRIVER_A,
                with_conditions(DEVICE1, "IsPrepare", "BindingFailed"),
            )
        ],
    ),
    case(
        "binding-conditions-multiple-devices",
        expect(
            alloc_result(
                LOCAL1,
                conditions_result(REQ0, DEVICE1, "IsPrepare", "BindingFailed"),
                conditions_result(REQ0, DEVICE2, "IsPrepare2", "BindingFailed2"),
                conditions_result(REQ1, "device-3", "IsPrepare3", "BindingFailed3"),
            )
        ),
        features=BINDING,
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 2), request(REQ1, CLASS_A, 1))],
        classes=CLASSES_A,
        slices=[
            slice_with_devices(
                SLICE1,
                NODE1,
                POOL1,
                DRIVER_A,
                with_conditions(DEVICE1, "IsPrepare", "BindingFailed"),
                with_conditions(DEVICE2, "IsPrepare2", "BindingFailed2"),
                with_conditions("device-3", "IsPrepare3", "BindingFailed3"),
            )
        ],
    ),
    case(
        "binding-conditions-with-and-without",
        expect(
            alloc_result(
                LOCAL1,
                result(REQ0, DRIVER_A, POOL1, DEVICE1),
                conditions_result(REQ1, DEVICE2, "IsPrepare", "BindingFailed"),
            )
        ),
        features=BINDING,
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 1), request(REQ1, CLASS_A, 1))],
        classes=CLASSES_A,
        slices=[
            slice_with_devices(
                SLICE1,
                NODE1,
                POOL1,
                DRIVER_A,
                device(DEVICE1),
                with_conditions(DEVICE2, "IsPrepare", "BindingFailed"),
            )
        ],
    ),
    case(
        "binding-conditions-without-feature-gate",
        CANNOT_ALLOCATE,
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 1))],
        classes=CLASSES_A,
        slices=[
            slice_with_devices(
                SLICE1,
                NODE1,
                POOL1,
                DRIVER_A,
                with_conditions(DEVICE1, "IsPrepare", "BindingFailed"),
            )
        ],
    ),
]

CC = features("consumable_capacity")
CAP0 = "capacity-0"
CLASS_MULTI = [class_(CLASS_A, DRIVER_A, multi=True)]
RANGE_POLICY = {"default": "2", "validRange": {"min": "2", "step": "2", "max": "4"}}


def multi(name: str, capacity: dict[str, Any] | None = None) -> dict[str, Any]:
    return device(name, capacity, allowMultipleAllocations=True)


def cap_request(req: dict[str, Any], amount: str) -> dict[str, Any]:
    req["exactly"]["capacity"] = {"requests": {CAP0: amount}}
    return req


def share(req: str, dev: str, consumed: dict[str, str] | None = None) -> dict[str, Any]:
    extra: dict[str, Any] = {"shareID": "aaaaaaaa-aaaa-aaaa-aaaa-aaaaaaaaaaaa"}
    if consumed:
        extra["consumedCapacity"] = consumed
    return result(req, DRIVER_A, POOL1, dev, **extra)


TWO_CLAIMS = [claim(CLAIM0, request(REQ0, CLASS_A, 1)), claim(CLAIM1, request(REQ0, CLASS_A, 1))]


def two_claims_asking(amount: str) -> list[dict[str, Any]]:
    return [
        claim(CLAIM0, cap_request(request(REQ0, CLASS_A, 1), amount)),
        claim(CLAIM1, cap_request(request(REQ0, CLASS_A, 1), amount)),
    ]


CONSUMABLE = [
    case(
        "consumable-capacity-disabled-feature",
        "error: claim claim-0, request req-0: has capacity requests, but the "
        "DRAConsumableCapacity feature is disabled",
        features=BINDING,
        claims=[claim(CLAIM0, cap_request(request(REQ0, CLASS_A, 1), "1"))],
        classes=CLASSES_A,
        slices=[slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A)],
    ),
    case(
        "consumable-capacity-disabled-feature-with-prioritized-list",
        "error: claim claim-0, subrequest subReq-0: has capacity requests, but the "
        "DRAConsumableCapacity feature is disabled",
        features=features("prioritized_list", "device_binding_and_status"),
        claims=[
            claim(
                CLAIM0,
                prioritized(
                    REQ0,
                    sub_request(SUB0, CLASS_A, 1, capacity={"requests": {CAP0: "1"}}),
                    sub_request(SUB1, CLASS_A, 1, capacity={"requests": {CAP0: "1"}}),
                ),
            )
        ],
        classes=CLASSES_A,
        slices=[slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A)],
    ),
    case(
        "consumable-capacity-multi-allocatable-device-with-missing-capacity-request",
        CANNOT_ALLOCATE,
        features=CC,
        claims=[claim(CLAIM0, cap_request(request(REQ0, CLASS_A, 1), "1"))],
        classes=CLASSES_A,
        slices=[
            slice_with_devices(SLICE1, NODE1, POOL1, DRIVER_A, multi(DEVICE1, {"capacity-1": "1"}))
        ],
    ),
    case(
        "consumable-capacity-multi-allocatable-device-allocation-mode-all-with-missing-capacity-request",
        CANNOT_ALLOCATE,
        features=CC,
        claims=[claim(CLAIM0, all_request(REQ0, CLASS_A, capacity={"requests": {CAP0: "1"}}))],
        classes=CLASS_MULTI,
        slices=[
            slice_with_devices(SLICE1, NODE1, POOL1, DRIVER_A, multi(DEVICE1, {"capacity-1": "1"}))
        ],
    ),
    case(
        "consumable-capacity-multi-allocatable-device-without-capacity-without-capacity-request",
        expect(
            alloc_result(LOCAL1, share(REQ0, DEVICE1)), alloc_result(LOCAL1, share(REQ0, DEVICE1))
        ),
        features=CC,
        claims=TWO_CLAIMS,
        classes=CLASS_MULTI,
        slices=[slice_with_devices(SLICE1, NODE1, POOL1, DRIVER_A, multi(DEVICE1))],
    ),
    case(
        "consumable-capacity-multi-allocatable-device-without-policy-without-capacity-request",
        expect(
            alloc_result(LOCAL1, share(REQ0, DEVICE1, {CAP0: "1"})),
            alloc_result(LOCAL1, share(REQ0, DEVICE2, {CAP0: "1"})),
        ),
        features=CC,
        claims=TWO_CLAIMS,
        classes=CLASS_MULTI,
        slices=[
            slice_with_devices(
                SLICE1,
                NODE1,
                POOL1,
                DRIVER_A,
                multi(DEVICE1, {CAP0: "1"}),
                multi(DEVICE2, {CAP0: "1"}),
            )
        ],
    ),
    case(
        "consumable-capacity-multi-allocatable-device-without-policy-without-capacity-request-block",
        CANNOT_ALLOCATE,
        features=CC,
        claims=TWO_CLAIMS,
        classes=CLASS_MULTI,
        slices=[slice_with_devices(SLICE1, NODE1, POOL1, DRIVER_A, multi(DEVICE1, {CAP0: "2"}))],
    ),
    case(
        "consumable-capacity-multi-allocatable-device-without-policy-with-capacity-request",
        expect(
            alloc_result(LOCAL1, share(REQ0, DEVICE1, {CAP0: "1"})),
            alloc_result(LOCAL1, share(REQ0, DEVICE1, {CAP0: "1"})),
        ),
        features=CC,
        claims=two_claims_asking("1"),
        classes=CLASS_MULTI,
        slices=[slice_with_devices(SLICE1, NODE1, POOL1, DRIVER_A, multi(DEVICE1, {CAP0: "2"}))],
    ),
    case(
        "consumable-capacity-multi-allocatable-device-with-policy-without-capacity-request",
        expect(
            alloc_result(LOCAL1, share(REQ0, DEVICE1, {CAP0: "2"})),
            alloc_result(LOCAL1, share(REQ0, DEVICE1, {CAP0: "2"})),
        ),
        features=CC,
        claims=TWO_CLAIMS,
        classes=CLASS_MULTI,
        slices=[
            slice_with_devices(
                SLICE1,
                NODE1,
                POOL1,
                DRIVER_A,
                multi(DEVICE1, {CAP0: {"value": "4", "requestPolicy": RANGE_POLICY}}),
            )
        ],
    ),
    case(
        "consumable-capacity-multi-allocatable-device-with-zero-request-policy",
        expect(
            alloc_result(LOCAL1, share(REQ0, DEVICE1, {CAP0: "0"})),
            alloc_result(LOCAL1, share(REQ0, DEVICE1, {CAP0: "0"})),
        ),
        features=CC,
        claims=TWO_CLAIMS,
        classes=CLASS_MULTI,
        slices=[
            slice_with_devices(
                SLICE1,
                NODE1,
                POOL1,
                DRIVER_A,
                multi(
                    DEVICE1,
                    {CAP0: {"value": "1", "requestPolicy": {"default": "0", "validValues": ["0"]}}},
                ),
            )
        ],
    ),
    case(
        "consumable-capacity-multi-allocatable-device-violates-zero-request-policy",
        CANNOT_ALLOCATE,
        features=CC,
        claims=[claim(CLAIM0, cap_request(request(REQ0, CLASS_A, 1), "1"))],
        classes=CLASS_MULTI,
        slices=[
            slice_with_devices(
                SLICE1,
                NODE1,
                POOL1,
                DRIVER_A,
                multi(
                    DEVICE1,
                    {CAP0: {"value": "1", "requestPolicy": {"default": "0", "validValues": ["0"]}}},
                ),
            )
        ],
    ),
    case(
        "consumable-capacity-multi-allocatable-device-with-range-policy-with-capacity-request",
        expect(
            alloc_result(LOCAL1, share(REQ0, DEVICE1, {CAP0: "2"})),
            alloc_result(LOCAL1, share(REQ0, DEVICE1, {CAP0: "2"})),
        ),
        features=CC,
        claims=two_claims_asking("1"),
        classes=CLASS_MULTI,
        slices=[
            slice_with_devices(
                SLICE1,
                NODE1,
                POOL1,
                DRIVER_A,
                multi(DEVICE1, {CAP0: {"value": "4", "requestPolicy": RANGE_POLICY}}),
            )
        ],
    ),
    case(
        "consumable-capacity-multi-allocatable-device-with-range-policy-step",
        expect(alloc_result(LOCAL1, share(REQ0, DEVICE1, {CAP0: "4"}))),
        features=CC,
        claims=[claim(CLAIM0, cap_request(request(REQ0, CLASS_A, 1), "3"))],
        classes=CLASS_MULTI,
        slices=[
            slice_with_devices(
                SLICE1,
                NODE1,
                POOL1,
                DRIVER_A,
                multi(DEVICE1, {CAP0: {"value": "4", "requestPolicy": RANGE_POLICY}}),
            )
        ],
    ),
]


def range_device(name: str, value: str, **extra: Any) -> dict[str, Any]:
    return multi_with(name, {CAP0: {"value": value, "requestPolicy": RANGE_POLICY}}, **extra)


def multi_with(name: str, capacity: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return device(name, capacity, allowMultipleAllocations=True, **extra)


def valid_values_device(name: str, value: str, default: str, *values: str) -> dict[str, Any]:
    policy = {"default": default, "validValues": [default, *values]}
    return multi_with(name, {CAP0: {"value": value, "requestPolicy": policy}})


def shared_allocation(dev: str, amount: str) -> dict[str, Any]:
    """A claim already holding a share of ``dev`` that consumes ``amount`` of capacity-0."""
    entry = {
        "request": "r",
        "driver": DRIVER_A,
        "pool": POOL1,
        "device": dev,
        "shareID": "bbbbbbbb-bbbb-bbbb-bbbb-bbbbbbbbbbbb",
        "consumedCapacity": {CAP0: amount},
    }
    out = claim("holder", request("r", CLASS_A, 1))
    out["status"] = {"allocation": {"devices": {"results": [entry]}}}
    return out


def one_asking(amount: str) -> list[dict[str, Any]]:
    return [claim(CLAIM0, cap_request(request(REQ0, CLASS_A, 1), amount))]


CONSUMABLE_MORE = [
    *(
        case(
            name,
            "error~ cannot be represented",
            features=CC,
            claims=[claim(CLAIM0, req)],
            classes=CLASS_MULTI,
            slices=[slice_with_devices(SLICE1, NODE1, POOL1, DRIVER_A, *devices)],
        )
        for name, req, devices in (
            (
                "consumable-capacity-range-policy-request-above-int64-rejected",
                cap_request(request(REQ0, CLASS_A, 1), "18446744073709551616"),
                [range_device(DEVICE1, "4")],
            ),
            (
                "consumable-capacity-range-policy-rounded-value-overflow-rejected",
                cap_request(request(REQ0, CLASS_A, 1), "9223372036854775807"),
                [range_device(DEVICE1, "4")],
            ),
            (
                "consumable-capacity-range-policy-overflow-aborts-not-skip",
                cap_request(request(REQ0, CLASS_A, 1), "18446744073709551616"),
                [range_device(DEVICE1, "4"), multi_with(DEVICE2, {CAP0: "36893488147419103232"})],
            ),
            (
                "consumable-capacity-range-policy-allocation-mode-all-overflow-aborts",
                all_request(REQ0, CLASS_A, capacity={"requests": {CAP0: "18446744073709551616"}}),
                [range_device(DEVICE1, "4")],
            ),
        )
    ),
    case(
        "consumable-capacity-negative-request-aborts",
        "error~ negative",
        features=CC,
        claims=one_asking("-5"),
        classes=CLASS_MULTI,
        slices=[
            slice_with_devices(SLICE1, NODE1, POOL1, DRIVER_A, multi_with(DEVICE1, {CAP0: "10"}))
        ],
    ),
    case(
        "consumable-capacity-multi-allocatable-device-with-valid-values-policy",
        expect(alloc_result(LOCAL1, share(REQ0, DEVICE1, {CAP0: "2"}))),
        features=CC,
        claims=one_asking("2"),
        classes=CLASS_MULTI,
        slices=[
            slice_with_devices(
                SLICE1, NODE1, POOL1, DRIVER_A, valid_values_device(DEVICE1, "4", "1", "2")
            )
        ],
    ),
    case(
        "consumable-capacity-multi-allocatable-device-with-valid-values-policy-round-up",
        expect(alloc_result(LOCAL1, share(REQ0, DEVICE1, {CAP0: "3"}))),
        features=CC,
        claims=one_asking("2"),
        classes=CLASS_MULTI,
        slices=[
            slice_with_devices(
                SLICE1, NODE1, POOL1, DRIVER_A, valid_values_device(DEVICE1, "3", "1", "3")
            )
        ],
    ),
    case(
        "consumable-capacity-multi-allocatable-device-with-exceeded-consumable-capacity-request",
        CANNOT_ALLOCATE,
        features=CC,
        claims=[
            claim(CLAIM0, cap_request(request(REQ0, CLASS_A, 1), "1")),
            claim(CLAIM1, cap_request(request(REQ0, CLASS_A, 1), "2")),
        ],
        classes=CLASS_MULTI,
        slices=[slice_with_devices(SLICE1, NODE1, POOL1, DRIVER_A, range_device(DEVICE1, "2"))],
    ),
    case(
        "consumable-capacity-multi-allocatable-device-with-request-over-max-sharing-policy",
        CANNOT_ALLOCATE,
        features=CC,
        claims=one_asking("6"),
        classes=CLASS_MULTI,
        slices=[slice_with_devices(SLICE1, NODE1, POOL1, DRIVER_A, range_device(DEVICE1, "10"))],
    ),
    case(
        "consumable-capacity-multi-allocatable-device-with-allocated-capacity-use-remaining",
        expect(alloc_result(LOCAL1, share(REQ0, DEVICE1, {CAP0: "2"}))),
        features=CC,
        claims=one_asking("2"),
        allocated_claims=[shared_allocation(DEVICE1, "2")],
        classes=CLASS_MULTI,
        slices=[slice_with_devices(SLICE1, NODE1, POOL1, DRIVER_A, range_device(DEVICE1, "4"))],
    ),
    case(
        "consumable-capacity-multi-allocatable-device-with-allocated-capacity-next-device",
        expect(alloc_result(LOCAL1, share(REQ0, DEVICE2, {CAP0: "2"}))),
        features=CC,
        claims=one_asking("2"),
        allocated_claims=[shared_allocation(DEVICE1, "2")],
        classes=CLASS_MULTI,
        slices=[
            slice_with_devices(
                SLICE1,
                NODE1,
                POOL1,
                DRIVER_A,
                range_device(DEVICE1, "2"),
                range_device(DEVICE2, "2"),
            )
        ],
    ),
    case(
        "consumable-capacity-with-multi-allocatable-device-backtrack",
        expect(
            alloc_result(
                LOCAL1, share(REQ0, DEVICE1, {CAP0: "2"}), share(REQ1, DEVICE1, {CAP0: "2"})
            ),
            alloc_result(LOCAL1, share(REQ0, DEVICE2, {CAP0: "2"})),
        ),
        features=CC,
        claims=[
            claim(
                CLAIM0,
                cap_request(request(REQ0, CLASS_A, 1), "2"),
                cap_request(request(REQ1, CLASS_A, 1), "2"),
                constraints=[match_attribute("driver-a/stringAttribute")],
            ),
            claim(CLAIM1, cap_request(request(REQ0, CLASS_A, 1), "2")),
        ],
        classes=CLASSES_A,
        slices=[
            slice_with_devices(
                SLICE1,
                NODE1,
                POOL1,
                DRIVER_A,
                range_device(DEVICE2, "2", attributes={"stringAttribute": {"string": "v1"}}),
                range_device(DEVICE1, "4", attributes={"stringAttribute": {"string": "v2"}}),
            )
        ],
    ),
    case(
        "consumable-capacity-multi-allocatable-device-with-subrequest",
        expect(alloc_result(LOCAL1, share(R0S1, DEVICE1, {CAP0: "2"}))),
        features=features("consumable_capacity", "prioritized_list"),
        claims=[
            claim(
                CLAIM0,
                prioritized(
                    REQ0,
                    sub_request(SUB0, CLASS_A, 1, capacity={"requests": {CAP0: "4"}}),
                    sub_request(SUB1, CLASS_A, 1, capacity={"requests": {CAP0: "2"}}),
                    sub_request(SUB1, CLASS_A, 1),
                ),
            )
        ],
        classes=CLASS_MULTI,
        slices=[slice_with_devices(SLICE1, NODE1, POOL1, DRIVER_A, range_device(DEVICE1, "2"))],
    ),
    case(
        "consumable-capacity-multi-allocatable-device-with-no-available-consumable-capacity",
        CANNOT_ALLOCATE,
        features=CC,
        claims=one_asking("2"),
        allocated_claims=[shared_allocation(DEVICE1, "2")],
        classes=CLASS_MULTI,
        slices=[slice_with_devices(SLICE1, NODE1, POOL1, DRIVER_A, range_device(DEVICE1, "2"))],
    ),
]


def strings_pool(*values: str) -> dict[str, Any]:
    return slice_with_devices(
        SLICE1,
        NODE1,
        POOL1,
        DRIVER_A,
        *(
            device(f"device-{i}", attributes={"stringAttribute": {"string": v}})
            for i, v in enumerate(values, start=1)
        ),
    )


def distinct_attribute(attribute: str, *requests: str) -> dict[str, Any]:
    return {"requests": list(requests), "distinctAttribute": attribute}


DISTINCT = [
    case(
        "with-distinct-constraints",
        expect(
            alloc_result(
                LOCAL1,
                share(REQ0, DEVICE1),
                share(REQ1, DEVICE2),
                share(REQ2, "device-3"),
                share("req-3", "device-4"),
            )
        ),
        features=CC,
        claims=[
            claim(
                CLAIM0,
                *(request(r, CLASS_A, 1) for r in (REQ0, REQ1, REQ2, "req-3")),
                constraints=[
                    distinct_attribute("driver-a/boolAttribute", REQ0, REQ1),
                    distinct_attribute("driver-a/driverVersion", REQ0, REQ1, REQ2),
                    distinct_attribute("driver-a/numa", REQ0, REQ1, REQ2, "req-3"),
                ],
            )
        ],
        classes=CLASSES_A,
        slices=[
            slice_with_devices(
                SLICE1,
                NODE1,
                POOL1,
                DRIVER_A,
                *(
                    multi_with(
                        name,
                        {},
                        attributes={
                            "driverVersion": {"version": version},
                            "numa": {"int": numa},
                            "boolAttribute": {"bool": flag},
                        },
                    )
                    for name, version, numa, flag in (
                        (DEVICE1, "1.0.0", 0, True),
                        (DEVICE2, "1.0.1", 1, False),
                        ("device-3", "1.0.2", 2, True),
                        ("device-4", "1.0.0", 3, True),
                    )
                ),
            )
        ],
    ),
    case(
        "distinct-constraint-single-request-count-3-not-distinct",
        CANNOT_ALLOCATE,
        features=CC,
        claims=[
            claim(
                CLAIM0,
                request(REQ0, CLASS_A, 3),
                constraints=[distinct_attribute("driver-a/stringAttribute")],
            )
        ],
        classes=CLASSES_A,
        slices=[strings_pool("value1", "value2", "value1")],
    ),
    case(
        "distinct-constraint-single-request-count-3-all-distinct",
        expect(
            alloc_result(
                LOCAL1,
                result(REQ0, DRIVER_A, POOL1, DEVICE1),
                result(REQ0, DRIVER_A, POOL1, DEVICE2),
                result(REQ0, DRIVER_A, POOL1, "device-3"),
            )
        ),
        features=CC,
        claims=[
            claim(
                CLAIM0,
                request(REQ0, CLASS_A, 3),
                constraints=[distinct_attribute("driver-a/stringAttribute")],
            )
        ],
        classes=CLASSES_A,
        slices=[strings_pool("value1", "value2", "value3")],
    ),
    case(
        "distinct-constraint-two-requests-with-count-not-distinct",
        CANNOT_ALLOCATE,
        features=CC,
        claims=[
            claim(
                CLAIM0,
                request(REQ0, CLASS_A, 2),
                request(REQ1, CLASS_A, 1),
                constraints=[distinct_attribute("driver-a/stringAttribute", REQ0, REQ1)],
            )
        ],
        classes=CLASSES_A,
        slices=[strings_pool("value1", "value2", "value1")],
    ),
    case(
        "with-distinct-constraints-attribute-not-set",
        CANNOT_ALLOCATE,
        features=CC,
        claims=[
            claim(
                CLAIM0,
                request(REQ0, CLASS_A, 1),
                constraints=[distinct_attribute("driver-a/boolAttribute", REQ0)],
            )
        ],
        classes=CLASSES_A,
        slices=[slice_with_devices(SLICE1, NODE1, POOL1, DRIVER_A, multi(DEVICE1))],
    ),
]


def gen_slice(name: str, node: str, dev: str, generation: int) -> dict[str, Any]:
    return slice_with_devices(name, node, pool(POOL1, 2, generation), DRIVER_A, device(dev))


ONE_ON_NODE1 = expect(alloc_result(LOCAL1, result(REQ0, DRIVER_A, POOL1, DEVICE1)))

POOLS = [
    case(
        "allocation-mode-all-with-multi-host-resource-pool",
        ONE_ON_NODE1,
        claims=[claim(CLAIM0, all_request(REQ0, CLASS_A))],
        classes=CLASSES_A,
        slices=[gen_slice(SLICE1, NODE1, DEVICE1, 1), gen_slice(SLICE2, NODE2, DEVICE2, 1)],
    ),
    case(
        "multi-host-resource-pool-with-stale-slice-for-current-node",
        CANNOT_ALLOCATE,
        claims=[claim_with_request(CLAIM0, REQ0, CLASS_A)],
        classes=CLASSES_A,
        slices=[gen_slice(SLICE1, NODE1, DEVICE1, 1), gen_slice(SLICE2, NODE2, DEVICE2, 2)],
    ),
    case(
        "multi-host-resource-pool-complete-update-from-node-1-to-node-2",
        ONE_ON_NODE1,
        claims=[claim_with_request(CLAIM0, REQ0, CLASS_A)],
        classes=CLASSES_A,
        slices=[
            gen_slice(SLICE1, NODE1, DEVICE1, 1),
            gen_slice(SLICE1, NODE1, DEVICE2, 1),
            gen_slice(SLICE2, NODE2, DEVICE1, 2),
            gen_slice(SLICE2, NODE2, DEVICE2, 2),
        ],
    ),
    case(
        "multi-host-resource-pool-complete-update-from-node-2-to-node-1",
        ONE_ON_NODE1,
        claims=[claim_with_request(CLAIM0, REQ0, CLASS_A)],
        classes=CLASSES_A,
        slices=[
            gen_slice(SLICE1, NODE2, DEVICE1, 1),
            gen_slice(SLICE1, NODE2, DEVICE2, 1),
            gen_slice(SLICE2, NODE1, DEVICE1, 2),
            gen_slice(SLICE2, NODE1, DEVICE2, 2),
        ],
    ),
    case(
        "multi-host-resource-pool-incomplete-update-from-node-1-to-node-2",
        ONE_ON_NODE1,
        claims=[claim_with_request(CLAIM0, REQ0, CLASS_A)],
        classes=CLASSES_A,
        slices=[
            gen_slice(SLICE1, NODE1, DEVICE1, 1),
            gen_slice(SLICE1, NODE1, DEVICE2, 1),
            gen_slice(SLICE2, NODE2, DEVICE1, 2),
        ],
    ),
    case(
        "multi-host-resource-pool-incomplete-update-from-node-2-to-node-1",
        CANNOT_ALLOCATE,
        claims=[claim_with_request(CLAIM0, REQ0, CLASS_A)],
        classes=CLASSES_A,
        slices=[
            gen_slice(SLICE1, NODE2, DEVICE1, 1),
            gen_slice(SLICE1, NODE2, DEVICE2, 1),
            gen_slice(SLICE2, NODE1, DEVICE1, 2),
        ],
    ),
    case(
        "different-resourceslices-in-pool-can-target-different-nodes",
        expect(alloc_result(LOCAL1, result(REQ0, DRIVER_A, POOL1, DEVICE2))),
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 1))],
        classes=CLASSES_A,
        slices=[gen_slice(SLICE1, NODE2, DEVICE1, 1), gen_slice(SLICE2, NODE1, DEVICE2, 1)],
    ),
    *(
        case(
            name,
            want,
            claims=[claim(CLAIM0, request(REQ0, CLASS_A, 1))],
            classes=CLASSES_A,
            slices=[
                gen_slice(SLICE1, NODE1, DEVICE1, 1),
                gen_slice(SLICE2, NODE1, DEVICE1, 1),
                slice_with_devices("slice-3", NODE1, POOL2, DRIVER_A, device(DEVICE2)),
            ],
            allocated=allocated,
        )
        for name, want, allocated in (
            (
                "invalid-pool-is-ok-if-devices-can-be-allocated-from-other",
                expect(alloc_result(LOCAL1, result(REQ0, DRIVER_A, POOL2, DEVICE2))),
                [],
            ),
            (
                "invalid-pool-is-error-if-no-other-device-can-be-allocated",
                INVALID_POOLS,
                [(DRIVER_A, POOL2, DEVICE2)],
            ),
        )
    ),
    case(
        "no-allocation-from-incomplete-pools",
        CANNOT_ALLOCATE,
        claims=[claim(CLAIM0, request(REQ0, CLASS_A, 1))],
        classes=CLASSES_A,
        slices=[gen_slice(SLICE1, NODE1, DEVICE1, 1)],
    ),
]


TABLE = [
    *POOLS,
    *DISTINCT,
    *CONSUMABLE_MORE,
    *BINDING_CONDITIONS,
    *CONSUMABLE,
    *BASICS,
    *ALL_MODE,
    *ADMIN_AND_NODES,
    *CONSTRAINTS_CONFIG_ERRORS,
    *PRIORITIZED,
    *TAINTS_CASES,
    *PARTITIONABLE,
]


@pytest.mark.parametrize(("inputs", "want"), TABLE)
def test_allocate(inputs: dict[str, Any], want: Any) -> None:
    """The allocation (results in any order), the unschedulable reason or the error is kube's."""
    got = run_allocate(**inputs)
    if isinstance(want, str) and want.startswith("error~ "):
        assert isinstance(got, str)
        assert got.startswith("error: ")
        assert want.removeprefix("error~ ") in got
    else:
        assert got == want


def test_a_search_past_its_deadline_gives_up() -> None:
    """DRASchedulerFilterTimeout: the search stops once its deadline has passed (the
    plugin turns that into kube's Error "node N: timed out trying to allocate devices");
    with time left it allocates as before."""
    inputs: dict[str, Any] = {
        "claims": [claim(CLAIM0, request(REQ0, CLASS_A, 1))],
        "classes": CLASSES_A,
        "slices": [gen_slice(SLICE1, NODE1, DEVICE1, 1)],
    }
    assert run_allocate(**inputs, deadline=time.monotonic() - 1) == "timeout"
    assert run_allocate(**inputs, deadline=time.monotonic() + 60) == run_allocate(**inputs)
