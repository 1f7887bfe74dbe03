"""Explanation: one pod's full pass laid open, node by node and Score plugin by Score plugin.

kube-scheduler has no such report; the nearest is its V(10) log of each plugin's score. A
full pass (framework/profile.py) keeps only what it needs to pick a node: the first rejecting
Status per node, and weighted totals. Here the same pieces of the Profile run over every node
of the snapshot (no ``percentageOfNodesToScore`` cut, no rotating start), and each feasible
node's score is split into its plugins' raw score, their NormalizeScore result and the
weighted value that makes up the total.

Read-only: a fresh CycleState, no Selector draw, nothing assumed or nominated; PostFilter
(preemption) is not run. Filter runs with the pods nominated to each node, as the full pass
does. NormalizeScore runs a second time, on a copy of the raw column: the in-tree normalizers
read only the column and the PreScore state (batching's rescore relies on the same). A plugin
that raises or answers the wrong type there is one Error Status, as in the full pass
(``framework.plugin_failures``).

A plugin's Error (at PreFilter, Filter or scoring) ends a full pass: no node is chosen, and
the FailedScheduling message is the Error's, not a count of nodes; ``fit_error`` says so.

Neighbours: ``framework.profile`` (the pieces run here), ``framework.diagnosis`` (kube's
FailedScheduling message when no node fits), ``app.explain`` (the command's report) and
``app.explain_render`` (its output).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from scheduler.framework import nominated as nominated_pods
from scheduler.framework import status as st
from scheduler.framework.cycle_state import CycleState
from scheduler.framework.diagnosis import Diagnosis, FitError
from scheduler.framework.feasible import num_feasible_nodes_to_find
from scheduler.framework.interfaces import FilterDetailsPlugin
from scheduler.framework.plugin_failures import plugin_raised, wrong_result
from scheduler.framework.profile import NO_NODES

if TYPE_CHECKING:
    from scheduler.cache.node_info import NodeInfo
    from scheduler.framework.interfaces import PreFilterResult
    from scheduler.framework.profile import Profile
    from scheduler.framework.results import Scores
    from scheduler.model.pod import Pod

PRE_FILTER = "PreFilter"
FILTER = "Filter"


@dataclass(frozen=True, slots=True)
class PluginScore:
    """One Score plugin on one node: Score's raw value, NormalizeScore's, and its weight."""

    plugin: str
    raw: int
    normalized: int
    """Equal to ``raw`` for a plugin without NormalizeScore."""
    weight: int

    @property
    def weighted(self) -> int:
        return self.normalized * self.weight


@dataclass(frozen=True, slots=True)
class NodeVerdict:
    """A node's outcome: feasible (with its score), or the Status that rejected it."""

    node: str
    status: st.Status
    """SUCCESS, or the first rejecting (or failing) plugin's Status, as a full pass keeps it."""
    point: str = ""
    """The extension point that rejected the node (``PreFilter``, ``Filter``); empty: passed."""
    scores: tuple[PluginScore, ...] = ()
    total: int | None = None
    """Sum of the weighted scores; None for a rejected node or when scoring failed."""
    details: tuple[str, ...] = ()
    """The rejecting plugin's own account of the node (``FilterDetailsPlugin``), if it has one."""

    @property
    def feasible(self) -> bool:
        return self.status.is_success


@dataclass(slots=True)
class Explanation:
    """Every node's verdict for one pod under one profile (see the module docstring)."""

    pod: str
    profile: str
    pre_filter: st.Status
    """PreFilter's outcome; a rejection here is every node's verdict."""
    narrowed_by: tuple[str, ...] = ()
    """PreFilter plugins that limited the nodes worth filtering (NodeAffinity, ...)."""
    nodes: list[NodeVerdict] = field(default_factory=list)
    """Feasible nodes by total, highest first (then by name); then the rest by name."""
    skipped_filters: tuple[str, ...] = ()
    """Filter plugins not run: their PreFilter returned Skip."""
    skipped_scores: tuple[str, ...] = ()
    """Score plugins not run: their PreScore returned Skip."""
    score_error: st.Status | None = None
    """PreScore, Score or NormalizeScore failed: no totals (the real pass is an error too)."""
    fit_error: str = ""
    """The FailedScheduling message of a full pass that places nothing: kube's ``0/N nodes
    are available: ...`` when none fits, a plugin's Error message when one failed."""
    nominated_node: str = ""
    """The pod's nominated node when it passes Filter: the full pass takes it unscored."""
    nominated_pods: dict[str, tuple[str, ...]] = field(default_factory=dict)
    """Node → the pods nominated there that Filter counted as if running (their keys)."""
    feasible_to_find: int = 0
    """Feasible nodes after which a full pass stops filtering (percentageOfNodesToScore)."""

    @property
    def feasible(self) -> list[NodeVerdict]:
        return [verdict for verdict in self.nodes if verdict.feasible]

    @property
    def best(self) -> list[str]:
        """The nodes with the highest total: a full pass picks one of them (ties at random)."""
        scored = [v for v in self.nodes if v.total is not None]
        if not scored:
            feasible = self.feasible
            return [feasible[0].node] if len(feasible) == 1 else []
        top = max(v.total for v in scored if v.total is not None)
        return [v.node for v in scored if v.total == top]


def explain_pod(profile: Profile, pod: Pod) -> Explanation:
    """The verdict of every node of ``profile.snapshot`` for ``pod``, feasible ones scored."""
    snapshot = profile.snapshot
    explanation = Explanation(pod.key, profile.scheduler_name, st.SUCCESS)
    infos = sorted(snapshot.node_infos, key=lambda info: info.name)
    if not infos:
        explanation.pre_filter = st.unresolvable(NO_NODES)
        explanation.fit_error = FitError(
            pod.key, 0, Diagnosis(pre_filter_message=NO_NODES)
        ).message()
        return explanation
    state = CycleState()
    allowed, pre_filtered = profile.run_pre_filter(state, pod)
    if not pre_filtered.is_success:
        return _rejected_everywhere(explanation, infos, pre_filtered)
    explanation.narrowed_by = allowed.plugins
    explanation.skipped_filters = tuple(sorted(state.skip_filter_plugins))
    diagnosis = Diagnosis()
    feasible, rejections = _filter(profile, state, pod, infos, allowed, diagnosis, explanation)
    explanation.feasible_to_find = num_feasible_nodes_to_find(
        profile.percentage_of_nodes_to_score, len(feasible) + len(diagnosis.node_statuses)
    )
    if pod.nominated_node_name in {info.name for info in feasible}:
        explanation.nominated_node = pod.nominated_node_name
    errors = [verdict.status for verdict in rejections if verdict.status.code is st.Code.ERROR]
    if errors:  # the full pass stops at the first Error: nothing is placed
        explanation.fit_error = errors[0].message()
    elif not feasible:
        explanation.fit_error = FitError(pod.key, len(infos), diagnosis).message()
    explanation.nodes = _scored(profile, state, pod, feasible, explanation) + rejections
    return explanation


def _filter(
    profile: Profile,
    state: CycleState,
    pod: Pod,
    infos: list[NodeInfo],
    allowed: PreFilterResult,
    diagnosis: Diagnosis,
    explanation: Explanation,
) -> tuple[list[NodeInfo], list[NodeVerdict]]:
    """Filter on every node PreFilter allows (with the pods nominated there); the feasible
    nodes, and a verdict for each of the others. ``diagnosis`` gets what a pass records."""
    names = allowed.node_names
    absent = allowed.absent_nodes_status().with_plugin(" ".join(sorted(allowed.plugins)))
    if names is not None:
        diagnosis.absent_nodes_status = absent
    feasible: list[NodeInfo] = []
    rejections: list[NodeVerdict] = []
    for info in infos:
        if names is not None and info.name not in names:
            rejections.append(NodeVerdict(info.name, absent, PRE_FILTER))
            continue
        if counted := nominated_pods.nominated_on(profile.nominator, pod, info):
            explanation.nominated_pods[info.name] = tuple(other.key for other in counted)
        status = profile.run_filters_with_nominated_pods(state, pod, info)
        if status.is_success:
            feasible.append(info)
        else:
            diagnosis.node_statuses[info.name] = status
            details = _details(profile, state, pod, info, status)
            rejections.append(NodeVerdict(info.name, status, FILTER, details=details))
    return feasible, rejections


def _details(
    profile: Profile, state: CycleState, pod: Pod, info: NodeInfo, status: st.Status
) -> tuple[str, ...]:
    """The rejecting plugin's details of ``info``, when it gives any (read-only for it)."""
    if not status.is_rejected:
        return ()
    for plugin in profile.plugins:
        if plugin.name == status.plugin and isinstance(plugin, FilterDetailsPlugin):
            return plugin.filter_details(state, pod, info)
    return ()


def _rejected_everywhere(
    explanation: Explanation, infos: list[NodeInfo], status: st.Status
) -> Explanation:
    """PreFilter turned the pod away: its Status is every node's verdict."""
    explanation.pre_filter = status
    explanation.nodes = [NodeVerdict(info.name, status, PRE_FILTER) for info in infos]
    if status.is_rejected:
        diagnosis = Diagnosis(pre_filter_message=status.message())
        explanation.fit_error = FitError(explanation.pod, len(infos), diagnosis).message()
    elif status.code is st.Code.ERROR:
        explanation.fit_error = status.message()
    return explanation


def _scored(
    profile: Profile,
    state: CycleState,
    pod: Pod,
    feasible: list[NodeInfo],
    explanation: Explanation,
) -> list[NodeVerdict]:
    """The feasible nodes, each with its plugins' scores, highest total first."""
    if not feasible:
        return []
    scores = profile.prioritize(state, pod, feasible)
    explanation.skipped_scores = tuple(sorted(state.skip_score_plugins))
    if isinstance(scores, st.Status):
        return _unscored(explanation, scores, feasible)
    columns = _normalized(state, pod, scores)
    if isinstance(columns, st.Status):
        return _unscored(explanation, columns, feasible)
    verdicts = [
        NodeVerdict(
            info.name,
            st.SUCCESS,
            scores=tuple(
                PluginScore(weighted.plugin.name, raw[index], normalized[index], weighted.weight)
                for weighted, raw, normalized in zip(
                    scores.plugins, scores.raw, columns, strict=True
                )
            ),
            total=scores.totals[index],
        )
        for index, info in enumerate(scores.nodes)
    ]
    return sorted(verdicts, key=lambda verdict: (-(verdict.total or 0), verdict.node))


def _unscored(
    explanation: Explanation, error: st.Status, feasible: list[NodeInfo]
) -> list[NodeVerdict]:
    """Scoring failed: the feasible nodes without totals. A full pass that scores (more than
    one feasible node, no nominated node to take first) fails with this Error."""
    explanation.score_error = error
    if len(feasible) > 1 and not explanation.nominated_node and not explanation.fit_error:
        explanation.fit_error = error.message()
    return [NodeVerdict(info.name, st.SUCCESS) for info in feasible]


def _normalized(state: CycleState, pod: Pod, scores: Scores) -> list[list[int]] | st.Status:
    """Each plugin's column after NormalizeScore (the raw column when it has none), or the
    Error Status of a normalizer that raised, answered no Status or failed."""
    columns: list[list[int]] = []
    for weighted, raw in zip(scores.plugins, scores.raw, strict=True):
        column = list(raw)
        if weighted.normalizer is not None:
            name = weighted.plugin.name
            try:
                status = weighted.normalizer.normalize_score(state, pod, scores.nodes, column)
            except Exception as exc:  # a plugin's bug: one Status, as in the full pass
                return plugin_raised(name, "NormalizeScore", exc)
            if type(status) is not st.Status:
                return wrong_result(name, "NormalizeScore", status, "a Status")
            if not status.is_success:
                return status.with_plugin(name)
        columns.append(column)
    return columns
