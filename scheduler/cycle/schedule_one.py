"""One scheduling cycle per pod, and what happens when its bind ends (kube's schedule_one.go).

A cycle is synchronous and await-free from the hint to the assume, so the live snapshot
cannot change under it (cache/snapshot.py). Its steps:

1. Batching enabled for the pod's profile: PreFilter, then ``get_node_hint``; a hint is
   looked up in the current cache and rechecked with every Filter. Passing: chosen, without
   scoring. The cycle number passed to the batch is the scheduler's (one counter for all
   profiles, as kube's), so another profile's pod in between breaks a batch.
2. Otherwise (or the recheck failed): a full pass (framework/profile.py).
3. Chosen node: the leftover ranking becomes batch state; the pod is assumed there (the
   next cycle sees it), reserved (Reserve) and permitted (Permit), then handed to its
   binding cycle (cycle/binding_cycle.py: WaitOnPermit, PreBind, Bind, PostBind). A
   rejection at Reserve or Permit unreserves and forgets it and requeues it as
   unschedulable (``0/1 nodes are available: …``, no PostFilter), an error with backoff. A
   pod told to wait at Permit ends the batch state (it is no batch's last success until
   allowed).
4. No node, or an error: cycle/failure.py (kube's handleSchedulingFailure: PostFilter and
   preemption, the report, the requeue).

The intake side (``enqueue``: sign once, queue) is here too: the event handlers
(cycle/eventhandlers.py) decide what a change means and call it.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from scheduler import logs
from scheduler.batching.batch import OpportunisticBatch
from scheduler.batching.exact import ExactBatch
from scheduler.batching.signature import OPTED_OUT, BatchingMode, Signer, is_exact
from scheduler.cycle.binding_cycle import BindingCycles
from scheduler.cycle.counts import CycleCounts
from scheduler.cycle.decision import Decision, log_decision
from scheduler.cycle.failure import FailureHandler
from scheduler.cycle.ports import BindRequest
from scheduler.cycle.verification import Verifier
from scheduler.framework.cycle_state import CycleState
from scheduler.framework.diagnosis import Diagnosis, FitError, SchedulingError
from scheduler.framework.results import ScheduleResult
from scheduler.framework.wakes import wake_table
from scheduler.metrics.labels import DecisionPath, DivergenceKind, Result
from scheduler.plugins import names

if TYPE_CHECKING:
    from scheduler.cache.cluster_state import ClusterState
    from scheduler.clock import Clock
    from scheduler.cycle.ports import BindDispatcher, Preemptor, Reporter
    from scheduler.framework import status as st
    from scheduler.framework.profile import Profile
    from scheduler.framework.results import Outcome
    from scheduler.framework.timing import ObservePlugin, ObservePoint
    from scheduler.metrics.registry import Metrics
    from scheduler.model.keys import Uid
    from scheduler.model.pod import Pod
    from scheduler.queueing.scheduling_queue import QueuedPodInfo, SchedulingQueue

log = logs.get_logger(__name__)


@dataclass(frozen=True, slots=True)
class BatchingSettings:
    """How the scheduler batches; the one source of these defaults (``SchedulerSettings``,
    simulate and the CLI, whose flags left out keep them, take them from here)."""

    mode: BatchingMode = BatchingMode.ANNOTATED
    """Which pods may batch: ``off``, ``annotated`` (pods that opt in) or ``all``."""
    max_batch_age: float = 0.5
    """Seconds a batch state may be reused (kube's maxBatchAge, 500 ms)."""
    verify_ratio: float = 0.0
    """Fraction of hinted pods for which a full pass also runs, to count divergences. The
    sampling and the verifying passes use random sources and rotations of their own, so
    verification never changes a decision."""
    fast_rescore: bool = True
    """Rescore a kept node without re-normalizing the others when their scores cannot have
    changed (batching/batch.py); off: always the full rescore path."""


class Scheduler:
    """The scheduling core of one process: profiles, batch state, the queue and the cache."""

    def __init__(
        self,
        *,
        cluster: ClusterState,
        queue: SchedulingQueue,
        profiles: dict[str, Profile],
        clock: Clock,
        binder: BindDispatcher,
        reporter: Reporter,
        metrics: Metrics,
        batching: BatchingSettings | None = None,
        rng: random.Random | None = None,
        preemptor: Preemptor | None = None,
    ) -> None:
        self.cluster = cluster
        self.queue = queue
        self.profiles = profiles
        self.clock = clock
        self.reporter = reporter
        # Which rejected pods a cluster event may help: what their plugins registered.
        queue.wakes = wake_table(p for profile in profiles.values() for p in profile.plugins)
        self.metrics = metrics
        self.settings = batching or BatchingSettings()
        self.verifier = Verifier(
            profiles,
            metrics,
            self.settings.verify_ratio,
            random.Random((rng or random.Random()).random()),
        )
        self.signers: dict[str, Signer] = {}
        self.batches: dict[str, OpportunisticBatch] = {}
        self.exact: dict[str, ExactBatch] = {}
        """Each profile's exact batch (spread and self-affinity pods), where every plugin
        of the profile has a contract for it (batching/exact.py)."""
        self._cycle = 0
        """Scheduling cycles so far, all profiles together (kube's schedulingCycle)."""
        for name, profile in profiles.items():
            profile.nominator = queue.nominator
            signer = Signer(profile, self.settings.mode)
            self.signers[name] = signer
            if signer.disabled_by:
                # Said once, never silently: a plugin that cannot sign turns batching off.
                log.warning("batching_disabled", profile=name, plugins=signer.disabled_by)
                for plugin in signer.disabled_by:
                    metrics.batching_disabled.labels(profile=name, plugin=plugin).set(1)
            profile.timing.observe = _extension_point_recorder(metrics, name)
            profile.timing.observe_plugin = _plugin_recorder(metrics)
            if signer.enabled:
                self.batches[name] = OpportunisticBatch(
                    profile,
                    clock=clock,
                    metrics=metrics,
                    max_batch_age=self.settings.max_batch_age,
                    fast_rescore=self.settings.fast_rescore,
                )
                if signer.exact:
                    self.exact[name] = ExactBatch(profile, metrics)
        self.failures = FailureHandler(
            profiles=profiles,
            signers=self.signers,
            cluster=cluster,
            queue=queue,
            metrics=metrics,
            reporter=reporter,
            preemptor=preemptor,
        )
        """PostFilter and preemption, the report and the requeue of pods not placed."""
        self.binding = BindingCycles(
            profiles=profiles,
            cluster=cluster,
            queue=queue,
            clock=clock,
            metrics=metrics,
            binder=binder,
            reporter=reporter,
            failures=self.failures,
            end_batch=self.end_batch,
        )
        """The binding cycles of assumed pods (Permit waits, PreBind, Bind, PostBind)."""

    # -- intake ------------------------------------------------------------------------

    def owns(self, pod: Pod) -> bool:
        return pod.scheduler_name in self.profiles

    def pre_enqueue(self, pod: Pod) -> st.Status:
        """The pod's profile's PreEnqueue plugins (SchedulingGates): anything but SUCCESS
        keeps it out of the queue, gated, until it changes."""
        return self.profiles[pod.scheduler_name].binding.run_pre_enqueue(pod)

    def reject_waiting_pod(self, uid: Uid) -> bool:
        """The pod is gone: if it waits at Permit, reject it (kube does so on delete)."""
        return any(profile.reject_waiting_pod(uid) for profile in self.profiles.values())

    def enqueue(self, pod: Pod) -> None:
        """A pending pod of ours: sign it once and queue it (again, if it changed). Called
        by the event handlers (cycle/eventhandlers.py), which decide that it is pending."""
        # Its nomination (status.nominatedNodeName, or ours not yet seen back): recorded
        # before signing, so a nominated pod is never batched (KEP-5598).
        pod = self.queue.nominator.update(pod)
        signed = self.signers[pod.scheduler_name].sign(pod)
        if signed.signature is None and signed.refused_by != OPTED_OUT:
            log.debug("pod_unsignable", pod=pod.key, plugin=signed.refused_by)
            self.metrics.unsignable_pods.labels(plugin=signed.refused_by).inc()
        self.queue.add(pod, signed.signature, signed.refused_by)

    def resign(self, namespace: str) -> int:
        """Sign the queued pods of ``namespace`` again: a Service or pod controller there
        changed, so default topology spreading may now apply to them or no longer (their
        signature depends on it). Returns how many signatures changed."""
        changed = 0
        for info in self.queue.queued():
            pod = info.pod
            if pod.namespace != namespace:
                continue
            signed = self.signers[pod.scheduler_name].sign(pod)
            if signed.signature != info.signature or signed.refused_by != info.refused_by:
                self.queue.update_signature(info, pod, signed.signature, signed.refused_by)
                changed += 1
        return changed

    def default_spreading_unsignable(self) -> int:
        """Queued pods that only default topology spreading keeps from batching."""
        return sum(
            1
            for info in self.queue.queued()
            if info.refused_by == names.POD_TOPOLOGY_SPREAD
            and not info.pod.topology_spread_constraints
        )

    def counts(self) -> CycleCounts:
        """What the cycles so far did, read from the metrics (the only count)."""
        return CycleCounts.read(self.metrics)

    # -- the cycle (kube's scheduleOne: schedulingCycle, then the binding dispatch) --------

    def schedule_one(self, info: QueuedPodInfo) -> Outcome:
        """Decide for one popped pod, assume it and dispatch its bind (or report why not)."""
        started = time.perf_counter()
        self._cycle += 1
        cycle = self._cycle
        decision = self._schedule_pod(info, cycle)
        elapsed = time.perf_counter() - started
        self.metrics.decision_duration.labels(path=decision.path).observe(elapsed)
        outcome = decision.outcome
        if isinstance(outcome, ScheduleResult):
            batch = self.batches.get(info.pod.scheduler_name)
            if batch is not None and decision.path is not DecisionPath.EXACT:
                batch.store_schedule_results(
                    # kube's batch never keeps an exact signature's ranking (unsignable there)
                    signature=None if exact_signature(info) else info.signature,
                    hinted=decision.hinted,
                    chosen=outcome.node,
                    scores=outcome.scores,
                    chosen_index=outcome.chosen,
                    cycle=cycle,
                )
            if logs.debug_enabled():
                log_decision(batch, info, cycle, decision, elapsed)
            self._assume_and_bind(info, outcome, cycle, elapsed, decision)
        else:
            # Not recorded in the batch: the next pod's cycle is then not last + 1 (kube).
            if logs.debug_enabled():
                log_decision(
                    self.batches.get(info.pod.scheduler_name), info, cycle, decision, elapsed
                )
            self.failures.not_placed(info, outcome, elapsed, decision.state)
        # Permit decisions this cycle took for other waiting pods (in run: the loop's next
        # turn has done it already, or will; offline: now).
        self.binding.run_decided()
        return outcome

    def _schedule_pod(self, info: QueuedPodInfo, cycle: int) -> Decision:
        """The batch's hint when it passes every Filter, else a full pass (kube's
        schedulePod: GetNodeHint, then findNodesThatFitPod and prioritizeNodes)."""
        pod = info.pod
        profile = self.profiles[pod.scheduler_name]
        batch = self.batches.get(pod.scheduler_name)
        state = CycleState()
        if exact_signature(info):
            return self._schedule_exact(info, profile)
        if batch is None:
            return Decision(profile.schedule(state, pod), DecisionPath.FULL, state, None)
        # PreFilter once, for the hint's recheck and, if it comes to that, the full pass
        # (which gets the state as PreFilter left it: the hint path writes PreScore data).
        allowed, pre_filter_status = profile.run_pre_filter(state, pod)
        pristine = state.clone()
        hinted = None
        if pre_filter_status.is_success:
            hinted = batch.get_node_hint(state, pod, info.signature, cycle)
            node = profile.snapshot.get(hinted) if hinted is not None else None
            if (
                node is not None
                and profile.run_filters_with_nominated_pods(state, pod, node).is_success
            ):
                if self.verifier.ratio:
                    self.verifier.sample(profile, pod, node)
                result = ScheduleResult(node=node, evaluated=1, feasible=1, scores=None, chosen=0)
                path = DecisionPath.RESCORE if batch.rescored else DecisionPath.HINT
                return Decision(result, path, pristine, hinted)
            if hinted is not None:
                # Filled or deleted since the full pass (kube: the hint is not used).
                self.verifier.diverged(DivergenceKind.HINT_INFEASIBLE, pod, hinted, "")
        outcome = profile.schedule(pristine, pod, (allowed, pre_filter_status))
        return Decision(outcome, DecisionPath.FULL, pristine, hinted)

    def _schedule_exact(self, info: QueuedPodInfo, profile: Profile) -> Decision:
        """A spread or self-affinity pod: the exact batch's node, which is the full pass's
        (batching/exact.py), or the full pass itself where the batch cannot prove it."""
        pod = info.pod
        exact = self.exact.get(pod.scheduler_name)
        if exact is not None and info.signature is not None:
            before = self.verifier.exact_sample(profile)
            placed = exact.schedule(pod, info.signature)
            if placed is not None:
                result, state = placed
                if before is not None:
                    self.verifier.verify_exact(profile, pod, result.node, before)
                return Decision(result, DecisionPath.EXACT, state, None)
        state = CycleState()
        return Decision(profile.schedule(state, pod), DecisionPath.FULL, state, None)

    def _assume_and_bind(
        self,
        info: QueuedPodInfo,
        outcome: ScheduleResult,
        cycle: int,
        elapsed: float,
        decision: Decision,
    ) -> None:
        """Assume, Reserve and Permit (kube's assumeAndReserve and prepareForBindingCycle),
        then hand the pod to its binding cycle, which runs off the loop."""
        pod = info.pod
        node = outcome.node.name
        profile = self.profiles[pod.scheduler_name]
        binding = profile.binding
        # The pod's own state from here on: what Reserve writes must not reach a state the
        # exact batch shares between the pods of a signature.
        state = decision.state.clone()
        state.record_plugin_metrics = profile.timing.cycle is not None
        self.queue.nominator.delete(pod.uid)  # placed: it needs no reservation any more
        self.failures.preempting.pop(pod.uid, None)  # nor waits for any victim
        assumed = self.cluster.assume(pod, node)
        status = binding.run_reserve(state, assumed, node)
        waits: dict[str, float] = {}
        if status.is_success:
            status, waits = binding.run_permit(state, assumed, node)
        if not (status.is_success or waits):
            binding.run_unreserve(state, assumed, node)
            self.cluster.forget(pod.uid)
            self.end_batch(pod.scheduler_name)
            failure = _not_permitted(pod, node, status)
            self.failures.not_placed(info, failure, elapsed, state, post_filter=False)
            return
        if waits:  # not a batch's last success until allowed: the batch state ends here
            self.end_batch(pod.scheduler_name)
        self.metrics.observe_attempt(Result.SCHEDULED, pod.scheduler_name, elapsed)
        request = BindRequest(
            info=info,
            pod=assumed,
            node=node,
            profile=pod.scheduler_name,
            cycle=cycle,
            started=self.clock.now(),
            state=state,
            path=decision.path,
            evaluated=outcome.evaluated,
            feasible=outcome.feasible,
        )
        self.binding.start(request, waits)

    def end_batch(self, profile: str) -> None:
        """Drop ``profile``'s batch state (its next pod takes a full pass)."""
        batch = self.batches.get(profile)
        if batch is not None:
            batch.invalidate()


def _not_permitted(pod: Pod, node: str, status: st.Status) -> FitError | SchedulingError:
    """A failure at Reserve or Permit as kube reports it: a rejection is a FitError on the
    one node tried (``0/1 nodes are available: …``), anything else a scheduling error."""
    if status.is_rejected:
        diagnosis = Diagnosis(node_statuses={node: status}, unschedulable_plugins={status.plugin})
        return FitError(pod.key, 1, diagnosis)
    return SchedulingError(pod.key, status.message())


def exact_signature(info: QueuedPodInfo) -> bool:
    """Whether only the exact batch may serve ``info``'s pod (its signature says so)."""
    return info.signature is not None and is_exact(info.signature)


def _extension_point_recorder(metrics: Metrics, profile: str) -> ObservePoint:
    histogram = metrics.framework_extension_point_duration

    def observe(point: str, status: str, seconds: float) -> None:
        histogram.labels(extension_point=point, status=status, profile=profile).observe(seconds)

    return observe


def _plugin_recorder(metrics: Metrics) -> ObservePlugin:
    histogram = metrics.plugin_execution_duration

    def observe(plugin: str, point: str, status: str, seconds: float) -> None:
        histogram.labels(plugin=plugin, extension_point=point, status=status).observe(seconds)

    return observe
