"""Label selectors and node-selector terms: records and matching.

Parsing from raw dicts (with validation that names the field) lives in ``model.parse``;
these records are already valid.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Mapping


class Operator(StrEnum):
    IN = "In"
    NOT_IN = "NotIn"
    EXISTS = "Exists"
    DOES_NOT_EXIST = "DoesNotExist"
    GT = "Gt"
    LT = "Lt"


_INT64 = re.compile(r"[+-]?[0-9]+")


def _go_int64(value: str | None) -> int | None:
    """The label value as Go's strconv.ParseInt(v, 10, 64) reads it, or None.

    Python's int() also takes "1_0", spaces and unbounded values, which kube never matches.
    """
    if value is None or not _INT64.fullmatch(value):
        return None
    number = int(value)
    return number if -(2**63) <= number < 2**63 else None


@dataclass(frozen=True, slots=True)
class Requirement:
    """One ``key operator values`` requirement. Gt/Lt hold one integer value as a string."""

    key: str
    operator: Operator
    values: tuple[str, ...] = ()

    def matches(self, labels: Mapping[str, str]) -> bool:
        op = self.operator
        if op is Operator.IN:
            return self.key in labels and labels[self.key] in self.values
        if op is Operator.NOT_IN:
            return self.key not in labels or labels[self.key] not in self.values
        if op is Operator.EXISTS:
            return self.key in labels
        if op is Operator.DOES_NOT_EXIST:
            return self.key not in labels
        have = _go_int64(labels.get(self.key))
        if have is None:
            return False
        want = int(self.values[0])
        return have > want if op is Operator.GT else have < want


@dataclass(frozen=True, slots=True)
class LabelSelector:
    """metav1.LabelSelector: all requirements must hold. An empty selector matches everything.

    A *nil* selector (where the API allows one) is represented by ``None`` at the use site
    and matches nothing, as in kube.
    """

    requirements: tuple[Requirement, ...] = ()

    def matches(self, labels: Mapping[str, str]) -> bool:
        return all(r.matches(labels) for r in self.requirements)

    @property
    def empty(self) -> bool:
        return not self.requirements


@dataclass(frozen=True, slots=True)
class NodeSelectorTerm:
    """Expressions match node labels; fields match ``metadata.name`` (the only supported field).

    A term with no requirements matches no node (kube's nodeSelectorTerm semantics).
    """

    match_expressions: tuple[Requirement, ...] = ()
    match_fields: tuple[Requirement, ...] = ()

    def matches(self, labels: Mapping[str, str], node_name: str) -> bool:
        if not self.match_expressions and not self.match_fields:
            return False
        if not all(r.matches(labels) for r in self.match_expressions):
            return False
        if self.match_fields:
            fields = {"metadata.name": node_name}
            return all(r.matches(fields) for r in self.match_fields)
        return True


@dataclass(frozen=True, slots=True)
class NodeSelector:
    """Required node affinity: the terms are ORed."""

    terms: tuple[NodeSelectorTerm, ...]

    def matches(self, labels: Mapping[str, str], node_name: str) -> bool:
        return any(t.matches(labels, node_name) for t in self.terms)


@dataclass(frozen=True, slots=True)
class PreferredSchedulingTerm:
    weight: int
    term: NodeSelectorTerm
