"""Typed readers for raw API dicts, shared by the pod, node and selector parsers.

A watch event is JSON: every field may be missing, ``null`` or of the wrong type when
the object comes from a hand-written manifest or a buggy client. Each reader checks one
field and, on bad input, raises ``ModelError`` naming the object and the field path, so
the scheduler can report the bad pod and keep serving the others (DESIGN.md section 4).

Neighbours: ``parse_selectors``, ``parse_pod`` and ``parse_node`` use a :class:`Reader`;
``model.quantity`` does the arithmetic behind :meth:`Reader.quantity`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from scheduler.model.errors import ModelError
from scheduler.model.quantity import QuantityError, int_value, milli_value, parse_quantity
from scheduler.model.resources import CPU, EPHEMERAL_STORAGE, MEMORY, PODS, Resources

if TYPE_CHECKING:
    from fractions import Fraction

RawMap = Mapping[str, object]

_EMPTY: RawMap = {}


def kind_of(value: object) -> str:
    """How a JSON value's type reads in an error message."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, Mapping):
        return "an object"
    if isinstance(value, list | tuple):
        return "a list"
    return type(value).__name__


class Reader:
    """Reads fields of one object; every error names ``obj`` (``"Pod ns/name"``)."""

    __slots__ = ("obj",)

    def __init__(self, obj: str) -> None:
        self.obj = obj

    def error(self, field: str, message: str) -> ModelError:
        return ModelError(self.obj, field, message)

    def mapping(self, value: object, field: str) -> RawMap:
        """An object; missing or null reads as empty."""
        if value is None:
            return _EMPTY
        if not isinstance(value, Mapping):
            raise self.error(field, f"expected an object, got {kind_of(value)}")
        return value

    def optional_mapping(self, value: object, field: str) -> RawMap | None:
        """An object, or None when missing or null (where nil means something)."""
        if value is None:
            return None
        return self.mapping(value, field)

    def sequence(self, value: object, field: str) -> Sequence[object]:
        """A list; missing or null reads as empty."""
        if value is None:
            return ()
        if not isinstance(value, list | tuple):
            raise self.error(field, f"expected a list, got {kind_of(value)}")
        return value

    def objects(self, value: object, field: str) -> list[tuple[str, RawMap]]:
        """A list of objects, each with its own field path (``field[i]``)."""
        out: list[tuple[str, RawMap]] = []
        for i, item in enumerate(self.sequence(value, field)):
            path = f"{field}[{i}]"
            if not isinstance(item, Mapping):
                raise self.error(path, f"expected an object, got {kind_of(item)}")
            out.append((path, item))
        return out

    def string(self, value: object, field: str, *, default: str = "") -> str:
        if value is None:
            return default
        if not isinstance(value, str):
            raise self.error(field, f"expected a string, got {kind_of(value)}")
        return value

    def required_string(self, value: object, field: str) -> str:
        """A non-empty string."""
        text = self.string(value, field)
        if not text:
            raise self.error(field, "is required")
        return text

    def strings(self, value: object, field: str) -> tuple[str, ...]:
        """A list of strings; missing reads as empty, a null item is an error."""
        out: list[str] = []
        for i, item in enumerate(self.sequence(value, field)):
            if not isinstance(item, str):
                raise self.error(f"{field}[{i}]", f"expected a string, got {kind_of(item)}")
            out.append(item)
        return tuple(out)

    def integer(self, value: object, field: str, *, default: int = 0) -> int:
        value_or_none = self.optional_integer(value, field)
        return default if value_or_none is None else value_or_none

    def optional_integer(self, value: object, field: str) -> int | None:
        """A JSON integer (any size); booleans, floats and strings are errors."""
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.error(field, f"expected an integer, got {kind_of(value)}")
        return value

    def boolean(self, value: object, field: str, *, default: bool = False) -> bool:
        if value is None:
            return default
        if not isinstance(value, bool):
            raise self.error(field, f"expected a boolean, got {kind_of(value)}")
        return value

    def string_map(self, value: object, field: str) -> dict[str, str]:
        """A ``map[string]string`` (labels, annotations, nodeSelector)."""
        out: dict[str, str] = {}
        for key, item in self.mapping(value, field).items():
            if not isinstance(key, str):
                raise self.error(field, f"key {key!r} is not a string")
            if not isinstance(item, str):
                raise self.error(f"{field}.{key}", f"expected a string, got {kind_of(item)}")
            out[key] = item
        return out

    def quantity(self, value: object, field: str) -> Fraction:
        try:
            return parse_quantity(value)
        except QuantityError as exc:
            raise self.error(field, str(exc)) from exc

    def resource_list(
        self, value: object, field: str, *, negative_ok: bool = False
    ) -> dict[str, Fraction]:
        """A ``ResourceList`` (name → quantity) read exactly; negatives are errors."""
        out: dict[str, Fraction] = {}
        for name, raw in self.mapping(value, field).items():
            if not isinstance(name, str) or not name:
                raise self.error(field, f"resource name {name!r} is not a non-empty string")
            path = f"{field}.{name}"
            amount = self.quantity(raw, path)
            if amount < 0 and not negative_ok:
                raise self.error(path, f"must not be negative, got {raw!r}")
            out[name] = amount
        return out


def named_reader(
    raw: object, kind: str, *, namespaced: bool
) -> tuple[Reader, Mapping[str, object]]:
    """A Reader naming ``kind [ns/]name`` and the object's metadata."""
    r = Reader(f"{kind} <unnamed>")
    if not isinstance(raw, dict):
        raise r.error("", f"expected an object, got {type(raw).__name__}")
    meta = r.mapping(raw.get("metadata"), "metadata")
    if namespaced:
        namespace = r.string(meta.get("namespace"), "metadata.namespace") or "default"
        r = Reader(f"{kind} {namespace}/<unnamed>")
        name = r.required_string(meta.get("name"), "metadata.name")
        return Reader(f"{kind} {namespace}/{name}"), meta
    name = r.required_string(meta.get("name"), "metadata.name")
    return Reader(f"{kind} {name}"), meta


# kube's IsQualifiedName: [prefix/]name, prefix a DNS subdomain, name <= 63 chars.
_QUALIFIED_NAME = re.compile(r"[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?")
_DNS_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")


def is_qualified_name(name: str) -> bool:
    prefix, slash, rest = name.rpartition("/")
    if slash and (not prefix or len(prefix) > 253 or not _DNS_SUBDOMAIN.fullmatch(prefix)):
        return False
    return 0 < len(rest) <= 63 and _QUALIFIED_NAME.fullmatch(rest) is not None


def is_scalar_resource_name(name: str) -> bool:
    """kube's ``IsScalarResourceName``: extended, hugepages, prefixed native, attachable volumes.

    Other names (an unknown ``foo`` without a domain) are not accounted by kube-scheduler,
    neither in requests nor in allocatable.
    """
    if name.startswith(("hugepages-", "attachable-volumes-")):
        return True
    if "kubernetes.io/" in name:
        return True  # prefixed native resource
    if "/" not in name or name.startswith("requests."):
        return False
    return is_qualified_name("requests." + name)


def normalize_image(name: str) -> str:
    """kube ImageLocality's ``normalizedImageName``: ``:latest`` when the name has no tag.

    A tag is a ``:`` after the last ``/`` (so a digest ``@sha256:…`` counts as one and a
    registry port ``host:5000/x`` does not). kube does not add a registry or ``library/``.
    """
    if name.rfind(":") <= name.rfind("/"):
        return name + ":latest"
    return name


def resources_from_list(amounts: Mapping[str, Fraction], *, count_pods: bool) -> Resources:
    """kube's ``Resource.Add(ResourceList)``: round once, keep only what kube accounts.

    cpu in millicores (rounded up), memory and ephemeral storage in bytes (rounded up),
    ``pods`` only when ``count_pods`` (allocatable, not requests), scalar resources by
    name; zero scalar amounts are left out (absent reads as zero everywhere).
    """
    out = Resources()
    for name, amount in amounts.items():
        if name == CPU:
            out.milli_cpu = milli_value(amount)
        elif name == MEMORY:
            out.memory = int_value(amount)
        elif name == EPHEMERAL_STORAGE:
            out.ephemeral_storage = int_value(amount)
        elif name == PODS:
            if count_pods:
                out.allowed_pod_number = int_value(amount)
        elif is_scalar_resource_name(name):
            value = int_value(amount)
            if value:
                out.scalar[name] = value
    return out
