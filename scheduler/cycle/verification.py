"""Verification of batched placements (beyond kube): ``--batching-verify-ratio``.

For a sampled share of the pods a hint placed, a full pass runs too, and a hint that scores
below the pass's best counts as a divergence (``batch_scheduler_batch_divergence_total``).
The sampling and the verifying passes draw from random sources and rotations of their own,
so turning verification on never changes a decision.
"""

from __future__ import annotations

import random
from typing import TYPE_CHECKING

from scheduler import logs
from scheduler.framework.cycle_state import CycleState
from scheduler.framework.feasible import Selector
from scheduler.framework.results import ScheduleResult
from scheduler.framework.status import Status
from scheduler.metrics.labels import DivergenceKind

if TYPE_CHECKING:
    from scheduler.cache.node_info import NodeInfo
    from scheduler.framework.profile import Profile
    from scheduler.metrics.registry import Metrics
    from scheduler.model.pod import Pod

log = logs.get_logger(__name__)


class Verifier:
    """Samples hinted placements and compares them with a full pass."""

    def __init__(
        self, profiles: dict[str, Profile], metrics: Metrics, ratio: float, rng: random.Random
    ) -> None:
        self.metrics = metrics
        self.ratio = ratio
        self.rng = rng
        self._selectors = {name: Selector(random.Random(rng.random())) for name in profiles}

    def sample(self, profile: Profile, pod: Pod, hinted: NodeInfo) -> None:
        """Verify ``pod``'s hinted placement with the configured probability."""
        if self.ratio and self.rng.random() < self.ratio:
            self.verify(profile, pod, hinted)

    def verify(self, profile: Profile, pod: Pod, hinted: NodeInfo) -> None:
        """Run a full pass too and count a hint that scores below the pass's best."""
        self.metrics.batch_verified.inc()
        selector = self._selectors[profile.scheduler_name]
        outcome = profile.schedule(CycleState(), pod, selector=selector)
        if not isinstance(outcome, ScheduleResult) or outcome.node is hinted:
            return
        # Score the hint together with the nodes the pass ranked, on equal terms.
        nodes = list(outcome.scores.nodes) if outcome.scores is not None else [outcome.node]
        if hinted not in nodes:
            nodes.append(hinted)
        state = CycleState()
        profile.run_pre_filter(state, pod)
        scores = profile.prioritize(state, pod, nodes)
        if isinstance(scores, Status):
            return
        if scores.totals[nodes.index(hinted)] < max(scores.totals):
            self.diverged(DivergenceKind.LOWER_SCORE, pod, hinted.name, outcome.node.name)

    def exact_sample(self, profile: Profile) -> Selector | None:
        """With the configured probability, a copy of ``profile``'s selector as it is before
        an exact decision (for :meth:`verify_exact`); None: not sampled."""
        if not (self.ratio and self.rng.random() < self.ratio):
            return None
        copy = Selector(random.Random(), profile.selector.next_start)
        copy.rng.setstate(profile.selector.rng.getstate())
        return copy

    def verify_exact(self, profile: Profile, pod: Pod, chosen: NodeInfo, before: Selector) -> None:
        """Run the full pass the exact path stands for, from the selector as it was (before
        the pod is assumed): the same node, the same ``next_start`` and random state, or a
        divergence."""
        self.metrics.batch_verified.inc()
        outcome = profile.schedule(CycleState(), pod, selector=before)
        after = profile.selector
        node = outcome.node.name if isinstance(outcome, ScheduleResult) else ""
        if (
            node != chosen.name
            or before.next_start != after.next_start
            or before.rng.getstate() != after.rng.getstate()
        ):
            self.diverged(DivergenceKind.EXACT_MISMATCH, pod, chosen.name, node)

    def diverged(self, kind: DivergenceKind, pod: Pod, hinted: str, full_pass: str) -> None:
        log.info("batch_divergence", kind=kind, pod=pod.key, hint=hinted, full_pass=full_pass)
        self.metrics.batch_divergence.labels(kind=kind).inc()
