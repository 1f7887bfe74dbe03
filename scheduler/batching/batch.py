"""OpportunisticBatch (KEP-5598): reuse one full pass for the next same-signature pods.

After a full pass the scored nodes that were not chosen are kept, sorted, as *batch state*.
The next pod with the same signature gets a *hint*: the best remaining node, popped from the
state, which the cycle then looks up in the cache and rechecks with every Filter.

``get_node_hint`` follows kube-scheduler v1.37 (``pkg/scheduler/framework/runtime/batch.go``):
an empty list is no state (no hint, no flush: the pod gets a full pass, which may choose a
node outside the kept subset); then, flushing on the first that fails, cycle continuity
(cycle == last placed cycle + 1, or the same cycle for the next member of a pod group; one
counter for the whole scheduler, so another profile's pod or a failed cycle in between gives
``pod_skipped``), no nominated node, equal signature, age <= max age. Then the node chosen
last is looked up (``node_missing``) and refiltered: rejected → it leaves the state
(one-pod-per-node); otherwise it is *rescored* and put back in order (many-pods-per-node),
so the next hint is what a full pass would rank first among the kept nodes. A flushed
state is dropped at once (kube keeps it until the next store, which replaces it; only its
metric counts differ).

Order and ties: kube pops a heap ordered by total score, equal totals in random order. The
state keeps nodes sorted by ``total * width + index`` (ascending, best last) and a pop draws
uniformly among the nodes tied at the top, from the profile's random source. Both rescore
paths put the rescored node at the same place in that order, so they pop the same nodes
with the same draws.

Rescoring: PreScore for the current pod on that node (as kube), raw Score for it,
NormalizeScore over the kept nodes plus that node, re-sort. The fast path skips the
re-normalize and re-sort: the in-tree normalizers depend only on the minimum and maximum raw
score of the node set, so when no normalizing plugin's minimum or maximum changed the other
nodes' totals are unchanged, and only the rescored node moves (a bisect insert). Otherwise
the full path runs.

Everything here is synchronous: a hint is taken and rechecked in one await-free stretch.
"""

from __future__ import annotations

import bisect
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from scheduler import logs
from scheduler.framework import status as st
from scheduler.framework.interfaces import MAX_NODE_SCORE, MIN_NODE_SCORE
from scheduler.metrics.labels import BatchAttempt as Attempt
from scheduler.metrics.labels import BatchFlushReason as FlushReason
from scheduler.metrics.labels import Hinted

if TYPE_CHECKING:
    from collections.abc import Sequence

    from scheduler.batching.signature import Signature
    from scheduler.cache.node_info import NodeInfo
    from scheduler.clock import Clock
    from scheduler.framework.cycle_state import CycleState
    from scheduler.framework.profile import Profile
    from scheduler.framework.results import Scores, WeightedScore
    from scheduler.metrics.registry import Metrics
    from scheduler.model.pod import Pod

log = logs.get_logger(__name__)


class _Column:
    """One normalizing score plugin's raw scores over the state's member nodes."""

    __slots__ = ("counts", "high", "low")

    def __init__(self, values: list[int]) -> None:
        self.counts: dict[int, int] = {}
        for value in values:
            self.counts[value] = self.counts.get(value, 0) + 1
        self.low = min(self.counts)
        self.high = max(self.counts)
        """``low``/``high``: the raw range the stored totals were normalized over."""

    def replace(self, old: int | None, new: int | None) -> None:
        counts = self.counts
        if old is not None:
            left = counts[old] - 1
            if left:
                counts[old] = left
            else:
                del counts[old]
        if new is not None:
            counts[new] = counts.get(new, 0) + 1

    def unchanged(self) -> bool:
        return bool(self.counts) and min(self.counts) == self.low and max(self.counts) == self.high


@dataclass(slots=True)
class BatchState:
    """The sorted leftovers of a full pass (KEP: batchState).

    ``order`` holds indices into ``nodes`` sorted by ascending ``keys`` (best last, so popping
    is O(1)); a key is ``total * width + index``, unique per node. Members of the
    normalization set are the indices in ``order`` plus ``last`` (the node chosen last, while
    it is still feasible).
    """

    id: int
    """Numbered per profile, for the decision log (``batch``)."""
    signature: Signature
    nodes: list[NodeInfo]
    raw: list[list[int]]
    plugins: list[WeightedScore]
    totals: list[int]
    order: list[int]
    keys: list[int]
    columns: list[_Column | None]
    created: float
    last: int = -1
    pods: int = 1
    """Pods placed from this state, the full pass's pod included."""
    pending: bool = True
    """``columns``, ``keys`` and ``order`` not built yet: a state is sorted when the first
    hint is asked of it (most states of pods whose signature no other pod shares never are:
    the next pod's signature flushes them)."""

    @property
    def width(self) -> int:
        return len(self.nodes)

    def key(self, index: int) -> int:
        return self.totals[index] * len(self.nodes) + index

    def sort(self) -> None:
        """Build the normalization columns and the order of a new state: every node but
        the one chosen last (nothing has changed its raw scores or totals since the full
        pass). Idempotent."""
        if not self.pending:
            return
        self.columns = [
            _Column(raw) if weighted.normalizer is not None else None
            for weighted, raw in zip(self.plugins, self.raw, strict=True)
        ]
        width, totals, chosen = len(self.nodes), self.totals, self.last
        self.keys = sorted([totals[i] * width + i for i in range(width) if i != chosen])
        self.order = [key % width for key in self.keys]
        self.pending = False


class OpportunisticBatch:
    """Batch state and hints for one profile."""

    def __init__(
        self,
        profile: Profile,
        *,
        clock: Clock,
        metrics: Metrics,
        max_batch_age: float,
        fast_rescore: bool = True,
    ) -> None:
        self.profile = profile
        self.clock = clock
        self.metrics = metrics
        self.max_batch_age = max_batch_age
        self.fast_rescore = fast_rescore
        self.state: BatchState | None = None
        self._last_cycle = -1
        """The last cycle that placed a pod of this profile (kube's lastCycle)."""
        self._states = 0
        self.rescored = False
        """Whether the last hint came after rescoring the node chosen before it (the state
        serves many pods per node), for the decision log."""

    # -- hint --------------------------------------------------------------------------

    def get_node_hint(
        self, state: CycleState, pod: Pod, signature: Signature | None, cycle: int
    ) -> str | None:
        """The name of the node to try first for ``pod`` in ``cycle``, or None (full pass).

        ``state`` must hold the pod's PreFilter results: the last chosen node is refiltered.
        The caller looks the name up in the cache: the node may have left it since.
        """
        started = time.perf_counter()
        self.rescored = False
        hint = self._hint(state, pod, signature, cycle)
        if hint is None:
            self._count_attempt(Attempt.NO_HINT)
        hinted = Hinted.HINT if hint is not None else Hinted.NO_HINT
        self.metrics.get_node_hint_duration.labels(
            hinted=hinted, profile=self.profile.scheduler_name
        ).observe(time.perf_counter() - started)
        return hint

    @property
    def batch_id(self) -> int | None:
        """The current state's number (None: no state)."""
        return None if self.state is None else self.state.id

    @property
    def hint_total(self) -> int | None:
        """The weighted total the state ranks its last hint by (None: no hint)."""
        batch = self.state
        return None if batch is None or batch.last < 0 else batch.totals[batch.last]

    def _hint(
        self, state: CycleState, pod: Pod, signature: Signature | None, cycle: int
    ) -> str | None:
        batch = self.state
        if batch is None or (not batch.pending and not batch.order):
            if batch is not None:  # kube: an empty list is no state, not a flush
                self._log_end(batch, "exhausted")
            self.state = None
            return None
        reason = self._incompatible(batch, pod, signature, cycle)
        if reason is not None:
            self._flush(reason)
            return None
        batch.sort()
        node = self.profile.snapshot.get(batch.nodes[batch.last].name)
        if node is None:
            self._flush(FlushReason.NODE_MISSING)
            return None
        batch.nodes[batch.last] = node  # rescore against the cache's current NodeInfo
        if self.profile.run_filters(state, pod, node).is_rejected:
            self._drop_last(batch)
        elif not self._rescore(state, pod, batch):
            return None
        else:
            self.rescored = True
        index = self._pop(batch)
        batch.last = index
        return batch.nodes[index].name

    def _incompatible(
        self, batch: BatchState, pod: Pod, signature: Signature | None, cycle: int
    ) -> FlushReason | None:
        """Why the state cannot serve ``pod``, in kube's order of checks; None: it can."""
        if cycle != self._last_cycle + 1 and cycle != self._last_cycle:
            # The same cycle: the next member of a pod group (kube's batchStateCompatible
            # with GenericWorkload); a pod's cycle is never its predecessor's.
            return FlushReason.POD_SKIPPED
        if pod.nominated_node_name:
            return FlushReason.POD_NOMINATED
        if signature is None or signature != batch.signature:
            return FlushReason.POD_INCOMPATIBLE
        if self.clock.now() - batch.created > self.max_batch_age:
            return FlushReason.EXPIRED
        return None

    def _pop(self, batch: BatchState) -> int:
        """Remove and return a best node: uniformly among those tied at the top total."""
        keys, width = batch.keys, batch.width
        top = keys[-1] // width
        first = bisect.bisect_left(keys, top * width)
        tied = len(keys) - first
        position = len(keys) - 1 if tied == 1 else first + self.profile.rng.randrange(tied)
        del keys[position]
        return batch.order.pop(position)

    # -- results -----------------------------------------------------------------------

    def store_schedule_results(
        self,
        *,
        signature: Signature | None,
        hinted: str | None,
        chosen: NodeInfo,
        scores: Scores | None,
        chosen_index: int,
        cycle: int,
    ) -> None:
        """Record a placed pod; keep the state if the hint was used, else rebuild it."""
        started = time.perf_counter()
        self._last_cycle = cycle
        if hinted is not None and hinted == chosen.name:
            if self.state is not None:
                self.state.pods += 1
            self._count_attempt(Attempt.HINT_USED)
        else:
            if hinted is not None:
                self._count_attempt(Attempt.HINT_NOT_USED)
            if scores is None or len(scores.nodes) <= 1:
                self._flush(FlushReason.EMPTY_LIST)  # kube checks this before the signature
            elif signature is None:
                self._flush(FlushReason.POD_NOT_BATCHABLE)
            else:
                if self.state is not None:
                    self._log_end(self.state, "replaced")
                self.state = self._new_state(signature, scores, chosen_index)
        self.metrics.store_schedule_results_duration.labels(
            profile=self.profile.scheduler_name
        ).observe(time.perf_counter() - started)

    def invalidate(self) -> None:
        """A bind failed: drop the state, whose ranking the failed node may lead."""
        if self.state is not None:
            self._flush(FlushReason.BIND_FAILED)

    # -- internals ---------------------------------------------------------------------

    def _new_state(self, signature: Signature, scores: Scores, chosen: int) -> BatchState:
        """The full pass's leftovers, sorted only when a hint is asked (``sort``)."""
        self._states += 1
        return BatchState(
            id=self._states,
            signature=signature,
            nodes=scores.nodes,
            raw=scores.raw,
            plugins=scores.plugins,
            totals=list(scores.totals),
            order=[],
            keys=[],
            columns=[],
            created=self.clock.now(),
            last=chosen,
        )

    def _drop_last(self, batch: BatchState) -> None:
        """The last chosen node is full for this signature: it leaves the member set."""
        index = batch.last
        for column, raw in zip(batch.columns, batch.raw, strict=True):
            if column is not None:
                column.replace(raw[index], None)
        batch.last = -1

    def _rescore(self, state: CycleState, pod: Pod, batch: BatchState) -> bool:
        """Rescore the still-feasible last node and put it back in order (False: flushed).

        Counted and timed whatever the outcome, as kube does.
        """
        started = time.perf_counter()
        reason = self._rescore_last(state, pod, batch)
        if reason is not None:
            self._flush(reason)
        name = self.profile.scheduler_name
        self.metrics.batch_rescore_attempts.labels(profile=name).inc()
        self.metrics.batch_rescore_duration.labels(profile=name).observe(
            time.perf_counter() - started
        )
        return reason is None

    def _rescore_last(self, state: CycleState, pod: Pod, batch: BatchState) -> FlushReason | None:
        index = batch.last
        node = batch.nodes[index]
        if not self.profile.run_pre_score(state, pod, (node,)).is_success:
            return FlushReason.PRESCORE_ERROR
        stable = True
        for column, raw, weighted in zip(batch.columns, batch.raw, batch.plugins, strict=True):
            new = weighted.plugin.score(state, pod, node)
            if column is not None:
                column.replace(raw[index], new)
                stable = stable and column.unchanged()
            raw[index] = new
        if stable and self.fast_rescore:
            total = self._total_of(state, pod, batch, index)
            if total is None:
                return FlushReason.NORMALIZE_ERROR
            batch.totals[index] = total
            key = batch.key(index)
            position = bisect.bisect_left(batch.keys, key)
            batch.keys.insert(position, key)
            batch.order.insert(position, index)
        elif not self._renormalize(state, pod, batch):
            return FlushReason.NORMALIZE_ERROR
        batch.last = -1
        return None

    def _total_of(self, state: CycleState, pod: Pod, batch: BatchState, index: int) -> int | None:
        """Weighted total of one node against the stored normalization ranges."""
        node = batch.nodes[index]
        total = 0
        for column, raw, weighted in zip(batch.columns, batch.raw, batch.plugins, strict=True):
            value = raw[index]
            if column is not None and weighted.normalizer is not None:
                # The in-tree normalizers read only the set's min and max: normalizing the
                # value together with them gives its score within the whole set.
                probe = [value, column.low, column.high]
                if not _normalized(weighted, state, pod, (node, node, node), probe):
                    return None
                value = probe[0]
            if not MIN_NODE_SCORE <= value <= MAX_NODE_SCORE:
                return None
            total += value * weighted.weight
        return total

    def _renormalize(self, state: CycleState, pod: Pod, batch: BatchState) -> bool:
        """Full path: normalize over the members (kept nodes + the rescored one), re-sort."""
        members = [*batch.order, batch.last]
        nodes = [batch.nodes[i] for i in members]
        totals = [0] * len(members)
        for c, (raw, weighted) in enumerate(zip(batch.raw, batch.plugins, strict=True)):
            column = [raw[i] for i in members]
            if weighted.normalizer is not None:
                batch.columns[c] = _Column(column)
                if not _normalized(weighted, state, pod, nodes, column):
                    return False
            if min(column) < MIN_NODE_SCORE or max(column) > MAX_NODE_SCORE:
                return False
            for k, value in enumerate(column):
                totals[k] += value * weighted.weight
        for k, i in enumerate(members):
            batch.totals[i] = totals[k]
        batch.keys = sorted(batch.key(i) for i in members)
        batch.order = [key % batch.width for key in batch.keys]
        return True

    def _flush(self, reason: FlushReason) -> None:
        if self.state is not None:
            self._log_end(self.state, reason)
        self.state = None
        self.metrics.batch_cache_flushed.labels(
            profile=self.profile.scheduler_name, reason=reason
        ).inc()

    def _log_end(self, batch: BatchState, reason: str) -> None:
        """The decision log's line for a state that ends (a flush, or a new full pass's
        state replacing it: ``replaced``). Asked first: a filtered call through the lazy
        logger still costs about 15 µs, and with signatures no two pods share every pod
        ends a state."""
        if not logs.debug_enabled():
            return
        log.debug(
            "batch_ended",
            profile=self.profile.scheduler_name,
            batch=batch.id,
            reason=reason,
            pods=batch.pods,
            nodes_left=batch.width - 1 if batch.pending else len(batch.order),
        )

    def _count_attempt(self, attempt: Attempt) -> None:
        self.metrics.batch_attempts.labels(
            profile=self.profile.scheduler_name, result=attempt
        ).inc()


def _normalized(
    weighted: WeightedScore,
    state: CycleState,
    pod: Pod,
    nodes: Sequence[NodeInfo],
    scores: list[int],
) -> bool:
    """The plugin's NormalizeScore succeeded on ``scores`` (in place); a raise or an answer
    that is not a Status counts as its failure (the state flushes, ``normalize_error``)."""
    assert weighted.normalizer is not None
    try:
        status = weighted.normalizer.normalize_score(state, pod, nodes, scores)
    except Exception:  # a plugin's bug: the full pass that follows reports it
        return False
    return type(status) is st.Status and status.is_success
