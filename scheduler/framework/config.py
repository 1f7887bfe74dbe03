"""KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1), validated.

``load_config`` turns the parsed YAML document into typed settings. Every top-level field of
kube-scheduler v1.37.2's v1 type is read, so a configuration copied from a running
kube-scheduler (its ``--write-config-to`` output) loads; each one is honoured, or accepted
with a note saying it has no effect here (:func:`notes`, logged by ``run``), or refused
naming its path (``extenders`` when not empty). An unknown field, or an unknown plugin name
enabled or disabled anywhere (``*`` disables all), is an error naming it
(``profiles[0].plugins.filter.enabled[1].name``), never a silent ignore. Plugin args are
validated later by each plugin's constructor; the profile builder wraps their ValueError
into a ConfigError naming ``pluginConfig[i].args``. docs/operations.md lists every field and
what it does here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from scheduler.framework.config_component import (
    DEFAULT_SCHEDULER_NAME,
    MAX_INT32,
    ClientConnectionConfig,
    LeaderElectionConfig,
    client_connection,
    leader_election,
)
from scheduler.framework.config_values import (
    MAX_DURATION_SECONDS,
    WITHOUT_EFFECT,
    ConfigError,
    as_bool,
    as_duration,
    as_int,
    as_list,
    as_mapping,
    check_known,
)
from scheduler.framework.feature_gates import GENERIC_WORKLOAD, FeatureGates

if TYPE_CHECKING:
    from collections.abc import Collection, Mapping

    from scheduler.framework.interfaces import PluginArgs

__all__ = [
    "API_VERSION",
    "BUILT_IN",
    "DEFAULT_PLUGINS",
    "DEFAULT_SCHEDULER_NAME",
    "EXTENSION_POINTS",
    "KIND",
    "ClientConnectionConfig",
    "ConfigError",
    "LeaderElectionConfig",
    "PluginSpec",
    "ProfileConfig",
    "SchedulerConfig",
    "default_config",
    "load_config",
]

API_VERSION = "kubescheduler.config.k8s.io/v1"
KIND = "KubeSchedulerConfiguration"

EXTENSION_POINTS = (
    "preEnqueue",
    "preFilter",
    "filter",
    "postFilter",
    "preScore",
    "score",
    "reserve",
    "permit",
    "preBind",
    "postBind",
    "podGroupPostFilter",
)
"""Points that can be configured one by one besides ``multiPoint`` (podGroupPostFilter: kube
v1.37's workload-aware preemption, run for a pod group that does not fit)."""

DEFAULT_PLUGINS: tuple[tuple[str, int], ...] = (
    ("SchedulingGates", 0),
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
    ("DynamicResources", 2),
    ("DefaultPreemption", 0),
    ("NodeResourcesBalancedAllocation", 1),
    ("ImageLocality", 1),
)
"""kube-scheduler's default profile (v1.37), minus plugins we do not implement, in its
multiPoint order and with its score weights (DynamicResources goes before DefaultPreemption
with weight 2, as kube's applyDynamicResources puts it with the DynamicResourceAllocation
gate, GA and locked on; DefaultPreemption runs at postFilter and, for pod groups,
podGroupPostFilter)."""

GANG_SCHEDULING = "GangScheduling"
DEFAULT_PREEMPTION = "DefaultPreemption"
GATED_PLUGINS: tuple[tuple[str, str, int], ...] = ((GENERIC_WORKLOAD, GANG_SCHEDULING, 0),)
"""(gate, plugin, weight): kube's applyFeatureGates appends these to the default profile
when their gate is on (default_plugins.go)."""

IN_TREE = frozenset([*(name for name, _ in DEFAULT_PLUGINS), GANG_SCHEDULING])
"""The in-tree plugins a configuration may name (enabled by default or by a gate)."""

BUILT_IN = frozenset({"PrioritySort", "DefaultBinder"})
"""kube plugins whose job our queue and binder do: naming them is accepted and changes nothing."""


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
    without_effect: tuple[str, ...] = ()
    """Enabled plugins of ``WITHOUT_EFFECT``: accepted, not run."""


@dataclass(frozen=True, slots=True)
class SchedulerConfig:
    profiles: tuple[ProfileConfig, ...]
    percentage_of_nodes_to_score: int = 0
    pod_initial_backoff_seconds: float = 1.0
    pod_max_backoff_seconds: float = 10.0
    pod_max_in_unschedulable_pods_seconds: float = 300.0
    """How long a pod may wait in the unschedulable pool for an event before the flush
    retries it (kube's ``--pod-max-in-unschedulable-pods-duration``, 5 min)."""
    leader_election: LeaderElectionConfig = field(default_factory=LeaderElectionConfig)
    client_connection: ClientConnectionConfig = field(default_factory=ClientConnectionConfig)
    parallelism: int = 16
    """kube's Filter/Score worker count; ours runs them on one thread, so ``run`` uses it as
    the number of bind calls in flight unless ``--bind-concurrency`` is given."""
    enable_profiling: bool = False
    enable_contention_profiling: bool = False
    delay_cache_until_active: bool = False


def default_config(
    scheduler_name: str = DEFAULT_SCHEDULER_NAME, *, gates: FeatureGates | None = None
) -> SchedulerConfig:
    return load_config({}, default_scheduler_name=scheduler_name, gates=gates)


def default_plugins(gates: FeatureGates | None = None) -> tuple[tuple[str, int], ...]:
    """The default profile's plugins and weights under ``gates`` (kube's applyFeatureGates)."""
    gated = tuple(
        (name, weight)
        for gate, name, weight in GATED_PLUGINS
        if gates is not None and gates.enabled(gate)
    )
    return DEFAULT_PLUGINS + gated


def load_config(
    doc: object,
    *,
    default_scheduler_name: str = DEFAULT_SCHEDULER_NAME,
    plugin_names: Collection[str] = (),
    gates: FeatureGates | None = None,
) -> SchedulerConfig:
    """Validate a parsed configuration document (an empty one means all defaults).

    ``plugin_names``: out-of-tree plugins registered besides the in-tree ones (app's
    plugin_loading); they are accepted wherever an in-tree name is, enabled by none.
    ``gates``: the feature gates, which add plugins to the default profile."""
    top = as_mapping(doc if doc is not None else {}, "")
    check_known(
        top,
        "",
        {
            "apiVersion",
            "kind",
            "profiles",
            "percentageOfNodesToScore",
            "podInitialBackoffSeconds",
            "podMaxBackoffSeconds",
            "podMaxInUnschedulablePodsDuration",
            "leaderElection",
            "clientConnection",
            "parallelism",
            "enableProfiling",
            "enableContentionProfiling",
            "extenders",
            "delayCacheUntilActive",
        },
    )
    if top and top.get("apiVersion") != API_VERSION:
        raise ConfigError("apiVersion", f"must be {API_VERSION!r}, got {top.get('apiVersion')!r}")
    if top and top.get("kind") != KIND:
        raise ConfigError("kind", f"must be {KIND!r}, got {top.get('kind')!r}")
    percentage = as_int(top.get("percentageOfNodesToScore", 0), "percentageOfNodesToScore", 0, 100)
    # kube: initial > 0 and max >= initial; the upper bound is what a Go duration holds.
    initial = as_int(
        top.get("podInitialBackoffSeconds", 1), "podInitialBackoffSeconds", 1, MAX_DURATION_SECONDS
    )
    maximum = as_int(
        top.get("podMaxBackoffSeconds", 10), "podMaxBackoffSeconds", 1, MAX_DURATION_SECONDS
    )
    if maximum < initial:
        raise ConfigError(
            "podMaxBackoffSeconds",
            f"must be greater than or equal to podInitialBackoffSeconds ({initial}), got {maximum}",
        )
    extenders = top.get("extenders")  # null or [] (kube writes none) is fine
    if extenders is not None and as_list(extenders, "extenders"):
        raise ConfigError(
            "extenders",
            "HTTP scheduler extenders are not supported by batch-scheduler; a Python plugin "
            "does what an extender does (docs/plugins.md)",
        )
    raw_profiles = top.get("profiles") or [{}]
    defaults = default_plugins(gates)
    profiles = tuple(
        _profile(p, f"profiles[{i}]", default_scheduler_name, frozenset(plugin_names), defaults)
        for i, p in enumerate(as_list(raw_profiles, "profiles"))
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
        leader_election=leader_election(top.get("leaderElection"), default_scheduler_name),
        client_connection=client_connection(top.get("clientConnection")),
        parallelism=as_int(top.get("parallelism", 16), "parallelism", 1, MAX_INT32),
        pod_max_in_unschedulable_pods_seconds=as_duration(
            top.get("podMaxInUnschedulablePodsDuration", "5m"), "podMaxInUnschedulablePodsDuration"
        ),
        enable_profiling=as_bool(top.get("enableProfiling", False), "enableProfiling"),
        enable_contention_profiling=as_bool(
            top.get("enableContentionProfiling", False), "enableContentionProfiling"
        ),
        delay_cache_until_active=as_bool(
            top.get("delayCacheUntilActive", False), "delayCacheUntilActive"
        ),
    )


def _profile(
    raw: object,
    path: str,
    default_name: str,
    extra: frozenset[str] = frozenset(),
    defaults: tuple[tuple[str, int], ...] = DEFAULT_PLUGINS,
) -> ProfileConfig:
    doc = as_mapping(raw, path)
    check_known(doc, path, {"schedulerName", "plugins", "pluginConfig", "percentageOfNodesToScore"})
    name = doc.get("schedulerName", default_name)
    if not isinstance(name, str) or not name:
        raise ConfigError(f"{path}.schedulerName", "must be a non-empty string")
    percentage = doc.get("percentageOfNodesToScore")
    if percentage is not None:
        percentage = as_int(percentage, f"{path}.percentageOfNodesToScore", 0, 100)
    ignored: list[str] = []
    plugins = _plugins(doc.get("plugins"), f"{path}.plugins", extra, ignored, defaults)
    args: dict[str, PluginArgs] = {}
    enabled = {p.name for p in plugins}
    for i, entry in enumerate(as_list(doc.get("pluginConfig") or [], f"{path}.pluginConfig")):
        where = f"{path}.pluginConfig[{i}]"
        item = as_mapping(entry, where)
        check_known(item, where, {"name", "args"})
        plugin = item.get("name")
        if not isinstance(plugin, str) or (
            plugin not in IN_TREE and plugin not in extra and plugin not in WITHOUT_EFFECT
        ):
            raise ConfigError(f"{where}.name", f"unknown plugin {plugin!r}")
        if plugin in args:
            raise ConfigError(f"{where}.name", f"repeated pluginConfig for {plugin!r}")
        plugin_args = as_mapping(item.get("args") or {}, f"{where}.args")
        plugin_args = {k: v for k, v in plugin_args.items() if k not in ("apiVersion", "kind")}
        if plugin in enabled:
            args[plugin] = plugin_args
    return ProfileConfig(name, plugins, args, percentage, tuple(dict.fromkeys(ignored)))


def _plugins(
    raw: object,
    path: str,
    extra: frozenset[str] = frozenset(),
    ignored: list[str] | None = None,
    defaults: tuple[tuple[str, int], ...] = DEFAULT_PLUGINS,
) -> tuple[PluginSpec, ...]:
    """kube's plugin set merge: defaults, then multiPoint disabled/enabled, then per-point;
    enabled names of ``WITHOUT_EFFECT`` go to ``ignored``."""
    skipped = [] if ignored is None else ignored
    doc = as_mapping(raw or {}, path)
    check_known(
        doc,
        path,
        {
            "multiPoint",
            *EXTENSION_POINTS,
            "queueSort",
            "bind",
            # kube v1.37's placement points (TopologyAwareWorkloadScheduling, alpha).
            "placementGenerate",
            "placementScore",
        },
    )
    order: list[str] = [name for name, _ in defaults]
    weights = dict(defaults)
    disabled_points: dict[str, set[str]] = {}
    for point in ("queueSort", "bind", "placementGenerate", "placementScore"):
        if point in doc:
            for name, _, where in _entries(doc[point], f"{path}.{point}", "disabled"):
                _check_disabled(name, f"{where}.name", extra)
            for name, _, where in _entries(doc[point], f"{path}.{point}", "enabled"):
                if name not in BUILT_IN:
                    raise ConfigError(
                        f"{where}.name", f"plugin {name!r} is not supported at {point}"
                    )
    multi = doc.get("multiPoint")
    if multi is not None:
        for name, _, where in _entries(multi, f"{path}.multiPoint", "disabled"):
            _check_disabled(name, f"{where}.name", extra)
            order = [] if name == "*" else [n for n in order if n != name]
        for name, weight, where in _entries(multi, f"{path}.multiPoint", "enabled"):
            _check_enabled(name, f"{where}.name", extra)
            if name in BUILT_IN:
                continue
            if name in WITHOUT_EFFECT:
                skipped.append(name)
                continue
            if name not in order:
                order.append(name)
            if weight is not None:
                weights[name] = weight
    for point in EXTENSION_POINTS:
        if point not in doc:
            continue
        for name, _, where in _entries(doc[point], f"{path}.{point}", "disabled"):
            _check_disabled(name, f"{where}.name", extra)
            targets = list(order) if name == "*" else [name]
            for target in targets:
                disabled_points.setdefault(target, set()).add(point)
        for name, weight, where in _entries(doc[point], f"{path}.{point}", "enabled"):
            _check_enabled(name, f"{where}.name", extra)
            if name in BUILT_IN:
                continue
            if name in WITHOUT_EFFECT:
                skipped.append(name)
                continue
            if name not in order:
                order.append(name)
            disabled_points.get(name, set()).discard(point)
            if point == "score" and weight is not None:
                weights[name] = weight
    return tuple(
        PluginSpec(n, weights.get(n, 1) or 1, frozenset(disabled_points.get(n, ()))) for n in order
    )


def _check_enabled(name: str, where: str, extra: frozenset[str] = frozenset()) -> None:
    known = BUILT_IN.union(WITHOUT_EFFECT, extra)
    if name not in known and name not in IN_TREE:
        raise ConfigError(where, f"unknown plugin {name!r}")


def _check_disabled(name: str, where: str, extra: frozenset[str] = frozenset()) -> None:
    """A disabled name is a plugin we know, or ``*`` (all of them), as an enabled one must be.

    kube-scheduler ignores a disabled name it does not know (its merge only collects the
    names), so a typo silently leaves the plugin on; we refuse it with the same message as
    an unknown enabled name."""
    if name != "*":
        _check_enabled(name, where, extra)


def _entries(raw: object, path: str, key: str) -> list[tuple[str, int | None, str]]:
    """(name, weight, path of the entry) of ``path.key``; a name listed twice is an error.

    kube-scheduler refuses a plugin enabled twice at one point ("already registered") when
    it builds the framework; we refuse it here, with the field path of the second entry.
    """
    doc = as_mapping(raw or {}, path)
    check_known(doc, path, {"enabled", "disabled"})
    out: list[tuple[str, int | None, str]] = []
    first: dict[str, int] = {}
    for i, entry in enumerate(as_list(doc.get(key) or [], f"{path}.{key}")):
        where = f"{path}.{key}[{i}]"
        item = as_mapping(entry, where)
        check_known(item, where, {"name", "weight"})
        name = item.get("name")
        if not isinstance(name, str) or not name:
            raise ConfigError(f"{where}.name", "must be a non-empty string")
        if key == "enabled" and name in first:
            raise ConfigError(where, f"duplicate plugin {name!r} (already at {key}[{first[name]}])")
        first.setdefault(name, i)
        weight = item.get("weight")
        if weight is not None:
            weight = as_int(weight, f"{where}.weight", 0, 100)
        out.append((name, weight, where))
    return out
