"""Go template values and functions: what kube's scheduler_perf templates call.

Go's rules for template values (``truth``: false, 0, nil, a missing key and empty
strings/lists/maps are false; ``go_print``: ``fmt.Sprint``, whole float64s without a
fraction, ``<no value>`` for a missing key), kube's template functions (``getTemplateFuncs``
in ``test/integration/scheduler_perf/operations.go``: ``AddInt``, ``DivideInt``, ``Mod``,
``Int``, ``JSON``, ...) and the ``text/template`` builtins the templates use.

Neighbours: :mod:`bench.scheduler_perf.gotemplate` parses and executes templates with these.
"""

from __future__ import annotations

import json
import math
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

Value = object
"""A template value: None (Go's nil), bool, int, float, str, list, dict, or MISSING."""


class TemplateError(ValueError):
    """A template that does not parse or cannot be executed; the message says where."""


class _Missing:
    def __repr__(self) -> str:
        return "<no value>"


MISSING: Final = _Missing()
"""A map key that is not there (Go's zero value of ``interface{}`` from a map lookup)."""


def truth(value: Value) -> bool:
    """Go template truth: false, 0, nil, a missing key and empty strings/lists/maps are
    false."""
    if value is None or value is MISSING:
        return False
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float):
        return value != 0
    if isinstance(value, str | list | dict | tuple):
        return len(value) > 0
    return True


def go_print(value: Value) -> str:
    """How ``fmt.Sprint`` prints a template value (what an action writes)."""
    if value is MISSING:
        return "<no value>"
    if value is None:
        return "<nil>"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return _go_float(value)
    if isinstance(value, str):
        return value
    if isinstance(value, list | tuple):
        return "[" + " ".join(go_print(v) for v in value) + "]"
    if isinstance(value, dict):
        return "map[" + " ".join(f"{k}:{go_print(value[k])}" for k in sorted(value)) + "]"
    return str(value)


def _go_float(value: float) -> str:
    """``%v`` of a float64: the shortest representation, exponent form below 1e-4 and from
    1e21 on."""
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    if math.isnan(value):
        return "NaN"
    if value == int(value) and abs(value) < 1e21:
        return str(int(value))
    text = repr(value)
    if "e" in text:
        mantissa, exponent = text.split("e")
        sign = "-" if exponent.startswith("-") else "+"
        return f"{mantissa}e{sign}{abs(int(exponent)):02d}"
    return text


def to_float(value: Value) -> float:
    """kube's ``toFloat64``: numbers and numeric strings."""
    if isinstance(value, bool):
        raise TemplateError(f"cannot cast {go_print(value)} to float64")
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            pass
    raise TemplateError(f"cannot cast {go_print(value)} to float64")


def to_int(value: Value) -> int:
    """kube's ``toInt``: Go's conversion truncates toward zero; strings parse as ints."""
    if isinstance(value, bool):
        raise TemplateError(f"cannot cast {go_print(value)} to int")
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return math.trunc(value)
    if isinstance(value, str):
        try:
            return int(value)
        except ValueError:
            pass
    raise TemplateError(f"cannot cast {go_print(value)} to int")


def _json_value(value: Value) -> object:
    """JSON as Go's encoder writes an ``interface{}`` decoded from JSON (whole floats as
    integers)."""
    if isinstance(value, float) and value == int(value) and abs(value) < 1e21:
        return int(value)
    if isinstance(value, list | tuple):
        return [_json_value(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _json_value(v) for k, v in value.items()}
    return None if value is MISSING else value


def _to_json(value: Value) -> str:
    return json.dumps(_json_value(value), sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _go_mod(a: Value, b: Value) -> int:
    x, y = math.trunc(to_float(a)), math.trunc(to_float(b))
    if y == 0:
        raise TemplateError("integer divide by zero")
    return int(math.fmod(x, y))


def _divide(a: Value, b: Value) -> float:
    divisor = to_float(b)
    if divisor == 0:
        raise TemplateError("division by zero")
    return to_float(a) / divisor


def _compare(op: str) -> Callable[..., Value]:
    def compare(a: Value, b: Value) -> bool:
        if isinstance(a, str) != isinstance(b, str):
            raise TemplateError(f"incompatible types for comparison: {a!r} {op} {b!r}")
        x, y = (a, b) if isinstance(a, str) else (to_float(a), to_float(b))
        assert isinstance(x, str | float)
        assert isinstance(y, str | float)
        return {"lt": x < y, "le": x <= y, "gt": x > y, "ge": x >= y}[op]  # type: ignore[operator]

    return compare


def _eq(a: Value, *others: Value) -> bool:
    return any(a == other for other in others)


def _or(*args: Value) -> Value:
    for arg in args:
        if truth(arg):
            return arg
    return args[-1]


def _and(*args: Value) -> Value:
    for arg in args:
        if not truth(arg):
            return arg
    return args[-1]


def _len(value: Value) -> int:
    if isinstance(value, str | list | dict | tuple):
        return len(value)
    raise TemplateError(f"len of {go_print(value)}")


FUNCTIONS: Final[Mapping[str, Callable[..., Value]]] = {
    # kube's getTemplateFuncs
    "AddFloat": lambda *n: sum(to_float(x) for x in n),
    "AddInt": lambda *n: math.trunc(sum(to_float(x) for x in n)),
    "DivideFloat": _divide,
    "DivideInt": lambda a, b: math.trunc(_divide(a, b)),
    "Int": to_int,
    "JSON": _to_json,
    "Mod": _go_mod,
    "MultiplyFloat": lambda *n: math.prod(to_float(x) for x in n),
    "MultiplyInt": lambda *n: math.trunc(math.prod(to_float(x) for x in n)),
    "SubtractFloat": lambda a, b: to_float(a) - to_float(b),
    "SubtractInt": lambda a, b: math.trunc(to_float(a) - to_float(b)),
    # text/template builtins
    "or": _or,
    "and": _and,
    "not": lambda a: not truth(a),
    "eq": _eq,
    "ne": lambda a, b: a != b,
    "lt": _compare("lt"),
    "le": _compare("le"),
    "gt": _compare("gt"),
    "ge": _compare("ge"),
    "len": _len,
}
