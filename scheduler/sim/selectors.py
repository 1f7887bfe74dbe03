"""Label and field selectors as kube-apiserver parses them from query strings.

Labels: equality (``a=b``, ``a==b``, ``a!=b``) and set-based (``a in (x,y)``,
``a notin (x)``, ``a``, ``!a``), comma-separated, all terms ANDed.
Fields: ``path=value``, ``path==value``, ``path!=value`` on the paths kube-apiserver
supports for the resource (:data:`FIELD_LABELS`; any other is a 400, as there); a missing
field reads as the empty string, so ``spec.nodeName=`` selects unassigned pods.
Parsing happens once per request; a compiled selector is a plain predicate.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from scheduler.sim.errors import ApiError, bad_request

Predicate = Callable[[Mapping[str, Any]], bool]

_SET_TERM = re.compile(r"^\s*(!?)\s*([^\s!=,()]+)\s*(?:(in|notin)\s*\(([^)]*)\))?\s*$")
_OP_TERM = re.compile(r"^\s*([^\s!=]+)\s*(==|=|!=)\s*([^\s,]*)\s*$")


def _split_terms(text: str) -> list[str]:
    """Split on commas that are not inside parentheses."""
    terms: list[str] = []
    depth = 0
    start = 0
    for i, ch in enumerate(text):
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch == "," and depth == 0:
            terms.append(text[start:i])
            start = i + 1
    terms.append(text[start:])
    return [t for t in terms if t.strip()]


LabelTerm = Callable[[Mapping[str, str]], bool]


def _label_term(term: str) -> LabelTerm:
    m = _OP_TERM.match(term)
    if m:
        key, op, value = m.groups()
        if op == "!=":
            return lambda labels: labels.get(key) != value
        return lambda labels: labels.get(key) == value
    m = _SET_TERM.match(term)
    if not m:
        raise bad_request(f"unable to parse requirement: invalid label selector term {term!r}")
    neg, key, op, values = m.groups()
    if op is None:
        if neg:
            return lambda labels: key not in labels
        return lambda labels: key in labels
    if neg:
        raise bad_request(f"unable to parse requirement: {term!r}")
    allowed = frozenset(v.strip() for v in values.split(",") if v.strip())
    if op == "in":
        return lambda labels: labels.get(key) in allowed
    return lambda labels: labels.get(key) not in allowed


def parse_label_selector(text: str | None) -> Predicate | None:
    """Compile a labelSelector into a predicate on an object; None when empty."""
    if not text or not text.strip():
        return None
    terms = [_label_term(t) for t in _split_terms(text)]

    def match(obj: Mapping[str, Any]) -> bool:
        labels = obj.get("metadata", {}).get("labels") or {}
        return all(t(labels) for t in terms)

    return match


def field_value(obj: Mapping[str, Any], path: str) -> str:
    """The string value of a dotted field path; "" when absent (as the apiserver does)."""
    cur: Any = obj
    for part in path.split("."):
        if not isinstance(cur, Mapping):
            return ""
        cur = cur.get(part)
        if cur is None:
            return ""
    if isinstance(cur, bool):
        return "true" if cur else "false"
    return cur if isinstance(cur, str) else str(cur)


_INVOLVED = tuple(
    f"involvedObject.{f}"
    for f in ("kind", "namespace", "name", "uid", "apiVersion", "resourceVersion", "fieldPath")
)
FIELD_LABELS: dict[str, frozenset[str]] = {
    "pods": frozenset(
        (
            "spec.nodeName",
            "spec.restartPolicy",
            "spec.schedulerName",
            "spec.serviceAccountName",
            "spec.hostNetwork",
            "status.phase",
            "status.podIP",
            "status.nominatedNodeName",
        )
    ),
    "nodes": frozenset(("spec.unschedulable",)),
    "namespaces": frozenset(("status.phase",)),
    "events": frozenset((*_INVOLVED, "reason", "reportingComponent", "source", "type")),
    "jobs": frozenset(("status.successful",)),
    "services": frozenset(("spec.clusterIP", "spec.type")),
    "replicasets": frozenset(("status.replicas",)),
    "replicationcontrollers": frozenset(("status.replicas",)),
}
"""Field labels kube-apiserver selects on, per resource (storage plural), beyond
``metadata.name`` (and ``metadata.namespace`` for namespaced resources)."""


def field_labels(plural: str, namespaced: bool) -> frozenset[str]:
    """Every field label a fieldSelector on ``plural`` may use."""
    common = ("metadata.name", "metadata.namespace") if namespaced else ("metadata.name",)
    return FIELD_LABELS.get(plural, frozenset()) | frozenset(common)


def parse_field_selector(
    text: str | None,
    aliases: Mapping[str, str] | None = None,
    supported: frozenset[str] | None = None,
) -> Predicate | None:
    """Compile a fieldSelector; ``aliases`` renames paths (e.g. events.k8s.io's ``regarding``),
    ``supported`` (after renaming) are the only paths allowed (None: any)."""
    if not text or not text.strip():
        return None
    terms: list[tuple[str, bool, str]] = []
    for term in _split_terms(text):
        m = _OP_TERM.match(term)
        if not m:
            raise ApiError(
                400, "BadRequest", f"invalid selector: '{text}'; can't understand '{term}'"
            )
        path, op, value = m.groups()
        for prefix, target in (aliases or {}).items():
            if path == prefix or path.startswith(prefix + "."):
                path = target + path[len(prefix) :]
                break
        if supported is not None and path not in supported:
            raise bad_request(f"field label not supported: {m.group(1)}")
        terms.append((path, op != "!=", value))

    def match(obj: Mapping[str, Any]) -> bool:
        return all((field_value(obj, p) == v) is eq for p, eq, v in terms)

    return match


def combine(*preds: Predicate | None) -> Predicate | None:
    """AND of the non-empty predicates; None when there are none."""
    present = [p for p in preds if p is not None]
    if not present:
        return None
    if len(present) == 1:
        return present[0]
    return lambda obj: all(p(obj) for p in present)


def label_selector_matches(selector: Mapping[str, Any], labels: Mapping[str, str]) -> bool:
    """Whether a LabelSelector object (``matchLabels``, ``matchExpressions``) selects
    ``labels``; an empty selector selects everything, as ``LabelSelectorAsSelector`` has it."""
    for key, value in (selector.get("matchLabels") or {}).items():
        if labels.get(key) != value:
            return False
    for expr in selector.get("matchExpressions") or []:
        if not isinstance(expr, Mapping):
            return False
        key, op = expr.get("key", ""), expr.get("operator", "")
        values = expr.get("values") or []
        if op == "In" and labels.get(key) not in values:
            return False
        if op == "NotIn" and key in labels and labels[key] in values:
            return False
        if op == "Exists" and key not in labels:
            return False
        if op == "DoesNotExist" and key in labels:
            return False
    return True
