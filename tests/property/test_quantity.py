"""Quantities: generated valid strings against an independent exact computation; junk rejected."""

from __future__ import annotations

import math
from decimal import Decimal
from fractions import Fraction

from hypothesis import given
from hypothesis import strategies as st

from scheduler.model.quantity import QuantityError, int_value, milli_value, parse_quantity

# Independent tables: powers written out differently from the module under test.
_BINARY = {"Ki": 1, "Mi": 2, "Gi": 3, "Ti": 4, "Pi": 5, "Ei": 6}  # powers of 1024
_DECIMAL = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}

digits = st.text(alphabet="0123456789", min_size=1, max_size=12)


@st.composite
def quantities(draw: st.DrawFn) -> tuple[str, Fraction]:
    sign = draw(st.sampled_from(["", "+", "-"]))
    whole = draw(st.one_of(digits, st.just("")))
    frac = draw(st.one_of(st.none(), st.text(alphabet="0123456789", max_size=9)))
    if not whole and not frac:
        whole = "0"
    number = whole if frac is None else f"{whole}.{frac}"
    kind = draw(st.sampled_from(["binary", "decimal", "exponent"]))
    if kind == "binary":
        suffix = draw(st.sampled_from(sorted(_BINARY)))
        factor = Fraction(1024) ** _BINARY[suffix]
    elif kind == "decimal":
        suffix = draw(st.sampled_from(sorted(_DECIMAL)))
        factor = Fraction(Decimal(1).scaleb(_DECIMAL[suffix]))
    else:
        exp = draw(st.integers(-30, 30))
        letter = draw(st.sampled_from("eE"))
        exp_sign = "+" if exp >= 0 and draw(st.booleans()) else ""
        suffix = f"{letter}{exp_sign}{exp}"
        factor = Fraction(Decimal(1).scaleb(exp))
    # Decimal parses the mantissa exactly; Fraction(Decimal) is exact too.
    mantissa = Fraction(Decimal(number if number[0] != "." else "0" + number))
    value = mantissa * factor
    return f"{sign}{number}{suffix}", -value if sign == "-" else value


@given(quantities())
def test_valid_quantities_parse_exactly(case: tuple[str, Fraction]) -> None:
    """A generated valid quantity parses to the independently computed exact value."""
    text, expected = case
    assert parse_quantity(text) == expected


@given(quantities())
def test_rounding_is_ceiling(case: tuple[str, Fraction]) -> None:
    """milli_value/int_value are the smallest integers not below the exact value."""
    text, expected = case
    q = parse_quantity(text)
    milli = milli_value(q)
    assert milli - 1 < expected * 1000 <= milli
    assert int_value(q) == math.ceil(expected)


@given(st.integers(min_value=-(10**30), max_value=10**30))
def test_integers_round_trip_as_strings(n: int) -> None:
    """An integer and its decimal string are the same quantity."""
    assert parse_quantity(n) == parse_quantity(str(n)) == n


@given(st.floats(allow_nan=False, allow_infinity=False))
def test_finite_floats_read_as_their_repr(x: float) -> None:
    """A finite float is the decimal its repr shows, not its binary value."""
    assert parse_quantity(x) == Fraction(Decimal(repr(x)))


_GRAMMAR_CHARS = set("0123456789+-.eEinumkMGTP")


@given(st.text(min_size=1, max_size=12))
def test_strings_with_foreign_characters_are_rejected(text: str) -> None:
    """Any character outside the grammar's alphabet makes the string invalid."""
    if set(text) <= _GRAMMAR_CHARS:
        return
    try:
        parse_quantity(text)
    except QuantityError:
        return
    raise AssertionError(f"{text!r} was accepted")


@given(quantities(), st.data())
def test_whitespace_anywhere_is_rejected(case: tuple[str, Fraction], data: st.DataObject) -> None:
    """Inserting a space into a valid quantity makes it invalid."""
    text, _ = case
    at = data.draw(st.integers(0, len(text)))
    try:
        parse_quantity(text[:at] + " " + text[at:])
    except QuantityError:
        return
    raise AssertionError("accepted a space")
