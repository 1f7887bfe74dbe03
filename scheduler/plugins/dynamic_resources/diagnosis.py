"""Why a pod's claims cannot be allocated on one node, request by request (``explain``).

kube's Filter says only "cannot allocate all claims"; that text stays the Status (it goes
into FailedScheduling as kube writes it). ``explain`` asks for more: for each request (and
each sub-request of a ``firstAvailable`` list) of the pod's claims, how many of the node's
devices the class's and the request's selectors reject (by the first rejecting selector),
how many of the rest are allocated already or carry a taint the request does not tolerate,
and how many that leaves against how many it needs. A request with enough devices is not
listed; when every request has enough on its own, the devices do not fit together (shared
between requests, the claims' constraints, partitionable counters, capacity) and the one
line says which constraints the claims have.

Read-only: it walks the node's devices with the allocator's own selectors and state, and
allocates nothing.

Neighbours: ``allocation`` (``PodAllocator.requests_on``, ``selector_miss``), ``plugin``
(DynamicResources' ``filter_details``).
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

from scheduler.model.dra_claims import AllocationMode
from scheduler.plugins.dynamic_resources.allocator import taint_prevents
from scheduler.plugins.dynamic_resources.requests import AllocationError, Candidate

if TYPE_CHECKING:
    from collections.abc import Mapping

    from scheduler.plugins.dynamic_resources.allocation import PodAllocator
    from scheduler.plugins.dynamic_resources.pools import Pool
    from scheduler.plugins.dynamic_resources.requests import RequestData, RequestKey


def diagnose(allocator: PodAllocator, node_name: str, labels: Mapping[str, str]) -> tuple[str, ...]:
    """One line per request short of devices on ``node_name`` (module docstring)."""
    try:
        pools, requests = allocator.requests_on(node_name, labels)
        short = {key: _request_line(allocator, pools, key, data) for key, data in requests.items()}
    except AllocationError as exc:
        return (str(exc),)
    lines: list[str] = []
    for (ci, ri, _), line in sorted(short.items()):
        if line is None:
            continue
        request = allocator.claims[ci].spec.requests[ri]
        if request.first_available and any(
            short.get(key) is None for key in requests if key[:2] == (ci, ri)
        ):
            continue  # another sub-request of the list has enough
        lines.append(line)
    if lines:
        return tuple(lines)
    if not pools:
        return ("no ResourceSlice publishes devices for this node",)
    constraints = [
        f"claim {claim.key}: "
        + ", ".join(
            f"matchAttribute {c.match_attribute}"
            if c.match_attribute is not None
            else f"distinctAttribute {c.distinct_attribute}"
            for c in claim.spec.constraints
        )
        for claim in allocator.claims
        if claim.spec.constraints
    ]
    together = "; ".join(constraints) if constraints else "no constraints"
    return (
        "every request has enough free devices on its own, not all of them together "
        f"(devices shared between requests, counters or capacity; {together})",
    )


def _request_line(
    allocator: PodAllocator, pools: tuple[Pool, ...], key: RequestKey, data: RequestData
) -> str | None:
    """The request's line when its free devices on the node are fewer than it needs."""
    ci = key[0]
    rejected: Counter[str] = Counter()
    total = taken = tainted = free = 0
    for pool in pools:
        for a_slice in pool.slices:
            for device in a_slice.devices:
                total += 1
                candidate = Candidate(
                    (pool.pool_id[0], pool.pool_id[1], device.name), device, a_slice, pool
                )
                miss = allocator.selector_miss(
                    ci, data, candidate, allocator.device_variable(candidate)
                )
                if miss is not None:
                    rejected[miss] += 1
                elif allocator.allocated.device_taken(candidate.device_id):
                    taken += 1
                elif allocator.features.device_taints and taint_prevents(
                    device, data.spec.tolerations
                ):
                    tainted += 1
                else:
                    free += 1
    all_mode = data.spec.allocation_mode == AllocationMode.ALL
    needed = data.num_devices
    if (free >= needed and not all_mode) or (all_mode and free and not (taken or tainted)):
        return None
    claim = allocator.claims[ci]
    class_name = data.device_class.name if data.device_class is not None else "?"
    parts = [f"{total} on the node"]
    parts += [f"{count} rejected by {owner}" for owner, count in sorted(rejected.items())]
    if taken:
        parts.append(f"{taken} allocated")
    if tainted:
        parts.append(f"{tainted} tainted, not tolerated")
    wants = "all matching devices" if all_mode else f"{needed} device{'s' * (needed != 1)}"
    return (
        f"claim {claim.key}, request {data.name} (class {class_name}): needs {wants}, "
        f"{free} free ({', '.join(parts)})"
    )
