"""Profile: one scheduler profile's plugins and the full pass that runs them (kube's frameworkImpl
plus the parts of schedule_one.go that pick a node).

A full pass is PreFilter → Filter over nodes (stopping after ``num_feasible_nodes_to_find``,
starting where the previous pass stopped) → PreScore → Score → NormalizeScore → weighted
totals → pick the top (ties at random). The cycle layer and batching also use the pieces
(``run_pre_filter``, ``run_filters``, ``prioritize``) to recheck a hinted node and rescore.

The Profile is the plugins' Handle: ``profile.snapshot`` is the live cluster view, valid for a
cycle as long as the cycle does not await (see cache/snapshot.py).

The points around the bind (PreEnqueue, Reserve, Permit, PreBind, PostBind) and the pods
waiting at Permit are ``profile.binding`` (framework/binding_points.py); the Handle's
``get_waiting_pod``, ``iterate_over_waiting_pods`` and ``service`` read them.

Nominated pods: on a node with pods nominated to it, Filter runs twice (with and without
them, on a detached copy of the node and a clone of the state kept current by the PreFilter
extensions; see framework/nominated.py). A pod with a nominated node tries that node first
(kube's evaluateNominatedNode).
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, TypeVar

from scheduler.framework import nominated as nominated_pods
from scheduler.framework import selection
from scheduler.framework import status as st
from scheduler.framework.binding_points import BindingPoints
from scheduler.framework.config import ConfigError, PluginSpec, ProfileConfig
from scheduler.framework.diagnosis import Diagnosis, FitError, SchedulingError
from scheduler.framework.feasible import find_feasible, plugin_raised
from scheduler.framework.interfaces import (
    MAX_NODE_SCORE,
    MIN_NODE_SCORE,
    FilterPlugin,
    FilterPrecheck,
    NominatedPods,
    NormalizeScorePlugin,
    Plugin,
    PluginArgs,
    PostFilterPlugin,
    PostFilterResult,
    PreFilterExtensions,
    PreFilterPlugin,
    PreScorePlugin,
    ScoreNodesPlugin,
    ScorePlugin,
    SignPlugin,
)

if TYPE_CHECKING:
    from scheduler.cache.node_info import NodeInfo
    from scheduler.cache.snapshot import Snapshot
    from scheduler.framework.cycle_state import CycleState
    from scheduler.framework.interfaces import ServiceKey, WaitingPod
    from scheduler.model.keys import Uid
    from scheduler.model.pod import Pod

T = TypeVar("T")
PluginFactory = Callable[[PluginArgs, "Profile"], Plugin]
ObservePoint = Callable[[str, str, float], None]
"""(extension point, status label, seconds): how a full pass reports its timings."""
ObservePlugin = Callable[[str, str, str, float], None]
"""(plugin, extension point, status label, seconds): one plugin call, in sampled cycles."""
PLUGIN_METRICS_SAMPLE = 0.10
"""kube's pluginMetricsSamplePercent: the fraction of cycles whose plugin calls are timed."""

DRA_UNSUPPORTED = "pod uses resource claims (DRA), which batch-scheduler does not support yet"
NO_NODES = "no nodes available to schedule pods"


@dataclass(frozen=True, slots=True)
class WeightedScore:
    plugin: ScorePlugin
    weight: int
    normalizer: NormalizeScorePlugin | None
    score_nodes: ScoreNodesPlugin | None = None
    """The plugin again when it scores all nodes in one call."""


@dataclass(slots=True)
class Scores:
    """Result of prioritize: ``totals[i]`` is the weighted sum for ``nodes[i]``.

    ``raw[p][i]`` is score plugin ``plugins[p]``'s raw (pre-normalize) score for ``nodes[i]``;
    batching keeps it to rescore one node later without rescoring all (KEP-5598).
    """

    nodes: list[NodeInfo]
    totals: list[int]
    raw: list[list[int]]
    plugins: list[WeightedScore]


@dataclass(frozen=True, slots=True)
class PreFilterResult:
    """Nodes worth filtering (None: all) and the PreFilter plugins that narrowed them."""

    node_names: frozenset[str] | None
    plugins: tuple[str, ...]

    def absent_nodes_status(self) -> st.Status:
        """The verdict on a node outside ``node_names`` (kube's absent nodes status)."""
        return st.unresolvable(
            f"node(s) didn't satisfy plugin(s) [{' '.join(sorted(self.plugins))}]"
        )


@dataclass(slots=True)
class ScheduleResult:
    node: NodeInfo
    evaluated: int
    """Nodes filtered (plus those excluded by a PreFilter result)."""
    feasible: int
    scores: Scores | None
    """None when only one node was feasible (kube skips scoring then)."""
    chosen: int
    """Index of ``node`` in ``scores.nodes``."""


Outcome = ScheduleResult | FitError | SchedulingError


class Profile:
    """Plugins of one profile, ordered as configured, and the full pass over them."""

    def __init__(
        self,
        *,
        scheduler_name: str,
        plugins: Sequence[PluginSpec],
        registry: Mapping[str, PluginFactory],
        plugin_args: Mapping[str, PluginArgs],
        snapshot: Snapshot,
        percentage_of_nodes_to_score: int = 0,
        rng: random.Random | None = None,
    ) -> None:
        """``plugins`` in extension-point order; ``registry`` maps names to factories.

        Raises ConfigError when a plugin rejects its args."""
        self.scheduler_name = scheduler_name
        self.percentage_of_nodes_to_score = percentage_of_nodes_to_score
        self.selector = selection.Selector(rng or random.Random())
        """Rotating start and random source of this profile's passes and hints."""
        self._snapshot = snapshot
        self.observe: ObservePoint | None = None
        """Set by the owner to time a full pass's extension points (metrics); None: off."""
        self.observe_plugin: ObservePlugin | None = None
        """Set by the owner to time plugin calls in a sample of cycles; None: off. Timed:
        PreFilter, PreScore, NormalizeScore, PostFilter, Reserve and Permit, each call as
        kube; Filter and Score (per node in kube) and the binding cycle's points are not."""
        self.plugin_sample = PLUGIN_METRICS_SAMPLE
        self._sampling = random.Random()  # never the tie-breaking source: decisions stay put
        self._timing: ObservePlugin | None = None
        """``observe_plugin`` while this cycle is sampled, else None."""
        self.plugins: list[Plugin] = []
        self.pre_filter_plugins: list[PreFilterPlugin] = []
        self.pre_filter_extensions: list[PreFilterExtensions] = []
        """PreFilter plugins with AddPod/RemovePod (their state depends on other pods)."""
        self.filter_plugins: list[FilterPlugin] = []
        self.filter_prechecks: list[FilterPrecheck] = []
        """Filter plugins that offer a precheck (``framework.feasible``)."""
        self.pre_score_plugins: list[PreScorePlugin] = []
        self.score_plugins: list[WeightedScore] = []
        self.sign_plugins: list[SignPlugin] = []
        self.post_filter_plugins: list[PostFilterPlugin] = []
        self.binding = BindingPoints(self)
        """PreEnqueue, Reserve, Permit, PreBind and PostBind, and the pods waiting at Permit."""
        self.nominator: NominatedPods | None = None
        """Pods nominated to nodes (the queue's nominator, set by the owner); None: none."""
        for spec in plugins:
            try:
                plugin = registry[spec.name](plugin_args.get(spec.name, {}), self)
            except ConfigError:
                raise  # already names its field (an out-of-tree plugin that failed to load)
            except ValueError as exc:
                raise ConfigError(f"pluginConfig[{spec.name}].args", str(exc)) from exc
            self.plugins.append(plugin)
            off = spec.disabled_points
            if isinstance(plugin, PreFilterPlugin) and "preFilter" not in off:
                self.pre_filter_plugins.append(plugin)
                if isinstance(plugin, PreFilterExtensions):
                    self.pre_filter_extensions.append(plugin)
            if isinstance(plugin, FilterPlugin) and "filter" not in off:
                self.filter_plugins.append(plugin)
                if isinstance(plugin, FilterPrecheck):
                    self.filter_prechecks.append(plugin)
            if isinstance(plugin, PreScorePlugin) and "preScore" not in off:
                self.pre_score_plugins.append(plugin)
            if isinstance(plugin, ScorePlugin) and "score" not in off:
                normalizer = plugin if isinstance(plugin, NormalizeScorePlugin) else None
                many = plugin if isinstance(plugin, ScoreNodesPlugin) else None
                self.score_plugins.append(WeightedScore(plugin, spec.weight, normalizer, many))
            if isinstance(plugin, SignPlugin):
                self.sign_plugins.append(plugin)
            if isinstance(plugin, PostFilterPlugin) and "postFilter" not in off:
                self.post_filter_plugins.append(plugin)
            self.binding.register(plugin, off)

    @property
    def snapshot(self) -> Snapshot:
        return self._snapshot

    @property
    def rng(self) -> random.Random:
        """The random source that breaks this profile's ties (full passes and hints)."""
        return self.selector.rng

    @property
    def cycle_timing(self) -> ObservePlugin | None:
        """``observe_plugin`` while the current cycle is sampled (set at its PreFilter)."""
        return self._timing

    def get_waiting_pod(self, uid: Uid) -> WaitingPod | None:
        return self.binding.waiting.get(uid)

    def iterate_over_waiting_pods(self, callback: Callable[[WaitingPod], None]) -> None:
        for waiting in list(self.binding.waiting.values()):  # a callback may end a wait
            callback(waiting)

    def reject_waiting_pod(self, uid: Uid) -> bool:
        return self.binding.reject_waiting_pod(uid)

    def service(self, key: ServiceKey[T]) -> T | None:
        return self.binding.services.get(key)  # type: ignore[return-value]

    def provide(self, key: ServiceKey[T], port: T) -> None:
        """Lend plugins ``port`` under ``key`` (the composition root's wiring)."""
        self.binding.services[key] = port

    # -- pieces --------------------------------------------------------------------------

    def run_pre_filter(self, state: CycleState, pod: Pod) -> tuple[PreFilterResult, st.Status]:
        """Run every PreFilter; intersect their node sets; the first rejection wins.
        Every cycle starts here, so this draws whether its plugin calls are timed."""
        timing = self.observe_plugin
        sampled = timing is not None and self._sampling.random() < self.plugin_sample
        self._timing = timing if sampled else None
        observe = self.observe
        if observe is None:
            return self._pre_filter(state, pod)
        started = time.perf_counter()
        outcome = self._pre_filter(state, pod)
        _observed(observe, "PreFilter", outcome[1].code, started)
        return outcome

    def _pre_filter(self, state: CycleState, pod: Pod) -> tuple[PreFilterResult, st.Status]:
        result: frozenset[str] | None = None
        narrowing: list[str] = []
        everywhere = PreFilterResult(None, ())
        for plugin in self.pre_filter_plugins:
            started = time.perf_counter() if self._timing is not None else 0.0
            try:
                nodes, status = plugin.pre_filter(state, pod, self._snapshot)
            except Exception as exc:  # a plugin's bug fails this pod's cycle, not the loop
                return everywhere, plugin_raised(plugin.name, "PreFilter", exc)
            if self._timing is not None:
                _timed(self._timing, plugin.name, "PreFilter", status.code, started)
            if status.code is st.Code.SKIP:
                state.skip_filter_plugins.add(plugin.name)
                continue
            if status.code is not st.Code.SUCCESS:
                return everywhere, status.with_plugin(plugin.name)
            if nodes is not None:
                narrowing.append(plugin.name)
                result = nodes if result is None else result & nodes
                if not result:
                    if len(narrowing) == 1:
                        message = f"node(s) didn't satisfy plugin {narrowing[0]}"
                    else:
                        names = " ".join(narrowing)
                        message = f"node(s) didn't satisfy plugin(s) [{names}] simultaneously"
                    return everywhere, st.unresolvable(message).with_plugin(plugin.name)
        return PreFilterResult(result, tuple(narrowing)), st.SUCCESS

    def run_filters(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> st.Status:
        """Every Filter plugin (not skipped by PreFilter) on one node; the first failure wins."""
        skip = state.skip_filter_plugins
        for plugin in self.filter_plugins:
            if skip and plugin.name in skip:
                continue
            try:
                status = plugin.filter(state, pod, node_info)
            except Exception as exc:  # a plugin's bug fails this pod's cycle, not the loop
                status = plugin_raised(plugin.name, "Filter", exc)
            if status is not st.SUCCESS and status.code is not st.Code.SUCCESS:
                return status.with_plugin(plugin.name)
        return st.SUCCESS

    def run_filters_with_nominated_pods(
        self, state: CycleState, pod: Pod, node_info: NodeInfo
    ) -> st.Status:
        """Filter on one node as if the pods nominated there with a priority at least the
        pod's were running there, and as if not: both must pass (framework/nominated.py).
        ``state`` must hold the pod's PreFilter results; it is left unchanged."""
        return nominated_pods.filter_with_nominated_pods(
            state,
            pod,
            node_info,
            nominator=self.nominator,
            extensions=self.pre_filter_extensions,
            run_filters=self.run_filters,
        )

    def run_pre_filter_extension_add_pod(
        self, state: CycleState, pod: Pod, to_add: Pod, node_info: NodeInfo
    ) -> st.Status:
        return nominated_pods.run_add_pod(self.pre_filter_extensions, state, pod, to_add, node_info)

    def run_pre_filter_extension_remove_pod(
        self, state: CycleState, pod: Pod, to_remove: Pod, node_info: NodeInfo
    ) -> st.Status:
        return nominated_pods.run_remove_pod(
            self.pre_filter_extensions, state, pod, to_remove, node_info
        )

    def run_post_filter(self, state: CycleState, pod: Pod, fit: FitError) -> PostFilterResult:
        """Every PostFilter plugin until one succeeds (kube's RunPostFilterPlugins).

        Unschedulable results are merged (their reasons joined; the first nomination that
        is not "leave as it is" kept); UnschedulableAndUnresolvable and Error stop the run.
        """
        observe = self.observe
        started = time.perf_counter() if observe is not None else 0.0
        result = self._post_filter(state, pod, fit)
        if observe is not None:
            _observed(observe, "PostFilter", result.status.code, started)
        return result

    def _post_filter(self, state: CycleState, pod: Pod, fit: FitError) -> PostFilterResult:
        if not self.post_filter_plugins:
            return PostFilterResult(st.unschedulable(), nominated_node="")
        reasons: list[str] = []
        kept: PostFilterResult | None = None
        rejector = ""
        for plugin in self.post_filter_plugins:
            started = time.perf_counter() if self._timing is not None else 0.0
            result = plugin.post_filter(state, pod, fit)
            status = result.status
            if self._timing is not None:
                _timed(self._timing, plugin.name, "PostFilter", status.code, started)
            if status.is_success or status.code is st.Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
                return replace(result, status=status.with_plugin(plugin.name))
            if not status.is_rejected:
                return PostFilterResult(status.with_plugin(plugin.name))
            if kept is None and result.nominated_node is not None:
                kept = result
            reasons.extend(status.reasons)
            rejector = rejector or plugin.name
        merged = st.Status(st.Code.UNSCHEDULABLE, tuple(reasons), rejector)
        if kept is None:
            return PostFilterResult(merged)
        return replace(kept, status=merged)

    def run_pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> st.Status:
        for plugin in self.pre_score_plugins:
            started = time.perf_counter() if self._timing is not None else 0.0
            try:
                status = plugin.pre_score(state, pod, nodes)
            except Exception as exc:  # a plugin's bug fails this pod's cycle, not the loop
                return plugin_raised(plugin.name, "PreScore", exc)
            if self._timing is not None:
                _timed(self._timing, plugin.name, "PreScore", status.code, started)
            if status.code is st.Code.SKIP:
                state.skip_score_plugins.add(plugin.name)
            elif status.code is not st.Code.SUCCESS:
                return status.with_plugin(plugin.name)
        return st.SUCCESS

    def active_score_plugins(self, state: CycleState) -> list[WeightedScore]:
        skip = state.skip_score_plugins
        return [s for s in self.score_plugins if s.plugin.name not in skip]

    def prioritize(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> Scores | st.Status:
        """PreScore, Score, NormalizeScore and weighted totals for ``nodes``."""
        observe = self.observe
        started = time.perf_counter() if observe is not None else 0.0
        status = self.run_pre_score(state, pod, nodes)
        if observe is not None:
            started = _observed(observe, "PreScore", status.code, started)
        if not status.is_success:
            return status
        totals = [0] * len(nodes)
        raw_columns: list[list[int]] = []
        active = self.active_score_plugins(state)
        for weighted in active:
            try:
                if weighted.score_nodes is not None:
                    raw = weighted.score_nodes.score_nodes(state, pod, nodes)
                else:
                    score = weighted.plugin.score
                    raw = [score(state, pod, info) for info in nodes]
            except Exception as exc:  # a plugin's bug fails this pod's cycle, not the loop
                return plugin_raised(weighted.plugin.name, "Score", exc)
            raw_columns.append(raw)
            column = raw
            if weighted.normalizer is not None:
                column = list(raw)
                began = time.perf_counter() if self._timing is not None else 0.0
                try:
                    status = weighted.normalizer.normalize_score(state, pod, nodes, column)
                except Exception as exc:  # as above
                    return plugin_raised(weighted.plugin.name, "NormalizeScore", exc)
                if self._timing is not None:  # kube's label for NormalizeScore:
                    point = "ScoreExtensionNormalize"
                    _timed(self._timing, weighted.plugin.name, point, status.code, began)
                if not status.is_success:
                    return status.with_plugin(weighted.plugin.name)
            if column and (max(column) > MAX_NODE_SCORE or min(column) < MIN_NODE_SCORE):
                return st.error(
                    f"plugin {weighted.plugin.name!r} returned a score outside "
                    f"[{MIN_NODE_SCORE}, {MAX_NODE_SCORE}]"
                )
            weight = weighted.weight
            for index, value in enumerate(column):
                totals[index] += value * weight
        if observe is not None:
            _observed(observe, "Score", st.Code.SUCCESS, started)
        return Scores(nodes, totals, raw_columns, active)

    # -- the full pass -------------------------------------------------------------------

    def schedule(
        self,
        state: CycleState,
        pod: Pod,
        pre_filtered: tuple[PreFilterResult, st.Status] | None = None,
        *,
        selector: selection.Selector | None = None,
    ) -> Outcome:
        """One full pass for ``pod``: a chosen node, a FitError, or a SchedulingError.

        ``pre_filtered``: what :meth:`run_pre_filter` returned for this pod into ``state``
        already (the batched path runs PreFilter before it asks for a hint, as kube's
        ``schedulePod`` does); PreFilter then does not run twice. ``selector``: another
        rotation and random source than the profile's (a verifying pass must not move them).
        """
        selector = selector or self.selector
        snapshot = self._snapshot
        num_all = snapshot.num_nodes
        if num_all == 0:
            return FitError(pod.key, 0, Diagnosis(pre_filter_message=NO_NODES))
        diagnosis = Diagnosis()
        if pod.has_resource_claims:
            diagnosis.pre_filter_message = DRA_UNSUPPORTED
            return FitError(pod.key, num_all, diagnosis)
        allowed, status = pre_filtered or self.run_pre_filter(state, pod)
        observe = self.observe
        started = time.perf_counter() if observe is not None else 0.0
        if not status.is_success:
            if status.code is st.Code.ERROR:
                return SchedulingError(pod.key, status.message())
            diagnosis.pre_filter_message = status.message()
            diagnosis.unschedulable_plugins.add(status.plugin)
            return FitError(pod.key, num_all, diagnosis)
        nodes = snapshot.node_infos
        if allowed.node_names is not None:
            nodes = [
                info
                for name in sorted(allowed.node_names)
                if (info := snapshot.get(name)) is not None
            ]
            diagnosis.absent_nodes_status = allowed.absent_nodes_status()
        nominated = self._evaluate_nominated_node(state, pod, allowed)
        if nominated is not None:
            if observe is not None:
                _observed(observe, "Filter", st.Code.SUCCESS, started)
            return ScheduleResult(nominated, 1, 1, None, 0)
        feasible, processed = find_feasible(self, state, pod, nodes, diagnosis, selector, num_all)
        if isinstance(feasible, SchedulingError):
            return feasible
        if observe is not None:
            code = st.Code.SUCCESS if feasible else st.Code.UNSCHEDULABLE
            _observed(observe, "Filter", code, started)
        evaluated = processed + (num_all - len(nodes))
        if not feasible:
            return FitError(pod.key, num_all, diagnosis)
        if len(feasible) == 1:
            return ScheduleResult(feasible[0], evaluated, 1, None, 0)
        scores = self.prioritize(state, pod, feasible)
        if isinstance(scores, st.Status):
            return SchedulingError(pod.key, scores.message())
        chosen = selection.pick_top(scores.totals, selector.rng)
        return ScheduleResult(feasible[chosen], evaluated, len(feasible), scores, chosen)

    def _evaluate_nominated_node(
        self, state: CycleState, pod: Pod, allowed: PreFilterResult
    ) -> NodeInfo | None:
        """The pod's nominated node, when it still passes every Filter (kube tries it
        before all others: it is likely the only node that fits, its victims gone)."""
        name = pod.nominated_node_name
        if not name or (allowed.node_names is not None and name not in allowed.node_names):
            return None
        info = self._snapshot.get(name)
        if info is None:
            return None
        status = self.run_filters_with_nominated_pods(state, pod, info)
        return info if status.is_success else None


def _timed(timing: ObservePlugin, plugin: str, point: str, code: st.Code, started: float) -> None:
    timing(plugin, point, st.CODE_LABELS[code], time.perf_counter() - started)


def _observed(observe: ObservePoint, point: str, code: st.Code, started: float) -> float:
    """Report ``point`` as lasting since ``started``; returns now (the next start)."""
    now = time.perf_counter()
    observe(point, st.CODE_LABELS[code], now - started)
    return now


def build_profile(
    config: ProfileConfig,
    *,
    registry: Mapping[str, PluginFactory],
    snapshot: Snapshot,
    default_percentage: int = 0,
    rng: random.Random | None = None,
) -> Profile:
    """A Profile from its validated configuration (the profile's percentage wins)."""
    percentage = config.percentage_of_nodes_to_score
    return Profile(
        scheduler_name=config.scheduler_name,
        plugins=config.plugins,
        registry=registry,
        plugin_args=config.plugin_args,
        snapshot=snapshot,
        percentage_of_nodes_to_score=default_percentage if percentage is None else percentage,
        rng=rng,
    )
