"""Kubernetes quantity parsing: every suffix, exponents, fractions, rounding, junk."""

from __future__ import annotations

from fractions import Fraction

import pytest

from scheduler.model.quantity import QuantityError, int_value, milli_value, parse_quantity


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("0", Fraction(0), id="zero"),
        pytest.param("1", Fraction(1), id="plain-integer"),
        pytest.param("+7", Fraction(7), id="explicit-plus"),
        pytest.param("-7", Fraction(-7), id="negative-parses"),
        pytest.param("1.5", Fraction(3, 2), id="decimal-fraction"),
        pytest.param("1.", Fraction(1), id="trailing-dot-allowed"),
        pytest.param(".5", Fraction(1, 2), id="leading-dot-allowed"),
        pytest.param("007", Fraction(7), id="leading-zeros"),
        pytest.param("1n", Fraction(1, 10**9), id="nano"),
        pytest.param("1u", Fraction(1, 10**6), id="micro"),
        pytest.param("100m", Fraction(1, 10), id="milli"),
        pytest.param("2k", Fraction(2000), id="kilo-lowercase"),
        pytest.param("3M", Fraction(3 * 10**6), id="mega"),
        pytest.param("1G", Fraction(10**9), id="giga"),
        pytest.param("1T", Fraction(10**12), id="tera"),
        pytest.param("1P", Fraction(10**15), id="peta"),
        pytest.param("1E", Fraction(10**18), id="exa-is-a-suffix-not-an-exponent"),
        pytest.param("1Ki", Fraction(1024), id="kibi"),
        pytest.param("1Mi", Fraction(2**20), id="mebi"),
        pytest.param("1Gi", Fraction(2**30), id="gibi"),
        pytest.param("1Ti", Fraction(2**40), id="tebi"),
        pytest.param("1Pi", Fraction(2**50), id="pebi"),
        pytest.param("1Ei", Fraction(2**60), id="exbi"),
        pytest.param("1.5Gi", Fraction(3 * 2**29), id="fractional-binary"),
        pytest.param("1e3", Fraction(1000), id="exponent"),
        pytest.param("1E3", Fraction(1000), id="exponent-uppercase"),
        pytest.param("1e+3", Fraction(1000), id="exponent-with-plus"),
        pytest.param("5e-1", Fraction(1, 2), id="negative-exponent"),
        pytest.param("2.5e2", Fraction(250), id="fraction-with-exponent"),
        pytest.param("-1.5Ki", Fraction(-1536), id="negative-binary"),
        pytest.param(
            "123456789012345678901234567890", Fraction(123456789012345678901234567890), id="huge"
        ),
    ],
)
def test_parse_valid(text: str, expected: Fraction) -> None:
    """Every grammar form parses to its exact value."""
    assert parse_quantity(text) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        pytest.param(3, Fraction(3), id="json-int"),
        pytest.param(-2, Fraction(-2), id="json-negative-int"),
        pytest.param(10**30, Fraction(10**30), id="big-int"),
        pytest.param(0.1, Fraction(1, 10), id="float-via-str-is-exact-decimal"),
        pytest.param(1e20, Fraction(10**20), id="float-with-exponent"),
        pytest.param(2.5, Fraction(5, 2), id="float-half"),
    ],
)
def test_parse_numbers(value: object, expected: Fraction) -> None:
    """JSON numbers are accepted; floats read as their shortest decimal form."""
    assert parse_quantity(value) == expected


@pytest.mark.parametrize(
    "value",
    [
        pytest.param("", id="empty"),
        pytest.param(" 1", id="leading-space"),
        pytest.param("1 ", id="trailing-space"),
        pytest.param("1\n", id="trailing-newline"),
        pytest.param("NaN", id="nan"),
        pytest.param("Infinity", id="infinity"),
        pytest.param("1_000", id="underscore"),
        pytest.param("1K", id="uppercase-K-is-not-a-suffix"),
        pytest.param("1k1", id="digits-after-suffix"),
        pytest.param("1m3", id="milli-followed-by-digits"),
        pytest.param("--1", id="double-sign"),
        pytest.param("+-1", id="mixed-sign"),
        pytest.param("1e", id="bare-e"),
        pytest.param("1e+", id="exponent-without-digits"),
        pytest.param("1e1.5", id="fractional-exponent"),
        pytest.param("0x10", id="hex"),
        pytest.param("1.2.3", id="two-dots"),
        pytest.param(".", id="lone-dot"),
        pytest.param("-", id="lone-sign"),
        pytest.param("Ki", id="suffix-without-number"),
        pytest.param("1KiB", id="bytes-unit"),
        pytest.param("1ki", id="lowercase-binary"),
        pytest.param("١", id="non-ascii-digit"),
        pytest.param("1e99999", id="exponent-out-of-range"),
        pytest.param(True, id="bool"),
        pytest.param(None, id="null"),
        pytest.param([1], id="list"),
        pytest.param(float("nan"), id="float-nan"),
        pytest.param(float("inf"), id="float-inf"),
    ],
)
def test_parse_rejects_junk(value: object) -> None:
    """Junk is a QuantityError (a ValueError) that quotes the value."""
    with pytest.raises(QuantityError) as info:
        parse_quantity(value)
    assert isinstance(info.value, ValueError)
    if isinstance(value, str) and value:
        assert repr(value) in str(info.value)


@pytest.mark.parametrize(
    ("text", "milli", "whole"),
    [
        pytest.param("1", 1000, 1, id="one"),
        pytest.param("100m", 100, 1, id="milli-exact-value-rounds-up"),
        pytest.param("1n", 1, 1, id="nano-rounds-up-to-one-milli"),
        pytest.param("1500u", 2, 1, id="micro-rounds-up"),
        pytest.param("0.0001", 1, 1, id="tiny-rounds-up"),
        pytest.param("2.0001", 2001, 3, id="ceil-not-round"),
        pytest.param("0", 0, 0, id="zero-stays-zero"),
        pytest.param("-1500u", -1, 0, id="negative-ceil-toward-plus-infinity"),
        pytest.param("1Ki", 1024000, 1024, id="binary"),
    ],
)
def test_rounding(text: str, milli: int, whole: int) -> None:
    """milli_value and int_value round up, as kube's MilliValue/Value."""
    q = parse_quantity(text)
    assert milli_value(q) == milli
    assert int_value(q) == whole
