"""One pod's claims against the cluster's devices: the API the DynamicResources plugin calls.

:class:`PodAllocator` is made once per pod (kube's PreFilter builds its allocator there):
it holds the claims still to allocate, the classes, the slices, the devices already
taken and the compiled selectors. :meth:`PodAllocator.allocate` is kube's
``Allocator.Allocate`` for one node, cheap enough to call for every node: pools are
gathered per node once per slice index, selector verdicts are kept on each device's CEL
variable (a selector depends only on the device: not on the node, nor on the pod), and
only the search itself runs per node.

Outcomes, as kube's Filter reports them:

* :class:`Allocated`: one ``AllocationResult`` per claim, to record in flight at Reserve
  (``AllocatedState.add``) and to write at PreBind (``result_api.allocation_to_api``);
* :class:`Unschedulable`: kube's reason (``cannot allocate all claims``, or ``invalid
  resource pools were encountered``);
* :class:`~scheduler.plugins.dynamic_resources.requests.AllocationError`: a broken claim,
  class or selector; kube aborts the pod's scheduling attempt with this text.

Neighbours: ``allocator`` (the search), ``pools``, ``allocated_state``, ``cel_env``,
``result_api`` (the results' shape).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING

from scheduler.model.dra_claims import AllocationMode
from scheduler.plugins.dynamic_resources import capacity, cel_env, result_api
from scheduler.plugins.dynamic_resources.allocator import Search
from scheduler.plugins.dynamic_resources.constraints import (
    Constraint,
    DistinctAttribute,
    MatchAttribute,
)
from scheduler.plugins.dynamic_resources.requests import (
    ALLOCATION_RESULTS_MAX_SIZE,
    AllocationError,
    Candidate,
    Features,
    RequestData,
    RequestKey,
)

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping, Sequence
    from fractions import Fraction

    from scheduler.model.dra_claims import (
        AllocationResult,
        DeviceClass,
        DeviceRequestSpec,
        ResourceClaim,
    )
    from scheduler.plugins.dynamic_resources.allocated_state import AllocatedState
    from scheduler.plugins.dynamic_resources.cel_device import DeviceVariable
    from scheduler.plugins.dynamic_resources.pools import Pool, PoolID, SliceIndex

CANNOT_ALLOCATE = "cannot allocate all claims"
INVALID_POOLS = "invalid resource pools were encountered"


class Allocated:
    """The node fits: :attr:`results` has one AllocationResult per claim, in order.

    Built on first access: Filter runs on every node but only the chosen node's results
    are ever read (Reserve), so the others never pay for building them.
    """

    __slots__ = ("_build", "_results")

    def __init__(self, build: Callable[[], tuple[AllocationResult, ...]]) -> None:
        self._build: Callable[[], tuple[AllocationResult, ...]] | None = build
        self._results: tuple[AllocationResult, ...] = ()

    @property
    def results(self) -> tuple[AllocationResult, ...]:
        """kube's allocation results (raises AllocationError for an unusable node selector)."""
        if self._build is not None:
            self._results = self._build()
            self._build = None
        return self._results


@dataclass(frozen=True, slots=True)
class Unschedulable:
    reason: str


def _new_share_id() -> str:
    return str(uuid.uuid4())


class PodAllocator:
    """The claims of one pod that still need devices, ready to be tried node by node."""

    def __init__(
        self,
        claims: Sequence[ResourceClaim],
        *,
        classes: Mapping[str, DeviceClass],
        slices: SliceIndex,
        allocated: AllocatedState,
        selectors: cel_env.SelectorCache,
        devices: cel_env.DeviceVariables,
        features: Features = Features(),  # noqa: B008  # frozen: a shared default is safe
        share_id: Callable[[], str] = _new_share_id,
    ) -> None:
        self.claims = tuple(claims)
        self._classes = classes
        self._slices = slices
        self._allocated = allocated
        self._selectors = selectors
        self._devices = devices
        self.features = features
        self._share_id = share_id
        self._counters: dict[PoolID, dict[str, dict[str, Fraction]]] = {}

    def allocate(
        self, node_name: str, labels: Mapping[str, str], *, deadline: float | None = None
    ) -> Allocated | Unschedulable:
        """kube's Allocate on one node; raises AllocationError for broken input, and
        AllocationTimeout once ``time.monotonic()`` passes ``deadline``."""
        pools = self._slices.pools_for_node(node_name, labels)
        requests: dict[RequestKey, RequestData] = {}
        constraints: list[list[Constraint]] = []
        for ci, claim in enumerate(self.claims):
            self._prepare_claim(ci, claim, pools, node_name, labels, requests)
            constraints.append(self._constraints(claim))
        search = Search(
            claims=self.claims,
            pools=pools,
            requests=requests,
            constraints=constraints,
            allocated=self._allocated,
            features=self.features,
            selectable=lambda key, c: self._selectable(key, c, requests, node_name, labels),
            available_counters=self._available_counters,
            share_id=self._share_id,
            deadline=deadline,
        )
        if not search.run():
            if any(p.invalid for p in pools):
                return Unschedulable(INVALID_POOLS)
            return Unschedulable(CANNOT_ALLOCATE)

        def build() -> tuple[AllocationResult, ...]:
            results = []
            for ci, claim in enumerate(self.claims):
                try:
                    results.append(
                        result_api.allocation_result(
                            claim, search.results[ci], requests, ci, node_name, self.features
                        )
                    )
                except result_api.NodeSelectorError as exc:
                    raise AllocationError(
                        f"create NodeSelector for claim {claim.name}: {exc}"
                    ) from None
            return tuple(results)

        return Allocated(build)

    def _prepare_claim(
        self,
        ci: int,
        claim: ResourceClaim,
        pools: tuple[Pool, ...],
        node_name: str,
        labels: Mapping[str, str],
        requests: dict[RequestKey, RequestData],
    ) -> None:
        min_devices = 0
        for ri, request in enumerate(claim.spec.requests):
            if request.first_available and not self.features.prioritized_list:
                raise AllocationError(
                    f"claim {claim.key}, request {request.name}: has subrequests, but the "
                    "DRAPrioritizedList feature is disabled"
                )
            if not self.features.consumable_capacity:
                for spec in (request.exactly, *request.first_available):
                    if spec is not None and spec.capacity_requests is not None:
                        kind = "subrequest" if spec is not request.exactly else "request"
                        raise AllocationError(
                            f"claim {claim.key}, {kind} {spec.name}: has capacity requests, "
                            "but the DRAConsumableCapacity feature is disabled"
                        )
            if request.first_available:
                least = None
                for si, sub in enumerate(request.first_available):
                    data = self._request_data(
                        claim, (ci, ri, si), sub, request.name, pools, node_name, labels, requests
                    )
                    least = data.num_devices if least is None else min(least, data.num_devices)
                needed = least or 0
            elif request.exactly is not None:
                data = self._request_data(
                    claim, (ci, ri, 0), request.exactly, None, pools, node_name, labels, requests
                )
                needed = data.num_devices
            else:
                raise AllocationError(
                    f"claim {claim.key}, request {request.name}: missing device class name "
                    "(unsupported request type?)"
                )
            if needed > ALLOCATION_RESULTS_MAX_SIZE - min_devices:
                raise AllocationError(
                    f"claim {claim.key}, request {request.name}: adding {needed} devices exceeds "
                    f"the claim limit of {ALLOCATION_RESULTS_MAX_SIZE}, with {min_devices} "
                    "already accounted for"
                )
            min_devices += needed

    def _request_data(
        self,
        claim: ResourceClaim,
        key: RequestKey,
        spec: DeviceRequestSpec,
        parent: str | None,
        pools: tuple[Pool, ...],
        node_name: str,
        labels: Mapping[str, str],
        requests: dict[RequestKey, RequestData],
    ) -> RequestData:
        """kube's validateDeviceRequest."""
        where = f"claim {claim.key}, request {spec.name}"
        if spec.has_derived_attributes:
            raise AllocationError(
                f"{where}: cannot handle request with derived attributes, the feature is disabled"
            )
        for i, selector in enumerate(spec.selectors):
            if selector is None:
                raise AllocationError(
                    f"{where}, selector #{i}: CEL expression empty (unsupported selector type?)"
                )
        if spec.admin_access is not None and not self.features.admin_access:
            raise AllocationError(
                f"{where}: admin access is requested, but the feature is disabled"
            )
        if not spec.device_class_name:
            raise AllocationError(f"{where}: missing device class name (unsupported request type?)")
        device_class = self._classes.get(spec.device_class_name)
        if device_class is None:
            raise AllocationError(
                f"{where}: could not retrieve device class {spec.device_class_name}: "
                f'deviceclass.resource.k8s.io "{spec.device_class_name}" not found'
            )
        data = requests[key] = RequestData(
            spec,
            parent,
            device_class,
            selector_key=(*device_class.selectors, None, *spec.selectors),
        )
        if spec.allocation_mode == AllocationMode.EXACT_COUNT:
            data.num_devices = spec.count
            return data
        if spec.allocation_mode != AllocationMode.ALL:
            raise AllocationError(f"{where}: unsupported count mode {spec.allocation_mode}")
        data.all_devices = []
        for pool in pools:
            if pool.incomplete:
                raise AllocationError(
                    f"{where}: asks for all devices, but resource pool {pool.name} is currently "
                    "being updated"
                )
            if pool.invalid:
                raise AllocationError(
                    f"{where}: asks for all devices, but resource pool {pool.name} is currently "
                    "invalid"
                )
            for a_slice in pool.slices:
                for device in a_slice.devices:
                    candidate = Candidate(
                        (pool.pool_id[0], pool.pool_id[1], device.name), device, a_slice, pool
                    )
                    if not self._selectable(key, candidate, requests, node_name, labels):
                        continue
                    if self.features.consumable_capacity and not self._static_capacity(
                        where, data, candidate
                    ):
                        continue
                    data.all_devices.append(candidate)
        data.num_devices = len(data.all_devices)
        return data

    def _static_capacity(self, where: str, data: RequestData, candidate: Candidate) -> bool:
        try:
            return capacity.fits(
                None,
                data.spec.capacity_requests,
                candidate.device.capacity,
                None,
                fractional=self.features.fractional_capacity_range,
            )
        except capacity.CapacityError as exc:
            raise AllocationError(
                f"{where}: checking capacity for device {candidate.device.name}: {exc}"
            ) from None

    def _constraints(self, claim: ResourceClaim) -> list[Constraint]:
        out: list[Constraint] = []
        for i, c in enumerate(claim.spec.constraints):
            if c.match_attribute is not None:
                out.append(MatchAttribute(c.requests, c.match_attribute))
            elif c.distinct_attribute is not None:
                out.append(DistinctAttribute(c.requests, c.distinct_attribute))
            else:
                raise AllocationError(
                    f"claim {claim.key}, constraint #{i}: empty constraint "
                    "(unsupported constraint type?)"
                )
        return out

    def _selectable(
        self,
        key: RequestKey,
        candidate: Candidate,
        requests: Mapping[RequestKey, RequestData],
        node_name: str,
        labels: Mapping[str, str],
    ) -> bool:
        """kube's isSelectable: class and request selectors, then per-device node selection."""
        device = candidate.device
        if not self.features.device_binding_and_status and device.binding_conditions:
            return False
        data = requests[key]
        variable = self._devices.get(candidate.device_id[0], device)
        matches = variable.verdicts.get(data.selector_key)
        if matches is None:
            # Raises on a broken selector: kube's error names the selector and the device.
            matches = self._selectors_match(key[0], data, candidate, variable)
            variable.verdicts[data.selector_key] = matches
        if not matches:
            return False
        if candidate.slice.per_device_node_selection:
            return device.node.matches(node_name, labels)
        return True

    def _selectors_match(
        self, ci: int, data: RequestData, candidate: Candidate, variable: DeviceVariable
    ) -> bool:
        return self.selector_miss(ci, data, candidate, variable) is None

    def selector_miss(
        self, ci: int, data: RequestData, candidate: Candidate, variable: DeviceVariable
    ) -> str | None:
        """The first selector that rejects the device (``class gpu: selector #0``), or None
        when the class's and the request's selectors all accept it."""
        device_class = data.device_class
        assert device_class is not None
        device_name = "/".join(candidate.device_id)
        for owner, selectors in (
            (f"class {device_class.name}", device_class.selectors),
            (f"claim {self.claims[ci].key}", data.spec.selectors),
        ):
            for i, expression in enumerate(selectors):
                assert expression is not None  # refused in _request_data
                compiled = self._selectors.get_or_compile(expression)
                if isinstance(compiled, cel_env.CompileError):
                    raise AllocationError(
                        f"{owner}: selector #{i}: CEL compile error: {compiled.detail}"
                    )
                try:
                    if not compiled.matches(variable):
                        return f"{owner}: selector #{i}"
                except cel_env.CelRuntimeError as exc:
                    message = str(exc)
                    if "no such key:" in message:
                        message += (
                            ". consider using CEL optional chaining (.? followed by orValue()) "
                            "or guarding the check with has() for optional fields"
                        )
                    raise AllocationError(
                        f"{owner}: selector #{i} on device {device_name}: CEL runtime error: "
                        f"{message}"
                    ) from None
        return None

    def requests_on(
        self, node_name: str, labels: Mapping[str, str]
    ) -> tuple[tuple[Pool, ...], dict[RequestKey, RequestData]]:
        """The node's pools and the claims' (sub-)requests as ``allocate`` sees them there
        (for ``diagnosis``); raises AllocationError for broken input as ``allocate`` does."""
        pools = self._slices.pools_for_node(node_name, labels)
        requests: dict[RequestKey, RequestData] = {}
        for ci, claim in enumerate(self.claims):
            self._prepare_claim(ci, claim, pools, node_name, labels, requests)
        return pools, requests

    def device_variable(self, candidate: Candidate) -> DeviceVariable:
        """The device's CEL variable (kept per device, with its verdicts)."""
        return self._devices.get(candidate.device_id[0], candidate.device)

    @property
    def allocated(self) -> AllocatedState:
        return self._allocated

    def forget_counters(self, pools: Iterable[PoolID]) -> None:
        """Devices of ``pools`` were taken or given back: their counters are computed again
        (an allocator the exact batch keeps for many pods; kube's lives for one)."""
        for pool_id in pools:
            self._counters.pop(pool_id, None)

    def _available_counters(self, pool: Pool) -> dict[str, dict[str, Fraction]]:
        """A pool's counters less what allocated devices consume (kept per pool, as kube)."""
        found = self._counters.get(pool.pool_id)
        if found is not None:
            return found
        available = {name: dict(counters) for name, counters in pool.counter_sets.items()}
        for a_slice in (*pool.slices, *pool.other_slices):
            for device in a_slice.devices:
                if not self._allocated.is_allocated(
                    (a_slice.driver, a_slice.pool.name, device.name)
                ):
                    continue
                for consumption in device.consumes_counters:
                    counters = available.get(consumption.counter_set, {})
                    for name, value in consumption.counters.items():
                        if name in counters:
                            counters[name] -= value
        self._counters[pool.pool_id] = available
        return available
