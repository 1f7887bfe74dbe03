"""The Score phase of a full pass: kube's ``prioritizeNodes`` (RunPreScorePlugins,
RunScorePlugins with NormalizeScore, then the weighted totals) and ``selectHost``.

kube pops a max-heap ordered by total score, then a per-node random ``Randomizer``, so equal
totals leave in random order. ``pick_top`` draws uniformly among the tied best, which has
the same distribution (kube v1.37 fills the Randomizer only when extenders score, see
kubernetes PR #141024; without them the tie order comes from its parallel Filter, random
in effect).

framework/profile.py calls it for the feasible nodes of a full pass; batching re-runs its
pieces on one node to rescore (KEP-5598); explain and the verifying pass read its totals.
framework/feasible.py is the Filter phase beside it.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Protocol

from scheduler.framework import status as st
from scheduler.framework.interfaces import MAX_NODE_SCORE, MIN_NODE_SCORE
from scheduler.framework.plugin_failures import plugin_raised, wrong_result
from scheduler.framework.results import Scores, WeightedScore
from scheduler.framework.timing import timed

if TYPE_CHECKING:
    import random
    from collections.abc import Sequence

    from scheduler.cache.node_info import NodeInfo
    from scheduler.framework.cycle_state import CycleState
    from scheduler.framework.interfaces import PreScorePlugin
    from scheduler.framework.timing import Timing
    from scheduler.model.pod import Pod

NORMALIZE_POINT = "ScoreExtensionNormalize"
"""kube's extension-point label for NormalizeScore in plugin timings."""


class Scorers(Protocol):
    """What the Score phase reads of a profile (framework.profile.Profile)."""

    @property
    def pre_score_plugins(self) -> Sequence[PreScorePlugin]: ...

    @property
    def score_plugins(self) -> Sequence[WeightedScore]: ...

    @property
    def timing(self) -> Timing: ...


def pick_top(totals: Sequence[int], rng: random.Random) -> int:
    """Index of a highest total; ties broken uniformly at random (one draw, only if tied)."""
    best = max(totals)
    ties = [index for index, total in enumerate(totals) if total == best]
    return ties[0] if len(ties) == 1 else rng.choice(ties)


def run_pre_score(
    profile: Scorers, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
) -> st.Status:
    """Every PreScore plugin; Skip leaves that plugin's Score out of this cycle."""
    timing = profile.timing.cycle
    for plugin in profile.pre_score_plugins:
        started = time.perf_counter() if timing is not None else 0.0
        try:
            status = plugin.pre_score(state, pod, nodes)
        except Exception as exc:  # a plugin's bug fails this pod's cycle, not the loop
            return plugin_raised(plugin.name, "PreScore", exc)
        if type(status) is not st.Status:
            return wrong_result(plugin.name, "PreScore", status, "a Status")
        if timing is not None:
            timed(timing, plugin.name, "PreScore", status.code, started)
        if status.code is st.Code.SKIP:
            state.skip_score_plugins.add(plugin.name)
        elif status.code is not st.Code.SUCCESS:
            return status.with_plugin(plugin.name)
    return st.SUCCESS


def active_score_plugins(profile: Scorers, state: CycleState) -> list[WeightedScore]:
    """The Score plugins PreScore did not skip this cycle, in order."""
    skip = state.skip_score_plugins
    return [s for s in profile.score_plugins if s.plugin.name not in skip]


def prioritize(
    profile: Scorers, state: CycleState, pod: Pod, nodes: list[NodeInfo]
) -> Scores | st.Status:
    """PreScore, Score, NormalizeScore and weighted totals for ``nodes``."""
    timing = profile.timing
    observe = timing.observe
    started = time.perf_counter()
    status = run_pre_score(profile, state, pod, nodes)
    if observe is not None:
        now = time.perf_counter()
        observe("PreScore", st.CODE_LABELS[status.code], now - started)
        started = now
    if not status.is_success:
        return status
    totals = [0] * len(nodes)
    raw_columns: list[list[int]] = []
    active = active_score_plugins(profile, state)
    for weighted in active:
        name = weighted.plugin.name
        try:
            if weighted.score_nodes is not None:
                raw = weighted.score_nodes.score_nodes(state, pod, nodes)
            else:
                score = weighted.plugin.score
                raw = [score(state, pod, info) for info in nodes]
        except Exception as exc:  # a plugin's bug fails this pod's cycle, not the loop
            return plugin_raised(name, "Score", exc)
        if type(raw) is not list:  # score_nodes answered something else (or is async)
            return wrong_result(name, "Score", raw, "a list of int")
        if raw and type(raw[0]) is not int:
            return wrong_result(name, "Score", raw[0], "an int")
        raw_columns.append(raw)
        column = raw
        if weighted.normalizer is not None:
            column = list(raw)
            cycle = timing.cycle
            began = time.perf_counter() if cycle is not None else 0.0
            try:
                status = weighted.normalizer.normalize_score(state, pod, nodes, column)
            except Exception as exc:  # as above
                return plugin_raised(name, "NormalizeScore", exc)
            if type(status) is not st.Status:
                return wrong_result(name, "NormalizeScore", status, "a Status")
            if cycle is not None:
                timed(cycle, name, NORMALIZE_POINT, status.code, began)
            if not status.is_success:
                return status.with_plugin(name)
        if column and (max(column) > MAX_NODE_SCORE or min(column) < MIN_NODE_SCORE):
            return st.error(
                f"plugin {name!r} returned a score outside [{MIN_NODE_SCORE}, {MAX_NODE_SCORE}]"
            )
        weight = weighted.weight
        totals = [total + value * weight for total, value in zip(totals, column, strict=True)]
    if observe is not None:
        observe("Score", st.CODE_LABELS[st.Code.SUCCESS], time.perf_counter() - started)
    return Scores(nodes, totals, raw_columns, active)
