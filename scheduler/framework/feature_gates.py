"""Feature gates: kube-scheduler's ``--feature-gates`` flag, by kube's names and with its
messages, and what batch-scheduler does with them.

Two gates change what this scheduler does: ``GenericWorkload`` (PodGroups and gang
scheduling: model.pod_groups, cycle/schedule_group.py) and ``OpportunisticBatching``
(false: batching off, as kube's). Every other gate of kube-scheduler v1.37.2 is accepted
as kube accepts it; one set away from its default is named in a note, since it has no
effect here. A name kube does not know is an error, as in kube.

Neighbours: framework/feature_gate_table.py (the known gates), framework/config.py (the
default plugins follow the gates).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from scheduler.framework.feature_gate_table import GATES

if TYPE_CHECKING:
    from collections.abc import Mapping

GENERIC_WORKLOAD = "GenericWorkload"
OPPORTUNISTIC_BATCHING = "OpportunisticBatching"
IMPLEMENTED = frozenset({GENERIC_WORKLOAD, OPPORTUNISTIC_BATCHING})
"""The gates whose setting changes what batch-scheduler does."""
_ALL = {"AllAlpha": "ALPHA", "AllBeta": "BETA"}


class FeatureGateError(ValueError):
    """A ``--feature-gates`` value kube-scheduler would refuse, in kube's words."""


@dataclass(frozen=True, slots=True)
class FeatureGates:
    """The gates as set (kube's name → value); everything else at kube's default."""

    set: Mapping[str, bool] = field(default_factory=dict)

    def enabled(self, name: str) -> bool:
        if name in self.set:
            return self.set[name]
        default, stage, _ = GATES[name]
        for all_gate, all_stage in _ALL.items():
            if stage == all_stage and self.set.get(all_gate):
                return True
        return default

    @property
    def generic_workload(self) -> bool:
        return self.enabled(GENERIC_WORKLOAD)

    def notes(self) -> tuple[str, ...]:
        """One line per gate set away from its default that this scheduler does not act
        on (said once when ``run`` starts)."""
        return tuple(
            f"feature gate {name}={str(value).lower()} is accepted, but batch-scheduler "
            "does not implement it: it has no effect here"
            for name, value in sorted(self.set.items())
            if name not in IMPLEMENTED and name not in _ALL and value != GATES[name][0]
        )

    def flag(self) -> str:
        """The ``--feature-gates`` value that sets these gates (for kube-scheduler too)."""
        return ",".join(f"{name}={str(value).lower()}" for name, value in sorted(self.set.items()))


def parse_feature_gates(values: str | list[str] | None) -> FeatureGates:
    """Read ``--feature-gates`` values (``A=true,B=false``, repeatable, ``kube:`` prefix
    allowed), with kube's errors for an unknown gate, a bad value and a locked gate."""
    if values is None:
        return FeatureGates()
    items = [values] if isinstance(values, str) else list(values)
    out: dict[str, bool] = {}
    for text in items:
        for part in text.split(","):
            part = part.strip()
            if not part:
                continue
            key, eq, value = part.partition("=")
            key = key.strip()
            component, colon, name = key.partition(":")
            if not colon:
                component, name = "kube", key
            if component != "kube":
                raise FeatureGateError(f"component not registered: {component}")
            if not eq:
                raise FeatureGateError(f"missing bool value for {name}")
            out[name] = _gate_value(name, value.strip())
    return FeatureGates(out)


def _gate_value(name: str, value: str) -> bool:
    if name not in GATES:
        raise FeatureGateError(f"unrecognized feature gate: {name}")
    parsed = _GO_BOOLS.get(value)
    if parsed is None:
        raise FeatureGateError(
            f'invalid value of {name}={value}, err: strconv.ParseBool: parsing "{value}": '
            "invalid syntax"
        )
    default, _, locked = GATES[name]
    if locked and parsed != default:
        raise FeatureGateError(
            f"cannot set feature gate {name} to {str(parsed).lower()}, feature is locked to "
            f"{str(default).lower()}"
        )
    return parsed


_GO_BOOLS = {
    **dict.fromkeys(("1", "t", "T", "TRUE", "true", "True"), True),
    **dict.fromkeys(("0", "f", "F", "FALSE", "false", "False"), False),
}
"""Go's strconv.ParseBool."""
