"""The CEL cases ``bench.cel_compare`` and the unit tests run: a table ported from kube
v1.37.2's DRA CEL tests (``k8s.io/dynamic-resource-allocation/cel/compile_test.go``) and the
library tests it relies on (``k8s.io/apiserver/pkg/cel/library``: semver, quantity), each
with kube's expected outcome, and the ``device`` each case evaluates.

Neighbours: ``bench.cel_compare`` (the candidates and the comparison), ``tests/unit/plugins/
test_dra_cel.py``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from scheduler.model.parse_dra_slices import resource_slice_from_raw
from scheduler.plugins.dynamic_resources.cel_device import DeviceVariable

DRIVER = "dra.example.com"
Outcome = bool | tuple[str, str]  # True/False, ("compile", text) or ("runtime", text)


@dataclass(frozen=True)
class Case:
    name: str
    expression: str
    want: Outcome
    attributes: dict[str, Any] = field(default_factory=dict)
    capacity: dict[str, str] = field(default_factory=dict)
    driver: str = DRIVER
    multi: bool | None = None


ALL_ATTRS = {
    "bool": {"bool": True},
    "int": {"int": 1},
    "string": {"string": "fish"},
    "version": {"version": "1.0.0"},
}
ALL_EXPR = " && ".join(
    (
        'device.capacity["dra.example.com"].quantity.isGreaterThan(quantity("1Ki"))',
        'device.attributes["dra.example.com"].bool',
        'device.attributes["dra.example.com"].int > 0',
        'device.attributes["dra.example.com"].string == "fish"',
        'device.attributes["dra.example.com"].version.isGreaterThan(semver("0.0.1"))',
        'device.capacity["dra.example.com"]["quantity"].isGreaterThan(quantity("1Ki"))',
        'device.attributes["dra.example.com"]["bool"]',
        'device.attributes["dra.example.com"]["int"] > 0',
        'device.attributes["dra.example.com"]["string"] == "fish"',
        'device.attributes["dra.example.com"]["version"].isGreaterThan(semver("0.0.1"))',
    )
)
NESTED = "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10]"
EXPENSIVE = (
    f"{NESTED}.all(x, {NESTED}.all(y, {NESTED}.all(z, {NESTED}.all(z2, {NESTED}.all(z3, "
    f"{NESTED}.all(z4, {NESTED}.all(z5, int('1'.find('[0-9]*')) < 100)))))))"
)
NAME = {"name": {"bool": True}}

CASES: list[Case] = [
    # compile_test.go (kube's stored-expression environment, the scheduler's)
    Case("true", "true", True),
    Case("false", "false", False),
    Case("syntax-error", "?!", ("compile", "Syntax error")),
    Case("type-error", "1", ("compile", "must evaluate to bool or the unknown type, not int")),
    Case(
        "runtime-error-lookup-identifier",
        'device.attributes["no-such-domain"].noSuchAttr.isGreaterThan(quantity("0"))',
        ("runtime", "no such key: noSuchAttr"),
    ),
    Case(
        "runtime-error-lookup-map",
        'device.attributes["no-such-domain"]["noSuchAttr"].isGreaterThan(quantity("0"))',
        ("runtime", "no such key: noSuchAttr"),
    ),
    Case("domain-check-negative", '"no-such-domain" in device.attributes', False),
    Case(
        "domain-check-positive",
        '"dra.example.com" in device.attributes',
        True,
        {"dra.example.com/something": {"bool": True}},
    ),
    Case("empty-driver-name", 'device.driver == ""', True, driver=""),
    Case("real-driver-name", 'device.driver == "dra.example.com"', True),
    Case("driver-name-qualifier", 'device.attributes["dra.example.com"].name', True, NAME),
    Case(
        "driver-name-qualifier-map-lookup",
        'device.attributes["dra.example.com"]["name"]',
        True,
        NAME,
    ),
    Case("bind", 'cel.bind(dra, device.attributes["dra.example.com"], dra.name)', True, NAME),
    Case(
        "qualified-attribute-name",
        'device.attributes["other.example.com"].name',
        True,
        {"other.example.com/name": {"bool": True}},
    ),
    Case("int", 'device.attributes["dra.example.com"].name > 0', True, {"name": {"int": 1}}),
    Case(
        "string",
        'device.attributes["dra.example.com"].name == "fish"',
        True,
        {"name": {"string": "fish"}},
    ),
    Case(
        "version",
        'device.attributes["dra.example.com"].name.isGreaterThan(semver("0.0.1"))',
        True,
        {"name": {"version": "1.0.0"}},
    ),
    Case(
        "version_v",
        'device.attributes["dra.example.com"].name.isGreaterThan(semver("v0.0.1", true)) && '
        'isSemver("v1.0.0", true)',
        True,
        {"name": {"version": "1.0.0"}},
    ),
    Case(
        "macro-exists-on-version",
        'device.attributes["dra.example.com"].name.exists(x, x.isGreaterThan(semver("0.0.1")))',
        ("runtime", "expected iterable type"),
        {"name": {"version": "1.0.0"}},
    ),
    Case(
        "quantity",
        'device.capacity["dra.example.com"].name.isGreaterThan(quantity("1Ki"))',
        True,
        capacity={"name": "1Mi"},
    ),
    Case(
        "check-positive",
        '"name" in device.capacity["dra.example.com"] && '
        'device.capacity["dra.example.com"].name.isGreaterThan(quantity("1Ki"))',
        True,
        capacity={"name": "1Mi"},
    ),
    Case(
        "check-negative",
        '!("name" in device.capacity["dra.example.com"]) || '
        'device.capacity["dra.example.com"].name.isGreaterThan(quantity("1Ki"))',
        True,
    ),
    Case("all", ALL_EXPR, True, ALL_ATTRS, {"quantity": "1Mi"}),
    Case(
        "many",
        'device.attributes["dra.example.com"].a && device.attributes["dra.example.com"].b && '
        'device.attributes["dra.example.com"].c',
        True,
        {"a": {"bool": True}, "b": {"bool": True}, "c": {"bool": True}},
    ),
    Case(
        "check_attribute_domains",
        'device.attributes.exists_one(x, x == "dra.example.com")',
        True,
        {"services": {"string": "some_example_value"}},
    ),
    Case(
        "check_attribute_ids",
        'device.attributes["dra.example.com"].exists_one(x, x == "services")',
        True,
        {"services": {"string": "some_example_value"}},
    ),
    Case(
        "split_attribute",
        'device.attributes["dra.example.com"].services.split("example").size() >= 2',
        True,
        {"services": {"string": "some_example_value"}},
    ),
    Case(
        "regexp_attribute",
        'device.attributes["dra.example.com"].services.matches("[^a]?sym")',
        True,
        {"services": {"string": "asymetric"}},
    ),
    Case(
        "check_capacity_domains",
        'device.capacity.exists_one(x, x == "dra.example.com")',
        True,
        capacity={"memory": "1Mi"},
    ),
    Case("expensive", EXPENSIVE, ("runtime", "actual cost limit exceeded")),
    Case("allow_multiple_allocations", "device.allowMultipleAllocations == true", True, multi=True),
    Case("allow_multiple_allocations_default", "device.allowMultipleAllocations == false", True),
    # semver_test.go and quantity_test.go (k8s.io/apiserver/pkg/cel/library)
    Case(
        "semver-parse-invalid",
        'semver("v1.0") == semver("1.0.0")',
        ("runtime", "No Major.Minor.Patch elements found"),
    ),
    Case("isSemver-prerelease-build", 'isSemver("1.2.3-beta.1+build.1")', True),
    Case("isSemver-empty", 'isSemver("")', False),
    Case("isSemver-v", 'isSemver("v1.0.0")', False),
    Case("isSemver-leading-zeroes", 'isSemver("01.01.01")', False),
    Case("isSemver-normalize-short", 'isSemver("1.1", true)', True),
    Case("isSemver-normalize-zeroes", 'isSemver("01.01.01", true)', True),
    Case("semver-normalize-equal", 'semver("v01.01", true) == semver("1.1.0")', True),
    Case("semver-equal", 'semver("1.2.3") == semver("1.2.3")', True),
    Case("semver-less", 'semver("1.0.0").isLessThan(semver("1.2.3"))', True),
    Case("semver-compare", 'semver("1.0.0").compareTo(semver("1.2.3")) == -1', True),
    Case(
        "semver-major-minor-patch",
        'semver("1.2.3").major() == 1 && semver("1.2.3").minor() == 2 && '
        'semver("1.2.3").patch() == 3',
        True,
    ),
    Case("semver-vs-int", 'semver("1.0.0") == 1', ("compile", "found no matching overload")),
    Case(
        "quantity-invalid-suffix",
        'quantity("10Mo") == quantity("1")',
        ("runtime", "quantities must match the regular expression"),
    ),
    Case(
        "quantity-invalid-suffix-regex",
        'quantity("10Mm") == quantity("1")',
        ("runtime", "unable to parse quantity's suffix"),
    ),
    Case("isQuantity", 'isQuantity("20Mi") && !isQuantity("20Mo")', True),
    Case(
        "quantity-equal",
        'quantity("200M") == quantity("0.2G") && quantity("0.2G") == quantity("200M")',
        True,
    ),
    Case("quantity-less", 'quantity("50M").isLessThan(quantity("50Mi"))', True),
    Case("quantity-add", 'quantity("50k").add(quantity("20")) == quantity("50.02k")', True),
    Case("quantity-sub-int", 'quantity("50k").sub(20) == quantity("49980")', True),
    Case(
        "quantity-as-integer",
        'quantity("50k").add(20).sub(quantity("100k")).asInteger() == -49980',
        True,
    ),
    Case(
        "quantity-as-integer-overflow",
        'quantity("9999999999999999999999999999999999999G").asInteger() == 0',
        ("runtime", "cannot convert value to integer"),
    ),
    Case(
        "quantity-is-integer",
        '!quantity("9999999999999999999999999999999999999G").isInteger() && '
        'quantity("50").isInteger()',
        True,
    ),
    Case("quantity-approximate-float", 'quantity("50.703k").asApproximateFloat() == 50703.0', True),
    Case(
        "quantity-huge-compare",
        '[quantity("9999999999999999999999999999999999999")].all(x, '
        'x.add(quantity("1")).compareTo(x.add(quantity("2"))) == -1)',
        True,
    ),
]


def device_raw(case: Case) -> dict[str, Any]:
    device: dict[str, Any] = {"name": "d"}
    if case.attributes:
        device["attributes"] = case.attributes
    if case.capacity:
        device["capacity"] = {k: {"value": v} for k, v in case.capacity.items()}
    if case.multi is not None:
        device["allowMultipleAllocations"] = case.multi
    return device


def device_variable(case: Case) -> DeviceVariable:
    raw = {
        "metadata": {"name": "s"},
        "spec": {
            "driver": case.driver or "x",
            "pool": {"name": "p", "generation": 1, "resourceSliceCount": 1},
            "nodeName": "n",
            "devices": [device_raw(case)],
        },
    }
    return DeviceVariable(case.driver, resource_slice_from_raw(raw).devices[0])


def device_map(case: Case) -> dict[str, Any]:
    """The ``device`` value as plain data (tagged lists for Semver/Quantity)."""
    variable = device_variable(case)
    return variable._value  # the same encoding the allocator feeds cel-cpp
