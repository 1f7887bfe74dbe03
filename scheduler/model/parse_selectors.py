"""Parse label selectors and node-selector terms from raw dicts, validating as kube does.

kube-scheduler turns these into ``labels.Selector`` values through ``labels.NewRequirement``,
which rejects unknown operators, In/NotIn without values, Exists/DoesNotExist with
values, Gt/Lt without exactly one integer, and malformed keys or values; the API server's
validation rejects the same. We reject them here, naming the field, so the matching code
in ``model.labels`` only ever sees valid records.

Requirements are put in a canonical order (by key, then operator, then values; duplicates
dropped) and In/NotIn values are sorted and de-duplicated, as kube's internal selector
keeps them: matching is unchanged and equal selectors compare (and sign) equal.

Neighbours: records and matching in ``model.labels``; callers ``parse_pod`` (affinity,
topology spread) and anything else that reads selectors (configuration, namespaces).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from scheduler.model.labels import (
    LabelSelector,
    NodeSelector,
    NodeSelectorTerm,
    Operator,
    PreferredSchedulingTerm,
    Requirement,
)
from scheduler.model.parse_common import Reader, is_qualified_name

if TYPE_CHECKING:
    from collections.abc import Iterable

__all__ = [
    "label_selector_from_raw",
    "node_selector_from_raw",
    "node_selector_term_from_raw",
    "preferred_scheduling_term_from_raw",
    "requirement_key",
]

NODE_NAME_FIELD = "metadata.name"
"""The only field a node-selector term's ``matchFields`` may name."""

_LABEL_VALUE = re.compile(r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?")
_GO_INT = re.compile(r"[+-]?[0-9]+")
_INT64 = 2**63

_LABEL_SELECTOR_OPS = frozenset(
    {Operator.IN, Operator.NOT_IN, Operator.EXISTS, Operator.DOES_NOT_EXIST}
)


def requirement_key(req: Requirement) -> tuple[str, str, tuple[str, ...]]:
    """The canonical sort key of a requirement."""
    return (req.key, req.operator.value, req.values)


def canonical(requirements: Iterable[Requirement]) -> tuple[Requirement, ...]:
    """Sorted by :func:`requirement_key`, duplicates dropped."""
    return tuple(sorted(set(requirements), key=requirement_key))


def _check_key(r: Reader, key: str, field: str) -> None:
    if not is_qualified_name(key):
        raise r.error(field, f"invalid label key {key!r}: must be a qualified name ([prefix/]name)")


def _check_label_value(r: Reader, value: str, field: str) -> None:
    if len(value) > 63 or _LABEL_VALUE.fullmatch(value) is None:
        raise r.error(field, f"invalid label value {value!r}")


def _requirement(
    r: Reader,
    raw: object,
    field: str,
    *,
    allowed: frozenset[Operator] | None,
    check_values: bool = True,
) -> Requirement:
    """One ``{key, operator, values}``; ``allowed`` None means every Operator."""
    m = r.mapping(raw, field)
    key = r.required_string(m.get("key"), f"{field}.key")
    op_text = r.required_string(m.get("operator"), f"{field}.operator")
    try:
        op = Operator(op_text)
    except ValueError:
        op = None
    if op is None or (allowed is not None and op not in allowed):
        names = ", ".join(o.value for o in Operator if allowed is None or o in allowed)
        raise r.error(f"{field}.operator", f"unknown operator {op_text!r} (want one of {names})")
    values_field = f"{field}.values"
    values = r.strings(m.get("values"), values_field)
    if op in (Operator.IN, Operator.NOT_IN):
        if not values:
            raise r.error(values_field, f"must be non-empty for operator {op.value}")
        if check_values:
            for i, value in enumerate(values):
                _check_label_value(r, value, f"{values_field}[{i}]")
        values = tuple(sorted(set(values)))
    elif op in (Operator.EXISTS, Operator.DOES_NOT_EXIST):
        if values:
            raise r.error(values_field, f"must be empty for operator {op.value}")
    else:  # Gt, Lt: one value that Go's strconv.ParseInt(v, 10, 64) accepts
        if len(values) != 1:
            raise r.error(values_field, f"must have exactly one value for operator {op.value}")
        if _GO_INT.fullmatch(values[0]) is None or not -_INT64 <= int(values[0]) < _INT64:
            raise r.error(f"{values_field}[0]", f"{values[0]!r} is not a 64-bit integer")
    return Requirement(key, op, values)


def label_selector_from_raw(raw: object, *, obj: str, field: str) -> LabelSelector:
    """A ``metav1.LabelSelector``: matchLabels (as ``In [value]``) and matchExpressions.

    The caller maps a missing (nil) selector to None; an empty object gives the empty
    selector, which matches everything.
    """
    r = Reader(obj)
    m = r.mapping(raw, field)
    reqs: list[Requirement] = []
    labels_field = f"{field}.matchLabels"
    for key, value in r.string_map(m.get("matchLabels"), labels_field).items():
        _check_key(r, key, labels_field)
        _check_label_value(r, value, f"{labels_field}.{key}")
        reqs.append(Requirement(key, Operator.IN, (value,)))
    for path, expr in r.objects(m.get("matchExpressions"), f"{field}.matchExpressions"):
        req = _requirement(r, expr, path, allowed=_LABEL_SELECTOR_OPS)
        _check_key(r, req.key, f"{path}.key")
        reqs.append(req)
    return LabelSelector(canonical(reqs))


def node_selector_term_from_raw(raw: object, *, obj: str, field: str) -> NodeSelectorTerm:
    """A ``NodeSelectorTerm``; matchFields may only use ``metadata.name`` with In/NotIn."""
    r = Reader(obj)
    m = r.mapping(raw, field)
    exprs: list[Requirement] = []
    for path, expr in r.objects(m.get("matchExpressions"), f"{field}.matchExpressions"):
        req = _requirement(r, expr, path, allowed=None)
        _check_key(r, req.key, f"{path}.key")
        exprs.append(req)
    fields: list[Requirement] = []
    for path, expr in r.objects(m.get("matchFields"), f"{field}.matchFields"):
        req = _requirement(
            r, expr, path, allowed=frozenset({Operator.IN, Operator.NOT_IN}), check_values=False
        )
        if req.key != NODE_NAME_FIELD:
            raise r.error(
                f"{path}.key",
                f"unsupported field {req.key!r} (only {NODE_NAME_FIELD} is supported)",
            )
        if len(req.values) != 1:
            raise r.error(f"{path}.values", "must have exactly one value for a node field selector")
        fields.append(req)
    return NodeSelectorTerm(canonical(exprs), canonical(fields))


def node_selector_from_raw(raw: object, *, obj: str, field: str) -> NodeSelector:
    """A ``NodeSelector`` (required node affinity): at least one term, terms ORed."""
    r = Reader(obj)
    m = r.mapping(raw, field)
    terms_field = f"{field}.nodeSelectorTerms"
    terms = tuple(
        node_selector_term_from_raw(term, obj=obj, field=path)
        for path, term in r.objects(m.get("nodeSelectorTerms"), terms_field)
    )
    if not terms:
        raise r.error(terms_field, "must have at least one term")
    return NodeSelector(terms)


def preferred_scheduling_term_from_raw(
    raw: object, *, obj: str, field: str
) -> PreferredSchedulingTerm:
    """A weighted node-selector term; the weight must be in 1..100."""
    r = Reader(obj)
    m = r.mapping(raw, field)
    weight = r.integer(m.get("weight"), f"{field}.weight")
    if not 1 <= weight <= 100:
        raise r.error(f"{field}.weight", f"must be in the range 1-100, got {weight}")
    term = node_selector_term_from_raw(m.get("preference"), obj=obj, field=f"{field}.preference")
    return PreferredSchedulingTerm(weight, term)
