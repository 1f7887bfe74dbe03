"""ExactBatch: spread and self-affinity pods placed exactly where a full pass would place them.

kube's batching (batch.py) hints the next node of a kept ranking and rescores one node; it
is wrong for pods whose PodTopologySpread or InterPodAffinity verdicts and scores change on
nodes other than the one the last pod went to, so kube refuses to sign them. The exact
batch serves exactly those signatures (``signature.is_exact``), and for each pod returns
the node, the evaluated count, the ``next_start`` and the random draw of a full pass
(``Profile.schedule``) on the same cluster with the same selector. Why that holds — live
counts, node-local parts, groups of equal nodes, the same selection, the recheck — is
argued step by step in docs/architecture.md ("The exact batch's argument"); which plugins
it can serve is batching/exact_contracts.py.

Whatever this cannot prove falls back to the full pass, counted by reason
(``batch_scheduler_exact_batch_total``): no state yet, nominated pods, no feasible node
(the full pass writes kube's Diagnosis), a state that cannot be built or was dropped.
"""

from __future__ import annotations

from bisect import bisect_left, insort
from collections import Counter
from dataclasses import dataclass, field
from itertools import chain, compress, islice
from operator import add
from typing import TYPE_CHECKING

from scheduler.batching.exact_contracts import DOMAIN_PLUGINS
from scheduler.batching.exact_pod_state import changed_nodes, pod_state
from scheduler.framework import status as st
from scheduler.framework.cycle_state import CycleState
from scheduler.framework.feasible import num_feasible_nodes_to_find
from scheduler.framework.interfaces import (
    MAX_NODE_SCORE,
    MIN_NODE_SCORE,
    ExactDomainPlugin,
    ExactPodStatePlugin,
)
from scheduler.framework.results import ScheduleResult
from scheduler.framework.scoring import pick_top
from scheduler.metrics.labels import ExactOutcome

if TYPE_CHECKING:
    from collections.abc import Hashable, Sequence

    from scheduler.batching.signature import Signature
    from scheduler.cache.node_info import NodeInfo
    from scheduler.framework.interfaces import ExactNodeChanges, FilterPlugin
    from scheduler.framework.profile import Profile
    from scheduler.framework.results import WeightedScore
    from scheduler.metrics.registry import Metrics
    from scheduler.model.pod import Pod


@dataclass(slots=True)
class _Group:
    """The nodes of one key that pass the node-local filters, by ``u``."""

    by_u: dict[int, list[int]] = field(default_factory=dict)
    """``u`` → positions of the members with it, ascending."""
    size: int = 0

    def add(self, u: int, pos: int) -> None:
        members = self.by_u.get(u)
        if members is None:
            self.by_u[u] = [pos]
        else:
            insort(members, pos)
        self.size += 1

    def remove(self, u: int, pos: int) -> None:
        members = self.by_u[u]
        del members[bisect_left(members, pos)]
        if not members:
            del self.by_u[u]
        self.size -= 1

    def any_member(self) -> int:
        return next(iter(self.by_u.values()))[0]


class _Live:
    """The state of one signature: live counts, per-node parts and groups."""

    __slots__ = (
        "changes",
        "domain",
        "domain_filters",
        "gid",
        "group_ids",
        "groups",
        "key",
        "local_filters",
        "nodes",
        "ok",
        "pod",
        "pod_plugins",
        "pos",
        "scores",
        "signature",
        "state",
        "static",
        "u",
        "u_scores",
    )

    def __init__(self, signature: Signature, pod: Pod, state: CycleState, nodes: list[NodeInfo]):
        self.signature = signature
        self.pod = pod
        self.state = state
        self.nodes = nodes
        self.pos = {info.name: i for i, info in enumerate(nodes)}
        self.domain: list[ExactDomainPlugin] = []
        self.local_filters: list[FilterPlugin] = []
        self.domain_filters: list[FilterPlugin] = []
        self.pod_plugins: list[ExactPodStatePlugin] = []
        """Node-local filters with a PreFilter state of each pod's own (DynamicResources)."""
        self.changes: list[ExactNodeChanges] = []
        """Their feeds of nodes to recompute (devices taken or given back)."""
        self.scores: list[WeightedScore] = []
        """Active normalized score plugins, in profile order (static, then domain ones)."""
        self.static: list[WeightedScore] = []
        self.u_scores: list[WeightedScore] = []
        self.ok: list[bool] = []
        self.u: list[int] = []
        self.key: list[Hashable] = []
        self.gid: list[int] = []
        """Per node: the index of its group in ``groups``, -1 where ``ok`` is False (a
        list index is cheaper than hashing a key in the walk)."""
        self.groups: list[_Group] = []
        self.group_ids: dict[Hashable, int] = {}


MAX_LIVE = 4
"""Signatures kept live at once per profile (the least recently used goes): pods of a few
workloads that arrive interleaved each keep their state."""


class ExactBatch:
    """One profile's exact batch: a live state for each of its recent signatures."""

    def __init__(self, profile: Profile, metrics: Metrics) -> None:
        self.profile = profile
        self.metrics = metrics
        self.lives: dict[Signature, _Live] = {}
        """Live states, least recently used first."""
        self._seen: dict[Signature, None] = {}
        """Signatures placed by a full pass since the last node change (the latest
        ``MAX_REMEMBERED``): the next pod of one of them builds a state, so that a lone pod
        never pays for one."""
        self._refused: dict[Signature, None] = {}
        """Signatures whose state could not be built (until a node changes)."""
        profile.snapshot.changes.observers.append(self)

    # -- cluster changes (cache.changes.ChangeObserver) ---------------------------------

    def pod_changed(self, pod: Pod, info: NodeInfo, delta: int) -> None:
        if not self.lives:
            return
        for signature, live in list(self.lives.items()):
            if not self._follow(live, pod, info, delta):
                self._drop(signature)

    def _follow(self, live: _Live, pod: Pod, info: NodeInfo, delta: int) -> bool:
        for plugin in live.domain:
            if not plugin.exact_update(live.state, live.pod, pod, info, delta):
                return False
        pos = live.pos.get(info.name) if info.node is not None else None
        return pos is None or live.nodes[pos] is not info or self._refresh(live, pos)

    def nodes_changed(self) -> None:
        self._refused.clear()
        self._seen.clear()
        self.labels_read()

    def labels_read(self) -> None:
        """Drop every live state. Also when a term has come to read a label key
        (cache/identity_labels.py): a state was built from one pod of its signature, and the
        pods of that signature that lack the key (or carry it) keep the signature, so no
        state stands for them any more."""
        for signature in list(self.lives):
            self._drop(signature)

    def _drop(self, signature: Signature) -> None:
        del self.lives[signature]
        self._count(ExactOutcome.DROPPED)

    # -- one cycle -------------------------------------------------------------------------

    def schedule(self, pod: Pod, signature: Signature) -> tuple[ScheduleResult, CycleState] | None:
        """The node a full pass would choose for ``pod``, with the selector moved as it would
        move it, and the CycleState for Reserve; None: run the full pass instead."""
        profile = self.profile
        nominator = profile.nominator
        if nominator is not None and nominator.nominated_node_names():
            self._count(ExactOutcome.NOMINATED_PODS)
            return None
        live = self.lives.pop(signature, None)
        if live is None:
            if signature not in self._seen or signature in self._refused:
                _remember(self._seen, signature)
                self._count(ExactOutcome.NO_STATE)
                return None
            live = self._build(pod, signature)
            if live is None:
                _remember(self._refused, signature)
                self._count(ExactOutcome.REFUSED)
                return None
            if len(self.lives) >= MAX_LIVE:
                del self.lives[next(iter(self.lives))]
            self._count(ExactOutcome.BUILT)
        self.lives[signature] = live  # the most recently used now
        moved = changed_nodes(live.changes)
        if moved is None or not all(
            self._refresh(live, live.pos[n]) for n in moved if n in live.pos
        ):
            self._drop(signature)
            return None
        state = pod_state(live.state, live.pod_plugins, pod)
        if state is None:
            self._count(ExactOutcome.POD_STATE_DIFFERS)
            return None
        selector = profile.selector
        saved = (selector.next_start, selector.rng.getstate())
        outcome = self._choose(live, pod)
        if isinstance(outcome, ExactOutcome):
            selector.next_start, _ = saved
            selector.rng.setstate(saved[1])
            self._count(outcome)
            return None
        if not profile.run_filters(state, pod, outcome.node).is_success:
            selector.next_start, _ = saved
            selector.rng.setstate(saved[1])
            del self.lives[signature]
            self._count(ExactOutcome.RECHECK_FAILED)
            return None
        self._count(ExactOutcome.PLACED)
        return outcome, state.clone() if state is live.state else state

    def _count(self, outcome: ExactOutcome) -> None:
        self.metrics.exact_batch.labels(profile=self.profile.scheduler_name, outcome=outcome).inc()

    # -- building ------------------------------------------------------------------------

    def _build(self, pod: Pod, signature: Signature) -> _Live | None:
        profile = self.profile
        state = CycleState()
        allowed, status = profile.run_pre_filter(state, pod)
        if not status.is_success or allowed.node_names is not None:
            return None
        live = _Live(signature, pod, state, list(profile.snapshot.node_infos))
        skip = state.skip_filter_plugins
        for plugin in profile.plugins:
            if plugin.name in DOMAIN_PLUGINS and isinstance(plugin, ExactDomainPlugin):
                if not plugin.exact_begin(state, pod):
                    return None
                live.domain.append(plugin)
        for plugin in profile.filter_plugins:
            if plugin.name in skip:
                continue
            if plugin.name in DOMAIN_PLUGINS:
                live.domain_filters.append(plugin)
            else:
                live.local_filters.append(plugin)
            if isinstance(plugin, ExactPodStatePlugin):
                changes = plugin.exact_watch(state, pod)
                if changes is None:
                    return None
                live.pod_plugins.append(plugin)
                live.changes.append(changes)
        nodes = live.nodes
        for pre_score in profile.pre_score_plugins:
            if pre_score.name in DOMAIN_PLUGINS:
                continue
            result = pre_score.pre_score(state, pod, nodes)  # reads the pod only
            if result.code is st.Code.SKIP:
                state.skip_score_plugins.add(pre_score.name)
            elif not result.is_success:
                return None
        for weighted in profile.active_score_plugins(state):
            if weighted.plugin.name in DOMAIN_PLUGINS:
                live.scores.append(weighted)
            elif weighted.normalizer is None:
                live.u_scores.append(weighted)
            else:
                live.static.append(weighted)
                live.scores.append(weighted)
        for pos in range(len(nodes)):
            live.ok.append(False)
            live.u.append(0)
            live.key.append(None)
            live.gid.append(-1)
            if not self._refresh(live, pos, new=True):
                return None
        return live

    def _refresh(self, live: _Live, pos: int, *, new: bool = False) -> bool:
        """Recompute node ``pos``'s parts and move it between groups; False: a Filter
        errs or a score is out of range there (the full pass reports that)."""
        info = live.nodes[pos]
        state, pod = live.state, live.pod
        ok = True
        for plugin in live.local_filters:
            status = plugin.filter(state, pod, info)
            if status is st.SUCCESS or status.code is st.Code.SUCCESS:
                continue
            if status.code is st.Code.ERROR:
                return False
            ok = False
            break
        u = 0
        for weighted in live.u_scores:
            raw = weighted.plugin.score(state, pod, info)
            if raw > MAX_NODE_SCORE or raw < MIN_NODE_SCORE:
                return False
            u += raw * weighted.weight
        key = (
            tuple(w.plugin.score(state, pod, info) for w in live.static),
            tuple(plugin.exact_node_key(state, pod, info) for plugin in live.domain),
        )
        if not new and live.ok[pos]:
            live.groups[live.gid[pos]].remove(live.u[pos], pos)
        live.ok[pos], live.u[pos], live.key[pos] = ok, u, key
        if ok:
            gid = live.group_ids.get(key)
            if gid is None:
                gid = live.group_ids[key] = len(live.groups)
                live.groups.append(_Group())
            live.groups[gid].add(u, pos)
            live.gid[pos] = gid
        else:
            live.gid[pos] = -1
        return True

    # -- choosing ------------------------------------------------------------------------

    def _choose(self, live: _Live, pod: Pod) -> ScheduleResult | ExactOutcome:
        profile = self.profile
        nodes = live.nodes
        count = len(nodes)
        if count == 0:  # the full pass says "0/0 nodes are available"
            return ExactOutcome.NO_FEASIBLE_NODE
        selector = profile.selector
        start = selector.next_start % count
        to_find = num_feasible_nodes_to_find(profile.percentage_of_nodes_to_score, count)
        verdicts = [
            bool(group.size) and self._passes(live, pod, nodes[group.any_member()])
            for group in live.groups
        ]
        groups = [group for group, good in zip(live.groups, verdicts, strict=True) if good]
        feasible = sum(group.size for group in groups)
        if feasible == 0:
            return ExactOutcome.NO_FEASIBLE_NODE
        if feasible > to_find or len(groups) > max(32, count // 8):
            return self._walk(live, pod, start, to_find, verdicts)
        processed = _last_rotated(groups, start, count) + 1 if feasible == to_find else count
        selector.next_start = (selector.next_start + processed) % count
        if feasible == 1:
            pos = groups[0].any_member()
            return ScheduleResult(nodes[pos], processed, 1, None, 0)
        reps = [nodes[g.any_member()] for g in groups]
        bases = self._bases(live, pod, reps, [g.size for g in groups])
        if bases is None:
            return ExactOutcome.SCORE_RANGE
        tops = [base + max(g.by_u) for base, g in zip(bases, groups, strict=True)]
        best = max(tops)
        tied = [
            g.by_u[best - base]
            for base, g in zip(bases, groups, strict=True)
            if best - base in g.by_u
        ]
        ties = sum(len(members) for members in tied)
        index = 0 if ties == 1 else selector.rng.choice(range(ties))
        pos = _kth_rotated(tied, start, count, index)
        return ScheduleResult(nodes[pos], processed, feasible, None, 0)

    def _passes(self, live: _Live, pod: Pod, info: NodeInfo) -> bool:
        state = live.state
        for plugin in live.domain_filters:
            status = plugin.filter(state, pod, info)
            if status is not st.SUCCESS and status.code is not st.Code.SUCCESS:
                return False
        return True

    def _walk(
        self, live: _Live, pod: Pod, start: int, to_find: int, verdicts: list[bool]
    ) -> ScheduleResult | ExactOutcome:
        """The rotated order walked as ``find_feasible`` walks it, two lookups a node."""
        nodes, gid = live.nodes, live.gid
        count = len(nodes)
        good = [*verdicts, False]  # gid -1 (a node the local filters reject) reads the last
        # The first to_find feasible positions in rotated order, iterated in C (a few
        # hundred nodes a pod under the adaptive percentage).
        rotated = chain(range(start, count), range(start))
        passes = map(good.__getitem__, chain(islice(gid, start, None), islice(gid, start)))
        window = list(islice(compress(rotated, passes), to_find))
        processed = (window[-1] - start) % count + 1 if len(window) == to_find else count
        selector = self.profile.selector
        selector.next_start = (selector.next_start + processed) % count
        if len(window) == 1:
            return ScheduleResult(nodes[window[0]], processed, 1, None, 0)
        window_gids = list(map(gid.__getitem__, window))
        sizes = Counter(window_gids)
        ids = list(sizes)
        groups = live.groups
        reps = [nodes[groups[g].any_member()] for g in ids]  # any member: equal raws
        bases = self._bases(live, pod, reps, [sizes[g] for g in ids])
        if bases is None:
            return ExactOutcome.SCORE_RANGE
        base_of = [0] * len(groups)
        for g, base in zip(ids, bases, strict=True):
            base_of[g] = base
        totals = list(
            map(add, map(base_of.__getitem__, window_gids), map(live.u.__getitem__, window))
        )
        chosen = pick_top(totals, selector.rng)
        return ScheduleResult(nodes[window[chosen]], processed, len(window), None, 0)

    def _bases(
        self,
        live: _Live,
        pod: Pod,
        reps: Sequence[NodeInfo],
        sizes: Sequence[int],
    ) -> list[int] | None:
        """Per scored group (one node of it in ``reps``, ``sizes`` of them scored): the
        weighted sum of the normalized scores, which every member shares; None: a score
        out of range."""
        state = live.state
        skipped: set[str] = set()
        for plugin in live.domain:
            status = plugin.exact_pre_score(state, pod, reps, sizes)
            if status.code is st.Code.SKIP:
                skipped.add(plugin.name)
            elif not status.is_success:
                return None
        bases = [0] * len(reps)
        for weighted in live.scores:
            scorer = weighted.plugin
            if scorer.name in skipped:
                continue
            column = [scorer.score(state, pod, info) for info in reps]
            normalizer = weighted.normalizer
            if (
                normalizer is not None
                and not normalizer.normalize_score(state, pod, reps, column).is_success
            ):
                return None
            if max(column) > MAX_NODE_SCORE or min(column) < MIN_NODE_SCORE:
                return None
            weight = weighted.weight
            for i, value in enumerate(column):
                bases[i] += value * weight
        return bases


MAX_REMEMBERED = 256


def _remember(signatures: dict[Signature, None], signature: Signature) -> None:
    signatures[signature] = None
    if len(signatures) > MAX_REMEMBERED:
        del signatures[next(iter(signatures))]


def _last_rotated(groups: Sequence[_Group], start: int, count: int) -> int:
    """The rotated index, from ``start``, of the last member of ``groups`` in that order."""
    last = -1
    for group in groups:
        for members in group.by_u.values():
            below = bisect_left(members, start)
            pos = members[below - 1] if below else members[-1]
            last = max(last, (pos - start) % count)
    return last


def _kth_rotated(lists: Sequence[list[int]], start: int, count: int, k: int) -> int:
    """The position of the ``k``-th (from 0) element of the sorted ``lists`` together, in
    rotated order from ``start``: binary search on the rotated index."""
    low, high = 0, count - 1
    while low < high:
        middle = (low + high) // 2
        if _count_rotated_up_to(lists, start, count, middle) > k:
            high = middle
        else:
            low = middle + 1
    return (start + low) % count


def _count_rotated_up_to(lists: Sequence[list[int]], start: int, count: int, last: int) -> int:
    """How many elements have a rotated index ≤ ``last``."""
    end = start + last + 1
    total = 0
    for members in lists:
        if end <= count:
            total += bisect_left(members, end) - bisect_left(members, start)
        else:
            total += len(members) - bisect_left(members, start)
            total += bisect_left(members, end - count)
    return total
