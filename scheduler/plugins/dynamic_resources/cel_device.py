"""The ``device`` variable of a DRA CEL selector, built once per device.

kube (``k8s.io/dynamic-resource-allocation/cel``, ``DeviceMatches``) gives a selector::

    device.driver                      string
    device.allowMultipleAllocations    bool (false when unset)
    device.attributes[domain][id]      int | bool | string | Semver (lists with list values)
    device.capacity[domain][id]        Quantity

An attribute or capacity name without a domain gets the driver's name as its domain.
Building these maps, and cel-expr-python's Activation from them, costs more than most
selectors take to evaluate, so a :class:`DeviceVariable` is made once per device (kept
while the device record lives) and every selector evaluates against the same Activation;
the verdicts are kept too (:attr:`DeviceVariable.results`), since a selector's result
depends on nothing but the device.

kube looks up an unknown domain as an empty map (so ``device.attributes["x"].?y`` is
``optional.none()``); cel-expr-python's maps have no default. :meth:`with_domain` gives the
variable with one more, empty, domain: ``cel_env`` retries with it when a lookup of a
missing domain failed, which reproduces kube's result for such expressions.

Neighbours: ``cel_library`` (how Semver and Quantity values are encoded), ``cel_env``
(evaluation).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scheduler.model.dra_devices import AttributeKind
from scheduler.plugins.dynamic_resources.cel_library import encode_quantity, encode_semver
from scheduler.plugins.dynamic_resources.semver import SemverError, parse_semver

if TYPE_CHECKING:
    import cel_expr_python.cel as cel

    from scheduler.model.dra_devices import Device, DeviceAttribute

_VERSION_KINDS = (AttributeKind.VERSION, AttributeKind.VERSIONS)


class AttributeValueError(ValueError):
    """An attribute cannot be given to CEL (an unparsable version): kube's message."""


def _attribute_value(name: str, attr: DeviceAttribute) -> object:
    if attr.kind not in _VERSION_KINDS:
        return list(attr.value) if isinstance(attr.value, tuple) else attr.value
    try:
        if isinstance(attr.value, tuple):
            return [encode_semver(parse_semver(str(v))) for v in attr.value]
        return encode_semver(parse_semver(str(attr.value)))
    except SemverError as exc:
        raise AttributeValueError(f"attribute {name}: parse semantic version: {exc}") from None


def split_qualified_name(name: str, default_domain: str) -> tuple[str, str]:
    """kube's parseQualifiedName: ``domain/id``, or the default domain and the name."""
    domain, slash, ident = name.partition("/")
    return (domain, ident) if slash else (default_domain, name)


class DeviceVariable:
    """The ``device`` map for one device and the Activation made from it."""

    __slots__ = ("_activations", "_error", "_value", "results", "verdicts")

    def __init__(self, driver: str, device: Device) -> None:
        self._activations: dict[tuple[str, ...], cel.Activation] = {}
        self.results: dict[str, bool | str] = {}
        """Each selector's verdict on this device (or its runtime error), by expression: a
        selector depends only on the device, so it is evaluated once per device record."""
        self.verdicts: dict[tuple[str | None, ...], bool] = {}
        """Whether all of a set of selectors (a class's and a request's) match, by the set."""
        self._error: str | None = None
        attributes: dict[str, dict[str, object]] = {}
        try:
            for name, attr in device.attributes.items():
                domain, ident = split_qualified_name(name, driver)
                attributes.setdefault(domain, {})[ident] = _attribute_value(name, attr)
        except AttributeValueError as exc:
            self._error = str(exc)
        capacity: dict[str, dict[str, object]] = {}
        for name, cap in device.capacity.items():
            domain, ident = split_qualified_name(name, driver)
            capacity.setdefault(domain, {})[ident] = encode_quantity(cap.value.value)
        self._value: dict[str, object] = {
            "driver": driver,
            "allowMultipleAllocations": bool(device.allow_multiple_allocations),
            "attributes": attributes,
            "capacity": capacity,
        }

    @property
    def error(self) -> str | None:
        """Why no selector can be evaluated on this device (kube fails every one), or None."""
        return self._error

    def has_domain(self, domain: str) -> bool:
        attributes = self._value["attributes"]
        capacity = self._value["capacity"]
        assert isinstance(attributes, dict)
        assert isinstance(capacity, dict)
        return domain in attributes or domain in capacity

    def activation(self, env: cel.Env, extra_domains: tuple[str, ...] = ()) -> cel.Activation:
        """The Activation, with ``extra_domains`` present as empty maps (kube's default)."""
        found = self._activations.get(extra_domains)
        if found is not None:
            return found
        value = self._value
        if extra_domains:
            value = dict(value)
            for field in ("attributes", "capacity"):
                inner = dict(value[field])  # type: ignore[call-overload]
                for domain in extra_domains:
                    inner.setdefault(domain, {})
                value[field] = inner
        made = env.Activation({"device": value})
        self._activations[extra_domains] = made
        return made
