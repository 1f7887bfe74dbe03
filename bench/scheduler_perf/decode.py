"""A workload template's ops decoded, with the workload's params put in, as kube does.

kube decodes each op strictly by its ``opcode`` (``op.UnmarshalJSON`` in scheduler_perf.go:
unknown fields are an error), then ``patchParams`` replaces every ``...Param`` field by the
workload's value (``countParam: $initNodes`` → ``count: 500``; a count is the float param
truncated; ``countMultiplierParam`` multiplies it), resolves ``templateParams`` whose
values are ``$name`` or ``$name|default``, and ``unrollWorkloadTemplate`` expands
``createPodSets`` into one ``createPods`` per namespace (the op indexes that name default
namespaces and node prefixes are those of the unrolled list). A param no op used is an
error, as at the end of kube's ``runWorkload``.

Neighbours: :mod:`bench.scheduler_perf.ops` (the records), :mod:`bench.scheduler_perf.suite`
(the files).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

import yaml

from bench.scheduler_perf.ops import (
    AllocResourceClaims,
    Barrier,
    Churn,
    CollectingProfile,
    CreateAny,
    CreateNamespaces,
    CreateNodes,
    CreatePodGroups,
    CreatePods,
    CreateResourceClaims,
    DeletePods,
    NodeAllocatable,
    Op,
    OpError,
    Sleep,
    StartCollectingMetrics,
    StopCollectingMetrics,
    TemplateParams,
    UpdateAny,
)

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence
    from pathlib import Path

    from bench.scheduler_perf.suite import ParamValue, Selected


# -- params ---------------------------------------------------------------------------------


@dataclass
class Params:
    """A workload's params and which of them ops used (kube's ``params.isUsed``)."""

    values: Mapping[str, ParamValue]
    used: set[str] = field(default_factory=set)

    def number(self, ref: str) -> int:
        """``$name`` → the param as kube's ``params.get``: a number, truncated to int."""
        value = self.raw(ref)
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise OpError(f"parameter {ref[1:]} has the wrong type {type(value).__name__}")
        return int(value)

    def string(self, ref: str) -> str:
        value = self.raw(ref)
        if not isinstance(value, str):
            raise OpError(f"parameter {ref[1:]} has the wrong type {type(value).__name__}")
        return value

    def boolean(self, ref: str) -> bool:
        value = self.raw(ref)
        if not isinstance(value, bool):
            raise OpError(f"parameter {ref[1:]} has the wrong type {type(value).__name__}")
        return value

    def raw(self, ref: str) -> ParamValue:
        if not ref.startswith("$"):
            raise OpError(f"{ref!r}: a parameter reference starts with $")
        key = ref[1:]
        self.used.add(key)
        if key not in self.values:
            raise OpError(f"parameter {key} is undefined")
        return self.values[key]

    def template_params(self, raw: object) -> TemplateParams:
        """kube's ``resolveTemplateParams``: ``$name`` → the param, ``$name|default`` → the
        default (read as YAML) when the workload has no such param."""
        if raw is None:
            return {}
        if not isinstance(raw, dict):
            raise OpError("templateParams must be a map")
        resolved: TemplateParams = {}
        for key, value in raw.items():
            if not (isinstance(value, str) and value.startswith("$")):
                resolved[str(key)] = value
                continue
            name, sep, default = value[1:].partition("|")
            if name in self.values:
                self.used.add(name)
                resolved[str(key)] = self.values[name]
            elif sep and name:
                resolved[str(key)] = yaml.safe_load(default) if default else None
            else:
                raise OpError(f'parameter "{name}" not found')
        return resolved

    def unused(self) -> list[str]:
        return sorted(set(self.values) - self.used)


# -- decoding -------------------------------------------------------------------------------

_FIELDS: Mapping[str, frozenset[str]] = {
    "createNodes": frozenset(
        {
            "count",
            "countParam",
            "nodeTemplatePath",
            "nodeAllocatableStrategy",
            "labelNodePrepareStrategy",
            "uniqueNodeLabelStrategy",
            "templateParams",
        }
    ),
    "createNamespaces": frozenset({"prefix", "count", "countParam", "namespaceTemplatePath"}),
    "createPods": frozenset(
        {
            "count",
            "countParam",
            "countMultiplierParam",
            "steadyState",
            "steadyStateParam",
            "duration",
            "durationParam",
            "collectMetrics",
            "namespace",
            "podTemplatePath",
            "skipWaitToCompletion",
            "persistentVolumeTemplatePath",
            "persistentVolumeClaimTemplatePath",
            "templateParams",
            "signatureBatchSize",
            "signatureBatchSizeParam",
        }
    ),
    "createPodSets": frozenset({"count", "countParam", "namespacePrefix", "createPodsOp"}),
    "createAny": frozenset({"namespace", "templatePath", "count", "countParam", "templateParams"}),
    "updateAny": frozenset(
        {"namespace", "templatePath", "count", "countParam", "updatePerSecond", "subresources"}
    ),
    "createPodGroups": frozenset(
        {"namespace", "templatePath", "templateParams", "count", "countParam"}
    ),
    "createResourceClaims": frozenset({"count", "countParam", "namespace", "templatePath"}),
    "allocResourceClaims": frozenset({"namespace"}),
    "barrier": frozenset({"namespaces", "labelSelector", "stageRequirement"}),
    "churn": frozenset({"mode", "number", "intervalMilliseconds", "namespace", "templatePaths"}),
    "deletePods": frozenset(
        {"namespace", "labelSelector", "skipWaitToCompletion", "deletePodsPerSecond"}
    ),
    "sleep": frozenset({"duration", "durationParam"}),
    "startCollectingMetrics": frozenset({"name", "namespaces", "labelSelector"}),
    "stopCollectingMetrics": frozenset(),
    "startCollectingProfile": frozenset({"type", "filePath"}),
    "stopCollectingProfile": frozenset({"type"}),
}
OPCODES = frozenset(_FIELDS)

_DURATION = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h)")
_UNIT_SECONDS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}


def go_duration(text: str) -> float:
    """Go's ``time.ParseDuration`` in seconds (``10s``, ``1m30s``, ``500ms``, ``0``)."""
    if text in ("0", "+0", "-0"):
        return 0.0
    sign = -1.0 if text.startswith("-") else 1.0
    body = text.lstrip("+-")
    pos, total = 0, 0.0
    for match in _DURATION.finditer(body):
        if match.start() != pos:
            break
        total += float(match.group(1)) * _UNIT_SECONDS[match.group(2)]
        pos = match.end()
    if pos != len(body) or not body:
        raise OpError(f"time: invalid duration {text!r}")
    return sign * total


def resolve(selected: Selected) -> tuple[list[Op], Params]:
    """The workload's ops in run order (createPodSets unrolled), every param put in.
    Raises :class:`OpError` with the op's index for anything kube would refuse."""
    params = Params(selected.params)
    ops: list[Op] = []
    case = selected.case
    for index, raw in enumerate(case.workload_template):
        try:
            ops.extend(_decode(raw, params, case.directory, case.default_pod_template))
        except OpError as exc:
            raise OpError(f"op {index} ({raw.get('opcode')}): {exc}") from None
    return ops, params


def opcodes(raw_ops: Sequence[Mapping[str, object]]) -> set[str]:
    """The opcodes a workload template uses (createPodSets counts its inner op too)."""
    found: set[str] = set()
    for raw in raw_ops:
        found.add(str(raw.get("opcode")))
        inner = raw.get("createPodsOp")
        if isinstance(inner, dict):
            found.add(str(inner.get("opcode")))
    return found


def _decode(
    raw: Mapping[str, object], params: Params, directory: Path, default_pod: Path | None
) -> list[Op]:
    opcode = str(raw.get("opcode"))
    if opcode not in _FIELDS:
        raise OpError(f"unknown opcode {opcode!r}")
    unknown = set(raw) - _FIELDS[opcode] - {"opcode"}
    if unknown:
        raise OpError(f"unknown fields {sorted(unknown)}")
    get = _Getter(raw, params, directory)
    if opcode == "createPodSets":
        count = get.count()
        prefix = get.string("namespacePrefix")
        inner = raw.get("createPodsOp")
        if not isinstance(inner, dict) or inner.get("opcode") != "createPods":
            raise OpError("createPodsOp must be a createPods op")
        template = _decode(inner, params, directory, default_pod)[0]
        assert isinstance(template, CreatePods)
        return [replace(template, namespace=f"{prefix}-{i}") for i in range(count)]
    return [_DECODERS[opcode](get, default_pod)]


@dataclass(frozen=True)
class _Getter:
    raw: Mapping[str, object]
    params: Params
    directory: Path

    def count(self, default: int = 0) -> int:
        if self.raw.get("countParam"):
            return self.params.number(self.string("countParam"))
        value = self.raw.get("count", default)
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise OpError(f"invalid Count={value!r}")
        return value

    def string(self, key: str, default: str = "") -> str:
        value = self.raw.get(key, default)
        if not isinstance(value, str):
            raise OpError(f"{key} must be a string")
        return value

    def flag(self, key: str) -> bool:
        value = self.raw.get(key, False)
        if not isinstance(value, bool):
            raise OpError(f"{key} must be true or false")
        return value

    def integer(self, key: str, default: int = 0) -> int:
        value = self.raw.get(key, default)
        if isinstance(value, bool) or not isinstance(value, int):
            raise OpError(f"{key} must be an integer")
        return value

    def path(self, key: str) -> Path | None:
        value = self.raw.get(key)
        return None if value is None else (self.directory / str(value)).resolve()

    def labels(self, key: str) -> dict[str, str]:
        value = self.raw.get(key) or {}
        if not isinstance(value, dict):
            raise OpError(f"{key} must be a map")
        return {str(k): str(v) for k, v in value.items()}

    def strings(self, key: str) -> tuple[str, ...]:
        value = self.raw.get(key) or []
        if not isinstance(value, list):
            raise OpError(f"{key} must be a list")
        return tuple(str(v) for v in value)

    def duration(self) -> float:
        if self.raw.get("durationParam"):
            return go_duration(self.params.string(self.string("durationParam")))
        value = self.raw.get("duration", "0s")
        return go_duration(str(value))


def _create_nodes(get: _Getter, _: Path | None) -> Op:
    raw = get.raw
    allocatable = raw.get("nodeAllocatableStrategy")
    label = raw.get("labelNodePrepareStrategy")
    unique = raw.get("uniqueNodeLabelStrategy")
    op = CreateNodes(get.count(), get.path("nodeTemplatePath"), _params(get))
    # kube's getNodePreparer: allocatable, else label, else unique label.
    if isinstance(allocatable, dict):
        return replace(
            op,
            allocatable=NodeAllocatable(
                {str(k): str(v) for k, v in (allocatable.get("nodeAllocatable") or {}).items()},
                dict(allocatable.get("csiNodeAllocatable") or {}),
                tuple(str(p) for p in allocatable.get("migratedPlugins") or ()),
            ),
        )
    if isinstance(label, dict):
        values = tuple(str(v) for v in label.get("labelValues") or ())
        if not values:
            raise OpError("labelNodePrepareStrategy needs labelValues")
        return replace(op, label_key=str(label.get("labelKey")), label_values=values)
    if isinstance(unique, dict):
        return replace(op, unique_label_key=str(unique.get("labelKey")))
    return op


def _params(get: _Getter) -> TemplateParams:
    return get.params.template_params(get.raw.get("templateParams"))


def _create_namespaces(get: _Getter, _: Path | None) -> Op:
    return CreateNamespaces(get.string("prefix"), get.count(), get.path("namespaceTemplatePath"))


def _create_pods(get: _Getter, default_pod: Path | None) -> Op:
    count = get.count()
    if get.raw.get("countMultiplierParam"):
        count *= get.params.number(get.string("countMultiplierParam"))
    batch = get.integer("signatureBatchSize")
    if get.raw.get("signatureBatchSizeParam"):
        batch = get.params.number(get.string("signatureBatchSizeParam"))
    steady = get.flag("steadyState")
    if get.raw.get("steadyStateParam"):
        steady = get.params.boolean(get.string("steadyStateParam"))
    op = CreatePods(
        count=count,
        namespace=get.string("namespace") or None,
        pod_template=get.path("podTemplatePath") or default_pod,
        template_params=_params(get),
        collect_metrics=get.flag("collectMetrics"),
        skip_wait=get.flag("skipWaitToCompletion"),
        steady_state=steady,
        duration_s=get.duration(),
        pv_template=get.path("persistentVolumeTemplatePath"),
        pvc_template=get.path("persistentVolumeClaimTemplatePath"),
        signature_batch_size=batch or 1,
    )
    if op.collect_metrics and op.skip_wait:
        raise OpError("collectMetrics and skipWaitToCompletion cannot be true at the same time")
    if op.skip_wait and op.steady_state:
        raise OpError("skipWaitToCompletion and steadyState cannot be true at the same time")
    if op.steady_state and op.duration_s <= 0:
        raise OpError("when creating pods in a steady state, the test duration must be > 0")
    return op


def _required_path(get: _Getter, key: str) -> Path:
    path = get.path(key)
    if path is None:
        raise OpError(f"{key} must be set")
    return path


def _create_any(get: _Getter, _: Path | None) -> Op:
    count = get.count(default=1) if ("count" in get.raw or "countParam" in get.raw) else 1
    return CreateAny(
        _required_path(get, "templatePath"), get.string("namespace"), count, _params(get)
    )


def _update_any(get: _Getter, _: Path | None) -> Op:
    count = get.count(default=1) if ("count" in get.raw or "countParam" in get.raw) else 1
    per_second = get.integer("updatePerSecond")
    if per_second < 0:
        raise OpError(f"invalid UpdatePerSecond={per_second}; should be non-negative")
    return UpdateAny(
        _required_path(get, "templatePath"),
        get.string("namespace"),
        count,
        per_second,
        get.strings("subresources"),
    )


def _create_pod_groups(get: _Getter, _: Path | None) -> Op:
    count = get.count()
    if count < 1:
        raise OpError(f"count must be greater than 0, got {count}")
    namespace = get.string("namespace")
    if not namespace:
        raise OpError("namespace must be set")
    return CreatePodGroups(namespace, _required_path(get, "templatePath"), _params(get), count)


def _create_resource_claims(get: _Getter, _: Path | None) -> Op:
    return CreateResourceClaims(
        get.string("namespace"), _required_path(get, "templatePath"), get.count()
    )


def _barrier(get: _Getter, _: Path | None) -> Op:
    stage = get.string("stageRequirement") or "Scheduled"
    if stage not in ("Scheduled", "Attempted"):
        raise OpError(f"invalid StageRequirement {stage}")
    return Barrier(get.strings("namespaces"), get.labels("labelSelector"), stage)


def _churn(get: _Getter, _: Path | None) -> Op:
    mode, number = get.string("mode"), get.integer("number")
    if mode not in ("create", "recreate"):
        raise OpError(f"invalid mode: {mode}. must be one of [recreate create]")
    if number < 0 or (mode == "recreate" and number == 0):
        raise OpError(f"invalid number {number} for mode {mode}")
    templates = tuple((get.directory / p).resolve() for p in get.strings("templatePaths"))
    if not templates:
        raise OpError("at least one template spec file needs to be specified")
    namespace = get.raw.get("namespace")
    return Churn(
        mode,
        number,
        get.integer("intervalMilliseconds") or 500,
        None if namespace is None else str(namespace),
        templates,
    )


def _delete_pods(get: _Getter, _: Path | None) -> Op:
    per_second = get.integer("deletePodsPerSecond")
    if per_second < 0:
        raise OpError(f"invalid DeletePodsPerSecond={per_second}; should be non-negative")
    return DeletePods(
        get.string("namespace"),
        get.labels("labelSelector"),
        get.flag("skipWaitToCompletion"),
        per_second,
    )


def _start_collecting(get: _Getter, _: Path | None) -> Op:
    namespaces = get.strings("namespaces")
    if not namespaces:
        raise OpError("namespaces cannot be empty")
    return StartCollectingMetrics(get.string("name"), namespaces, get.labels("labelSelector"))


_DECODERS: Mapping[str, Callable[[_Getter, Path | None], Op]] = {
    "createNodes": _create_nodes,
    "createNamespaces": _create_namespaces,
    "createPods": _create_pods,
    "createAny": _create_any,
    "updateAny": _update_any,
    "createPodGroups": _create_pod_groups,
    "createResourceClaims": _create_resource_claims,
    "allocResourceClaims": lambda get, _: AllocResourceClaims(get.string("namespace")),
    "barrier": _barrier,
    "churn": _churn,
    "deletePods": _delete_pods,
    "sleep": lambda get, _: Sleep(get.duration()),
    "startCollectingMetrics": _start_collecting,
    "stopCollectingMetrics": lambda get, _: StopCollectingMetrics(),
    "startCollectingProfile": lambda get, _: CollectingProfile(start=True),
    "stopCollectingProfile": lambda get, _: CollectingProfile(start=False),
}
