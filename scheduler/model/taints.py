"""Taints and tolerations with kube's matching rules (k8s.io/api/core/v1 toleration.go)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Effect(StrEnum):
    NO_SCHEDULE = "NoSchedule"
    PREFER_NO_SCHEDULE = "PreferNoSchedule"
    NO_EXECUTE = "NoExecute"


@dataclass(frozen=True, slots=True)
class Taint:
    key: str
    value: str
    effect: Effect

    def describe(self) -> str:
        """``{key: value}`` as kube-scheduler prints an untolerated taint."""
        return f"{{{self.key}: {self.value}}}"


@dataclass(frozen=True, slots=True)
class Toleration:
    """``operator`` is ``Equal`` or ``Exists``; empty ``effect`` matches every effect."""

    key: str
    operator: str
    value: str
    effect: Effect | None
    toleration_seconds: int | None = None

    def tolerates(self, taint: Taint) -> bool:
        """ToleratesTaint: effect, key (empty key with Exists matches all) and value."""
        if self.effect is not None and self.effect != taint.effect:
            return False
        if self.key and self.key != taint.key:
            return False
        if self.operator == "Exists":
            return True
        return self.value == taint.value  # Equal (the default operator)


def tolerated(taint: Taint, tolerations: tuple[Toleration, ...]) -> bool:
    """Whether any toleration tolerates ``taint``."""
    return any(t.tolerates(taint) for t in tolerations)
