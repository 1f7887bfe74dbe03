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
from dataclasses import replace
from typing import TYPE_CHECKING, TypeVar, cast

from scheduler.framework import nominated as nominated_pods
from scheduler.framework import status as st
from scheduler.framework.binding_points import BindingPoints
from scheduler.framework.config import (
    DEFAULT_PREEMPTION,
    GANG_SCHEDULING,
    ConfigError,
    PluginSpec,
    ProfileConfig,
)
from scheduler.framework.diagnosis import Diagnosis, FitError, SchedulingError
from scheduler.framework.events import ClusterEvent
from scheduler.framework.feasible import Selector, find_feasible
from scheduler.framework.interfaces import (
    EnqueueExtensions,
    FilterPlugin,
    FilterPrecheck,
    NominatedPods,
    NormalizeScorePlugin,
    PlacementFeasiblePlugin,
    Plugin,
    PluginArgs,
    PostFilterPlugin,
    PostFilterResult,
    PreFilterExtensions,
    PreFilterPlugin,
    PreFilterResult,
    PreScorePlugin,
    ScoreNodesPlugin,
    ScorePlugin,
    SignPlugin,
)
from scheduler.framework.plugin_failures import async_points, plugin_raised, wrong_result
from scheduler.framework.results import Outcome, ScheduleResult, Scores, WeightedScore
from scheduler.framework.scoring import active_score_plugins, pick_top, prioritize, run_pre_score
from scheduler.framework.timing import Timing, timed

if TYPE_CHECKING:
    from scheduler.cache.node_info import NodeInfo
    from scheduler.cache.snapshot import Snapshot
    from scheduler.framework.cycle_state import CycleState
    from scheduler.framework.interfaces import ServiceKey, WaitingPod
    from scheduler.model.keys import Uid
    from scheduler.model.pod import Pod

T = TypeVar("T")
PluginFactory = Callable[[PluginArgs, "Profile"], Plugin]

NO_NODES = "no nodes available to schedule pods"


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

        Raises ConfigError when a plugin rejects its args or is not synchronous."""
        self.scheduler_name = scheduler_name
        self.percentage_of_nodes_to_score = percentage_of_nodes_to_score
        self.selector = Selector(rng or random.Random())
        """Rotating start and random source of this profile's passes and hints."""
        self._snapshot = snapshot
        self.timing = Timing()
        """The owner's recorders of extension points and plugin calls (metrics)."""
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
        self.placement_feasible: PlacementFeasiblePlugin | None = None
        """GangScheduling, when enabled: kube runs the plugin of that name, not a point."""
        self.workload_preemption = False
        """DefaultPreemption runs at podGroupPostFilter (workload-aware preemption)."""
        self.binding = BindingPoints(self.timing)
        """PreEnqueue, Reserve, Permit, PreBind and PostBind, and the pods waiting at Permit."""
        self.nominator: NominatedPods | None = None
        """Pods nominated to nodes (the queue's nominator, set by the owner); None: none."""
        for spec in plugins:
            self._add(spec, registry, plugin_args.get(spec.name, {}))

    def _add(
        self, spec: PluginSpec, registry: Mapping[str, PluginFactory], args: PluginArgs
    ) -> None:
        """Make ``spec``'s plugin and file it under each point it implements and enables."""
        try:
            plugin = registry[spec.name](args, self)
        except ConfigError:
            raise  # already names its field (an out-of-tree plugin that failed to load)
        except ValueError as exc:
            raise ConfigError(f"pluginConfig[{spec.name}].args", str(exc)) from exc
        coroutines = async_points(plugin)
        if coroutines:
            raise ConfigError(
                f"plugins[{spec.name}]",
                f"{', '.join(coroutines)} must be synchronous (def, not async def): plugins "
                "run inside the scheduling cycle, which never awaits",
            )
        if isinstance(plugin, EnqueueExtensions):
            _check_events(plugin)
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
        if plugin.name == GANG_SCHEDULING and isinstance(plugin, PlacementFeasiblePlugin):
            self.placement_feasible = plugin
        if plugin.name == DEFAULT_PREEMPTION and "podGroupPostFilter" not in off:
            self.workload_preemption = True
        self.binding.register(plugin, off)

    @property
    def snapshot(self) -> Snapshot:
        return self._snapshot

    @property
    def rng(self) -> random.Random:
        """The random source that breaks this profile's ties (full passes and hints)."""
        return self.selector.rng

    def get_waiting_pod(self, uid: Uid) -> WaitingPod | None:
        return self.binding.waiting.get(uid)

    def iterate_over_waiting_pods(self, callback: Callable[[WaitingPod], None]) -> None:
        for waiting in list(self.binding.waiting.values()):  # a callback may end a wait
            callback(waiting)

    def reject_waiting_pod(self, uid: Uid) -> bool:
        return self.binding.reject_waiting_pod(uid)

    def service(self, key: ServiceKey[T]) -> T | None:
        return cast("T | None", self.binding.services.get(key))

    def provide(self, key: ServiceKey[T], port: T) -> None:
        """Lend plugins ``port`` under ``key`` (the composition root's wiring)."""
        self.binding.services[key] = port

    # -- pieces --------------------------------------------------------------------------

    def run_pre_filter(self, state: CycleState, pod: Pod) -> tuple[PreFilterResult, st.Status]:
        """Run every PreFilter; intersect their node sets; the first rejection wins.
        Every cycle starts here, so this draws whether its plugin calls are timed."""
        timing = self.timing
        sampled = timing.observe_plugin is not None
        sampled = sampled and timing.sampling.random() < timing.plugin_sample
        timing.cycle = timing.observe_plugin if sampled else None
        started = time.perf_counter()
        outcome = self._pre_filter(state, pod)
        self._observed("PreFilter", outcome[1].code, started)
        return outcome

    def _pre_filter(self, state: CycleState, pod: Pod) -> tuple[PreFilterResult, st.Status]:
        result: frozenset[str] | None = None
        narrowing: list[str] = []
        everywhere = PreFilterResult(None, ())
        timing = self.timing.cycle
        for plugin in self.pre_filter_plugins:
            started = time.perf_counter() if timing is not None else 0.0
            try:
                answer = plugin.pre_filter(state, pod, self._snapshot)
            except Exception as exc:  # a plugin's bug fails this pod's cycle, not the loop
                return everywhere, plugin_raised(plugin.name, "PreFilter", exc)
            if type(answer) is not tuple or len(answer) != 2 or type(answer[1]) is not st.Status:
                expected = "a (node names or None, Status) pair"
                return everywhere, wrong_result(plugin.name, "PreFilter", answer, expected)
            nodes, status = answer
            if timing is not None:
                timed(timing, plugin.name, "PreFilter", status.code, started)
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
            if status is not st.SUCCESS:
                if type(status) is not st.Status:
                    return wrong_result(plugin.name, "Filter", status, "a Status")
                if status.code is not st.Code.SUCCESS:
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
        started = time.perf_counter()
        result = self._post_filter(state, pod, fit)
        self._observed("PostFilter", result.status.code, started)
        return result

    def _post_filter(self, state: CycleState, pod: Pod, fit: FitError) -> PostFilterResult:
        if not self.post_filter_plugins:
            return PostFilterResult(st.unschedulable(), nominated_node="")
        reasons: list[str] = []
        kept: PostFilterResult | None = None
        rejector = ""
        timing = self.timing.cycle
        for plugin in self.post_filter_plugins:
            started = time.perf_counter() if timing is not None else 0.0
            try:
                result = plugin.post_filter(state, pod, fit)
            except Exception as exc:  # a plugin's bug fails this pod's cycle, not the loop
                return PostFilterResult(plugin_raised(plugin.name, "PostFilter", exc))
            if type(result) is not PostFilterResult:
                expected = "a PostFilterResult"
                return PostFilterResult(wrong_result(plugin.name, "PostFilter", result, expected))
            status = result.status
            if timing is not None:
                timed(timing, plugin.name, "PostFilter", status.code, started)
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
        """Every PreScore plugin (framework/scoring.py)."""
        return run_pre_score(self, state, pod, nodes)

    def active_score_plugins(self, state: CycleState) -> list[WeightedScore]:
        """The Score plugins PreScore did not skip this cycle."""
        return active_score_plugins(self, state)

    def prioritize(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> Scores | st.Status:
        """PreScore, Score, NormalizeScore and weighted totals for ``nodes``
        (framework/scoring.py)."""
        return prioritize(self, state, pod, nodes)

    # -- the full pass -------------------------------------------------------------------

    def schedule(
        self,
        state: CycleState,
        pod: Pod,
        pre_filtered: tuple[PreFilterResult, st.Status] | None = None,
        *,
        selector: Selector | None = None,
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
        allowed, status = pre_filtered or self.run_pre_filter(state, pod)
        started = time.perf_counter()
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
            self._observed("Filter", st.Code.SUCCESS, started)
            return ScheduleResult(nominated, 1, 1, None, 0)
        feasible, processed = find_feasible(self, state, pod, nodes, diagnosis, selector, num_all)
        if isinstance(feasible, SchedulingError):
            return feasible
        self._observed("Filter", st.Code.SUCCESS if feasible else st.Code.UNSCHEDULABLE, started)
        evaluated = processed + (num_all - len(nodes))
        if not feasible:
            return FitError(pod.key, num_all, diagnosis)
        if len(feasible) == 1:
            return ScheduleResult(feasible[0], evaluated, 1, None, 0)
        scores = prioritize(self, state, pod, feasible)
        if isinstance(scores, st.Status):
            return SchedulingError(pod.key, scores.message())
        chosen = pick_top(scores.totals, selector.rng)
        return ScheduleResult(feasible[chosen], evaluated, len(feasible), scores, chosen)

    def _observed(self, point: str, code: st.Code, started: float) -> None:
        observe = self.timing.observe
        if observe is not None:
            observe(point, st.CODE_LABELS[code], time.perf_counter() - started)

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


def _check_events(plugin: EnqueueExtensions) -> None:
    """``events_to_register`` answers a collection of ClusterEvents; else a ConfigError
    naming the plugin, when it is loaded (the queue reads them for every rejected pod)."""
    try:
        events = list(plugin.events_to_register())
    except Exception as exc:
        raise ConfigError(
            f"plugins[{plugin.name}]",
            f"events_to_register raised {type(exc).__name__}: {exc}",
        ) from exc
    wrong = [event for event in events if not isinstance(event, ClusterEvent)]
    if wrong:
        raise ConfigError(
            f"plugins[{plugin.name}]",
            f"events_to_register must answer ClusterEvents, got {wrong[0]!r}",
        )


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
