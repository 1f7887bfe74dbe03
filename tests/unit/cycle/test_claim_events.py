"""ResourceClaim events and the pods they let through: kube v1.37.2's
``isSchedulableAfterClaimChange`` and ``preQueueingHint`` cases, through the event handlers.

A pod of ours whose claim is missing waits at PreEnqueue (gated); one DynamicResources
rejected waits in the unschedulable pool. Each case applies one claim change and says
whether the pod moved (kube: Queue) or stayed (QueueSkip)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from scheduler.cycle.eventhandlers import EventHandlers
from scheduler.model.parse import pod_from_raw
from scheduler.model.parse_dra_claims import device_class_from_raw, resource_claim_from_raw
from scheduler.model.parse_dra_slices import resource_slice_from_raw
from scheduler.queueing.queued_pod import Pool
from tests.builders import make_node, make_pod
from tests.harness import drain, scheduler_for

J = dict[str, Any]
CLASS = {"metadata": {"name": "gpu"}, "spec": {}}


def _claim(name: str, *, version: str = "1", allocated: bool = False, **meta: Any) -> J:
    raw: J = {
        "metadata": {
            "name": name,
            "namespace": "default",
            "uid": f"uid-{name}",
            "resourceVersion": version,
            **meta,
        },
        "spec": {"devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": "gpu"}}]}},
    }
    if allocated:
        raw["status"] = {
            "allocation": {
                "devices": {
                    "results": [{"request": "r", "driver": "d", "pool": "n0", "device": "g0"}]
                }
            }
        }
    return raw


def _pod(name: str, claim: str) -> J:
    raw = make_pod(name, cpu="1")
    raw["spec"]["resourceClaims"] = [{"name": "gpu", "resourceClaimName": claim}]
    return raw


def _setup() -> tuple[Any, EventHandlers]:
    scheduler, _, _ = scheduler_for([make_node("n0")])
    handlers = EventHandlers(scheduler)
    handlers.on_object(device_class_from_raw(CLASS), None)
    return scheduler, handlers


def _unschedulable(claim_name: str) -> tuple[Any, EventHandlers, str]:
    """A pod whose claim exists but finds no device: in the unschedulable pool, rejected by
    DynamicResources."""
    scheduler, handlers = _setup()
    handlers.on_object(resource_claim_from_raw(_claim(claim_name)), None)
    handlers.on_pod(pod_from_raw(_pod("p", claim_name)))
    assert drain(scheduler) == {"default/p": None}
    info = scheduler.queue.get("uid-default-p")
    assert info is not None
    assert info.pool is Pool.UNSCHEDULABLE
    assert info.unschedulable_plugins == frozenset({"DynamicResources"})
    return scheduler, handlers, "uid-default-p"


def test_a_pod_waits_at_pre_enqueue_until_its_claim_exists() -> None:
    """kube "queue-on-add": the claim's creation lets the gated pod into the queue."""
    scheduler, handlers = _setup()
    handlers.on_pod(pod_from_raw(_pod("p", "c")))
    assert scheduler.queue.gated() == 1
    assert "uid-default-p" not in scheduler.queue
    handlers.on_object(resource_claim_from_raw(_claim("other")), None)
    assert scheduler.queue.gated() == 1  # "skip-unrelated-claim"
    handlers.on_object(resource_claim_from_raw(_claim("c")), None)
    assert scheduler.queue.gated() == 0
    assert "uid-default-p" in scheduler.queue


def _update(raw: J, **changes: Any) -> J:
    out = copy.deepcopy(raw)
    out["metadata"]["resourceVersion"] = "2"
    for key, value in changes.items():
        out.setdefault("metadata" if key == "finalizers" else "status", {})[key] = value
    return out


@pytest.mark.parametrize(
    ("change", "moves"),
    [
        pytest.param(
            lambda h, old: h.on_object(
                resource_claim_from_raw(_update(old, finalizers=["x"])),
                resource_claim_from_raw(old),
            ),
            False,
            id="skip-adding-finalizer",
        ),
        pytest.param(
            lambda h, old: h.on_object(
                resource_claim_from_raw(
                    _update(old, reservedFor=[{"resource": "pods", "name": "q", "uid": "u"}])
                ),
                resource_claim_from_raw(old),
            ),
            True,
            id="queue-on-status-change",
        ),
        pytest.param(
            lambda h, old: h.on_object_deleted(resource_claim_from_raw(old)),
            False,
            id="skip-deletes",
        ),
    ],
)
def test_a_change_of_the_pods_own_claim(change: Any, moves: bool) -> None:
    """Only a status change of the claim the pod uses moves it (kube's hint)."""
    scheduler, handlers, uid = _unschedulable("c")
    change(handlers, _claim("c"))
    info = scheduler.queue.get(uid)
    assert info is not None
    assert (info.pool is not Pool.UNSCHEDULABLE) is moves


@pytest.mark.parametrize(
    ("deallocate", "moves"),
    [
        pytest.param("update", True, id="claim-deallocate"),
        pytest.param("delete", True, id="queue-on-delete-with-allocation"),
        pytest.param("none", False, id="allocated-claim-of-another-pod-unchanged"),
    ],
)
def test_freed_devices_wake_every_pod_dynamic_resources_rejected(
    deallocate: str, moves: bool
) -> None:
    """kube's preQueueingHint: a deallocation, or an allocated claim deleted, is for all pods,
    also those that do not use that claim."""
    scheduler, handlers, uid = _unschedulable("c")
    other = _claim("other", allocated=True)
    handlers.on_object(resource_claim_from_raw(other), None)
    if deallocate == "update":
        freed = copy.deepcopy(other)
        freed["metadata"]["resourceVersion"] = "2"
        del freed["status"]
        handlers.on_object(resource_claim_from_raw(freed), resource_claim_from_raw(other))
    elif deallocate == "delete":
        handlers.on_object_deleted(resource_claim_from_raw(other))
    info = scheduler.queue.get(uid)
    assert info is not None
    assert (info.pool is not Pool.UNSCHEDULABLE) is moves


def test_a_new_slice_wakes_a_pod_that_found_no_device_and_it_is_placed() -> None:
    """ResourceSlice/Add is registered: the device appears, the pod retries and binds."""
    scheduler, handlers, uid = _unschedulable("c")
    raw = {
        "metadata": {"name": "s"},
        "spec": {
            "driver": "d",
            "nodeName": "n0",
            "pool": {"name": "n0", "generation": 1, "resourceSliceCount": 1},
            "devices": [{"name": "g0"}],
        },
    }
    handlers.on_object(resource_slice_from_raw(raw), None)
    info = scheduler.queue.get(uid)
    assert info is not None
    assert info.pool is not Pool.UNSCHEDULABLE
    scheduler.clock.advance(60)  # past its backoff
    scheduler.queue.flush()
    assert drain(scheduler) == {"default/p": "n0"}
    claim = scheduler.cluster.dra.claim("default", "c")
    assert claim is not None
    assert claim.allocation is not None
    assert [r.device for r in claim.allocation.results] == ["g0"]
    assert [r.name for r in claim.reserved_for] == ["p"]
