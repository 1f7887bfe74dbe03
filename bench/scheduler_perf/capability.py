"""Who can run a workload, and with which flags: the one place to update when ours grows.

A workload needs, besides its ops, the features its objects use and the feature gates it
sets. For each scheduler this module answers "run, with these extra flags" or "skip,
because ...", never nothing:

* **the runner** cannot run a workload whose Go test adds hooks inside the scheduler's
  process (:data:`RUNNER_LACKS_TOPICS`) or uses an op it does not implement
  (:data:`RUNNER_LACKS_OPCODES`): skipped for both schedulers;
* **kube-scheduler** gets the workload's gates as ``--feature-gates`` (and, as kube's
  test does, emulates v1.36 when ``NodeDeclaredFeatures`` is turned off);
* **ours** is skipped for a feature it lacks (:data:`OURS_LACKS`, found in the workload's
  objects, :func:`features_used`), for a configuration its loader refuses (unknown plugin
  names, say), and for a gate that changes decisions in a way ours does not implement
  (:data:`OURS_LACKS_GATES`). ``OpportunisticBatching`` maps onto ``--batching
  all|off``; a gate at kube v1.37's default needs nothing (ours follows kube's defaults);
  any other value goes to ours' ``--feature-gates`` (kube's flag: ``GenericWorkload``
  gang-schedules PodGroups; a gate that only changes how kube-scheduler does its own work,
  ``SchedulerAsyncAPICalls`` say, is accepted and has no effect in ours).
  :func:`ours_has_feature_gates` asks ours' ``--help`` rather than assuming the flag.

Gate defaults are read from the pinned module's ``pkg/features/kube_features.go``
(:func:`gate_defaults`), not copied.

Neighbours: :mod:`bench.scheduler_perf.schedulers` starts the processes with these flags;
:mod:`bench.scheduler_perf.cli` lists the plans (``--list``).
"""

from __future__ import annotations

import functools
import re
import subprocess
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING

from bench.scheduler_perf import decode, objects, ops
from bench.scheduler_perf.suite import module_root

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from bench.scheduler_perf.suite import Selected

KUBE = "kube"
OURS = "ours"
SCHEDULERS = (KUBE, OURS)
DRA = "dra"
DRA_EXTENDED_RESOURCES = "dra-extended-resources"
PODGROUPS = "podgroups"

OURS_LACKS: Mapping[str, str] = {
    DRA_EXTENDED_RESOURCES: "DRAExtendedResource: ours does not satisfy extended resources "
    "from DeviceClasses (extendedResourceName; docs/dra.md: not supported yet)",
}
"""Features of the suite's objects that ours does not implement; delete a line when it does
(PodGroups left it when ours learned gang scheduling, DRA when ours learned
DynamicResources)."""
OURS_LACKS_GATES: Mapping[str, str] = {
    "TopologyAwareWorkloadScheduling": "TopologyAwareWorkloadScheduling=true: ours does not "
    "implement topology-aware placement of PodGroups (schedulingConstraints)",
    "CompositePodGroup": "CompositePodGroup=true: ours does not implement CompositePodGroups",
    "PodGroupPreemptionPolicy": "PodGroupPreemptionPolicy=true: ours does not read a "
    "PodGroup's preemptionPolicy",
    "DRADeviceCompatibilityGroups": "DRADeviceCompatibilityGroups=true: ours' allocator "
    "does not implement compatibility groups",
    "DRAWorkloadResourceClaims": "DRAWorkloadResourceClaims=true: ours reserves claims "
    "for pods, never for their PodGroup",
}
"""Gates that, turned on, change decisions in a way ours does not implement: skipped."""

RUNNER_LACKS_TOPICS: Mapping[str, str] = {
    "nodedeclaredfeatures": "its Go test registers mock node features inside the scheduler's "
    "process (WithPreRunFn/WithNodeUpdateFn), which a scheduler binary cannot get",
}
RUNNER_LACKS_OPCODES: Mapping[str, str] = {}
"""Ops the runner cannot run (none: ``allocResourceClaims`` runs kube's allocator in Go)."""
OURS_GATE_FLAGS: Mapping[str, Mapping[bool, tuple[str, ...]]] = {
    "OpportunisticBatching": {True: ("--batching", "all"), False: ("--batching", "off")},
}
"""Gates ours honours through a flag of its own, by value."""

_GATE = re.compile(r"^\t(\w+): \{\n((?:\t\t(?://[^\n]*|\{[^\n]*\},[^\n]*)\n)+)\t\},", re.M)
_SPEC = re.compile(
    r'Version: version\.MustParse\("(\d+)\.(\d+)"\), Default: (true|false)'
    r"(?:, PreRelease: [\w.]+)?(, LockToDefault: true)?"
)


@dataclass(frozen=True)
class GateDefault:
    default: bool
    locked: bool


@dataclass(frozen=True)
class Plan:
    """What running one workload with one scheduler takes."""

    scheduler: str
    skip: str | None = None
    """Why it does not run (None: it runs)."""
    args: tuple[str, ...] = ()
    """Extra command-line flags for the scheduler."""


@functools.cache
def gate_defaults(minor: int | None = None) -> dict[str, GateDefault]:
    """Every kube feature gate's default at v1.<minor> (default: the pinned version),
    from ``pkg/features/kube_features.go``: the last versioned spec at or below it."""
    root = module_root()
    if minor is None:
        minor = int(root.name.split("@v1.")[1].split(".")[0])
    text = (root / "pkg/features/kube_features.go").read_text()
    found: dict[str, GateDefault] = {}
    for match in _GATE.finditer(text):
        specs = [
            (int(m.group(2)), m.group(3) == "true", bool(m.group(4)))
            for m in _SPEC.finditer(match.group(2))
            if int(m.group(1)) == 1
        ]
        current = [s for s in specs if s[0] <= minor]
        if current:
            _, default, locked = current[-1]
            found[match.group(1)] = GateDefault(default, locked)
    return found


@functools.cache
def ours_has_feature_gates() -> bool:
    """Whether ``batch-scheduler run`` has a ``--feature-gates`` flag (asked, not assumed)."""
    try:
        out = subprocess.run(
            [sys.executable, "-m", "scheduler", "run", "--help"],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        ).stdout
    except (OSError, subprocess.TimeoutExpired):
        return False
    return "--feature-gates" in out


def gate_flag(gates: Mapping[str, bool]) -> tuple[str, ...]:
    if not gates:
        return ()
    return ("--feature-gates=" + ",".join(f"{k}={str(v).lower()}" for k, v in gates.items()),)


def emulated_version(gates: Mapping[str, bool]) -> str | None:
    """kube's setupTestCase: NodeDeclaredFeatures (locked on in 1.37) turned off needs the
    v1.36 emulation."""
    return "1.36" if gates.get("NodeDeclaredFeatures") is False else None


def runner_skip(selected: Selected) -> str | None:
    """Why the runner cannot run this workload at all (None: it can)."""
    top = selected.case.topic.split("/")[0]
    if top in RUNNER_LACKS_TOPICS:
        return RUNNER_LACKS_TOPICS[top]
    for opcode in sorted(decode.opcodes(selected.case.workload_template)):
        if opcode in RUNNER_LACKS_OPCODES:
            return RUNNER_LACKS_OPCODES[opcode]
    return None


def features_used(resolved: Sequence[ops.Op]) -> set[str]:
    """The features the workload's objects use that a scheduler may lack (the keys of
    :data:`OURS_LACKS` among them): resource claims and objects of ``resource.k8s.io``;
    pods that name a PodGroup."""
    found: set[str] = set()
    for op in resolved:
        if isinstance(op, ops.AllocResourceClaims | ops.CreateResourceClaims):
            found.add(DRA)
        elif isinstance(op, ops.CreateAny) and op.count > 0:
            obj = objects.render(op.template, {**op.template_params, "Index": 0, "Count": 1})
            group = str(obj.get("apiVersion", "")).split("/")[0]
            if group == "resource.k8s.io":
                found.add(DRA)
                if obj.get("kind") == "DeviceClass" and (obj.get("spec") or {}).get(
                    "extendedResourceName"
                ):
                    found.add(DRA_EXTENDED_RESOURCES)
        elif isinstance(op, ops.CreatePods) and op.pod_template is not None and op.count > 0:
            spec = objects.render(
                op.pod_template, {**op.template_params, "Index": 0, "Count": op.count}
            ).get("spec", {})
            if spec.get("resourceClaims"):
                found.add(DRA)
            if spec.get("schedulingGroup"):
                found.add(PODGROUPS)
    return found


def kube_plan(selected: Selected) -> Plan:
    gates = selected.feature_gates
    args = list(gate_flag(gates))
    version = emulated_version(gates)
    if version:
        args.append(f"--emulated-version=kube={version}")
    return Plan(KUBE, args=tuple(args))


def ours_plan(selected: Selected, resolved: Sequence[ops.Op], config_error: str | None) -> Plan:
    """Ours' flags for the workload's gates, or why ours cannot run it."""
    lacking = sorted(features_used(resolved) & OURS_LACKS.keys())
    if lacking:
        return Plan(OURS, skip=OURS_LACKS[lacking[0]])
    for gate, reason in OURS_LACKS_GATES.items():
        if selected.feature_gates.get(gate):
            return Plan(OURS, skip=reason)
    if config_error:
        return Plan(OURS, skip=f"ours refuses the scheduler configuration: {config_error}")
    gates = dict(selected.feature_gates)
    args: list[str] = []
    for gate, flags in OURS_GATE_FLAGS.items():
        value = gates.pop(gate, gate_defaults().get(gate, GateDefault(True, False)).default)
        args.extend(flags[value])
    defaults = gate_defaults()
    # A gate at kube's default asks nothing of ours, which follows kube v1.37's defaults.
    different = {g: v for g, v in gates.items() if g not in defaults or defaults[g].default != v}
    locked = sorted(g for g in different if g in defaults and defaults[g].locked)
    if locked:
        return Plan(
            OURS,
            skip=f"{locked[0]}={str(different[locked[0]]).lower()}: kube's test emulates v1.36 "
            "for it (--emulated-version), which ours does not have",
        )
    if different:
        if not ours_has_feature_gates():
            named = ", ".join(f"{g}={str(v).lower()}" for g, v in different.items())
            return Plan(
                OURS,
                skip=f"needs {named} (not kube v1.37's default) and ours has no "
                "--feature-gates flag yet",
            )
        args.extend(gate_flag(different))
    return Plan(OURS, args=tuple(args))
