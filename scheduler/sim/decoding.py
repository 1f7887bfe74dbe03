"""What kube-apiserver's decoder refuses before validation even runs: bad quantities and times.

kube-apiserver decodes a request body into Go types first. A ``resource.Quantity`` that
``ParseQuantity`` rejects (``1_000``, ``NaN``, ``1K``) or a ``metav1.MicroTime`` without
six fractional digits makes the whole body undecodable, and the answer is
``400 BadRequest``, ``<Kind> in version "<v>" cannot be handled as a <Kind>: <parse error>``,
no field named (measured against v1.37: see tests/cluster/test_conformance.py). Values that
parse but are out of range (a negative request) are validation's business: 422 from
:mod:`scheduler.sim.defaults`.

Only the fields a scheduler's inputs and our own writes carry are checked: container,
overhead and pod-level resources in pods and pod templates, node capacity and allocatable,
Lease and Event micro-times. :func:`parse_quantity` follows ``ParseQuantity``'s grammar.
"""

from __future__ import annotations

import json
import re
from decimal import Decimal, InvalidOperation
from typing import Any

from scheduler.sim import errors
from scheduler.sim.discovery import (
    EVENTS,
    EVENTS_V1,
    LEASES,
    NODES,
    PODS,
    WORKLOADS,
    ResourceType,
)

FORMAT_WRONG = (
    "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
)
BAD_SUFFIX = "unable to parse quantity's suffix"
BAD_NUMBER = "unable to parse numeric part of quantity"
RFC3339_MICRO = "2006-01-02T15:04:05.000000Z07:00"
_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_DECIMAL = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_SUFFIX_CHARS = "eEinumkKMGTP"
_MICRO = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}(Z|[+-]\d{2}:\d{2})$")


class QuantityError(ValueError):
    """``ParseQuantity``'s error, with its wording."""


def _split(text: str) -> tuple[str, str, str, str]:
    """(sign, integer digits, fraction digits, suffix) as ``parseQuantityString`` scans them."""
    pos, end = 0, len(text)
    sign = ""
    if text[:1] in ("+", "-"):
        sign, pos = text[0], 1
    start = pos
    while pos < end and text[pos].isdigit():
        pos += 1
    whole = text[start:pos]
    fraction = ""
    if pos < end and text[pos] == ".":
        pos += 1
        start = pos
        while pos < end and text[pos].isdigit():
            pos += 1
        fraction = text[start:pos]
    suffix_start = pos
    while pos < end and text[pos] in _SUFFIX_CHARS:
        pos += 1
    if pos < end and text[pos] in "+-":
        pos += 1
    while pos < end and text[pos].isdigit():
        pos += 1
    if pos < end:
        raise QuantityError(FORMAT_WRONG)  # a character no part of the grammar allows
    return sign, whole, fraction, text[suffix_start:]


def parse_quantity(text: str) -> Decimal:
    """The value of a Kubernetes quantity string, or :class:`QuantityError` as Go words it."""
    if not text:
        raise QuantityError(FORMAT_WRONG)
    sign, whole, fraction, suffix = _split(text)
    try:
        number = Decimal(f"{sign}{whole or '0'}.{fraction or '0'}")
    except InvalidOperation:
        raise QuantityError(BAD_NUMBER) from None
    if suffix in _BINARY:
        return number * _BINARY[suffix]
    if suffix in _DECIMAL:
        return number.scaleb(_DECIMAL[suffix])
    if len(suffix) > 1 and suffix[0] in "eE" and re.fullmatch(r"[+-]?[0-9]+", suffix[1:]):
        return number.scaleb(int(suffix[1:]))
    raise QuantityError(BAD_SUFFIX)


class Undecodable(ValueError):
    """What the decoder says about a body it cannot read (Go's parse error text)."""


def refused(rt: ResourceType, error: Undecodable, patch: object = None) -> errors.ApiError:
    """The answer to a body that does not decode: 400 for a create or update; for a patch,
    whose result is what fails to decode, kube's 422 naming the ``patch``."""
    if patch is None:
        return errors.bad_request(
            f'{rt.kind} in version "{rt.version}" cannot be handled as a {rt.kind}: {error}'
        )
    shown = json.dumps(patch, separators=(",", ":"))
    return errors.invalid("", "", f'patch: Invalid value: "{shown}": {error}')


def _quantities(rt: ResourceType, values: Any) -> None:
    if not isinstance(values, dict):
        return
    for value in values.values():
        if value is None:
            continue  # null decodes to a zero quantity
        if isinstance(value, bool) or not isinstance(value, str | int | float):
            raise Undecodable(FORMAT_WRONG)
        try:
            parse_quantity(str(value).strip())
        except QuantityError as e:
            raise Undecodable(str(e)) from None


def _pod_spec(rt: ResourceType, spec: Any) -> None:
    if not isinstance(spec, dict):
        return
    for key in ("containers", "initContainers", "ephemeralContainers"):
        for container in spec.get(key) or []:
            resources = container.get("resources") if isinstance(container, dict) else None
            if isinstance(resources, dict):
                _quantities(rt, resources.get("requests"))
                _quantities(rt, resources.get("limits"))
    _quantities(rt, spec.get("overhead"))
    resources = spec.get("resources")
    if isinstance(resources, dict):
        _quantities(rt, resources.get("requests"))
        _quantities(rt, resources.get("limits"))


def _micro_time(rt: ResourceType, value: Any) -> None:
    if value is None or (isinstance(value, str) and _MICRO.match(value)):
        return
    raise Undecodable(f'parsing time "{value}" as "{RFC3339_MICRO}": cannot parse')


def check(rt: ResourceType, obj: dict[str, Any]) -> None:
    """:class:`Undecodable` if kube-apiserver could not decode ``obj`` (of type ``rt``)."""
    if rt is PODS:
        _pod_spec(rt, obj.get("spec"))
    elif rt in WORKLOADS:
        template = (obj.get("spec") or {}).get("template")
        if isinstance(template, dict):
            _pod_spec(rt, template.get("spec"))
    elif rt is NODES:
        status = obj.get("status")
        if isinstance(status, dict):
            _quantities(rt, status.get("capacity"))
            _quantities(rt, status.get("allocatable"))
    elif rt is LEASES:
        spec = obj.get("spec")
        if isinstance(spec, dict):
            _micro_time(rt, spec.get("acquireTime"))
            _micro_time(rt, spec.get("renewTime"))
    elif rt in (EVENTS, EVENTS_V1):
        _micro_time(rt, obj.get("eventTime"))
        series = obj.get("series")
        if isinstance(series, dict):
            _micro_time(rt, series.get("lastObservedTime"))
