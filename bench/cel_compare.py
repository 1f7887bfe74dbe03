"""Compare CEL libraries for DRA selectors: correctness against kube's tests, speed per device.

``python -m bench.cel_compare [--devices N] [--repeats R]`` (candidates: ``pip install
cel-expr-python cel-python common-expression-language``; a missing one is reported and
skipped). docs/dra.md ("Why cel-expr-python") quotes its output.

Correctness: the table of ``bench.cel_cases`` (ported from kube v1.37.2's DRA CEL tests),
each case with kube's expected outcome: a boolean, a compile error or a runtime error (a
substring of kube's text). Every candidate gets the same Kubernetes functions (``cel_library.
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
from typing import TYPE_CHECKING, Any

from bench.cel_cases import CASES, Case, Outcome, device_map, device_variable
from scheduler.plugins.dynamic_resources import cel_env, cel_library
from scheduler.plugins.dynamic_resources.cel_device import DeviceVariable

if TYPE_CHECKING:
    from collections.abc import Callable


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
