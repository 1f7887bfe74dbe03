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
from scheduler.model.parse_dra_slices import resource_slice_from_raw
from tests.builders import make_node
from tests.harness import drain, scheduler_for

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


def _gpu_slice(node: str, count: int) -> dict[str, Any]:
    return {
        "metadata": {"name": f"{node}-gpus"},
        "spec": {
            "driver": "d",
            "nodeName": node,
            "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
            "devices": [{"name": f"g{i}"} for i in range(count)],
        },
    }


def test_a_claim_allocated_after_signing_sends_its_pod_to_the_full_pass() -> None:
    """Three pods of one template signed alike; the third's claim is then allocated by
    someone else: the exact batch sees its claims differ (``pod_state_differs``) and the
    full pass places it by its allocation, on the node of that device."""
    scheduler, _, _ = scheduler_for([make_node("n0"), make_node("n1")], mode=BatchingMode.ALL)
    handlers = EventHandlers(scheduler)
    handlers.on_object(device_class_from_raw(GPU_CLASS), None)
    for node in ("n0", "n1"):
        handlers.on_object(resource_slice_from_raw(_gpu_slice(node, 2)), None)
    claims = []
    for k in range(3):
        raw_pod, raw_claim = _template_pod(f"c-{k}", SPEC)
        handlers.on_object(resource_claim_from_raw(raw_claim), None)
        handlers.on_pod(pod_from_raw(raw_pod))
        claims.append(raw_claim)
    taken = dict(claims[2])
    taken["metadata"] = {**claims[2]["metadata"], "resourceVersion": "2"}
    taken["status"] = {
        "allocation": {
            "devices": {
                "results": [{"request": "gpu", "driver": "d", "pool": "n1", "device": "g1"}]
            },
            "nodeSelector": {
                "nodeSelectorTerms": [
                    {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]}
                ]
            },
        }
    }
    handlers.on_object(resource_claim_from_raw(taken), resource_claim_from_raw(claims[2]))
    placed = drain(scheduler)
    assert set(placed) == {"dra/c-0", "dra/c-1", "dra/c-2"}
    assert placed["dra/c-2"] == "n1"
    outcomes = scheduler.metrics.by_label(scheduler.metrics.exact_batch, "outcome")
    assert outcomes.get("pod_state_differs") == 1
    assert outcomes.get("placed") == 1  # c-1; c-0 took the first full pass


def _steal_run(mode: BatchingMode) -> tuple[str | None, int, int, dict[str, float]]:
    """Two pods placed, then another scheduler takes every free GPU but one, then a third
    pod: its node, the rng state and ``next_start`` after it, the exact batch's outcomes."""
    scheduler, _, _ = scheduler_for([make_node("n0"), make_node("n1")], mode=mode)
    handlers = EventHandlers(scheduler)
    handlers.on_object(device_class_from_raw(GPU_CLASS), None)
    for node in ("n0", "n1"):
        handlers.on_object(resource_slice_from_raw(_gpu_slice(node, 2)), None)
    pods = [_template_pod(f"d-{k}", SPEC) for k in range(3)]
    for raw_pod, raw_claim in pods[:2]:
        handlers.on_object(resource_claim_from_raw(raw_claim), None)
        handlers.on_pod(pod_from_raw(raw_pod))
    assert all(drain(scheduler).values())
    taken = set()
    for _, raw_claim in pods[:2]:
        seen = scheduler.cluster.dra.claim("dra", raw_claim["metadata"]["name"])
        assert seen is not None
        assert seen.allocation is not None
        taken |= {(r.pool, r.device) for r in seen.allocation.results}
    free = sorted({(n, f"g{i}") for n in ("n0", "n1") for i in range(2)} - taken)
    foreign = claim("foreign", SPEC)
    foreign["status"] = {
        "allocation": {
            "devices": {
                "results": [
                    {"request": "gpu", "driver": "d", "pool": pool, "device": device}
                    for pool, device in free[:-1]
                ]
            }
        }
    }
    handlers.on_object(resource_claim_from_raw(foreign), None)
    raw_pod, raw_claim = pods[2]
    handlers.on_object(resource_claim_from_raw(raw_claim), None)
    handlers.on_pod(pod_from_raw(raw_pod))
    placed = drain(scheduler)["dra/d-2"]
    assert placed == free[-1][0]  # the node of the last free GPU
    selector = scheduler.profiles["batch-scheduler"].selector
    outcomes = scheduler.metrics.by_label(scheduler.metrics.exact_batch, "outcome")
    return placed, hash(selector.rng.getstate()), selector.next_start, outcomes


def test_devices_taken_behind_the_batch_recompute_their_node() -> None:
    """Another scheduler takes every free GPU but one between two batched pods: the exact
    batch recomputes the nodes of those devices, so the third pod goes where the full pass
    sends it, with the full pass's random draws (one feasible node: no draw) and
    ``next_start``, on the exact path and without a failed recheck."""
    node, rng, next_start, outcomes = _steal_run(BatchingMode.ALL)
    assert (node, rng, next_start) == _steal_run(BatchingMode.OFF)[:3]
    assert outcomes.get("placed") == 2
    assert "recheck_failed" not in outcomes
