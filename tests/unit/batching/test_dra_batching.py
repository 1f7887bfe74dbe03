"""Batching DRA pods (issue 40 item 4): what DynamicResources signs, and the exact batch
placing pods with template claims exactly as the full pass does — the same node, the same
devices, the same unschedulable messages — on seeded random slices, classes, selectors,
templates and claims (a small sample of ``python -m bench.dra_differential``)."""

from __future__ import annotations

from typing import Any

import pytest

from bench.dra_cases import case, claim, pod
from bench.dra_differential import compare, compare_case, run
from scheduler.batching.signature import BatchingMode, is_exact
from scheduler.cycle.eventhandlers import EventHandlers
from scheduler.model.parse import pod_from_raw
from scheduler.model.parse_dra_claims import device_class_from_raw, resource_claim_from_raw
from tests.builders import make_node
from tests.harness import scheduler_for

SPEC: dict[str, Any] = {
    "devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu"}}]}
}
PRIORITIZED: dict[str, Any] = {
    "devices": {
        "requests": [
            {"name": "gpu", "firstAvailable": [{"name": "a", "deviceClassName": "gpu"}]},
        ]
    }
}
GPU_CLASS = {"metadata": {"name": "gpu"}, "spec": {}}


def _template_pod(
    name: str, spec: dict[str, Any], *, allocated: bool = False
) -> tuple[dict[str, Any], dict[str, Any]]:
    raw_claim = claim(f"{name}-gpu", spec, owner_uid=f"uid-{name}")
    if allocated:
        raw_claim["status"] = {
            "allocation": {
                "devices": {
                    "results": [{"request": "gpu", "driver": "d", "pool": "p", "device": "g"}]
                }
            }
        }
    entries = [{"name": "gpu", "resourceClaimTemplateName": "t"}]
    statuses = [{"name": "gpu", "resourceClaimName": raw_claim["metadata"]["name"]}]
    return pod(name, entries, statuses, None), raw_claim


def _sign(raw_pod: dict[str, Any], raw_claim: dict[str, Any]) -> tuple[bytes | None, str]:
    scheduler, _, _ = scheduler_for([make_node("n0")], mode=BatchingMode.ALL)
    handlers = EventHandlers(scheduler)
    handlers.on_object(device_class_from_raw(GPU_CLASS), None)
    handlers.on_object(resource_claim_from_raw(raw_claim), None)
    signed = scheduler.signers["batch-scheduler"].sign(pod_from_raw(raw_pod))
    return signed.signature, signed.refused_by


def test_template_claims_with_equal_specs_share_an_exact_signature() -> None:
    """Two pods whose claims were made from one template (different claim names) sign alike,
    for the exact batch only."""
    first, second = _sign(*_template_pod("a-0", SPEC)), _sign(*_template_pod("a-1", SPEC))
    assert first[0] is not None
    assert is_exact(first[0])
    assert first == second


@pytest.mark.parametrize(
    ("spec", "allocated", "own_claim"),
    [
        pytest.param(PRIORITIZED, False, False, id="a prioritized list (its score moves)"),
        pytest.param(SPEC, True, False, id="a claim allocated already"),
        pytest.param(SPEC, False, True, id="a claim of its own name (resourceClaimName)"),
    ],
)
def test_pods_dynamic_resources_does_not_sign(
    spec: dict[str, Any], allocated: bool, own_claim: bool
) -> None:
    """These pods take full passes: DynamicResources refuses to sign them."""
    raw_pod, raw_claim = _template_pod("b-0", spec, allocated=allocated)
    if own_claim:
        raw_pod["spec"]["resourceClaims"] = [
            {"name": "gpu", "resourceClaimName": raw_claim["metadata"]["name"]}
        ]
        del raw_pod["status"]["resourceClaimStatuses"]
    assert _sign(raw_pod, raw_claim) == (None, "DynamicResources")


@pytest.mark.parametrize("seed", range(12))
def test_batching_on_places_and_allocates_as_batching_off(seed: int) -> None:
    """Seeded random cases: every attempt the same pod, node, devices, message, rng state
    and next_start with batching off and on."""
    result = compare(seed, max_nodes=30, max_pods=30)
    assert result.differences == []
    assert result.pods > 0


def test_the_sample_batches_allocates_and_fails_pods() -> None:
    """Not vacuous: the sample takes the exact path, allocates devices, leaves pods
    unschedulable, and has steps that free and take devices behind the scheduler's back."""
    results = [compare(seed, max_nodes=30, max_pods=30) for seed in range(12)]
    assert sum(r.exact for r in results) > 100
    assert sum(r.unschedulable for r in results) > 10
    kinds = {kind for seed in range(12) for kind, _ in case(seed, max_nodes=30).steps}
    assert kinds == {"pods", "allocate", "free", "slice"}
    on = run(case(0, max_nodes=30, max_pods=30), BatchingMode.ALL)
    assert any(devices and all(devices) for _, node, devices, *_ in on.attempts if node)


def test_a_network_attached_slice_keeps_dra_pods_on_full_passes() -> None:
    """Seed 11 has NICs reachable from every node (``allNodes``): a device taken there
    changes every node's verdict, so no DRA pod takes the exact path, and nothing differs."""
    shared = case(11, max_nodes=30, max_pods=30)
    assert any("allNodes" in raw["spec"] for raw in shared.slices)
    result = compare_case(shared)
    assert result.differences == []
    assert result.exact == 0
    assert result.pods > 0


def test_the_comparison_sees_other_devices() -> None:
    """The comparison can fail: a case whose slices list devices in another order gets
    other devices (same nodes) and is reported."""
    base = case(5, max_nodes=20, max_pods=20)
    reordered = case(5, max_nodes=20, max_pods=20)
    for raw in reordered.slices:
        raw["spec"]["devices"].reverse()
    off = run(base, BatchingMode.OFF)
    other = run(reordered, BatchingMode.OFF)
    assert [a[2] for a in off.attempts] != [a[2] for a in other.attempts]
    assert compare_case(base).differences == []
