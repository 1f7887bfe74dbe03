"""OpportunisticBatch (KEP-5598): reuse one full pass for the next same-signature pods.

After a full pass the scored nodes that were not chosen are kept, sorted, as *batch state*.
The next pod with the same signature gets a *hint*: the best remaining node, popped from the
state, which the cycle then rechecks with every Filter against the current cache.

Before popping, ``get_node_hint`` checks, in kube-scheduler's order: state present, cycle
continuity (cycle == last + 1), last cycle succeeded, equal signature (a nominated pod has
none), age <= max age. Then it refilters the node chosen last time: infeasible → it leaves
the state (one-pod-per-node); still feasible → it is *rescored* and put back in order
(many-pods-per-node), so the next hint is what a full pass would rank first among the kept
nodes. A popped node (or the last one) that has left the cache since the full pass flushes
the state (``node_missing``): the pod gets a full pass instead.

Rescoring: PreScore for the current pod, raw Score for that node, NormalizeScore over the
kept nodes plus that node, re-sort. The fast path skips the re-normalize and re-sort: the
in-tree normalizers depend only on the minimum and maximum raw score of the node set, so
when no normalizing plugin's minimum or maximum changed the other nodes' totals are
unchanged, and only the rescored node moves (a bisect insert). Otherwise the full path runs.

Everything here is synchronous: a hint is taken and rechecked in one await-free stretch.
"""

from __future__ import annotations

import bisect
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from scheduler.metrics.labels import BatchAttempt as Attempt
from scheduler.metrics.labels import BatchFlushReason as FlushReason
from scheduler.metrics.labels import Hinted

if TYPE_CHECKING:
    from scheduler.batching.signature import Signature
    from scheduler.cache.node_info import NodeInfo
    from scheduler.clock import Clock
    from scheduler.framework.cycle_state import CycleState
    from scheduler.framework.profile import Profile, Scores, WeightedScore
    from scheduler.metrics import Metrics
    from scheduler.model.pod import Pod

DEFAULT_MAX_BATCH_AGE = 0.5
"""Seconds a batch state may be reused (kube's maxBatchAge, 500 ms)."""


@dataclass(slots=True)
class _LastCycle:
    cycle: int = -1
    node: str = ""
    succeeded: bool = False


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

    ``order`` holds indices into ``nodes`` sorted by ascending total (best last, so popping
    is O(1)); ``keys`` holds the same totals for bisect. Members of the normalization set are
    the indices in ``order`` plus ``last`` (the node chosen last, while it is still feasible).
    """

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


class OpportunisticBatch:
    """Batch state and hints for one profile."""

    def __init__(
        self,
        profile: Profile,
        *,
        clock: Clock,
        metrics: Metrics | None = None,
        max_batch_age: float = DEFAULT_MAX_BATCH_AGE,
        fast_rescore: bool = True,
    ) -> None:
        self.profile = profile
        self.clock = clock
        self.metrics = metrics
        self.max_batch_age = max_batch_age
        self.fast_rescore = fast_rescore
        self.state: BatchState | None = None
        self._last = _LastCycle()
        self.batched_pods = 0
        self.flushes: dict[str, int] = {}
        self.rescores = 0

    # -- hint --------------------------------------------------------------------------

    def get_node_hint(
        self, state: CycleState, pod: Pod, signature: Signature | None, cycle: int
    ) -> NodeInfo | None:
        """The node to try first for ``pod`` in ``cycle``, or None (then run a full pass).

        ``state`` must hold the pod's PreFilter results: the last chosen node is refiltered.
        """
        started = time.perf_counter()
        hint = self._hint(state, pod, signature, cycle)
        if self.metrics is not None:
            name = self.profile.scheduler_name
            hinted = Hinted.HINT if hint is not None else Hinted.NO_HINT
            self.metrics.get_node_hint_duration.labels(hinted=hinted, profile=name).observe(
                time.perf_counter() - started
            )
            if hint is None:
                self.metrics.batch_attempts.labels(profile=name, result=Attempt.NO_HINT).inc()
        return hint

    def _hint(
        self, state: CycleState, pod: Pod, signature: Signature | None, cycle: int
    ) -> NodeInfo | None:
        batch = self.state
        if batch is None:
            return None
        last = self._last
        if cycle != last.cycle + 1:
            self._flush(FlushReason.POD_SKIPPED)
            return None
        if not last.succeeded:
            self._flush(FlushReason.POD_FAILED)
            return None
        if pod.nominated_node_name:
            self._flush(FlushReason.POD_NOMINATED)
            return None
        if signature is None or signature != batch.signature:
            self._flush(FlushReason.POD_INCOMPATIBLE)
            return None
        if self.clock.now() - batch.created > self.max_batch_age:
            self._flush(FlushReason.EXPIRED)
            return None
        if batch.last >= 0:
            node = batch.nodes[batch.last]
            if self.profile.snapshot.get(node.name) is not node:
                self._flush(FlushReason.NODE_MISSING)
                return None
            if self.profile.run_filters(state, pod, node).is_success:
                if not self._rescore(state, pod, batch):
                    return None
            else:
                self._drop_last(batch)
        if not batch.order:
            self._flush(FlushReason.EMPTY_LIST)
            return None
        index = batch.order.pop()
        batch.keys.pop()
        node = batch.nodes[index]
        if self.profile.snapshot.get(node.name) is not node:
            # Deleted since the full pass (kube: the hint is not in the snapshot). The state
            # holds the old NodeInfo, whose node a recheck would still pass, and assuming a
            # pod on a node the cache no longer has is an error.
            self._flush(FlushReason.NODE_MISSING)
            return None
        batch.last = index
        return node

    # -- results -----------------------------------------------------------------------

    def store_schedule_results(
        self,
        *,
        signature: Signature | None,
        hinted: NodeInfo | None,
        chosen: NodeInfo,
        scores: Scores | None,
        chosen_index: int,
        cycle: int,
    ) -> None:
        """Record a successful cycle; keep the state if the hint was used, else rebuild it."""
        started = time.perf_counter()
        self._last = _LastCycle(cycle, chosen.name, True)
        name = self.profile.scheduler_name
        if hinted is not None and hinted is chosen:
            self.batched_pods += 1
            self._count_attempt(Attempt.HINT_USED)
        else:
            if hinted is not None:
                self._count_attempt(Attempt.HINT_NOT_USED)
            if signature is not None and scores is not None and len(scores.nodes) > 1:
                self.state = self._new_state(signature, scores, chosen_index)
            else:
                reason = (
                    FlushReason.POD_NOT_BATCHABLE if signature is None else FlushReason.EMPTY_LIST
                )
                self._flush(reason)
        if self.metrics is not None:
            self.metrics.store_schedule_results_duration.labels(profile=name).observe(
                time.perf_counter() - started
            )

    def cycle_failed(self, cycle: int) -> None:
        """The pod of ``cycle`` was not placed: the next pod cannot reuse the state."""
        self._last = _LastCycle(cycle, "", False)

    def invalidate(self, node_name: str) -> None:
        """A bind onto ``node_name`` failed: drop state that may rank that node."""
        if self.state is not None:
            self._flush(FlushReason.BIND_FAILED)

    # -- internals ---------------------------------------------------------------------

    def _new_state(self, signature: Signature, scores: Scores, chosen: int) -> BatchState:
        totals = scores.totals
        order = sorted((i for i in range(len(totals)) if i != chosen), key=totals.__getitem__)
        columns: list[_Column | None] = [
            _Column(raw) if weighted.normalizer is not None else None
            for weighted, raw in zip(scores.plugins, scores.raw, strict=True)
        ]
        return BatchState(
            signature=signature,
            nodes=scores.nodes,
            raw=scores.raw,
            plugins=scores.plugins,
            totals=list(totals),
            order=order,
            keys=[totals[i] for i in order],
            columns=columns,
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
        """Rescore the still-feasible last node and put it back in order (False: flushed)."""
        started = time.perf_counter()
        self.rescores += 1
        index = batch.last
        node = batch.nodes[index]
        if not self.profile.run_pre_score(state, pod, batch.nodes).is_success:
            self._flush(FlushReason.PRESCORE_ERROR)
            return False
        stable = True
        for column, raw, weighted in zip(batch.columns, batch.raw, batch.plugins, strict=True):
            new = weighted.plugin.score(state, pod, node)
            if column is not None:
                column.replace(raw[index], new)
                stable = stable and column.unchanged()
            raw[index] = new
        if stable and self.fast_rescore:
            total = self._total_of(state, pod, batch, index)
            batch.totals[index] = total
            position = bisect.bisect_left(batch.keys, total)
            batch.keys.insert(position, total)
            batch.order.insert(position, index)
        else:
            self._renormalize(state, pod, batch)
        batch.last = -1
        if self.metrics is not None:
            name = self.profile.scheduler_name
            self.metrics.batch_rescore_attempts.labels(profile=name).inc()
            self.metrics.batch_rescore_duration.labels(profile=name).observe(
                time.perf_counter() - started
            )
        return True

    def _total_of(self, state: CycleState, pod: Pod, batch: BatchState, index: int) -> int:
        """Weighted total of one node against the stored normalization ranges."""
        node = batch.nodes[index]
        total = 0
        for column, raw, weighted in zip(batch.columns, batch.raw, batch.plugins, strict=True):
            value = raw[index]
            if column is not None and weighted.normalizer is not None:
                # The in-tree normalizers read only the set's min and max: normalizing the
                # value together with them gives its score within the whole set.
                probe = [value, column.low, column.high]
                weighted.normalizer.normalize_score(state, pod, (node, node, node), probe)
                value = probe[0]
            total += value * weighted.weight
        return total

    def _renormalize(self, state: CycleState, pod: Pod, batch: BatchState) -> None:
        """Full path: normalize over the members (kept nodes + the rescored one), re-sort."""
        members = [*batch.order, batch.last]
        nodes = [batch.nodes[i] for i in members]
        totals = [0] * len(members)
        for c, (raw, weighted) in enumerate(zip(batch.raw, batch.plugins, strict=True)):
            column = [raw[i] for i in members]
            if weighted.normalizer is not None:
                batch.columns[c] = _Column(column)
                weighted.normalizer.normalize_score(state, pod, nodes, column)
            for k, value in enumerate(column):
                totals[k] += value * weighted.weight
        for k, i in enumerate(members):
            batch.totals[i] = totals[k]
        members.sort(key=batch.totals.__getitem__)
        batch.order = members
        batch.keys = [batch.totals[i] for i in members]

    def _flush(self, reason: FlushReason) -> None:
        self.state = None
        self.flushes[reason] = self.flushes.get(reason, 0) + 1
        if self.metrics is not None:
            self.metrics.batch_cache_flushed.labels(
                profile=self.profile.scheduler_name, reason=reason
            ).inc()

    def _count_attempt(self, attempt: Attempt) -> None:
        if self.metrics is not None:
            self.metrics.batch_attempts.labels(
                profile=self.profile.scheduler_name, result=attempt
            ).inc()
