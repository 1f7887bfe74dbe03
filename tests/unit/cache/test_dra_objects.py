"""cache.dra_objects: the claims' assume layer, allocations in flight and what observers hear
(kube's assume cache and claim tracker: ``Assume``, ``Restore``, ``SignalClaimPendingAllocation``,
``MaybeRemoveClaimPendingAllocation``)."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from scheduler.cache.dra_objects import DraObjects
from scheduler.model.dra_claims import (
    AllocationResult,
    DeviceRequestAllocationResult,
    ResourceClaim,
    ResourceClaimSpec,
)
from scheduler.model.parse import pod_from_raw
from tests.builders import make_pod

RESULT = AllocationResult((DeviceRequestAllocationResult("r", "d", "p", "g0"),))


def claim(version: str, *, allocated: bool = False, uid: str = "u1") -> ResourceClaim:
    return ResourceClaim(
        "ns",
        "c",
        uid,
        ResourceClaimSpec(()),
        allocation=RESULT if allocated else None,
        resource_version=version,
    )


class Heard:
    def __init__(self) -> None:
        self.changes: list[tuple[bool, bool]] = []

    def allocation_changed(self, old: Any, new: Any) -> None:
        self.changes.append((old is not None, new is not None))


def test_an_assumed_claim_is_seen_until_the_watch_brings_its_version() -> None:
    """PreBind's claim shadows the API's; an older watch event keeps it, the same version
    replaces it; observers hear the allocation once."""
    objects, heard = DraObjects(), Heard()
    objects.observers.append(heard)
    objects.set_claim(claim("5"))
    assert objects.assume(claim("7", allocated=True)) is not None
    seen = objects.claim("ns", "c")
    assert seen is not None
    assert seen.allocation is RESULT
    objects.set_claim(claim("6"))  # the watch lags: still the assumed one
    seen = objects.claim("ns", "c")
    assert seen is not None
    assert seen.resource_version == "7"
    objects.set_claim(claim("7", allocated=True))
    api = objects.api_claim("ns", "c")
    assert objects.claim("ns", "c") is api
    assert heard.changes == [(False, True)]


@pytest.mark.parametrize(
    ("stored", "assumed", "taken"),
    [
        pytest.param("8", "7", False, id="out-of-sync-older-than-the-cache"),
        pytest.param("7", "7", True, id="same-version"),
    ],
)
def test_assume_refuses_an_older_version(stored: str, assumed: str, taken: bool) -> None:
    """kube: "out of sync" when the cache is newer than what is assumed."""
    objects = DraObjects()
    objects.set_claim(claim(stored))
    assert (objects.assume(claim(assumed, allocated=True)) is not None) is taken


def test_restore_goes_back_to_the_api_version_and_tells() -> None:
    objects, heard = DraObjects(), Heard()
    objects.observers.append(heard)
    calls: list[tuple[str, bool, bool]] = []
    objects.on_claim_changed = lambda key, before, after: calls.append(
        (
            key,
            before is not None and before.allocation is not None,
            after is not None and after.allocation is not None,
        )
    )
    objects.set_claim(claim("1"))
    objects.assume(claim("2", allocated=True))
    objects.restore("ns/c")
    seen = objects.claim("ns", "c")
    assert seen is not None
    assert seen.allocation is None
    assert heard.changes == [(False, True), (True, False)]
    assert calls == [("ns/c", False, False), ("ns/c", False, True), ("ns/c", True, False)]
    assert objects.restore("ns/c") is None  # nothing assumed any more


def test_an_allocation_in_flight_is_shared_and_leaves_with_its_last_sharer() -> None:
    """A second pod of the same claim is a sharer; the allocation leaves the in-flight set
    with the last one, or at once when forced (PreBind's success)."""
    objects, heard = DraObjects(), Heard()
    objects.observers.append(heard)
    allocated = claim("1", allocated=True)
    objects.signal_pending_allocation(allocated)
    objects.signal_pending_allocation(allocated)
    assert objects.pending_allocation("u1") is RESULT
    assert objects.remove_pending_allocation("u1", force=False) is False
    assert objects.remove_pending_allocation("u1", force=False) is True
    assert objects.pending_allocation("u1") is None
    objects.signal_pending_allocation(allocated)
    objects.signal_pending_allocation(allocated)
    assert objects.remove_pending_allocation("u1", force=True) is True
    assert heard.changes == [(False, True), (True, False), (False, True), (True, False)]


def test_no_allocation_goes_in_flight_for_a_claim_seen_allocated() -> None:
    """kube: the pod's cycle was stale; PreBind will find the claim allocated elsewhere."""
    objects = DraObjects()
    objects.set_claim(claim("1", allocated=True))
    objects.signal_pending_allocation(dataclasses.replace(claim("1"), allocation=RESULT))
    assert objects.pending_allocation("u1") is None
    assert list(objects.allocations()) == [RESULT]


def test_pending_pods_are_found_by_the_claims_they_name() -> None:
    """Claims named directly or through status.resourceClaimStatuses; a template's claim
    not generated yet is no key; untracking removes the pod."""
    objects = DraObjects()
    raw = make_pod("p")
    raw["spec"]["resourceClaims"] = [
        {"name": "a", "resourceClaimName": "shared"},
        {"name": "b", "resourceClaimTemplateName": "t"},
        {"name": "c", "resourceClaimTemplateName": "t"},
    ]
    raw["status"]["resourceClaimStatuses"] = [{"name": "b", "resourceClaimName": "p-b-x"}]
    pod = pod_from_raw(raw)
    objects.track_pod(pod)
    assert objects.pods_using("default/shared") == [pod]
    assert objects.pods_using("default/p-b-x") == [pod]
    objects.untrack_pod(pod.uid)
    assert objects.pods_using("default/shared") == []
