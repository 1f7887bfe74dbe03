"""Effective pod requests and non-zero requests, exactly as kube v1.35 computes them.

kube-scheduler's ``PodInfo.CalculateResource`` calls component-helpers'
``resource.PodRequests`` twice (once plain, once with the non-zero defaults):

* per container, requests as the API server stores them: a resource with a limit but no
  request gets request := limit (``SetDefaults_Pod``), so a pod from a hand-written dict
  reads as it would from a real cluster;
* sum over containers and restartable ("sidecar", ``restartPolicy: Always``) init
  containers, then the max with each regular init container plus the sidecars declared
  before it (KEP-753);
* with in-place resize (GA), the max of that over spec, allocated and actuated requests
  from ``status.containerStatuses``;
* pod-level ``spec.resources.requests`` (cpu, memory, hugepages-*), after the API
  server's pod-level defaulting from limits, replace the aggregate;
* plus ``spec.overhead``; all summed exactly (Fractions), rounded once by the caller.

The non-zero requests (scoring) apply 100m / 200Mi to each container missing a cpu /
memory request before the same rule; with pod-level requests, only for a resource the
whole pod leaves unset. Limits are otherwise ignored.

Neighbours: ``parse_pod`` (the caller), ``parse_common`` (readers), ``model.quantity``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING

from scheduler.model.resources import (
    CPU,
    DEFAULT_MEMORY_REQUEST,
    DEFAULT_MILLI_CPU_REQUEST,
    MEMORY,
)

if TYPE_CHECKING:
    from scheduler.model.parse_common import RawMap, Reader

__all__ = ["Container", "ResourceList", "container_from_raw", "pod_requests"]

ResourceList = dict[str, Fraction]

_NON_ZERO_DEFAULTS: ResourceList = {
    CPU: Fraction(DEFAULT_MILLI_CPU_REQUEST, 1000),
    MEMORY: Fraction(DEFAULT_MEMORY_REQUEST),
}


def _is_pod_level_resource(name: str) -> bool:
    """kube's ``IsSupportedPodLevelResource``."""
    return name in (CPU, MEMORY) or name.startswith("hugepages-")


# -- containers ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Container:
    name: str
    requests: ResourceList
    """After request := limit defaulting."""
    limits: ResourceList
    """Read only for the API server's pod-level defaulting."""
    restartable: bool
    """An init container with ``restartPolicy: Always`` (a sidecar)."""


def container_from_raw(r: Reader, raw: RawMap, field: str, *, init: bool) -> Container:
    resources = r.mapping(raw.get("resources"), f"{field}.resources")
    requests = r.resource_list(resources.get("requests"), f"{field}.resources.requests")
    limits = r.resource_list(resources.get("limits"), f"{field}.resources.limits")
    for name, amount in limits.items():
        requests.setdefault(name, amount)
    policy = r.string(raw.get("restartPolicy"), f"{field}.restartPolicy")
    return Container(
        name=r.string(raw.get("name"), f"{field}.name"),
        requests=requests,
        limits=limits,
        restartable=init and policy == "Always",
    )


def _add_into(acc: ResourceList, other: Mapping[str, Fraction]) -> None:
    for name, amount in other.items():
        acc[name] = acc.get(name, Fraction(0)) + amount


def _max_into(acc: ResourceList, other: Mapping[str, Fraction]) -> None:
    for name, amount in other.items():
        if name not in acc or amount > acc[name]:
            acc[name] = amount


def _with_defaults(requests: Mapping[str, Fraction], defaults: ResourceList) -> ResourceList:
    """kube's ``applyNonMissing``: a default for each resource the container leaves unset."""
    out = dict(requests)
    out.update({name: amount for name, amount in defaults.items() if name not in requests})
    return out


Picker = Callable[[Container], Mapping[str, Fraction]]


def _aggregate(
    containers: list[Container], inits: list[Container], pick: Picker, defaults: ResourceList
) -> ResourceList:
    """Sum of containers and sidecars, max'ed with each init container's peak (KEP-753)."""
    result: ResourceList = {}
    for c in containers:
        _add_into(result, _with_defaults(pick(c), defaults))
    sidecars: ResourceList = {}
    init_peak: ResourceList = {}
    for c in inits:
        reqs = _with_defaults(pick(c), defaults)
        if c.restartable:
            _add_into(result, reqs)
            _add_into(sidecars, reqs)
            current = sidecars
        else:
            current = dict(reqs)
            _add_into(current, sidecars)
        _max_into(init_peak, current)
    _max_into(result, init_peak)
    return result


@dataclass(frozen=True, slots=True)
class _Statuses:
    """Per-container resize state from ``status`` (in-place pod resize)."""

    allocated: dict[str, ResourceList]
    actuated: dict[str, ResourceList]
    infeasible: bool

    @property
    def present(self) -> bool:
        return bool(self.allocated or self.actuated or self.infeasible)


def _statuses(r: Reader, status: RawMap) -> _Statuses:
    allocated: dict[str, ResourceList] = {}
    actuated: dict[str, ResourceList] = {}
    for key in ("initContainerStatuses", "containerStatuses"):
        for path, cs in r.objects(status.get(key), f"status.{key}"):
            name = r.string(cs.get("name"), f"{path}.name")
            if name in allocated or name in actuated:
                continue  # kube's findContainerStatus takes the first match
            if cs.get("allocatedResources") is not None:
                allocated[name] = r.resource_list(
                    cs["allocatedResources"], f"{path}.allocatedResources"
                )
            res = r.mapping(cs.get("resources"), f"{path}.resources")
            if res.get("requests") is not None:
                actuated[name] = r.resource_list(res["requests"], f"{path}.resources.requests")
    infeasible = False
    for path, cond in r.objects(status.get("conditions"), "status.conditions"):
        if r.string(cond.get("type"), f"{path}.type") == "PodResizePending":
            infeasible = r.string(cond.get("reason"), f"{path}.reason") == "Infeasible"
            break
    return _Statuses(allocated, actuated, infeasible)


def _container_requests(
    containers: list[Container], inits: list[Container], st: _Statuses, defaults: ResourceList
) -> ResourceList:
    """kube's ``AggregateContainerRequests`` with ``UseStatusResources`` (resize is GA).

    max(spec, actuated, allocated), each aggregated over containers by the same rule;
    spec is left out while a resize is infeasible. kube tests a status map's presence,
    not its emptiness, hence ``in`` rather than truthiness below.
    """
    spec = _aggregate(containers, inits, lambda c: c.requests, defaults)
    if not st.present:
        return spec  # no container status: allocated and actuated both equal spec

    def fallback(c: Container) -> Mapping[str, Fraction]:
        return {} if st.infeasible else c.requests

    def allocated(c: Container) -> Mapping[str, Fraction]:
        return st.allocated[c.name] if c.name in st.allocated else fallback(c)

    def actuated(c: Container) -> Mapping[str, Fraction]:
        return st.actuated[c.name] if c.name in st.actuated else allocated(c)

    result: ResourceList = {} if st.infeasible else spec
    _max_into(result, _aggregate(containers, inits, actuated, defaults))
    _max_into(result, _aggregate(containers, inits, allocated, defaults))
    return result


def _pod_level_requests(
    r: Reader, spec: RawMap, containers: list[Container], inits: list[Container]
) -> ResourceList:
    """Pod-level requests after the API server's defaulting (``SetDefaults_Pod``).

    With pod-level limits, an unset pod-level request defaults to the containers'
    aggregate request (cpu, memory) or else to the pod-level limit; hugepages limits
    default to the containers' aggregate limit first. Only supported resources count.
    """
    resources = r.mapping(spec.get("resources"), "spec.resources")
    if not resources:
        return {}
    requests = r.resource_list(resources.get("requests"), "spec.resources.requests")
    limits = r.resource_list(resources.get("limits"), "spec.resources.limits")
    if limits or requests:  # defaultHugePagePodLimits
        aggregate_limits = _aggregate(containers, inits, lambda c: c.limits, {})
        for name, amount in aggregate_limits.items():
            if name.startswith("hugepages-") and name not in requests:
                limits.setdefault(name, amount)
    if limits:  # defaultPodRequests
        aggregate = _aggregate(containers, inits, lambda c: c.requests, {})
        for name in (CPU, MEMORY):  # the overcommittable pod-level resources
            if name in aggregate:
                requests.setdefault(name, aggregate[name])
        for name, amount in limits.items():
            if _is_pod_level_resource(name):
                requests.setdefault(name, amount)
    return {name: amount for name, amount in requests.items() if _is_pod_level_resource(name)}


def pod_requests(
    r: Reader, spec: RawMap, status: RawMap, containers: list[Container], inits: list[Container]
) -> tuple[ResourceList, ResourceList]:
    """(requests, non-zero requests) as kube-scheduler's ``CalculateResource`` computes them."""
    st = _statuses(r, status)
    pod_level = _pod_level_requests(r, spec, containers, inits)
    overhead = r.resource_list(spec.get("overhead"), "spec.overhead")

    def total(defaults: ResourceList) -> ResourceList:
        reqs = _container_requests(containers, inits, st, defaults)
        reqs.update(pod_level)
        _add_into(reqs, overhead)
        return reqs

    requests = total({})
    if pod_level:
        defaults = {k: v for k, v in _NON_ZERO_DEFAULTS.items() if k not in requests}
    else:
        defaults = _NON_ZERO_DEFAULTS
    non_zero = total(defaults) if defaults else requests
    return requests, non_zero
