"""The invariants of DESIGN.md section 4, checked on the API's final state (one checker for all).

Every reliability test ends by LISTing pods and nodes from the emulator and calling
:func:`check`. It reads raw API dicts only and shares no code with the scheduler (its own
quantity parser, toleration and selector matching), so a bug in the scheduler's parsing or
plugins cannot hide itself here. What it checks, for the pods a test created:

* **nothing lost**: every pending pod of ours ends bound, or with ``PodScheduled=False``
  and a reason (and a message);
* **no over-commit**: for every node, the summed requests of the non-terminal pods bound
  to it (cpu, memory, ephemeral storage, extended resources, pod count) are <= its
  allocatable;
* **no fence crossed**: no pod we bound sits on a node whose NoSchedule/NoExecute taints
  it does not tolerate, whose labels miss its ``nodeSelector``, or that fails its required
  node affinity;
* **only ours**: no pod with another ``schedulerName`` is bound (nobody else schedules in
  these tests);
* **no orphan**: no pod is bound to a node that does not exist (unless the test deleted
  that node itself, mid-burst).

:class:`Report` counts what was checked, so a test can say how much it saw and the figures
of a run can be written down (``docs/reliability.md``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

Raw = Mapping[str, Any]

_QUANTITY = re.compile(r"^([+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))([a-zA-Z]*|[eE][+-]?[0-9]+)$")
_SUFFIXES = {
    "": Fraction(1),
    "n": Fraction(1, 10**9),
    "u": Fraction(1, 10**6),
    "m": Fraction(1, 1000),
    "k": Fraction(10**3),
    "M": Fraction(10**6),
    "G": Fraction(10**9),
    "T": Fraction(10**12),
    "P": Fraction(10**15),
    "E": Fraction(10**18),
    "Ki": Fraction(2**10),
    "Mi": Fraction(2**20),
    "Gi": Fraction(2**30),
    "Ti": Fraction(2**40),
    "Pi": Fraction(2**50),
    "Ei": Fraction(2**60),
}
TERMINAL = ("Succeeded", "Failed")


def quantity(value: object) -> Fraction:
    """A Kubernetes quantity, exactly; ValueError for anything else."""
    if isinstance(value, int) and not isinstance(value, bool):
        return Fraction(value)
    text = str(value).strip()
    m = _QUANTITY.match(text)
    if not m:
        raise ValueError(f"not a quantity: {value!r}")
    number, suffix = Fraction(m.group(1)), m.group(2)
    if suffix[:1] in ("e", "E") and suffix[1:].lstrip("+-").isdigit():
        return number * Fraction(10) ** int(suffix[1:])
    if suffix not in _SUFFIXES:
        raise ValueError(f"not a quantity: {value!r}")
    return number * _SUFFIXES[suffix]


def pod_requests(pod: Raw) -> dict[str, Fraction]:
    """Effective requests: containers summed, max'ed with each init container, + overhead."""
    spec = pod.get("spec") or {}

    def of(container: Raw) -> dict[str, Fraction]:
        resources = container.get("resources") or {}
        out = {k: quantity(v) for k, v in (resources.get("limits") or {}).items()}
        out.update({k: quantity(v) for k, v in (resources.get("requests") or {}).items()})
        return out

    total: dict[str, Fraction] = {}
    for c in spec.get("containers") or []:
        for name, amount in of(c).items():
            total[name] = total.get(name, Fraction(0)) + amount
    for c in spec.get("initContainers") or []:
        for name, amount in of(c).items():
            total[name] = max(total.get(name, Fraction(0)), amount)
    for name, amount in (spec.get("overhead") or {}).items():
        total[name] = total.get(name, Fraction(0)) + quantity(amount)
    return total


def tolerates(tolerations: Iterable[Raw], taint: Raw) -> bool:
    """kube's ``Toleration.ToleratesTaint``."""
    for t in tolerations:
        effect = t.get("effect") or ""
        if effect and effect != taint.get("effect"):
            continue
        key, op = t.get("key") or "", t.get("operator") or "Equal"
        if key and key != taint.get("key"):
            continue
        if op == "Exists" or (
            op == "Equal" and (t.get("value") or "") == (taint.get("value") or "")
        ):
            return True
    return False


def _int_or_none(text: str) -> int | None:
    try:
        return int(text)
    except ValueError:
        return None


def _requirement(expr: Raw, value: str | None) -> bool:
    op, values = expr.get("operator"), list(expr.get("values") or [])
    if op == "In":
        return value is not None and value in values
    if op == "NotIn":
        return value is None or value not in values
    if op == "Exists":
        return value is not None
    if op == "DoesNotExist":
        return value is None
    if op in ("Gt", "Lt") and value is not None and len(values) == 1:
        have, want = _int_or_none(value), _int_or_none(str(values[0]))
        if have is None or want is None:
            return False
        return have > want if op == "Gt" else have < want
    return False


def matches_required_affinity(pod: Raw, node: Raw) -> bool:
    """Required node affinity: terms ORed, expressions and fields within a term ANDed."""
    affinity = ((pod.get("spec") or {}).get("affinity") or {}).get("nodeAffinity") or {}
    required = affinity.get("requiredDuringSchedulingIgnoredDuringExecution")
    if required is None:
        return True
    labels = (node.get("metadata") or {}).get("labels") or {}
    name = (node.get("metadata") or {}).get("name")
    for term in required.get("nodeSelectorTerms") or []:
        exprs, fields = term.get("matchExpressions") or [], term.get("matchFields") or []
        if not exprs and not fields:
            continue  # an empty term matches nothing
        if all(_requirement(e, labels.get(e.get("key"))) for e in exprs) and all(
            _requirement(f, name if f.get("key") == "metadata.name" else None) for f in fields
        ):
            return True
    return False


def pod_key(pod: Raw) -> str:
    meta = pod.get("metadata") or {}
    return f"{meta.get('namespace') or 'default'}/{meta.get('name')}"


def scheduled_condition(pod: Raw) -> Raw | None:
    for c in (pod.get("status") or {}).get("conditions") or []:
        if c.get("type") == "PodScheduled":
            return c  # type: ignore[no-any-return]
    return None


def reported_unschedulable(pod: Raw) -> bool:
    """``PodScheduled=False`` with a reason and a message."""
    c = scheduled_condition(pod)
    return bool(c and c.get("status") == "False" and c.get("reason") and c.get("message"))


@dataclass
class Report:
    """What :func:`check` saw; ``problems`` is empty when every invariant holds."""

    pods: int = 0
    """Pods of the test (created by it) found in the API."""
    nodes: int = 0
    bound: int = 0
    """Pods of ours bound."""
    unschedulable: int = 0
    """Pods of ours pending with PodScheduled=False and a reason."""
    foreign: int = 0
    """Pods with another schedulerName (must stay unbound)."""
    fences_checked: int = 0
    """(pod, constraint) pairs checked: taints, selectors, affinity terms."""
    lost: list[str] = field(default_factory=list)
    overcommits: list[str] = field(default_factory=list)
    violations: list[str] = field(default_factory=list)
    foreign_bound: list[str] = field(default_factory=list)
    orphans: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    """Pods the test created that are gone from the API (nobody deleted them)."""
    reasons: dict[str, int] = field(default_factory=dict)
    """PodScheduled=False reasons of the unschedulable pods, counted."""

    @property
    def problems(self) -> list[str]:
        out = []
        for label in ("lost", "overcommits", "violations", "foreign_bound", "orphans", "missing"):
            items: list[str] = getattr(self, label)
            if items:
                out.append(f"{label} ({len(items)}): {items[:10]}")
        return out

    def assert_ok(self) -> None:
        assert not self.problems, "\n".join(self.problems)

    def figures(self) -> dict[str, int]:
        return {
            "pods": self.pods,
            "nodes": self.nodes,
            "bound": self.bound,
            "unschedulable": self.unschedulable,
            "foreign": self.foreign,
            "fences_checked": self.fences_checked,
            "lost": len(self.lost) + len(self.missing),
            "overcommits": len(self.overcommits),
            "violations": len(self.violations) + len(self.foreign_bound) + len(self.orphans),
        }


def check(
    pods: Iterable[Raw],
    nodes: Iterable[Raw],
    *,
    ours: Iterable[str],
    created: Iterable[str],
    deleted_nodes: Iterable[str] = (),
    unfenced_nodes: Iterable[str] = (),
    bound_by_us: Iterable[str] | None = None,
) -> Report:
    """Check the invariants on a LIST of ``pods`` and ``nodes``.

    ``ours``: our schedulerNames. ``created``: keys (``ns/name``) of the pods the test
    created and did not delete; only those are judged as pending/lost (every pod counts
    towards node usage). ``deleted_nodes``: nodes the test deleted mid-run (pods bound there
    before the cache saw it are not orphans). ``unfenced_nodes``: nodes whose taints or
    labels the test changed mid-run (their fences are checked by the test itself, with the
    moment the cache saw the change). ``bound_by_us``: when someone else binds too (a rogue
    binder), the keys of the pods we bound; fences are checked for those only.
    """
    scheduler_names = set(ours)
    wanted = set(created)
    gone = set(deleted_nodes)
    unfenced = set(unfenced_nodes)
    ours_bound = set(bound_by_us) if bound_by_us is not None else None
    by_name = {n["metadata"]["name"]: n for n in nodes}
    report = Report(nodes=len(by_name))
    used: dict[str, dict[str, Fraction]] = {}
    seen: set[str] = set()
    for pod in pods:
        key = pod_key(pod)
        spec = pod.get("spec") or {}
        node_name = spec.get("nodeName")
        terminal = (pod.get("status") or {}).get("phase") in TERMINAL
        if node_name and not terminal:
            usage = used.setdefault(node_name, {"pods": Fraction(0)})
            usage["pods"] += 1
            for name, amount in pod_requests(pod).items():
                usage[name] = usage.get(name, Fraction(0)) + amount
            if node_name not in by_name and node_name not in gone:
                report.orphans.append(f"{key} on missing node {node_name}")
        if key not in wanted:
            continue
        seen.add(key)
        report.pods += 1
        if spec.get("schedulerName") not in scheduler_names:
            report.foreign += 1
            if node_name:
                report.foreign_bound.append(f"{key} ({spec.get('schedulerName')}) on {node_name}")
            continue
        if not node_name:
            if reported_unschedulable(pod):
                report.unschedulable += 1
                reason = str((scheduled_condition(pod) or {}).get("reason"))
                report.reasons[reason] = report.reasons.get(reason, 0) + 1
            else:
                report.lost.append(f"{key}: pending, condition {scheduled_condition(pod)}")
            continue
        report.bound += 1
        node = by_name.get(node_name)
        if node is None or node_name in unfenced:
            continue
        if ours_bound is not None and key not in ours_bound:
            continue
        _check_fences(report, key, pod, node)
    report.missing = sorted(wanted - seen)
    for name, usage in sorted(used.items()):
        node = by_name.get(name)
        if node is None:
            continue
        allocatable = (node.get("status") or {}).get("allocatable") or (
            (node.get("status") or {}).get("capacity") or {}
        )
        for resource, amount in usage.items():
            limit = quantity(allocatable.get(resource, 0))
            if amount > limit:
                report.overcommits.append(f"{name}: {resource} {float(amount)} > {float(limit)}")
    return report


def _check_fences(report: Report, key: str, pod: Raw, node: Raw) -> None:
    spec = pod.get("spec") or {}
    node_name = node["metadata"]["name"]
    tolerations = spec.get("tolerations") or []
    for taint in (node.get("spec") or {}).get("taints") or []:
        if taint.get("effect") not in ("NoSchedule", "NoExecute"):
            continue
        report.fences_checked += 1
        if not tolerates(tolerations, taint):
            report.violations.append(f"{key} on {node_name}: untolerated taint {taint}")
    labels = (node.get("metadata") or {}).get("labels") or {}
    for k, v in (spec.get("nodeSelector") or {}).items():
        report.fences_checked += 1
        if labels.get(k) != v:
            report.violations.append(f"{key} on {node_name}: nodeSelector {k}={v}")
    if ((spec.get("affinity") or {}).get("nodeAffinity") or {}).get(
        "requiredDuringSchedulingIgnoredDuringExecution"
    ) is not None:
        report.fences_checked += 1
        if not matches_required_affinity(pod, node):
            report.violations.append(f"{key} on {node_name}: required node affinity")
