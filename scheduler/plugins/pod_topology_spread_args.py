"""PodTopologySpreadArgs: validation and the default constraints it configures.

What: ``defaultingType`` (``System``, kube's default, or ``List``) and ``defaultConstraints``
(only with ``List``), checked as kube's ``ValidatePodTopologySpreadArgs`` checks them, plus
type checks of the optional fields kube leaves to its decoder. :func:`effective_defaults`
gives what kube's ``New`` keeps: the built-in hostname/zone pair under ``System``, the
configured list under ``List``.

Why a module of its own: the plugin module stays about the arithmetic; the field-by-field
messages (object and field named) live here.

Neighbours: ``plugins.pod_topology_spread`` (the only reader).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeGuard

if TYPE_CHECKING:
    from scheduler.framework.interfaces import PluginArgs

__all__ = [
    "DO_NOT_SCHEDULE",
    "HONOR",
    "IGNORE",
    "LABEL_HOSTNAME",
    "LABEL_ZONE",
    "LIST_DEFAULTING",
    "SCHEDULE_ANYWAY",
    "SYSTEM_DEFAULTING",
    "SYSTEM_DEFAULT_CONSTRAINTS",
    "DefaultConstraint",
    "effective_defaults",
    "parse_args",
]

DO_NOT_SCHEDULE = "DoNotSchedule"
SCHEDULE_ANYWAY = "ScheduleAnyway"
HONOR = "Honor"
IGNORE = "Ignore"
SYSTEM_DEFAULTING = "System"
LIST_DEFAULTING = "List"
LABEL_HOSTNAME = "kubernetes.io/hostname"
LABEL_ZONE = "topology.kubernetes.io/zone"

_ARGS = "PodTopologySpreadArgs"


@dataclass(frozen=True, slots=True)
class DefaultConstraint:
    """One default constraint: every field of a ``defaultConstraints`` entry kube reads.

    ``None`` means unset: ``minDomains`` then counts as 1, ``nodeAffinityPolicy`` as Honor
    and ``nodeTaintsPolicy`` as Ignore (kube's filterTopologySpreadConstraints).
    ``match_label_keys`` is kept because kube merges it into the constraint's selector; for
    a default constraint that selector is then replaced by the pod's DefaultSelector, so
    the keys never change what is counted.
    """

    max_skew: int
    topology_key: str
    when_unsatisfiable: str
    min_domains: int | None = None
    node_affinity_policy: str | None = None
    node_taints_policy: str | None = None
    match_label_keys: tuple[str, ...] = ()


SYSTEM_DEFAULT_CONSTRAINTS = (
    DefaultConstraint(3, LABEL_HOSTNAME, SCHEDULE_ANYWAY),
    DefaultConstraint(5, LABEL_ZONE, SCHEDULE_ANYWAY),
)
"""kube's ``systemDefaultConstraints``: soft spreading over nodes and zones."""

_CONSTRAINT_FIELDS = frozenset(
    {
        "maxSkew",
        "topologyKey",
        "whenUnsatisfiable",
        "labelSelector",
        "minDomains",
        "nodeAffinityPolicy",
        "nodeTaintsPolicy",
        "matchLabelKeys",
    }
)


def effective_defaults(
    defaulting_type: str, configured: tuple[DefaultConstraint, ...]
) -> tuple[DefaultConstraint, ...]:
    """The default constraints the plugin applies: the System pair, or the List entries."""
    return SYSTEM_DEFAULT_CONSTRAINTS if defaulting_type == SYSTEM_DEFAULTING else configured


def parse_args(args: PluginArgs) -> tuple[str, tuple[DefaultConstraint, ...]]:
    """``(defaultingType, defaultConstraints)`` validated; ValueError names the field."""
    unknown = sorted(set(args) - {"apiVersion", "kind", "defaultingType", "defaultConstraints"})
    if unknown:
        raise ValueError(f"{_ARGS}: unknown field(s): {', '.join(unknown)}")
    defaulting = args.get("defaultingType", SYSTEM_DEFAULTING)
    if defaulting not in (SYSTEM_DEFAULTING, LIST_DEFAULTING):
        raise ValueError(
            f'{_ARGS}.defaultingType: unsupported value {defaulting!r}: must be "System" or "List"'
        )
    raw = args.get("defaultConstraints")
    if raw is None:
        raw = []
    if not isinstance(raw, list):
        raise ValueError(f"{_ARGS}.defaultConstraints: must be a list")
    if defaulting == SYSTEM_DEFAULTING and raw:
        raise ValueError(
            f'{_ARGS}.defaultingType: invalid value "System":'
            " when .defaultConstraints are not empty"
        )
    parsed: list[DefaultConstraint] = []
    for i, entry in enumerate(raw):
        parsed.append(_parse_default_constraint(f"{_ARGS}.defaultConstraints[{i}]", entry))
    seen: set[tuple[str, str]] = set()
    for i, c in enumerate(parsed):
        pair = (c.topology_key, c.when_unsatisfiable)
        if pair in seen:
            raise ValueError(
                f"{_ARGS}.defaultConstraints[{i}]: duplicate topologyKey {c.topology_key!r}"
                f" with whenUnsatisfiable {c.when_unsatisfiable!r}"
            )
        seen.add(pair)
    return str(defaulting), tuple(parsed)


def _parse_default_constraint(path: str, entry: object) -> DefaultConstraint:
    if not isinstance(entry, Mapping):
        raise ValueError(f"{path}: must be a mapping")
    unknown = sorted(str(k) for k in entry if k not in _CONSTRAINT_FIELDS)
    if unknown:
        raise ValueError(f"{path}: unknown field(s): {', '.join(unknown)}")
    max_skew = entry.get("maxSkew")
    if not _is_int(max_skew) or max_skew <= 0:
        raise ValueError(f"{path}.maxSkew: must be greater than zero")
    topology_key = entry.get("topologyKey")
    if not isinstance(topology_key, str) or not topology_key:
        raise ValueError(f"{path}.topologyKey: must be a non-empty string")
    when = entry.get("whenUnsatisfiable")
    if when not in (DO_NOT_SCHEDULE, SCHEDULE_ANYWAY):
        raise ValueError(
            f'{path}.whenUnsatisfiable: unsupported value {when!r}: must be "DoNotSchedule"'
            ' or "ScheduleAnyway"'
        )
    if entry.get("labelSelector") is not None:
        raise ValueError(
            f"{path}.labelSelector: forbidden: constraint must not define a selector,"
            " as they deduced for each pod"
        )
    policies: list[str | None] = []
    for policy in ("nodeAffinityPolicy", "nodeTaintsPolicy"):
        value = entry.get(policy)
        if value is not None and value not in (HONOR, IGNORE):
            raise ValueError(
                f'{path}.{policy}: unsupported value {value!r}: must be "Honor" or "Ignore"'
            )
        policies.append(value)
    min_domains = entry.get("minDomains")
    if min_domains is not None and (not _is_int(min_domains) or min_domains <= 0):
        raise ValueError(f"{path}.minDomains: must be greater than zero")
    keys = entry.get("matchLabelKeys")
    if keys is None:
        keys = []
    if not isinstance(keys, list) or not all(isinstance(k, str) for k in keys):
        raise ValueError(f"{path}.matchLabelKeys: must be a list of strings")
    return DefaultConstraint(
        max_skew=max_skew,
        topology_key=topology_key,
        when_unsatisfiable=str(when),
        min_domains=min_domains,
        node_affinity_policy=policies[0],
        node_taints_policy=policies[1],
        match_label_keys=tuple(keys),
    )


def _is_int(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)
