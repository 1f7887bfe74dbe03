"""Compare CEL libraries for DRA selectors: correctness against kube's tests, speed per device.

``python -m bench.cel_compare [--devices N] [--repeats R]`` (candidates: ``pip install
cel-expr-python cel-python common-expression-language``; a missing one is reported and
skipped). docs/dra.md ("Why cel-expr-python") quotes its output.

Correctness: a table ported from kube v1.37.2's DRA CEL tests
(``k8s.io/dynamic-resource-allocation/cel/compile_test.go``) and the library tests it
relies on (``k8s.io/apiserver/pkg/cel/library``: semver, quantity), each with kube's
expected outcome: a boolean, a compile error or a runtime error (a substring of kube's
text). Every candidate gets the same Kubernetes functions (``cel_library.
python_functions``) through its own extension mechanism; cel-expr-python runs through
``scheduler.plugins.dynamic_resources.cel_env``, the code the allocator uses.

Speed: one realistic class+request selector compiled once, evaluated on N devices, each
device's input built once beforehand (as the allocator keeps it), median of R runs.
"""

from __future__ import annotations

import argparse
import importlib.util
import signal
import statistics
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from scheduler.model.parse_dra_slices import resource_slice_from_raw
from scheduler.plugins.dynamic_resources import cel_env, cel_library
from scheduler.plugins.dynamic_resources.cel_device import DeviceVariable

if TYPE_CHECKING:
    from collections.abc import Callable

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


class Candidate:
    """One CEL library behind a compile/evaluate interface."""

    name = ""

    def compile(self, expression: str) -> object:
        """A program, or raises CompileFailed."""
        raise NotImplementedError

    def evaluate(self, program: object, device: object) -> bool:
        """True/False, or raises RuntimeFailed."""
        raise NotImplementedError

    def prepare(self, case: Case) -> object:
        """The per-device input, built once."""
        raise NotImplementedError


class CompileFailed(Exception):
    pass


class RuntimeFailed(Exception):
    pass


class CelExprPython(Candidate):
    name = "cel-expr-python 0.1.3 (cel-cpp), via cel_env"

    def compile(self, expression: str) -> object:
        result = cel_env.compile_selector(expression)
        if isinstance(result, cel_env.CompileError):
            raise CompileFailed(result.detail)
        return result

    def prepare(self, case: Case) -> object:
        return device_variable(case)

    def evaluate(self, program: object, device: object) -> bool:
        assert isinstance(program, cel_env.CompiledSelector)
        assert isinstance(device, DeviceVariable)
        try:
            return program.evaluate(device)
        except cel_env.CelRuntimeError as exc:
            raise RuntimeFailed(str(exc)) from None


class CommonExpressionLanguage(Candidate):
    name = "common-expression-language 0.10.0 (Rust cel crate)"

    def __init__(self) -> None:
        import cel  # optional: only when comparing

        self._cel: Any = cel
        self._functions = cel_library.python_functions()

    def compile(self, expression: str) -> object:
        try:
            return self._cel.compile(expression)
        except Exception as exc:  # any failure is the library's compile error
            raise CompileFailed(str(exc)) from None

    def prepare(self, case: Case) -> object:
        return self._cel.Context(variables={"device": device_map(case)}, functions=self._functions)

    def evaluate(self, program: object, device: object) -> bool:
        try:
            value = program.execute(device)  # type: ignore[attr-defined]
        except Exception as exc:
            raise RuntimeFailed(str(exc)) from None
        if not isinstance(value, bool):
            raise RuntimeFailed(f"result of type {type(value).__name__}")
        return value


class CelPython(Candidate):
    name = "cel-python 0.5.0 (pure Python)"

    def __init__(self) -> None:
        import celpy  # optional: only when comparing

        self._celpy: Any = celpy
        self._env = celpy.Environment()
        self._functions: Any = {
            name: self._wrap(impl) for name, impl in cel_library.python_functions().items()
        }

    def _wrap(self, impl: Callable[..., object]) -> Callable[..., object]:
        celpy = self._celpy

        def call(*args: object) -> object:
            plain = [celpy.adapter.CELJSONEncoder.to_python(a) for a in args]
            return celpy.json_to_cel(impl(*plain))

        return call

    def compile(self, expression: str) -> object:
        try:
            ast = self._env.compile(expression)
            return self._env.program(ast, functions=self._functions)
        except Exception as exc:
            raise CompileFailed(str(exc)) from None

    def prepare(self, case: Case) -> object:
        return {"device": self._celpy.json_to_cel(device_map(case))}

    def evaluate(self, program: object, device: object) -> bool:
        try:
            value = program.evaluate(device)  # type: ignore[attr-defined]
        except Exception as exc:
            raise RuntimeFailed(str(exc)[:200]) from None
        if isinstance(value, Exception):
            raise RuntimeFailed(str(value)[:200])
        if not isinstance(value, bool | int) or value not in (True, False):
            raise RuntimeFailed(f"result of type {type(value).__name__}")
        return bool(value)


CASE_TIMEOUT_SECONDS = 20
"""A library without a cost limit may run kube's "expensive" case (10^7 iterations) for
minutes: past this, the case counts as a disagreement ("no limit")."""


class _Timeout(Exception):
    pass


def _alarm(signum: int, frame: object) -> None:
    raise _Timeout


def outcome(candidate: Candidate, case: Case) -> Outcome:
    previous = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(CASE_TIMEOUT_SECONDS)
    try:
        program = candidate.compile(case.expression)
        return candidate.evaluate(program, candidate.prepare(case))
    except CompileFailed as exc:
        return ("compile", str(exc))
    except RuntimeFailed as exc:
        return ("runtime", str(exc))
    except _Timeout:
        return ("timeout", f"still running after {CASE_TIMEOUT_SECONDS} s: no cost limit")
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def agrees(got: Outcome, want: Outcome) -> bool:
    if isinstance(want, bool):
        return got is want
    return isinstance(got, tuple) and got[0] == want[0] and want[1] in got[1]


SPEED_EXPRESSION = (
    'device.driver == "dra.example.com" && '
    'device.attributes["dra.example.com"].model == "a100" && '
    'device.attributes["dra.example.com"].driverVersion.isGreaterThan(semver("1.0.0")) && '
    'device.capacity["dra.example.com"].memory.compareTo(quantity("40Gi")) >= 0'
)


def speed_cases(n: int) -> list[Case]:
    return [
        Case(
            f"d{i}",
            SPEED_EXPRESSION,
            True,
            {
                "model": {"string": "a100" if i % 4 else "h100"},
                "driverVersion": {"version": f"1.{i % 7}.0"},
                "numa": {"int": i % 2},
            },
            {"memory": "80Gi" if i % 3 else "40Gi"},
        )
        for i in range(n)
    ]


def measure(candidate: Candidate, devices: int, repeats: int) -> tuple[float, float]:
    """(microseconds per evaluation, microseconds to build one device's input)."""
    cases = speed_cases(devices)
    program = candidate.compile(SPEED_EXPRESSION)
    start = time.perf_counter()
    inputs = [candidate.prepare(c) for c in cases]
    build = (time.perf_counter() - start) / devices * 1e6
    runs = []
    for _ in range(repeats):
        start = time.perf_counter()
        for item in inputs:
            candidate.evaluate(program, item)
        runs.append((time.perf_counter() - start) / devices * 1e6)
    return statistics.median(runs), build


def candidates() -> list[Candidate]:
    out: list[Candidate] = [CelExprPython()]
    for module, factory in (("cel", CommonExpressionLanguage), ("celpy", CelPython)):
        if importlib.util.find_spec(module) is None:
            print(f"skipped: {factory.name} (module {module!r} not installed)")
            continue
        out.append(factory())
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--devices", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--verbose", action="store_true", help="print every disagreement")
    args = parser.parse_args(argv)
    for candidate in candidates():
        failed = [c for c in CASES if not agrees(outcome(candidate, c), c.want)]
        print(f"== {candidate.name}")
        print(f"   kube CEL cases: {len(CASES) - len(failed)}/{len(CASES)} agree")
        for c in failed if args.verbose else ():
            print(f"   - {c.name}: want {c.want!r}, got {outcome(candidate, c)!r}"[:300])
        if not args.verbose and failed:
            print("   disagree: " + ", ".join(c.name for c in failed))
        try:
            per_eval, build = measure(candidate, args.devices, args.repeats)
        except (CompileFailed, RuntimeFailed) as exc:
            print(f"   speed: cannot run the selector: {str(exc)[:160]}")
            continue
        print(
            f"   speed: {per_eval:.2f} us per device evaluation (median of {args.repeats} x "
            f"{args.devices} devices), {build:.1f} us to build one device's input"
        )


if __name__ == "__main__":
    main()
