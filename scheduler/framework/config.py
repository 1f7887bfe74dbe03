"""KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1): the subset we run, validated.

``load_config`` turns the parsed YAML document into typed settings. Anything we do not
support is an error naming the field (``profiles[0].plugins.filter.enabled[1].name``), never
a silent ignore. Plugin args are validated later by each plugin's constructor; the profile
builder wraps their ValueError into a ConfigError naming ``pluginConfig[i].args``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from scheduler.framework.interfaces import PluginArgs

API_VERSION = "kubescheduler.config.k8s.io/v1"
KIND = "KubeSchedulerConfiguration"
DEFAULT_SCHEDULER_NAME = "batch-scheduler"

EXTENSION_POINTS = ("preFilter", "filter", "postFilter", "preScore", "score")
"""Points that can be configured one by one besides ``multiPoint``."""

DEFAULT_PLUGINS: tuple[tuple[str, int], ...] = (
    ("NodeUnschedulable", 0),
    ("NodeName", 0),
    ("TaintToleration", 3),
    ("NodeAffinity", 2),
    ("NodePorts", 0),
    ("NodeResourcesFit", 1),
    ("VolumeRestrictions", 0),
    ("NodeVolumeLimits", 0),
    ("VolumeBinding", 1),
    ("VolumeZone", 0),
    ("PodTopologySpread", 2),
    ("InterPodAffinity", 2),
    ("DefaultPreemption", 0),
    ("NodeResourcesBalancedAllocation", 1),
    ("ImageLocality", 1),
)
"""kube-scheduler's default profile (v1.35), minus plugins we do not implement, in its
multiPoint order and with its score weights (DefaultPreemption runs at postFilter only)."""

BUILT_IN = frozenset({"PrioritySort", "DefaultBinder", "SchedulingGates"})
"""kube plugins whose job our queue and binder do: naming them is accepted and changes nothing."""
UNSUPPORTED = frozenset(
    {
        "DynamicResources",
    }
)
"""kube plugins we do not implement: disabling them is fine, enabling them is an error."""


MAX_DURATION_SECONDS = (2**63 - 1) // 10**9
"""The longest Go ``time.Duration`` in whole seconds (about 292 years): kube-scheduler
cannot even parse a longer duration, nor turn a longer backoff into one."""
MAX_LEASE_SECONDS = 2**31 - 1
"""A Lease's ``spec.leaseDurationSeconds`` is an int32."""
JITTER_FACTOR = 1.2
"""client-go's leader election: ``renewDeadline`` must exceed ``retryPeriod`` times this."""


class ConfigError(ValueError):
    """A configuration value we cannot run with; ``path`` names the field, ``file`` the file."""

    def __init__(self, path: str, message: str, *, file: str | None = None) -> None:
        where = ": ".join(part for part in (file, path) if part)
        super().__init__(f"{where}: {message}")
        self.path = path
        self.message = message
        self.file = file

    def in_file(self, file: str) -> ConfigError:
        """The same error, naming the file it came from (kept if already named)."""
        return self if self.file else ConfigError(self.path, self.message, file=file)


@dataclass(frozen=True, slots=True)
class PluginSpec:
    """One enabled plugin: its score weight and the points where it is switched off."""

    name: str
    weight: int = 1
    disabled_points: frozenset[str] = frozenset()


@dataclass(frozen=True, slots=True)
class ProfileConfig:
    scheduler_name: str
    plugins: tuple[PluginSpec, ...]
    plugin_args: Mapping[str, PluginArgs]
    percentage_of_nodes_to_score: int | None = None


@dataclass(frozen=True, slots=True)
class LeaderElectionConfig:
    leader_elect: bool = False
    lease_duration: float = 15.0
    renew_deadline: float = 10.0
    retry_period: float = 2.0
    resource_name: str = DEFAULT_SCHEDULER_NAME
    resource_namespace: str = "kube-system"


@dataclass(frozen=True, slots=True)
class SchedulerConfig:
    profiles: tuple[ProfileConfig, ...]
    percentage_of_nodes_to_score: int = 0
    pod_initial_backoff_seconds: float = 1.0
    pod_max_backoff_seconds: float = 10.0
    leader_election: LeaderElectionConfig = field(default_factory=LeaderElectionConfig)


def default_config(scheduler_name: str = DEFAULT_SCHEDULER_NAME) -> SchedulerConfig:
    return load_config({}, default_scheduler_name=scheduler_name)


def load_config(
    doc: object, *, default_scheduler_name: str = DEFAULT_SCHEDULER_NAME
) -> SchedulerConfig:
    """Validate a parsed configuration document (an empty one means all defaults)."""
    top = _mapping(doc if doc is not None else {}, "")
    _known(
        top,
        "",
        {
            "apiVersion",
            "kind",
            "profiles",
            "percentageOfNodesToScore",
            "podInitialBackoffSeconds",
            "podMaxBackoffSeconds",
            "leaderElection",
        },
    )
    if top and top.get("apiVersion") != API_VERSION:
        raise ConfigError("apiVersion", f"must be {API_VERSION!r}, got {top.get('apiVersion')!r}")
    if top and top.get("kind") != KIND:
        raise ConfigError("kind", f"must be {KIND!r}, got {top.get('kind')!r}")
    percentage = _int(top.get("percentageOfNodesToScore", 0), "percentageOfNodesToScore", 0, 100)
    # kube: initial > 0 and max >= initial; the upper bound is what a Go duration holds.
    initial = _int(
        top.get("podInitialBackoffSeconds", 1), "podInitialBackoffSeconds", 1, MAX_DURATION_SECONDS
    )
    maximum = _int(
        top.get("podMaxBackoffSeconds", 10), "podMaxBackoffSeconds", 1, MAX_DURATION_SECONDS
    )
    if maximum < initial:
        raise ConfigError(
            "podMaxBackoffSeconds",
            f"must be greater than or equal to podInitialBackoffSeconds ({initial}), got {maximum}",
        )
    raw_profiles = top.get("profiles") or [{}]
    profiles = tuple(
        _profile(p, f"profiles[{i}]", default_scheduler_name)
        for i, p in enumerate(_list(raw_profiles, "profiles"))
    )
    names = [p.scheduler_name for p in profiles]
    for i, name in enumerate(names):
        if name in names[:i]:
            raise ConfigError(f"profiles[{i}].schedulerName", f"duplicate {name!r}")
    return SchedulerConfig(
        profiles=profiles,
        percentage_of_nodes_to_score=percentage,
        pod_initial_backoff_seconds=float(initial),
        pod_max_backoff_seconds=float(maximum),
        leader_election=_leader_election(top.get("leaderElection"), default_scheduler_name),
    )


def _profile(raw: object, path: str, default_name: str) -> ProfileConfig:
    doc = _mapping(raw, path)
    _known(doc, path, {"schedulerName", "plugins", "pluginConfig", "percentageOfNodesToScore"})
    name = doc.get("schedulerName", default_name)
    if not isinstance(name, str) or not name:
        raise ConfigError(f"{path}.schedulerName", "must be a non-empty string")
    percentage = doc.get("percentageOfNodesToScore")
    if percentage is not None:
        percentage = _int(percentage, f"{path}.percentageOfNodesToScore", 0, 100)
    plugins = _plugins(doc.get("plugins"), f"{path}.plugins")
    args: dict[str, PluginArgs] = {}
    enabled = {p.name for p in plugins}
    for i, entry in enumerate(_list(doc.get("pluginConfig") or [], f"{path}.pluginConfig")):
        where = f"{path}.pluginConfig[{i}]"
        item = _mapping(entry, where)
        _known(item, where, {"name", "args"})
        plugin = item.get("name")
        if not isinstance(plugin, str) or plugin not in {n for n, _ in DEFAULT_PLUGINS}:
            raise ConfigError(f"{where}.name", f"unknown plugin {plugin!r}")
        if plugin in args:
            raise ConfigError(f"{where}.name", f"repeated pluginConfig for {plugin!r}")
        plugin_args = _mapping(item.get("args") or {}, f"{where}.args")
        plugin_args = {k: v for k, v in plugin_args.items() if k not in ("apiVersion", "kind")}
        if plugin in enabled:
            args[plugin] = plugin_args
    return ProfileConfig(name, plugins, args, percentage)


def _plugins(raw: object, path: str) -> tuple[PluginSpec, ...]:
    """kube's plugin set merge: defaults, then multiPoint disabled/enabled, then per-point."""
    doc = _mapping(raw or {}, path)
    _known(
        doc,
        path,
        {
            "multiPoint",
            *EXTENSION_POINTS,
            "queueSort",
            "bind",
            "postFilter",
            "reserve",
            "permit",
            "preBind",
            "postBind",
            "preEnqueue",
        },
    )
    order: list[str] = [name for name, _ in DEFAULT_PLUGINS]
    weights = dict(DEFAULT_PLUGINS)
    disabled_points: dict[str, set[str]] = {}
    for point in (
        "queueSort",
        "bind",
        "reserve",
        "permit",
        "preBind",
        "postBind",
        "preEnqueue",
    ):
        if point in doc:
            for name, _, where in _entries(doc[point], f"{path}.{point}", "enabled"):
                if name not in BUILT_IN:
                    raise ConfigError(
                        f"{where}.name", f"plugin {name!r} is not supported at {point}"
                    )
    multi = doc.get("multiPoint")
    if multi is not None:
        for name, _, _where in _entries(multi, f"{path}.multiPoint", "disabled"):
            order = [] if name == "*" else [n for n in order if n != name]
        for name, weight, where in _entries(multi, f"{path}.multiPoint", "enabled"):
            _check_enabled(name, f"{where}.name")
            if name in BUILT_IN:
                continue
            if name not in order:
                order.append(name)
            if weight is not None:
                weights[name] = weight
    for point in EXTENSION_POINTS:
        if point not in doc:
            continue
        for name, _, _where in _entries(doc[point], f"{path}.{point}", "disabled"):
            targets = list(order) if name == "*" else [name]
            for target in targets:
                disabled_points.setdefault(target, set()).add(point)
        for name, weight, where in _entries(doc[point], f"{path}.{point}", "enabled"):
            _check_enabled(name, f"{where}.name")
            if name in BUILT_IN:
                continue
            if name not in order:
                order.append(name)
            disabled_points.get(name, set()).discard(point)
            if point == "score" and weight is not None:
                weights[name] = weight
    return tuple(
        PluginSpec(n, weights.get(n, 1) or 1, frozenset(disabled_points.get(n, ()))) for n in order
    )


def _check_enabled(name: str, where: str) -> None:
    if name in UNSUPPORTED:
        raise ConfigError(where, f"plugin {name!r} is not supported by batch-scheduler")
    if name not in BUILT_IN and name not in dict(DEFAULT_PLUGINS):
        raise ConfigError(where, f"unknown plugin {name!r}")


def _entries(raw: object, path: str, key: str) -> list[tuple[str, int | None, str]]:
    """(name, weight, path of the entry) of ``path.key``; a name listed twice is an error.

    kube-scheduler refuses a plugin enabled twice at one point ("already registered") when
    it builds the framework; we refuse it here, with the field path of the second entry.
    """
    doc = _mapping(raw or {}, path)
    _known(doc, path, {"enabled", "disabled"})
    out: list[tuple[str, int | None, str]] = []
    first: dict[str, int] = {}
    for i, entry in enumerate(_list(doc.get(key) or [], f"{path}.{key}")):
        where = f"{path}.{key}[{i}]"
        item = _mapping(entry, where)
        _known(item, where, {"name", "weight"})
        name = item.get("name")
        if not isinstance(name, str) or not name:
            raise ConfigError(f"{where}.name", "must be a non-empty string")
        if key == "enabled" and name in first:
            raise ConfigError(where, f"duplicate plugin {name!r} (already at {key}[{first[name]}])")
        first.setdefault(name, i)
        weight = item.get("weight")
        if weight is not None:
            weight = _int(weight, f"{where}.weight", 0, 100)
        out.append((name, weight, where))
    return out


def _leader_election(raw: object, default_name: str) -> LeaderElectionConfig:
    path = "leaderElection"
    doc = _mapping(raw or {}, path)
    _known(
        doc,
        path,
        {
            "leaderElect",
            "leaseDuration",
            "renewDeadline",
            "retryPeriod",
            "resourceLock",
            "resourceName",
            "resourceNamespace",
        },
    )
    lock = doc.get("resourceLock", "leases")
    if lock != "leases":
        raise ConfigError(f"{path}.resourceLock", f"only 'leases' is supported, got {lock!r}")
    elect = doc.get("leaderElect", False)
    if not isinstance(elect, bool):
        raise ConfigError(f"{path}.leaderElect", "must be true or false")
    config = LeaderElectionConfig(
        leader_elect=elect,
        lease_duration=_duration(doc.get("leaseDuration", "15s"), f"{path}.leaseDuration"),
        renew_deadline=_duration(doc.get("renewDeadline", "10s"), f"{path}.renewDeadline"),
        retry_period=_duration(doc.get("retryPeriod", "2s"), f"{path}.retryPeriod"),
        resource_name=_str(doc.get("resourceName", default_name), f"{path}.resourceName"),
        resource_namespace=_str(
            doc.get("resourceNamespace", "kube-system"), f"{path}.resourceNamespace"
        ),
    )
    # componentbase's ValidateLeaderElectionConfiguration, client-go's NewLeaderElector, and
    # the Lease API (leaseDurationSeconds is an int32, rounded up from the duration).
    if math.ceil(config.lease_duration) > MAX_LEASE_SECONDS:
        raise ConfigError(
            f"{path}.leaseDuration",
            f"must be at most {MAX_LEASE_SECONDS}s (a Lease's leaseDurationSeconds is an int32)",
        )
    if config.lease_duration <= config.renew_deadline:
        raise ConfigError(f"{path}.leaseDuration", "must be greater than renewDeadline")
    if config.renew_deadline <= JITTER_FACTOR * config.retry_period:
        raise ConfigError(
            f"{path}.renewDeadline", f"must be greater than retryPeriod*{JITTER_FACTOR}"
        )
    return config


_UNITS = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 0.001}


def _duration(raw: object, path: str) -> float:
    """A Go duration such as ``15s``, ``1m30s`` or ``500ms``."""
    if not isinstance(raw, str) or not raw:
        raise ConfigError(path, f"must be a duration such as '15s', got {raw!r}")
    total, number, i = 0.0, "", 0
    while i < len(raw):
        ch = raw[i]
        if ch.isdigit() or ch == ".":
            number += ch
            i += 1
            continue
        unit = "ms" if raw.startswith("ms", i) else ch
        if unit not in _UNITS or not number:
            raise ConfigError(path, f"must be a duration such as '15s', got {raw!r}")
        try:
            total += float(number) * _UNITS[unit]
        except ValueError:
            raise ConfigError(path, f"must be a duration such as '15s', got {raw!r}") from None
        number = ""
        i += len(unit)
    if number or total <= 0:
        raise ConfigError(path, f"must be a positive duration such as '15s', got {raw!r}")
    if total > MAX_DURATION_SECONDS:
        raise ConfigError(path, f"must be at most {MAX_DURATION_SECONDS}s, got {raw!r}")
    return total


def _mapping(raw: object, path: str) -> Mapping[str, object]:
    if not isinstance(raw, Mapping):
        raise ConfigError(path or "<document>", f"must be a mapping, got {type(raw).__name__}")
    return raw


def _list(raw: object, path: str) -> Sequence[object]:
    if not isinstance(raw, list):
        raise ConfigError(path, f"must be a list, got {type(raw).__name__}")
    return raw


def _str(raw: object, path: str) -> str:
    if not isinstance(raw, str) or not raw:
        raise ConfigError(path, "must be a non-empty string")
    return raw


def _int(raw: object, path: str, low: int, high: int | None) -> int:
    if isinstance(raw, bool) or not isinstance(raw, int):
        raise ConfigError(path, f"must be an integer, got {raw!r}")
    if raw < low or (high is not None and raw > high):
        bound = f"between {low} and {high}" if high is not None else f">= {low}"
        raise ConfigError(path, f"must be {bound}, got {raw}")
    return raw


def _known(doc: Mapping[str, object], path: str, allowed: set[str]) -> None:
    for key in doc:
        if key not in allowed:
            where = f"{path}.{key}" if path else str(key)
            raise ConfigError(where, "unknown or unsupported field")
