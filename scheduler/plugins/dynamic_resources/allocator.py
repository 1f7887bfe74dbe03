"""The structured allocator's search on one node: kube's ``allocator.allocateOne``.

Claims are allocated one after the other, each claim's requests in order, each request's
devices one by one; every candidate device is checked (free, selectors, capacity,
counters, taints, constraints) and taken, and the search recurses to the next device,
backtracking when that fails. Devices are tried in pool order (driver, pool name),
slice name, device order, and within one request only in increasing position, so the
search walks combinations, not permutations. The first complete solution wins, as in
kube (no scoring).

A sub-request list (``firstAvailable``) is tried in order: the first sub-request that leads
to a solution is chosen. The 32-devices-per-claim limit makes the search backtrack harder
(kube's errAllocationResultMaxSizeExceeded).

Neighbours: ``allocation`` (prepares the requests and builds the results), ``capacity``,
``constraints``, ``pools``, ``allocated_state``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING

from scheduler.model.dra_claims import AllocationMode
from scheduler.plugins.dynamic_resources import capacity
from scheduler.plugins.dynamic_resources.requests import (
    ALLOCATION_RESULTS_MAX_SIZE,
    AllocationError,
    Candidate,
)

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from scheduler.model.dra_claims import DeviceToleration, ResourceClaim
    from scheduler.model.dra_devices import Device, DeviceTaint, RawQuantity
    from scheduler.plugins.dynamic_resources.allocated_state import AllocatedState, DeviceID
    from scheduler.plugins.dynamic_resources.constraints import Constraint
    from scheduler.plugins.dynamic_resources.pools import Pool, PoolID
    from scheduler.plugins.dynamic_resources.requests import Features, RequestData, RequestKey

CounterSets = dict[str, dict[str, Fraction]]


class _MaxSizeExceeded(Exception):
    """kube's errAllocationResultMaxSizeExceeded: no solution fits in 32 devices here."""


@dataclass(slots=True)
class DeviceResult:
    """One device taken for a claim during the search (kube's internalDeviceResult)."""

    request: RequestData
    candidate: Candidate
    share_id: str | None = None
    consumed: Mapping[str, RawQuantity] | None = None


def tolerates(toleration: DeviceToleration, taint: DeviceTaint) -> bool:
    """kube's resourceclaim.ToleratesTaint."""
    if toleration.effect and toleration.effect != taint.effect:
        return False
    if toleration.key and toleration.key != taint.key:
        return False
    if toleration.operator in ("", "Equal"):
        return toleration.value == taint.value
    return toleration.operator == "Exists"


def taint_prevents(device: Device, tolerations: tuple[DeviceToleration, ...]) -> bool:
    """Only NoSchedule and NoExecute block; other effects (None, unknown) never do."""
    if not device.taints:
        return False
    return any(
        taint.effect in ("NoSchedule", "NoExecute")
        and not any(tolerates(t, taint) for t in tolerations)
        for taint in device.taints
    )


class AllocationTimeout(Exception):
    """The search ran past its deadline (kube's DRASchedulerFilterTimeout: its context's
    DeadlineExceeded)."""


class Search:
    """The mutable state of one allocation attempt on one node; used once."""

    def __init__(
        self,
        *,
        claims: tuple[ResourceClaim, ...],
        pools: tuple[Pool, ...],
        requests: dict[RequestKey, RequestData],
        constraints: list[list[Constraint]],
        allocated: AllocatedState,
        features: Features,
        selectable: Callable[[RequestKey, Candidate], bool],
        available_counters: Callable[[Pool], CounterSets],
        share_id: Callable[[], str],
        deadline: float | None = None,
    ) -> None:
        self.claims = claims
        self.deadline = deadline
        """``time.monotonic()`` after which the search gives up (AllocationTimeout)."""
        self.pools = pools
        self.requests = requests
        self.constraints = constraints
        self.allocated = allocated
        self.features = features
        self._selectable = selectable
        self._available_counters = available_counters
        self._share_id = share_id
        self.results: list[list[DeviceResult]] = [[] for _ in claims]
        self._allocating: dict[DeviceID, set[int]] = {}
        self._allocating_capacity: dict[DeviceID, dict[str, Fraction]] = {}
        self._consumed_counters: dict[PoolID, CounterSets] = {}

    def run(self) -> bool:
        """Whether every claim got all its devices (then :attr:`results` holds them)."""
        try:
            return self._one(0, 0, 0, 0, sub_request=False, start=(0, 0, 0))
        except _MaxSizeExceeded:
            return False

    # The recursion: claim ci, request ri, sub-request si, device di of that request.
    def _one(  # kube's allocateOne, kept in one piece like kube's
        self, ci: int, ri: int, si: int, di: int, *, sub_request: bool, start: tuple[int, int, int]
    ) -> bool:
        if self.deadline is not None and time.monotonic() > self.deadline:
            raise AllocationTimeout
        if ci >= len(self.claims):
            return True
        if ri >= len(self.claims[ci].spec.requests):
            try:
                return self._one(ci + 1, 0, 0, 0, sub_request=False, start=(0, 0, 0))
            except _MaxSizeExceeded:
                # Another way to allocate the earlier claims may leave room here.
                return False
        data = self.requests[(ci, ri, si)]
        if not sub_request and data.parent is not None:
            all_exceeded = True
            sub = 0
            while (ci, ri, sub) in self.requests:
                try:
                    done = self._one(ci, ri, sub, 0, sub_request=True, start=(0, 0, 0))
                except _MaxSizeExceeded:
                    sub += 1
                    continue
                all_exceeded = False
                if done:
                    self.requests[(ci, ri, 0)].selected_sub_request = sub
                    return True
                sub += 1
            if all_exceeded:
                raise _MaxSizeExceeded
            return False
        spec = data.spec
        all_mode = spec.allocation_mode == AllocationMode.ALL
        if all_mode and not data.all_devices:
            return False
        if di >= data.num_devices:
            return self._one(ci, ri + 1, 0, 0, sub_request=False, start=(0, 0, 0))
        if data.num_devices - di > ALLOCATION_RESULTS_MAX_SIZE - len(self.results[ci]):
            raise _MaxSizeExceeded
        key = (ci, ri, si)
        if all_mode:
            assert data.all_devices is not None
            undo = self._take(key, data.all_devices[di], must=True)
            if undo is None:
                return False
            try:
                done = self._one(ci, ri, si, di + 1, sub_request=sub_request, start=(0, 0, 0))
            except BaseException:
                undo()
                raise
            if not done:
                undo()
            return done
        p0, s0, d0 = start
        for pi in range(p0, len(self.pools)):
            pool = self.pools[pi]
            if pool.incomplete or pool.invalid:
                continue
            for sli in range(s0 if pi == p0 else 0, len(pool.slices)):
                a_slice = pool.slices[sli]
                first = d0 if (pi == p0 and sli == s0) else 0
                for dvi in range(first, len(a_slice.devices)):
                    device = a_slice.devices[dvi]
                    device_id = (pool.pool_id[0], pool.pool_id[1], device.name)
                    if data.admin_access:
                        if ci in self._allocating.get(device_id, ()):
                            continue
                    elif self._in_use(device_id):
                        continue
                    candidate = Candidate(device_id, device, a_slice, pool)
                    if not self._selectable(key, candidate):
                        continue
                    if self.features.consumable_capacity and not self._capacity_fits(
                        ci, data, candidate
                    ):
                        continue
                    undo = self._take(key, candidate, must=False)
                    if undo is None:
                        continue
                    try:
                        done = self._one(
                            ci, ri, si, di + 1, sub_request=sub_request, start=(pi, sli, dvi + 1)
                        )
                    except BaseException:
                        undo()
                        raise
                    if done:
                        return True
                    undo()
        return False

    def _in_use(self, device_id: DeviceID) -> bool:
        return self.allocated.device_taken(device_id) or bool(self._allocating.get(device_id))

    def _capacity_fits(self, ci: int, data: RequestData, candidate: Candidate) -> bool:
        device_id = candidate.device_id
        try:
            return capacity.fits(
                self.allocated.aggregated_capacity(device_id),
                data.spec.capacity_requests,
                candidate.device.capacity,
                self._allocating_capacity.get(device_id),
                fractional=self.features.fractional_capacity_range,
            )
        except capacity.CapacityError as exc:
            raise AllocationError(
                f"claim {self.claims[ci].key}, request {data.spec.name}: checking capacity "
                f"for device {'/'.join(device_id)}: {exc}"
            ) from None

    def _counters_fit(self, candidate: Candidate) -> bool:
        pool = candidate.pool
        available = self._available_counters(pool)
        consumed = self._consumed_counters.setdefault(pool.pool_id, {})
        self._charge(consumed, candidate.device, 1)
        for set_name, counters in available.items():
            used = consumed.get(set_name, {})
            for name, value in counters.items():
                if value < used.get(name, 0):
                    self._charge(consumed, candidate.device, -1)
                    return False
        return True

    def _uncharge(self, candidate: Candidate) -> None:
        self._charge(self._consumed_counters[candidate.pool.pool_id], candidate.device, -1)

    @staticmethod
    def _charge(consumed: CounterSets, device: Device, sign: int) -> None:
        for consumption in device.consumes_counters:
            counters = consumed.setdefault(consumption.counter_set, {})
            for name, value in consumption.counters.items():
                counters[name] = counters.get(name, Fraction(0)) + sign * value

    def _take(  # kube's allocateDevice with its rollback paths
        self, key: RequestKey, candidate: Candidate, *, must: bool
    ) -> Callable[[], None] | None:
        """Take the device for the request, or None; the returned function gives it back."""
        ci = key[0]
        data = self.requests[key]
        device, device_id = candidate.device, candidate.device_id
        multi = self.features.consumable_capacity and bool(device.allow_multiple_allocations)
        if not multi and data.admin_access and ci in self._allocating.get(device_id, ()):
            return None
        if not data.admin_access and self._in_use(device_id):
            return None
        if not self.features.partitionable_devices and device.consumes_counters:
            return None
        # A share of a device already in use has had its counters charged once.
        skip_counters = multi and (
            self.allocated.capacity_in_use(device_id) or device_id in self._allocating_capacity
        )
        charged = False
        if not skip_counters and device.consumes_counters:
            if not self._counters_fit(candidate):
                return None
            charged = True
        base = data.parent if data.parent is not None else data.spec.name
        sub = data.spec.name if data.parent is not None else ""
        added: list[Constraint] = []

        def rollback() -> None:
            for constraint in reversed(added):
                constraint.remove(base, sub)
            if charged:
                self._uncharge(candidate)

        if self.features.device_taints and taint_prevents(device, data.spec.tolerations):
            rollback()
            return None
        for constraint in self.constraints[ci]:
            if not constraint.add(base, sub, device, device_id[0]):
                rollback()
                if must:
                    raise AllocationError(
                        f"claim {self.claims[ci].key}, request {data.spec.name}: cannot add "
                        f"device {'/'.join(device_id)} because a claim constraint would not "
                        "be satisfied"
                    )
                return None
            added.append(constraint)
        marked = False
        if not multi:
            self._allocating.setdefault(device_id, set()).add(ci)
            marked = True
        share_id: str | None = None
        consumed: Mapping[str, RawQuantity] | None = None
        had_entry = device_id in self._allocating_capacity
        inserted: dict[str, Fraction] | None = None
        if self.features.consumable_capacity:
            if not self._capacity_fits(ci, data, candidate):
                if marked:
                    self._allocating[device_id].discard(ci)
                rollback()
                return None
            if multi:
                consumed = capacity.consumed(
                    data.spec.capacity_requests,
                    device.capacity,
                    fractional=self.features.fractional_capacity_range,
                )
                share_id = self._share_id()
                inserted = {name: q.value for name, q in consumed.items()}
                totals = self._allocating_capacity.setdefault(device_id, {})
                for name, value in inserted.items():
                    totals[name] = totals.get(name, Fraction(0)) + value
        results = self.results[ci]
        results.append(DeviceResult(data, candidate, share_id=share_id, consumed=consumed or None))
        size = len(results)

        def undo() -> None:
            del results[size - 1 :]
            if inserted is not None:
                totals = self._allocating_capacity[device_id]
                for name, value in inserted.items():
                    totals[name] -= value
                if not had_entry and all(v == 0 for v in totals.values()):
                    del self._allocating_capacity[device_id]
            if marked:
                self._allocating[device_id].discard(ci)
            rollback()

        return undo
