"""kube/claim_writer.py against the emulator: DynamicResources' claim writes as kube's
``bindClaim``, Unreserve and PostFilter make them, and the cache's assume layer after them.

Each test creates a claim through the API, caches the API's version (as the watch would),
and has the writer act on it; the claim is then read back from the API."""

from __future__ import annotations

import asyncio
import dataclasses
from typing import TYPE_CHECKING, Any

import pytest

from scheduler.cache.dra_objects import DraObjects
from scheduler.framework import status as st
from scheduler.kube.claim_writer import ClaimWriter
from scheduler.model.dra_claims import (
    AllocationResult,
    ConsumerReference,
    DeviceRequestAllocationResult,
)
from scheduler.model.parse_dra_claims import resource_claim_from_raw
from scheduler.plugins.dynamic_resources.claim_binding import FINALIZER, ClaimBinding
from tests.kube.kube_helpers import create_pod

if TYPE_CHECKING:
    from scheduler.kube.client import ApiClient
    from scheduler.model.dra_claims import ResourceClaim

CLAIMS = "/apis/resource.k8s.io/v1/namespaces/default/resourceclaims"
NODE_SELECTOR = {
    "nodeSelectorTerms": [
        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["node-0"]}]}
    ]
}
ALLOCATION = AllocationResult(
    (DeviceRequestAllocationResult("gpu", "gpu.example.com", "node-0", "gpu-0"),),
    node_selector=NODE_SELECTOR,
)


async def _claim(api: ApiClient, name: str, **status: Any) -> tuple[dict[str, Any], ResourceClaim]:
    body: dict[str, Any] = {
        "metadata": {"name": name},
        "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "g"}}]}},
    }
    raw = await api.request("POST", CLAIMS, body=body)
    if status:
        raw["status"] = status
        raw = await api.request("PUT", f"{CLAIMS}/{name}/status", body=raw)
    return raw, resource_claim_from_raw(raw)


async def _read(api: ApiClient, name: str) -> dict[str, Any]:
    return await api.request("GET", f"{CLAIMS}/{name}")


async def test_prebind_adds_the_finalizer_then_the_allocation_and_the_pod(api: ApiClient) -> None:
    """kube's bindClaim for a claim Reserve allocated: finalizer, allocation with its
    timestamp, the pod in reservedFor; the API's answer is assumed, the allocation leaves
    the in-flight set."""
    pod = await create_pod(api, "trainer")
    _, claim = await _claim(api, "trainer-gpu")
    objects = DraObjects()
    objects.set_claim(claim)
    allocated = dataclasses.replace(claim, allocation=ALLOCATION)
    objects.signal_pending_allocation(allocated)
    writer = ClaimWriter(api, objects)
    status = await writer.bind_claims(pod, "node-0", [ClaimBinding(claim, ALLOCATION)])
    assert status == st.SUCCESS
    raw = await _read(api, "trainer-gpu")
    assert raw["metadata"]["finalizers"] == [FINALIZER]
    allocation = raw["status"]["allocation"]
    assert allocation.pop("allocationTimestamp")
    assert allocation == {
        "devices": {
            "results": [
                {"request": "gpu", "driver": "gpu.example.com", "pool": "node-0", "device": "gpu-0"}
            ]
        },
        "nodeSelector": NODE_SELECTOR,
    }
    assert raw["status"]["reservedFor"] == [{"resource": "pods", "name": "trainer", "uid": pod.uid}]
    seen = objects.claim("default", "trainer-gpu")
    assert seen is not None
    assert seen.resource_version == raw["metadata"]["resourceVersion"]
    assert objects.pending_allocation(claim.uid) is None


async def test_a_claim_allocated_already_gets_the_pod_appended(api: ApiClient) -> None:
    """An allocated, shared claim: only reservedFor changes, the new pod last; the missing
    allocationTimestamp is set, as kube does."""
    first = await create_pod(api, "first")
    second = await create_pod(api, "second")
    allocation = {
        "devices": {
            "results": [{"request": "gpu", "driver": "d", "pool": "node-0", "device": "gpu-0"}]
        }
    }
    reserved = [{"resource": "pods", "name": "first", "uid": first.uid}]
    _, claim = await _claim(api, "shared", allocation=allocation, reservedFor=reserved)
    objects = DraObjects()
    objects.set_claim(claim)
    writer = ClaimWriter(api, objects)
    assert await writer.bind_claims(second, "node-0", [ClaimBinding(claim, None)]) == st.SUCCESS
    raw = await _read(api, "shared")
    assert [r["name"] for r in raw["status"]["reservedFor"]] == ["first", "second"]
    assert raw["status"]["allocation"]["devices"] == allocation["devices"]
    assert raw["status"]["allocation"]["allocationTimestamp"]
    assert "finalizers" not in raw["metadata"]  # kube adds it only when it allocates


@pytest.mark.parametrize(
    ("status", "message"),
    [
        pytest.param(
            {"allocation": {"devices": {}}},
            "claim default/taken got allocated elsewhere in the meantime",
            id="allocated-elsewhere",
        ),
    ],
)
async def test_prebind_refuses_with_kubes_text(
    api: ApiClient, status: dict[str, Any], message: str
) -> None:
    """A claim that changed under the scheduler is not written over."""
    pod = await create_pod(api, "late")
    _, stale = await _claim(api, "taken")
    await api.request(
        "PUT",
        f"{CLAIMS}/taken/status",
        body={**(await _read(api, "taken")), "status": status},
    )
    objects = DraObjects()
    objects.set_claim(stale)
    writer = ClaimWriter(api, objects)
    result = await writer.bind_claims(pod, "node-0", [ClaimBinding(stale, ALLOCATION)])
    assert result.code is st.Code.ERROR
    assert message in result.message()


async def test_a_conflict_reads_the_claim_again_and_retries(api: ApiClient) -> None:
    """kube's RetryOnConflict: a label added meanwhile bumps the version; the write goes
    through on the fresh copy."""
    pod = await create_pod(api, "retry")
    _, stale = await _claim(api, "busy")
    raw = await _read(api, "busy")
    raw["metadata"]["labels"] = {"touched": "yes"}
    await api.request("PUT", f"{CLAIMS}/busy", body=raw)
    objects = DraObjects()
    objects.set_claim(stale)
    writer = ClaimWriter(api, objects)
    assert await writer.bind_claims(pod, "node-0", [ClaimBinding(stale, ALLOCATION)]) == st.SUCCESS
    raw = await _read(api, "busy")
    assert raw["metadata"]["labels"] == {"touched": "yes"}
    assert raw["status"]["reservedFor"][0]["name"] == "retry"


async def test_unreserve_and_deallocate(api: ApiClient) -> None:
    """Unreserve takes only the pod out of reservedFor ($patch: delete by uid); PostFilter's
    deallocation clears allocation and reservedFor."""
    allocation = {
        "devices": {"results": [{"request": "gpu", "driver": "d", "pool": "p", "device": "x"}]}
    }
    reserved = [
        {"resource": "pods", "name": "a", "uid": "uid-a"},
        {"resource": "pods", "name": "b", "uid": "uid-b"},
    ]
    _, claim = await _claim(api, "held", allocation=allocation, reservedFor=reserved)
    writer = ClaimWriter(api, DraObjects())
    pod = await create_pod(api, "b")
    writer.unreserve(claim, dataclasses.replace(pod, uid="uid-b"))
    assert await writer.drain(5)
    raw = await _read(api, "held")
    assert raw["status"]["reservedFor"] == [reserved[0]]
    claim = resource_claim_from_raw(raw)
    writer.deallocate(claim)
    assert await writer.drain(5)
    raw = await _read(api, "held")
    assert not raw.get("status", {}).get("allocation")
    assert not raw.get("status", {}).get("reservedFor")
    await writer.stop()
    await asyncio.sleep(0)


def test_consumer_references_keep_their_group() -> None:
    """A PodGroup reservation kept by a rewrite keeps its apiGroup."""
    from scheduler.kube.claim_writer import _consumer

    ref = ConsumerReference("scheduling.k8s.io", "podgroups", "g", "u")
    assert _consumer(ref) == {
        "apiGroup": "scheduling.k8s.io",
        "resource": "podgroups",
        "name": "g",
        "uid": "u",
    }
