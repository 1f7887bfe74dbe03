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

import itertools
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
from scheduler.cycle.decision import Decision, Reserved, log_decision
from scheduler.cycle.failure import FailureHandler
from scheduler.cycle.ports import BindRequest, NoGroupReporter
from scheduler.cycle.schedule_group import GroupAttempt, GroupCycle
from scheduler.cycle.verification import Verifier
from scheduler.framework.cycle_state import CycleState
from scheduler.framework.diagnosis import Diagnosis, FitError, SchedulingError
from scheduler.framework.feature_gates import FeatureGates
from scheduler.framework.results import ScheduleResult
from scheduler.framework.wakes import wake_table
from scheduler.metrics.labels import DecisionPath, DivergenceKind, Result
from scheduler.plugins import names

if TYPE_CHECKING:
    from collections.abc import Iterable

    from scheduler.cache.cluster_state import ClusterState
    from scheduler.clock import Clock
    from scheduler.cycle.ports import BindDispatcher, GroupReporter, Preemptor, Reporter
    from scheduler.framework import status as st
    from scheduler.framework.profile import Profile
    from scheduler.framework.results import Outcome
    from scheduler.framework.timing import ObservePlugin, ObservePoint
    from scheduler.metrics.registry import Metrics
    from scheduler.model.keys import Uid
    from scheduler.model.pod import Pod
    from scheduler.model.pod_groups import GroupKey
    from scheduler.queueing.queued_group import QueuedPodGroupInfo
    from scheduler.queueing.queued_pod import QueuedPodInfo
    from scheduler.queueing.scheduling_queue import SchedulingQueue

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
        gates: FeatureGates | None = None,
        group_reporter: GroupReporter | None = None,
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
        self._identity_generation = 0
        """``IdentityLabels.generation`` the queued pods' signatures were made under."""
        self._read_keys: frozenset[str] = frozenset()
        """``IdentityLabels.read`` then."""
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
        self.gates = gates or FeatureGates()
        self._grouping = self.gates.generic_workload
        self.groups = GroupCycle(
            self,
            profiles=profiles,
            cluster=cluster,
            queue=queue,
            metrics=metrics,
            reporter=reporter,
            group_reporter=group_reporter or NoGroupReporter(),
            failures=self.failures,
        )
        """The cycle of a whole pod group (GenericWorkload: cycle/schedule_group.py)."""
        if self.gates.generic_workload:
            pod_groups = cluster.pod_groups
            queue.group_of = pod_groups.key_of
            queue.groups.pod_group = pod_groups.pod_group
            queue.groups.gate = self._group_gate

    # -- intake ------------------------------------------------------------------------

    def owns(self, pod: Pod) -> bool:
        return pod.scheduler_name in self.profiles

    def pre_enqueue(self, pod: Pod) -> st.Status:
        """The pod's profile's PreEnqueue plugins (SchedulingGates): anything but SUCCESS
        keeps it out of the queue, gated, until it changes."""
        return self.profiles[pod.scheduler_name].binding.run_pre_enqueue(pod)

    def group_of(self, pod: Pod) -> GroupKey | None:
        """The pod group ``pod`` belongs to (None without GenericWorkload, or of none)."""
        if not self._grouping:
            return None
        return self.cluster.pod_groups.key_of(pod)

    def _group_gate(self, group: QueuedPodGroupInfo) -> str:
        """A group's PreEnqueue: every member's; the first plugin that holds one back."""
        for info in group.members.values():
            status = self.pre_enqueue(info.pod)
            if not status.is_success:
                return status.plugin or "PreEnqueue"
        return ""

    def reject_waiting_pod(self, uid: Uid) -> bool:
        """The pod is gone: if it waits at Permit, reject it (kube does so on delete)."""
        return any(profile.reject_waiting_pod(uid) for profile in self.profiles.values())

    def enqueue(self, pod: Pod) -> None:
        """A pending pod of ours: sign it once and queue it (again, if it changed). Called
        by the event handlers (cycle/eventhandlers.py), which decide that it is pending."""
        # Its nomination (status.nominatedNodeName, or ours not yet seen back): recorded
        # before signing, so a nominated pod is never batched (KEP-5598).
        pod = self.queue.nominator.update(pod)
        labels = self.cluster.snapshot.identity_labels
        labels.observe(pod)  # its own terms count for it too
        signed = self.signers[pod.scheduler_name].sign(pod)
        if signed.signature is None and signed.refused_by != OPTED_OUT:
            log.debug("pod_unsignable", pod=pod.key, plugin=signed.refused_by)
            self.metrics.unsignable_pods.labels(plugin=signed.refused_by).inc()
        self.queue.add(pod, signed.signature, signed.refused_by)
        info = self.queue.get(pod.uid)
        if info is not None:
            info.signed_generation = labels.generation

    def resign(self, namespace: str) -> int:
        """Sign the queued pods of ``namespace`` again: a Service or pod controller there
        changed, so default topology spreading may now apply to them or no longer (their
        signature depends on it). Returns how many signatures changed."""
        changed = 0
        for info in self.queue.queued():
            pod = info.pod
            if pod.namespace != namespace:
                continue
            changed += self._sign_again(info)
        return changed

    def resign_identity(self, infos: Iterable[QueuedPodInfo] = ()) -> int:
        """A term has come to read a label key (cache/identity_labels.py): sign the queued
        pods that carry one of the keys read since the last time again, and ``infos``
        (popped, not yet decided), before any is decided. Returns how many signatures
        changed."""
        labels = self.cluster.snapshot.identity_labels
        previous = self._identity_generation
        self._identity_generation = labels.generation
        newly = labels.read - self._read_keys
        self._read_keys = labels.read
        for exact in self.exact.values():
            exact.labels_read()
        changed = 0
        for info in itertools.chain(self.queue.queued(), infos):
            # Signed before the last re-sign (out of the queue then): any key may be new to it.
            if info.signed_generation < previous or any(key in info.pod.labels for key in newly):
                changed += self._sign_again(info)
            info.signed_generation = labels.generation
        if changed:
            log.debug("queued_pods_resigned", reason="label read", pods=changed)
        return changed

    def _signed_current(self, infos: Iterable[QueuedPodInfo]) -> None:
        """Before popped pods are decided: the queue signed again if a term has come to read
        a label key since the last time, and each of ``infos`` signed under the current
        read keys (one out of the queue then, waiting at Permit or binding, came back)."""
        if self.cluster.snapshot.identity_labels.generation != self._identity_generation:
            self.resign_identity(infos)
            return
        for info in infos:
            if info.signed_generation != self._identity_generation:
                self._sign_again(info)

    def _sign_again(self, info: QueuedPodInfo) -> int:
        """Sign ``info``'s pod under the current read keys, in place; 1 if that changed its
        signature or why it has none."""
        pod = info.pod
        signed = self.signers[pod.scheduler_name].sign(pod)
        info.signed_generation = self.cluster.snapshot.identity_labels.generation
        if signed.signature == info.signature and signed.refused_by == info.refused_by:
            return 0
        self.queue.update_signature(info, pod, signed.signature, signed.refused_by)
        return 1

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
        self._signed_current((info,))
        started = time.perf_counter()
        self._cycle += 1
        cycle = self._cycle
        decision = self.decide(info, cycle)
        elapsed = time.perf_counter() - started
        self.metrics.decision_duration.labels(path=decision.path).observe(elapsed)
        outcome = decision.outcome
        if isinstance(outcome, ScheduleResult):
            self.store(info, decision, cycle, elapsed)
            reserved = self.reserve(info, outcome, decision)
            if reserved.status.is_success:
                self.permit_and_bind(info, reserved, decision, cycle, elapsed)
            else:
                self._not_reserved(info, reserved, elapsed)
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

    def schedule_group(self, group: QueuedPodGroupInfo) -> GroupAttempt | None:
        """One cycle for a whole pod group (cycle/schedule_group.py); what it found."""
        self._signed_current(group.members.values())
        self._cycle += 1
        attempt = self.groups.schedule(group, self._cycle)
        self.binding.run_decided()
        return attempt

    def store(self, info: QueuedPodInfo, decision: Decision, cycle: int, elapsed: float) -> None:
        """A placed pod's ranking becomes its profile's batch state (kube's
        StoreScheduleResults; the exact path keeps its own), and its decision is logged."""
        outcome = decision.outcome
        assert isinstance(outcome, ScheduleResult)
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

    def decide(self, info: QueuedPodInfo, cycle: int) -> Decision:
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

    def reserve(self, info: QueuedPodInfo, outcome: ScheduleResult, decision: Decision) -> Reserved:
        """Assume the pod on its node and run Reserve (kube's assumeAndReserve), on a state
        of its own: what Reserve writes must not reach a state the exact batch shares
        between the pods of a signature. A failure is undone here already."""
        pod = info.pod
        node = outcome.node.name
        profile = self.profiles[pod.scheduler_name]
        state = decision.state.clone()
        state.record_plugin_metrics = profile.timing.cycle is not None
        self.queue.nominator.delete(pod.uid)  # placed: it needs no reservation any more
        self.failures.preempting.pop(pod.uid, None)  # nor waits for any victim
        assumed = self.cluster.assume(pod, node)
        reserved = Reserved(assumed, node, state, profile.binding.run_reserve(state, assumed, node))
        if not reserved.status.is_success:
            self.release(reserved)
        return reserved

    def release(self, reserved: Reserved) -> None:
        """Unreserve and forget: the pod holds nothing any more."""
        pod = reserved.pod
        self.profiles[pod.scheduler_name].binding.run_unreserve(reserved.state, pod, reserved.node)
        self.cluster.forget(pod.uid)

    def permit_and_bind(
        self,
        info: QueuedPodInfo,
        reserved: Reserved,
        decision: Decision,
        cycle: int,
        elapsed: float,
        *,
        in_group: bool = False,
    ) -> None:
        """Permit, then hand the pod to its binding cycle, which runs off the loop (kube's
        prepareForBindingCycle). A pod told to wait is no batch's last success until it is
        allowed, so the batch state ends — but not inside a group cycle, whose members wait
        only for each other (GangScheduling) and are allowed in the same loop turn."""
        pod = reserved.pod
        binding = self.profiles[pod.scheduler_name].binding
        status, waits = binding.run_permit(reserved.state, pod, reserved.node)
        if not (status.is_success or waits):
            self.release(reserved)
            self._not_reserved(info, Reserved(pod, reserved.node, reserved.state, status), elapsed)
            return
        if waits and not in_group:
            self.end_batch(pod.scheduler_name)
        self.metrics.observe_attempt(Result.SCHEDULED, pod.scheduler_name, elapsed)
        outcome = decision.outcome
        assert isinstance(outcome, ScheduleResult)
        request = BindRequest(
            info=info,
            pod=pod,
            node=reserved.node,
            profile=pod.scheduler_name,
            cycle=cycle,
            started=self.clock.now(),
            state=reserved.state,
            path=decision.path,
            evaluated=outcome.evaluated,
            feasible=outcome.feasible,
        )
        self.binding.start(request, waits)

    def _not_reserved(self, info: QueuedPodInfo, reserved: Reserved, elapsed: float) -> None:
        """Rejected at Reserve or Permit: kube reports it on the one node tried, without
        PostFilter, and the batch state that chose the node ends."""
        self.end_batch(info.pod.scheduler_name)
        failure = not_permitted(info.pod, reserved.node, reserved.status)
        self.failures.not_placed(info, failure, elapsed, reserved.state, post_filter=False)

    def end_batch(self, profile: str) -> None:
        """Drop ``profile``'s batch state (its next pod takes a full pass)."""
        batch = self.batches.get(profile)
        if batch is not None:
            batch.invalidate()


def not_permitted(pod: Pod, node: str, status: st.Status) -> FitError | SchedulingError:
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
