"""Kubernetes' CEL library functions for DRA selectors, on cel-expr-python.

kube's DRA environment is the apiserver's base CEL environment: cel-go's standard library
and extensions plus Kubernetes' own libraries (``k8s.io/apiserver/pkg/cel/library``).
cel-expr-python (cel-cpp) brings the standard library and the extensions (strings, sets,
lists, bindings, optional, two-variable comprehensions); this module adds the Kubernetes
functions selectors use: ``semver``/``isSemver`` and the Semver methods, ``quantity``/
``isQuantity``/``sign`` and the Quantity methods, the list helpers (``isSorted``, ``sum``,
``min``, ``max``) and regex ``find``/``findAll``. ``indexOf``/``lastIndexOf`` on lists are
left out: in cel-cpp they clash with the strings extension's declarations.

Why two declarations per function: the checker declares Semver and Quantity as opaque
types (``kubernetes.Semver``, ``kubernetes.Quantity``), so ``semver("1.0.0") > 1`` fails
to compile as in kube; cel-expr-python cannot carry opaque values at run time, so the
runtime environment sees them as tagged lists (``[tag, …]``) and one Python function per
name dispatches on the tag. ``cel_env`` checks with the first set and runs with the second.

Neighbours: ``semver`` (parsing), ``cel_env`` (the two environments), ``cel_device``
(device attributes and capacities encoded the same way).
"""

from __future__ import annotations

import functools
import itertools
import re
from fractions import Fraction
from typing import TYPE_CHECKING, Final

import cel_expr_python.cel as cel

from scheduler.model.quantity import QuantityError, parse_quantity
from scheduler.plugins.dynamic_resources.semver import Semver, parse_semver

if TYPE_CHECKING:
    from collections.abc import Callable

SEMVER_TAG: Final = "\x1ekubernetes.Semver"
QUANTITY_TAG: Final = "\x1ekubernetes.Quantity"

# kube's resource.ErrFormatWrong: the text every unparsable quantity reports.
QUANTITY_FORMAT_ERROR: Final = (
    "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
)

Encoded = list[object]


def encode_semver(v: Semver) -> Encoded:
    return [SEMVER_TAG, v.major, v.minor, v.patch, list(v.pre)]


def _decode_semver(value: object) -> Semver:
    if not (isinstance(value, list) and value and value[0] == SEMVER_TAG):
        raise TypeError("no such overload")
    _, major, minor, patch, pre = value
    return Semver(major, minor, patch, tuple(pre))


def encode_quantity(q: Fraction) -> Encoded:
    # A string keeps huge values exact (CEL ints are 64-bit) and equal values equal.
    return [QUANTITY_TAG, f"{q.numerator}/{q.denominator}"]


def _decode_quantity(value: object) -> Fraction:
    if not (isinstance(value, list) and len(value) == 2 and value[0] == QUANTITY_TAG):
        raise TypeError("no such overload")
    return Fraction(str(value[1]))


_KUBE_SPLIT = re.compile(r"^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$")


@functools.lru_cache(maxsize=4096)
def _quantity(text: str) -> Encoded:
    """``quantity(text)`` (memoized: a selector's constant is parsed once, not per device)."""
    return encode_quantity(_parse_quantity(text))


def _parse_quantity(text: str) -> Fraction:
    try:
        return parse_quantity(text)
    except QuantityError:
        # kube's ParseQuantity: its regex first, then the suffix, then the number.
        match = _KUBE_SPLIT.match(text)
        if match is None:
            raise ValueError(QUANTITY_FORMAT_ERROR) from None
        if match.group(1).count(".") > 1 or match.group(1).strip("+-") in ("", "."):
            raise ValueError("unable to parse numeric part of quantity") from None
        raise ValueError("unable to parse quantity's suffix") from None


def _semver(text: str, normalize: bool = False) -> Encoded:
    return encode_semver(parse_semver(text, normalize=normalize))


def _is_semver(text: str, normalize: bool = False) -> bool:
    try:
        parse_semver(text, normalize=normalize)
    except ValueError:
        return False
    return True


def _is_quantity(text: str) -> bool:
    try:
        parse_quantity(text)
    except QuantityError:
        return False
    return True


def _compare(a: object, b: object) -> int:
    """compareTo for Semver and Quantity: the runtime sees both as tagged lists."""
    if isinstance(a, list) and a and a[0] == SEMVER_TAG:
        return _decode_semver(a).compare(_decode_semver(b))
    x, y = _decode_quantity(a), _decode_quantity(b)
    return (x > y) - (x < y)


def _as_integer(q: object) -> int:
    value = _decode_quantity(q)
    if value.denominator != 1 or not -(2**63) <= value.numerator < 2**63:
        raise ValueError("cannot convert value to integer")
    return value.numerator


def _is_integer(q: object) -> bool:
    value = _decode_quantity(q)
    return value.denominator == 1 and -(2**63) <= value.numerator < 2**63


def _add(a: object, b: object) -> Encoded:
    other = Fraction(b) if isinstance(b, int) else _decode_quantity(b)
    return encode_quantity(_decode_quantity(a) + other)


def _sub(a: object, b: object) -> Encoded:
    other = Fraction(b) if isinstance(b, int) else _decode_quantity(b)
    return encode_quantity(_decode_quantity(a) - other)


def _sign(q: object) -> int:
    value = _decode_quantity(q)
    return (value > 0) - (value < 0)


def _is_sorted(items: list[object]) -> bool:
    return all(_compare_any(a, b) <= 0 for a, b in itertools.pairwise(items))


def _compare_any(a: object, b: object) -> int:
    if isinstance(a, list) and a and a[0] in (SEMVER_TAG, QUANTITY_TAG):
        return _compare(a, b)
    less: bool = a < b  # type: ignore[operator]  # CEL checked the element types
    greater: bool = a > b  # type: ignore[operator]
    return int(greater) - int(less)


def _min(items: list[object]) -> object:
    if not items:
        raise ValueError("min called on empty list")
    best = items[0]
    for item in items[1:]:
        if _compare_any(item, best) < 0:
            best = item
    return best


def _max(items: list[object]) -> object:
    if not items:
        raise ValueError("max called on empty list")
    best = items[0]
    for item in items[1:]:
        if _compare_any(item, best) > 0:
            best = item
    return best


def _sum(items: list[object]) -> object:
    if items and isinstance(items[0], list):
        return encode_quantity(sum((_decode_quantity(i) for i in items), Fraction(0)))
    if any(isinstance(i, float) for i in items):
        return float(sum(i for i in items if isinstance(i, int | float)))
    return sum(i for i in items if isinstance(i, int))


def _regex(pattern: str) -> re.Pattern[str]:
    try:
        return re.compile(pattern)
    except re.error as exc:
        raise ValueError(f"Illegal regex: {exc}") from None


def _find(text: str, pattern: str) -> str:
    match = _regex(pattern).search(text)
    return "" if match is None else match.group(0)


def _find_all(text: str, pattern: str, limit: int = -1) -> list[str]:
    found = [m.group(0) for m in _regex(pattern).finditer(text)]
    return found if limit < 0 else found[:limit]


T = cel.Type
SEMVER_TYPE = T.AbstractType("kubernetes.Semver")
QUANTITY_TYPE = T.AbstractType("kubernetes.Quantity")
_RUN_VALUE = T.List(T.DYN)
"""How a Semver or Quantity looks to the runtime: a tagged list."""


# name, overload id, checker params, checker result, member?, runtime params, impl.
_Spec = tuple[str, str, list[cel.Type], cel.Type, bool, list[cel.Type], "Callable[..., object]"]
_S, _Q, _R = SEMVER_TYPE, QUANTITY_TYPE, _RUN_VALUE
_SPECS: list[_Spec] = [
    ("semver", "string_to_semver", [T.STRING], _S, False, [T.STRING], _semver),
    ("semver", "string_bool_to_semver", [T.STRING, T.BOOL], _S, False, [T.STRING, T.BOOL], _semver),
    ("isSemver", "is_semver_string", [T.STRING], T.BOOL, False, [T.STRING], _is_semver),
    (
        "isSemver",
        "is_semver_string_bool",
        [T.STRING, T.BOOL],
        T.BOOL,
        False,
        [T.STRING, T.BOOL],
        _is_semver,
    ),
    ("major", "semver_major", [_S], T.INT, True, [_R], lambda v: _decode_semver(v).major),
    ("minor", "semver_minor", [_S], T.INT, True, [_R], lambda v: _decode_semver(v).minor),
    ("patch", "semver_patch", [_S], T.INT, True, [_R], lambda v: _decode_semver(v).patch),
    (
        "quantity",
        "string_to_quantity",
        [T.STRING],
        _Q,
        False,
        [T.STRING],
        _quantity,
    ),
    ("isQuantity", "is_quantity_string", [T.STRING], T.BOOL, False, [T.STRING], _is_quantity),
    ("sign", "quantity_sign", [_Q], T.INT, False, [_R], _sign),
    (
        "asApproximateFloat",
        "quantity_get_float",
        [_Q],
        T.DOUBLE,
        True,
        [_R],
        lambda q: float(_decode_quantity(q)),
    ),
    ("asInteger", "quantity_get_int", [_Q], T.INT, True, [_R], _as_integer),
    ("isInteger", "quantity_is_integer", [_Q], T.BOOL, True, [_R], _is_integer),
    ("add", "quantity_add", [_Q, _Q], _Q, True, [_R, _R], _add),
    ("add", "quantity_add_int", [_Q, T.INT], _Q, True, [_R, T.INT], _add),
    ("sub", "quantity_sub", [_Q, _Q], _Q, True, [_R, _R], _sub),
    ("sub", "quantity_sub_int", [_Q, T.INT], _Q, True, [_R, T.INT], _sub),
    ("isSorted", "list_is_sorted", [T.List(T.DYN)], T.BOOL, True, [_R], _is_sorted),
    ("sum", "list_sum", [T.List(T.DYN)], T.DYN, True, [_R], _sum),
    ("min", "list_min", [T.List(T.DYN)], T.DYN, True, [_R], _min),
    ("max", "list_max", [T.List(T.DYN)], T.DYN, True, [_R], _max),
    (
        "find",
        "string_find_string",
        [T.STRING, T.STRING],
        T.STRING,
        True,
        [T.STRING, T.STRING],
        _find,
    ),
    (
        "findAll",
        "string_find_all_string",
        [T.STRING, T.STRING],
        T.List(T.STRING),
        True,
        [T.STRING, T.STRING],
        _find_all,
    ),
    (
        "findAll",
        "string_find_all_string_int",
        [T.STRING, T.STRING, T.INT],
        T.List(T.STRING),
        True,
        [T.STRING, T.STRING, T.INT],
        _find_all,
    ),
]
# Shared by Semver and Quantity: one runtime overload that dispatches on the tag.
_COMPARISONS: list[tuple[str, str, cel.Type, Callable[[object, object], object]]] = [
    ("isGreaterThan", "is_greater_than", T.BOOL, lambda a, b: _compare(a, b) > 0),
    ("isLessThan", "is_less_than", T.BOOL, lambda a, b: _compare(a, b) < 0),
    ("compareTo", "compare_to", T.INT, _compare),
]


def checker_functions() -> list[cel.FunctionDecl]:
    """The declarations the type checker sees (opaque Semver and Quantity)."""
    by_name: dict[str, list[cel.Overload]] = {}
    for name, oid, params, result, member, _, _ in _SPECS:
        by_name.setdefault(name, []).append(cel.Overload(oid, result, params, is_member=member))
    for name, oid, result, _ in _COMPARISONS:
        by_name.setdefault(name, []).extend(
            cel.Overload(f"{kind}_{oid}", result, [t, t], is_member=True)
            for kind, t in (("semver", SEMVER_TYPE), ("quantity", QUANTITY_TYPE))
        )
    return [cel.FunctionDecl(name, overloads) for name, overloads in by_name.items()]


def runtime_functions() -> list[cel.FunctionDecl]:
    """The same functions as the runtime dispatches them (tagged lists), with their code."""
    by_name: dict[str, list[cel.Overload]] = {}
    for name, oid, _, _, member, run_params, impl in _SPECS:
        by_name.setdefault(name, []).append(
            cel.Overload(oid, T.DYN, run_params, is_member=member, impl=impl)
        )
    for name, oid, result, impl in _COMPARISONS:
        by_name.setdefault(name, []).append(
            cel.Overload(oid, result, [_RUN_VALUE, _RUN_VALUE], is_member=True, impl=impl)
        )
    return [cel.FunctionDecl(name, overloads) for name, overloads in by_name.items()]


def python_functions() -> dict[str, Callable[..., object]]:
    """Each function's Python code by name, for CEL libraries that take plain callables
    (``bench.cel_compare`` gives the other candidates the same Kubernetes functions)."""
    out: dict[str, Callable[..., object]] = {name: impl for name, *_, impl in _SPECS}
    out.update({name: impl for name, _, _, impl in _COMPARISONS})
    out["add"], out["sub"] = _add, _sub
    return out
