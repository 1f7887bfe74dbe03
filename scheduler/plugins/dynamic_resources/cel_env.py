"""Compile DRA CEL selectors once, evaluate them per device: kube's ``cel.Cache`` and
``CompilationResult.DeviceMatches`` on cel-expr-python (docs/dra.md, "Why cel-expr-python").

Two environments share one configuration (the extensions kube's stored-expression
environment has: strings v2, sets, lists (cel-cpp's latest, 2: kube's v3 adds
``first``/``last``), bindings, optional types, two-variable
comprehensions): the *checker* declares Kubernetes' Semver and Quantity as opaque types,
so compile errors are kube's (``undeclared reference``, ``found no matching overload``,
``Syntax error``, in cel-go's ``ERROR: <input>:l:c: … | source | ^`` layout); the
*runtime* evaluates the checked expression with the same functions working on tagged lists
(``cel_library``). A selector must have type bool or dyn, as in kube.

Known differences from kube (docs/dra.md lists them): ``device`` is declared as
``map(string, dyn)``, so ``device.nosuchfield`` is a runtime ``no such key`` rather than a
compile error and ``device.driver`` has type dyn; cel-cpp's checker refuses mixed int/double
literal comparisons (``1 < 1.5``) that kube's ``CrossTypeNumericComparisons`` accepts (the
runtime compares attribute values across types as kube does); kube's runtime cost limit
(1,000,000) is not enforced: cel-expr-python exposes no cost tracker; cel-cpp's own
comprehension iteration budget stops runaway expressions instead, reported with kube's
"actual cost limit exceeded" text.

Neighbours: ``cel_library`` (functions), ``cel_device`` (the ``device`` variable),
``allocator`` (the only caller).
"""

from __future__ import annotations

import re
from collections import OrderedDict
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

import cel_expr_python.cel as cel

from scheduler.plugins.dynamic_resources import cel_library
from scheduler.plugins.dynamic_resources.cel_device import DeviceVariable

if TYPE_CHECKING:
    from scheduler.model.dra_devices import Device

CEL_SELECTOR_MAX_COST: Final = 1_000_000
"""kube's ``resourceapi.CELSelectorExpressionMaxCost`` (not enforced, see the docstring)."""

_CONFIG: Final = """
extensions:
  - name: "strings"
    version: 2
  - name: "sets"
  - name: "lists"
    version: latest
  - name: "bindings"
  - name: "optional"
    version: latest
  - name: "two-var-comprehensions"
"""

_STATUS_PREFIX = re.compile(r"^[A-Z_]+: ")
_STATUS_SUFFIX = re.compile(r" \[[A-Z_]+\]$")
_MISSING_KEY = re.compile(r'^Key not found in map : "(.*)"$', re.DOTALL)
_MAX_DOMAIN_RETRIES = 8


class CelRuntimeError(Exception):
    """Evaluating a selector on a device failed; the message is kube's text."""


@dataclass(frozen=True, slots=True)
class CompileError:
    """Why a selector does not compile, as kube's ``CompilationResult.Error`` says it."""

    detail: str


def _strip_status(text: str) -> str:
    return _STATUS_SUFFIX.sub("", _STATUS_PREFIX.sub("", text.strip()))


def _type_name(name: str) -> str:
    """cel-cpp's type names in cel-go's spelling (``INT`` → ``int``, ``LIST<INT>`` → ``list``)."""
    head = name.split("<", 1)[0]
    return head.lower() if head.isupper() else head


class _Environments:
    """The checker and the runtime environment, built once (building one takes ~ms)."""

    def __init__(self) -> None:
        config = cel.NewEnvConfigFromYaml(_CONFIG)
        variables = {"device": cel.Type.Map(cel.Type.STRING, cel.Type.DYN)}
        self.checker = cel.NewEnv(
            config=config, variables=variables, functions=cel_library.checker_functions()
        )
        self.runtime = cel.NewEnv(
            config=config, variables=variables, functions=cel_library.runtime_functions()
        )
        self.checker.compile("true")  # cel-cpp reports a bad declaration only now


_envs: _Environments | None = None


def environments() -> _Environments:
    global _envs  # built on first use, then shared: it is immutable
    if _envs is None:
        _envs = _Environments()
    return _envs


class CompiledSelector:
    """One compiled selector: :meth:`matches` evaluates it on a device."""

    __slots__ = ("_program", "_runtime", "expression")

    def __init__(self, expression: str, program: cel.Expression, runtime: cel.Env) -> None:
        self.expression = expression
        self._program = program
        self._runtime = runtime

    def matches(self, device: DeviceVariable) -> bool:
        """Whether the device matches; :class:`CelRuntimeError` with kube's text if not bool.

        Remembered per device: the same selector on the same device record is evaluated once.
        """
        known = device.results.get(self.expression)
        if known is None:
            try:
                known = self.evaluate(device)
            except CelRuntimeError as exc:
                known = str(exc)
            device.results[self.expression] = known
        if isinstance(known, str):
            raise CelRuntimeError(known)
        return known

    def evaluate(self, device: DeviceVariable) -> bool:
        """One evaluation, not remembered (:meth:`matches` remembers)."""
        if device.error is not None:
            raise CelRuntimeError(device.error)
        extra: tuple[str, ...] = ()
        for _ in range(_MAX_DOMAIN_RETRIES):
            try:
                value = self._program.eval(device.activation(self._runtime, extra))
            except RuntimeError as exc:
                # cel-cpp stops runaway comprehensions with an iteration budget; kube stops
                # them with its cost limit. Report kube's text (the limits differ).
                if "Iteration budget exceeded" in str(exc):
                    raise CelRuntimeError(
                        "operation cancelled: actual cost limit exceeded"
                    ) from None
                raise CelRuntimeError(_strip_status(str(exc))) from None
            kind = value.type().name()
            if kind == "BOOL":
                return bool(value.value())
            if kind != "ERROR":
                name = _type_name(kind)
                raise CelRuntimeError(
                    f"CEL result of type {name} could not be converted to bool: "
                    f"type conversion error from '{name}' to 'bool'"
                )
            message = _strip_status(str(value.value()))
            missing = _MISSING_KEY.match(message)
            if missing is None:
                raise CelRuntimeError(message)
            key = missing.group(1)
            if key in extra or device.has_domain(key):
                raise CelRuntimeError(f"no such key: {key}")
            # Perhaps a domain the device does not have: kube reads it as an empty map.
            extra = (*extra, key)
        raise CelRuntimeError(f"no such key: {extra[-1]}")


def compile_selector(expression: str) -> CompiledSelector | CompileError:
    """kube's CompileCELExpression for a selector (cost estimation off, as in the cache)."""
    envs = environments()  # a failure here is a bug, not the selector's: let it raise
    try:
        checked = envs.checker.compile(expression)
    except RuntimeError as exc:
        return CompileError("compilation failed: " + _strip_status(str(exc)))
    kind = checked.return_type().name()
    if kind not in ("BOOL", "DYN"):
        return CompileError(f"must evaluate to bool or the unknown type, not {_type_name(kind)}")
    program = envs.runtime.deserialize(checked.serialize())
    return CompiledSelector(expression, program, envs.runtime)


class SelectorCache:
    """kube's ``cel.Cache``: successful compilations by expression, least recently used out."""

    __slots__ = ("_entries", "_max_entries")

    def __init__(self, max_entries: int = 10_000) -> None:
        self._entries: OrderedDict[str, CompiledSelector] = OrderedDict()
        self._max_entries = max_entries

    def get_or_compile(self, expression: str) -> CompiledSelector | CompileError:
        found = self._entries.get(expression)
        if found is not None:
            self._entries.move_to_end(expression)
            return found
        result = compile_selector(expression)
        if isinstance(result, CompiledSelector):  # errors are not cached (kube)
            self._entries[expression] = result
            if len(self._entries) > self._max_entries:
                self._entries.popitem(last=False)
        return result


class DeviceVariables:
    """The ``device`` variable of each device, built on first use and kept while the device
    record lives in the cluster state (records are immutable; an updated slice brings new
    ones). Keyed by identity: the record is held here so that its id stays its own."""

    __slots__ = ("_entries", "_max_entries")

    def __init__(self, max_entries: int = 200_000) -> None:
        self._entries: OrderedDict[int, tuple[Device, DeviceVariable]] = OrderedDict()
        self._max_entries = max_entries

    def get(self, driver: str, device: Device) -> DeviceVariable:
        found = self._entries.get(id(device))
        if found is not None and found[0] is device:
            return found[1]
        variable = DeviceVariable(driver, device)
        self._entries[id(device)] = (device, variable)
        if len(self._entries) > self._max_entries:
            self._entries.popitem(last=False)
        return variable
