"""Exact Kubernetes resource quantities ("100m", "1Gi", "1e3") as ``fractions.Fraction``.

Why exact: kube-apiserver keeps quantities as arbitrary-precision decimals and the
scheduler only rounds when it converts a *sum* to int64 (``MilliValue``/``Value`` round
up). Summing floats, or rounding each container before summing, would disagree with
kube-scheduler at the edges, so the pod parser (``model.parse_pod``) sums Fractions and
rounds once with :func:`milli_value` / :func:`int_value`.

Grammar (apimachinery ``resource.ParseQuantity``)::

    quantity ::= [+-]? number suffix?
    number   ::= digits | digits "." digits? | "." digits
    suffix   ::= Ki | Mi | Gi | Ti | Pi | Ei          binary
               | n | u | m | k | M | G | T | P | E    decimal
               | (e | E) [+-]? digits                 decimal exponent

Neighbours: ``model.resources`` holds the rounded integers; ``model.parse_pod`` and
``model.parse_node`` call :func:`parse_quantity` and name the field on error.
"""

from __future__ import annotations

import functools
import math
import re
from fractions import Fraction

__all__ = ["QuantityError", "int_value", "milli_value", "parse_quantity"]

_BINARY = {
    "Ki": 2**10,
    "Mi": 2**20,
    "Gi": 2**30,
    "Ti": 2**40,
    "Pi": 2**50,
    "Ei": 2**60,
}
_DECIMAL = {
    "n": -9,
    "u": -6,
    "m": -3,
    "": 0,
    "k": 3,
    "M": 6,
    "G": 9,
    "T": 12,
    "P": 15,
    "E": 18,
}

# ASCII digits only: ``\d`` would also accept other scripts' digits, which Go does not.
_QUANTITY = re.compile(
    r"(?P<sign>[+-]?)"
    r"(?:(?P<int>[0-9]+)(?:\.(?P<frac1>[0-9]*))?|\.(?P<frac2>[0-9]+))"
    r"(?P<suffix>Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]|[eE][+-]?[0-9]+)?"
)

_MAX_EXPONENT = 10_000
"""Decimal exponents beyond this are rejected: kube cannot represent them in int64 either,
and ``10**huge`` would stall the process on a hostile input."""


class QuantityError(ValueError):
    """A value is not a valid Kubernetes quantity; the message quotes the value."""


def parse_quantity(value: object) -> Fraction:
    """The exact value of a quantity given as a string or a JSON number.

    Strings follow the grammar in the module docstring; ints are taken as they are;
    finite floats through ``str()`` (so ``0.1`` is exactly one tenth). ``bool`` is
    rejected (it is an ``int`` subclass in Python, never a quantity in JSON).
    """
    if isinstance(value, bool):
        raise QuantityError(f"quantity must be a string or a number, not {value!r}")
    if isinstance(value, int):
        return Fraction(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise QuantityError(f"quantity {value!r} is not finite")
        return _parse_string(str(value))
    if isinstance(value, str):
        return _parse_string(value)
    raise QuantityError(f"quantity must be a string or a number, not {type(value).__name__}")


@functools.lru_cache(maxsize=1024)
def _parse_string(text: str) -> Fraction:
    # Memoized: a cluster repeats a handful of quantities ("100m", "1Gi") across every pod
    # and node, and a Fraction is immutable, so sharing one is safe. Errors are not cached.
    match = _QUANTITY.fullmatch(text)
    if match is None:
        raise QuantityError(f"quantity {text!r} does not match [+-]digits[.digits][suffix]")
    whole = match["int"] or ""
    frac = match["frac1"] or match["frac2"] or ""
    # digits of the mantissa as one integer over a power of ten: exact, no float.
    mantissa = Fraction(int(whole + frac or "0"), 10 ** len(frac))
    suffix = match["suffix"] or ""
    if suffix in _BINARY:
        amount = mantissa * _BINARY[suffix]
    elif suffix in _DECIMAL:
        amount = mantissa * Fraction(10) ** _DECIMAL[suffix]
    else:  # e/E exponent; the regex guarantees [+-]?digits after the letter
        exponent = int(suffix[1:])
        if abs(exponent) > _MAX_EXPONENT:
            raise QuantityError(f"quantity {text!r} has an exponent out of range")
        amount = mantissa * Fraction(10) ** exponent
    return -amount if match["sign"] == "-" else amount


def milli_value(q: Fraction) -> int:
    """``q`` in thousandths, rounded up (kube's ``Quantity.MilliValue``)."""
    return math.ceil(q * 1000)


def int_value(q: Fraction) -> int:
    """``q`` as an integer, rounded up (kube's ``Quantity.Value``)."""
    return math.ceil(q)
