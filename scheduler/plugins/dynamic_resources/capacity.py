"""Consumable capacity (KEP-5075, DRAConsumableCapacity, beta and on by default in v1.37).

A device with ``allowMultipleAllocations`` can be shared by several claims, each consuming
part of its capacities; a capacity's ``requestPolicy`` rounds a request up (``validRange``
with ``min``/``step``, or the next of ``validValues``) and fills a missing one (``default``,
else the whole capacity). The allocator asks :func:`fits` whether one more request fits
beside what is allocated and what this allocation already took, and :func:`consumed` what
to record in the result's ``consumedCapacity``. Ported from kube's incubating allocator
(``consumable_capacity.go``), with quantities exact: kube's int64 milli arithmetic is exact
for every value it accepts, and the values it refuses (not representable in milli units)
are refused here with its error.

Neighbours: ``allocator`` (the only caller), ``model.dra_devices`` (capacities, policies).
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import TYPE_CHECKING

from scheduler.model.dra_devices import RawQuantity
from scheduler.plugins.dynamic_resources.quantity_text import format_quantity

if TYPE_CHECKING:
    from collections.abc import Mapping

    from scheduler.model.dra_devices import CapacityRequestPolicyRange, DeviceCapacity

ConsumedCapacity = dict[str, Fraction]

_MAX_INT64 = 2**63 - 1


class CapacityError(ValueError):
    """A request that cannot be represented: fatal for the allocation, as in kube."""


def _milli(q: Fraction) -> int | None:
    """``q`` in milli units if exact and within int64 (kube's safeMilliValue), else None."""
    milli = q * 1000
    if milli.denominator != 1 or not -_MAX_INT64 - 1 <= milli.numerator <= _MAX_INT64:
        return None
    return milli.numerator


def _use_milli(rng: CapacityRequestPolicyRange, fractional: bool) -> bool:
    if not fractional:
        return False
    for q in (rng.min, rng.max, rng.step):
        if q is not None and _milli(q.value) is None:
            return False
    return not (rng.step is not None and (_milli(rng.step.value) or 0) < 1)


def _quantity(value: Fraction, like: RawQuantity | None) -> RawQuantity:
    """A computed quantity; its text is kube's canonical form for the step's format."""
    binary = like is not None and like.text.endswith(("Ki", "Mi", "Gi", "Ti", "Pi", "Ei"))
    return RawQuantity(value, format_quantity(value, binary=binary))


def _round_up_range(
    requested: RawQuantity, rng: CapacityRequestPolicyRange, fractional: bool
) -> RawQuantity:
    assert rng.min is not None  # the caller checks
    if requested.value < rng.min.value:
        return rng.min
    if rng.step is None:
        return requested
    if _use_milli(rng, fractional):
        req = _milli(requested.value)
        if req is None:
            raise CapacityError(
                "capacity request cannot be represented in the device's range arithmetic: "
                f"request {requested.text} is not a representable milli value"
            )
        step = math.ceil(rng.step.value * 1000)
        low = math.ceil(rng.min.value * 1000)
        n = -((low - req) // step)  # ceil((req - low) / step)
        if n > (_MAX_INT64 - low) // step:
            raise CapacityError(
                "capacity request cannot be represented in the device's range arithmetic: "
                f"rounding request {requested.text} up to the next step passes the milli-value "
                "range"
            )
        value = Fraction(low + step * n, 1000)
    else:
        if requested.value > _MAX_INT64:
            raise CapacityError(
                "capacity request cannot be represented in the device's range arithmetic: "
                f"request {requested.text} exceeds MaxInt64"
            )
        req_int = math.ceil(requested.value)
        step_int = math.ceil(rng.step.value)
        low_int = math.ceil(rng.min.value)
        n = -((low_int - req_int) // step_int)
        if low_int >= 0 and n > (_MAX_INT64 - low_int) // step_int:
            raise CapacityError(
                "capacity request cannot be represented in the device's range arithmetic: "
                f"rounding request {requested.text} up to the next step passes MaxInt64"
            )
        value = Fraction(low_int + step_int * n)
    return _quantity(value, rng.step)


def consumed_for(
    requested: RawQuantity | None, capacity: DeviceCapacity, *, fractional: bool
) -> RawQuantity:
    """kube's calculateConsumedCapacity: what one request takes of one capacity."""
    policy = capacity.request_policy
    if requested is None:
        if policy is not None and policy.default is not None:
            return policy.default
        return capacity.value
    if policy is None:
        return requested
    if policy.valid_range is not None and policy.valid_range.min is not None:
        return _round_up_range(requested, policy.valid_range, fractional)
    if policy.valid_values:
        for valid in policy.valid_values:
            if requested.value <= valid.value:
                return valid
    return requested


def _violates_policy(consumed: Fraction, capacity: DeviceCapacity, fractional: bool) -> bool:
    policy = capacity.request_policy
    if policy is None:
        return False
    if policy.default is not None and consumed == policy.default.value:
        return False
    rng = policy.valid_range
    if rng is not None:
        if rng.max is not None and consumed > rng.max.value:
            return True
        if rng.step is not None:
            low = rng.min.value if rng.min is not None else Fraction(0)
            if _use_milli(rng, fractional):
                requested = _milli(consumed)
                if requested is None:
                    return True
                step, base = math.ceil(rng.step.value * 1000), math.ceil(low * 1000)
            else:
                requested = math.ceil(consumed)
                step, base = math.ceil(rng.step.value), math.ceil(low)
            # Go's % keeps the dividend's sign; a nonzero remainder is what matters.
            return math.fmod(requested - base, step) != 0
        return False
    if policy.valid_values:
        return all(consumed != v.value for v in policy.valid_values)
    return False


def consumed(
    requests: Mapping[str, RawQuantity] | None,
    capacities: Mapping[str, DeviceCapacity],
    *,
    fractional: bool,
) -> dict[str, RawQuantity]:
    """kube's GetConsumedCapacityFromRequest: every capacity of the device, resolved."""
    requests = requests or {}
    return {
        name: consumed_for(requests.get(name), cap, fractional=fractional)
        for name, cap in capacities.items()
    }


def fits(
    allocated: Mapping[str, Fraction] | None,
    requests: Mapping[str, RawQuantity] | None,
    capacities: Mapping[str, DeviceCapacity],
    allocating: Mapping[str, Fraction] | None,
    *,
    fractional: bool,
) -> bool:
    """kube's CmpRequestOverCapacity; :class:`CapacityError` when the request is unusable."""
    if (
        not requests
        and not allocated
        and not allocating
        and all(c.request_policy is None for c in capacities.values())
    ):
        return True  # each capacity consumes its whole value, and nothing else uses it
    if requests and any(name not in capacities for name in requests):
        return False  # this device lacks a requested capacity: another one may have it
    resolved: dict[str, Fraction] = {}
    for name, cap in capacities.items():
        try:
            value = consumed_for((requests or {}).get(name), cap, fractional=fractional).value
        except CapacityError as exc:
            raise CapacityError(f'capacity "{name}": {exc}') from None
        if value < 0:
            raise CapacityError(f'capacity "{name}": capacity value is negative')
        resolved[name] = value
    for name, cap in capacities.items():
        value = resolved[name]
        if _violates_policy(value, cap, fractional):
            return False
        total = value + (allocated or {}).get(name, 0) + (allocating or {}).get(name, 0)
        if total > cap.value.value:
            return False
    return True
