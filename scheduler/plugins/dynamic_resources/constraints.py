"""Claim constraints: ``matchAttribute`` (same value on every device) and
``distinctAttribute`` (pairwise different values), as kube's allocator tracks them.

Each constraint applies to the devices of the requests it names (all requests when it
names none); a sub-request is covered by its parent's name or by ``parent/sub``. The
allocator calls :meth:`add` before taking a device and :meth:`remove` when it backtracks,
always in pairs, so a constraint only needs the first value and a count (match) or the
stack of values (distinct).

Neighbours: ``allocator`` (the search), ``model.dra_devices`` (attributes).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scheduler.model.dra_devices import AttributeKind

if TYPE_CHECKING:
    from scheduler.model.dra_devices import Device, DeviceAttribute

_SCALARS = (AttributeKind.STRING, AttributeKind.INT, AttributeKind.BOOL, AttributeKind.VERSION)


def lookup_attribute(device: Device, driver: str, name: str) -> DeviceAttribute | None:
    """kube's lookupAttribute: the fully qualified name, or its id when the domain is the
    device's driver."""
    found = device.attributes.get(name)
    if found is not None:
        return found
    domain, slash, ident = name.partition("/")
    if not slash or domain != driver:
        return None
    return device.attributes.get(ident)


def _same(a: DeviceAttribute, b: DeviceAttribute) -> bool:
    # Versions are in minimal form (semver 2.0.0), so equal versions are equal strings.
    return a.kind in _SCALARS and a.kind == b.kind and a.value == b.value


class Constraint:
    """The requests a constraint covers and the attribute it compares."""

    __slots__ = ("attribute", "requests")

    def __init__(self, requests: tuple[str, ...], attribute: str) -> None:
        self.requests = frozenset(requests)
        self.attribute = attribute

    def applies(self, request: str, sub_request: str) -> bool:
        if not self.requests:
            return True
        if request in self.requests:
            return True
        return bool(sub_request) and f"{request}/{sub_request}" in self.requests

    def add(self, request: str, sub_request: str, device: Device, driver: str) -> bool:
        raise NotImplementedError

    def remove(self, request: str, sub_request: str) -> None:
        raise NotImplementedError


class MatchAttribute(Constraint):
    __slots__ = ("_count", "_first")

    def __init__(self, requests: tuple[str, ...], attribute: str) -> None:
        super().__init__(requests, attribute)
        self._first: DeviceAttribute | None = None
        self._count = 0

    def add(self, request: str, sub_request: str, device: Device, driver: str) -> bool:
        if not self.applies(request, sub_request):
            return True
        attribute = lookup_attribute(device, driver, self.attribute)
        if attribute is None:
            return False
        if self._count == 0:
            self._first = attribute
        elif self._first is None or not _same(attribute, self._first):
            return False
        self._count += 1
        return True

    def remove(self, request: str, sub_request: str) -> None:
        if self.applies(request, sub_request):
            self._count -= 1


class DistinctAttribute(Constraint):
    __slots__ = ("_seen",)

    def __init__(self, requests: tuple[str, ...], attribute: str) -> None:
        super().__init__(requests, attribute)
        self._seen: list[DeviceAttribute] = []

    def add(self, request: str, sub_request: str, device: Device, driver: str) -> bool:
        if not self.applies(request, sub_request):
            return True
        attribute = lookup_attribute(device, driver, self.attribute)
        if attribute is None:
            return False
        if self._seen and attribute.kind not in _SCALARS:
            return False  # kube cannot compare list values: only a first one passes
        if any(_same(attribute, seen) for seen in self._seen):
            return False
        self._seen.append(attribute)
        return True

    def remove(self, request: str, sub_request: str) -> None:
        if self.applies(request, sub_request):
            self._seen.pop()
