"""A quantity's canonical text, as apimachinery's ``Quantity.String()`` writes it.

The allocator writes quantities it computed (a request rounded up to a capacity's step)
into ``consumedCapacity``; kube prints them canonically in the step's format: binary
suffixes (``Ki`` … ``Ei``) for whole multiples of 1024 when the step was binary, decimal
suffixes (``n`` … ``E``) otherwise, values below 1024 always decimal.

Neighbours: ``capacity`` (the only caller).
"""

from __future__ import annotations

import math
from fractions import Fraction

_BINARY = ((60, "Ei"), (50, "Pi"), (40, "Ti"), (30, "Gi"), (20, "Mi"), (10, "Ki"))
_DECIMAL = ((18, "E"), (15, "P"), (12, "T"), (9, "G"), (6, "M"), (3, "k"), (0, ""))
_SMALL = ((-3, "m"), (-6, "u"), (-9, "n"))


def format_quantity(value: Fraction, *, binary: bool) -> str:
    """``value`` in kube's canonical form (BinarySI when ``binary``, else DecimalSI)."""
    sign = "-" if value < 0 else ""
    magnitude = abs(value)
    if binary and magnitude.denominator == 1 and magnitude >= 1024:
        whole = magnitude.numerator
        for shift, suffix in _BINARY:
            if whole % (1 << shift) == 0:
                return f"{sign}{whole >> shift}{suffix}"
    if magnitude.denominator == 1:
        whole = magnitude.numerator
        if whole == 0:
            return "0"
        for exponent, suffix in _DECIMAL:
            if whole % 10**exponent == 0:
                return f"{sign}{whole // 10**exponent}{suffix}"
    for exponent, suffix in _SMALL:
        scaled = magnitude / Fraction(10) ** exponent
        if scaled.denominator == 1:
            return f"{sign}{scaled.numerator}{suffix}"
    # Finer than nano: kube rounds up to the next nano unit.
    return f"{sign}{math.ceil(magnitude * 10**9)}n"
