"""The structured allocator against kube's allocator test table (v1.37.2).

Cases ported in our own words from ``structured/internal/allocatortesting/
allocator_testing.go`` (names kept, so each maps to its original): each gives claims,
classes, slices, devices already allocated and the node, and expects kube's allocation,
its unschedulable outcome or its error text. Like kube's table, a case runs with the
features it names and every other feature off.
"""

from __future__ import annotations

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
    SLICE1,
    SLICE2,
    alloc_result,
    all_request,
    claim,
    claim_with_request,
    class_,
    counter_set,
    counters,
    device,
    expect,
    local_node_selector,
    node_label_selector,
    pool,
    request,
    result,
    run_allocate,
    slice_with_counter_sets,
    slice_with_devices,
    slice_with_multiple_devices,
    slice_with_one_device,
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
                    request(REQ0, CLASS_A, 1, {"cel": {"expression": 'device.capacity["driver-a"].memory.compareTo(quantity("1Gi")) >= 0'}}),
                    request(REQ1, CLASS_A, 1, {"cel": {"expression": 'device.capacity["driver-a"].memory.compareTo(quantity("2Gi")) >= 0'}}),
                )
            ]
            if name != "small-and-large-backtrack-claims"
            else [
                claim(CLAIM0, request(REQ0, CLASS_A, 1, {"cel": {"expression": 'device.capacity["driver-a"].memory.compareTo(quantity("1Gi")) >= 0'}})),
                claim(CLAIM1, request(REQ1, CLASS_A, 1, {"cel": {"expression": 'device.capacity["driver-a"].memory.compareTo(quantity("2Gi")) >= 0'}})),
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
                        else [device(DEVICE2, {"memory": "2Gi"}), device(DEVICE1, {"memory": "1Gi"})]
                    ),
                )
            ],
        )
        for name in ("small-and-large", "small-and-large-backtrack-requests", "small-and-large-backtrack-claims")
    ),
    case(
        "devices-split-across-different-slices",
        expect(
            alloc_result(
                LOCAL1, result(REQ0, DRIVER_A, POOL1, DEVICE1), result(REQ0, DRIVER_A, POOL2, DEVICE1)
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
            slice_with_devices("slice-1-obsolete", NODE1, pool(POOL1, 2), DRIVER_A, device(DEVICE1)),
            slice_with_devices("slice-1-obsolete", NODE1, pool(POOL1, 2, 2), DRIVER_A, device(DEVICE2)),
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
        claims=[claim_with_request(CLAIM0, REQ0, CLASS_A), claim_with_request(CLAIM0, REQ1, CLASS_A)],
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
        "error: claim claim-0, request req-0: missing device class name (unsupported request type?)",
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
                SLICE1, NODE1, pool(POOL1, 2), DRIVER_A,
                device(DEVICE1, consumesCounters=[counters("counter-set-1", {"memory": "4Gi"})]),
            ),
            slice_with_counter_sets(
                SLICE2, NODE1, pool(POOL1, 2), DRIVER_A, counter_set("counter-set-1", {"memory": "8Gi"})
            ),
        ],
    ),
    case(
        "all-devices-many",
        expect(
            alloc_result(
                LOCAL1, result(REQ0, DRIVER_A, POOL1, DEVICE1), result(REQ0, DRIVER_A, POOL2, DEVICE1)
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
        claims=[claim(CLAIM0, all_request(REQ0, CLASS_A)), claim(CLAIM1, request(REQ0, CLASS_B, 1))],
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
                LOCAL1, result(REQ0, DRIVER_A, POOL1, DEVICE1), result(REQ0, DRIVER_A, POOL1, DEVICE2)
            ),
        ),
        claims=[claim(CLAIM1, request(REQ0, CLASS_B, 1)), claim(CLAIM0, all_request(REQ0, CLASS_A))],
        classes=[class_(CLASS_A, DRIVER_A), class_(CLASS_B, DRIVER_B)],
        slices=[
            slice_with_devices(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1), device(DEVICE2)),
            slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_B),
        ],
    ),
    case(
        "all-devices-no-solution",
        CANNOT_ALLOCATE,
        claims=[claim(CLAIM1, request(REQ0, CLASS_A, 1)), claim(CLAIM0, all_request(REQ0, CLASS_A))],
        classes=CLASSES_A,
        slices=[slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A)],
    ),
    case(
        "all-devices-no-solution-reversed",
        CANNOT_ALLOCATE,
        claims=[claim(CLAIM0, all_request(REQ0, CLASS_A)), claim(CLAIM1, request(REQ0, CLASS_A, 1))],
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
        slices=[slice_with_devices(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1), device(DEVICE2))],
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
        slices=[slice_with_devices(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1), device(DEVICE2))],
    ),
    case(
        "all-devices-some-allocating-admin-access",
        CANNOT_ALLOCATE,
        features=features("admin_access"),
        claims=[claim(CLAIM0, admin(request(REQ0, CLASS_A, 1)), admin(all_request(REQ1, CLASS_A)))],
        classes=CLASSES_A,
        slices=[slice_with_devices(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1), device(DEVICE2))],
    ),
]


@pytest.mark.parametrize(("inputs", "want"), [*BASICS, *ALL_MODE])
def test_allocate(inputs: dict[str, Any], want: Any) -> None:
    """The allocation (results in any order), the unschedulable reason or the error is kube's."""
    assert run_allocate(**inputs) == want
