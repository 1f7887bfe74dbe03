"""node_from_raw: allocatable defaulting and rounding, images, taints, errors naming fields."""

from __future__ import annotations

from typing import Any

import pytest

from scheduler.model.errors import ModelError
from scheduler.model.parse import node_from_raw
from scheduler.model.taints import Effect, Taint
from tests.builders import Raw, make_node, taint

Gi = 2**30


@pytest.mark.parametrize(
    ("raw", "cpu", "memory", "pods", "ephemeral", "scalar"),
    [
        pytest.param(make_node("n"), 4000, 32 * Gi, 110, 0, {}, id="allocatable"),
        pytest.param(
            make_node("n", cpu="2", memory="8Gi", allocatable=False),
            2000,
            8 * Gi,
            110,
            0,
            {},
            id="capacity-when-allocatable-absent",
        ),
        pytest.param(
            make_node(
                "n",
                cpu="3500m",
                ephemeral="100Gi",
                extra={"nvidia.com/gpu": "8", "hugepages-1Gi": "2Gi"},
            ),
            3500,
            32 * Gi,
            110,
            100 * Gi,
            {"nvidia.com/gpu": 8, "hugepages-1Gi": 2 * Gi},
            id="ephemeral-extended-hugepages",
        ),
        pytest.param(
            make_node("n", cpu="0.0005", memory="1.5"),
            1,
            2,
            110,
            0,
            {},
            id="rounded-up",
        ),
        pytest.param(
            make_node("n", extra={"widgets": "5", "example.com/zero": "0"}),
            4000,
            32 * Gi,
            110,
            0,
            {},
            id="unqualified-and-zero-scalars-dropped",
        ),
    ],
)
def test_allocatable(
    raw: Raw, cpu: int, memory: int, pods: int, ephemeral: int, scalar: dict[str, int]
) -> None:
    """Allocatable reads as kube-scheduler's NewResource(status.allocatable)."""
    a = node_from_raw(raw).allocatable
    assert (a.milli_cpu, a.memory, a.allowed_pod_number, a.ephemeral_storage) == (
        cpu,
        memory,
        pods,
        ephemeral,
    )
    assert a.scalar == scalar


def test_no_status_is_zero() -> None:
    """A node without status has nothing allocatable (and no images)."""
    raw = make_node("n")
    del raw["status"]
    node = node_from_raw(raw)
    assert (node.allocatable.milli_cpu, node.allocatable.allowed_pod_number) == (0, 0)
    assert node.images == {}


def test_fields() -> None:
    """Identity, labels, taints, unschedulable and every image name with its size."""
    raw = make_node(
        "n1",
        labels={"zone": "a"},
        taints=[taint("dedicated", "gpu"), taint("spot", effect="PreferNoSchedule")],
        unschedulable=True,
        images=[(["nginx:1.25", "docker.io/library/nginx:1.25"], 500), (["pause"], 7)],
    )
    node = node_from_raw(raw)
    assert (node.name, node.uid, node.resource_version) == ("n1", "uid-node-n1", "1")
    assert node.labels == {"kubernetes.io/hostname": "n1", "zone": "a"}
    assert node.taints == (
        Taint("dedicated", "gpu", Effect.NO_SCHEDULE),
        Taint("spot", "", Effect.PREFER_NO_SCHEDULE),
    )
    assert node.unschedulable
    # Names are kept verbatim: kube compares them with the pod's normalized names as-is.
    assert node.images == {"nginx:1.25": 500, "docker.io/library/nginx:1.25": 500, "pause": 7}


def _mutated(path: list[str], value: Any) -> Raw:
    raw = make_node("n")
    node: Any = raw
    for part in path[:-1]:
        node = node.setdefault(part, {})
    node[path[-1]] = value
    return raw


@pytest.mark.parametrize(
    ("raw", "field", "fragment"),
    [
        pytest.param(
            _mutated(["metadata", "name"], ""), "metadata.name", "required", id="missing-name"
        ),
        pytest.param(
            _mutated(["metadata", "labels"], ["a"]),
            "metadata.labels",
            "expected an object",
            id="labels-list",
        ),
        pytest.param(
            _mutated(["status", "allocatable", "cpu"], "4 cores"),
            "status.allocatable.cpu",
            "'4 cores'",
            id="bad-quantity",
        ),
        pytest.param(
            _mutated(["status", "allocatable", "memory"], "-1Gi"),
            "status.allocatable.memory",
            "negative",
            id="negative-allocatable",
        ),
        pytest.param(
            _mutated(["spec", "taints"], [{"key": "k", "effect": "NoWay"}]),
            "spec.taints[0].effect",
            "unknown effect",
            id="bad-taint-effect",
        ),
        pytest.param(
            _mutated(["spec", "taints"], [{"key": "k"}]),
            "spec.taints[0].effect",
            "unknown effect",
            id="taint-needs-effect",
        ),
        pytest.param(
            _mutated(["spec", "taints"], [{"effect": "NoSchedule"}]),
            "spec.taints[0].key",
            "required",
            id="taint-needs-key",
        ),
        pytest.param(
            _mutated(["spec", "unschedulable"], "yes"),
            "spec.unschedulable",
            "boolean",
            id="unschedulable-string",
        ),
        pytest.param(
            _mutated(["status", "images"], [{"names": ["a"], "sizeBytes": "big"}]),
            "status.images[0].sizeBytes",
            "integer",
            id="image-size-string",
        ),
        pytest.param(
            _mutated(["status", "images"], [{"names": "a"}]),
            "status.images[0].names",
            "expected a list",
            id="image-names-string",
        ),
    ],
)
def test_errors_name_the_field(raw: Raw, field: str, fragment: str) -> None:
    """Bad input raises ModelError naming the node and the field."""
    with pytest.raises(ModelError) as info:
        node_from_raw(raw)
    assert info.value.field == field
    assert fragment in info.value.message
    assert info.value.obj in ("Node n", "Node <unnamed>")
