"""What happens to a pod no node was found for (kube's handleSchedulingFailure), and the
preemption that PostFilter may decide on the way.

- **Not placed**: a pod that fits nowhere runs PostFilter (DefaultPreemption), then is
  reported (PodScheduled=False and FailedScheduling: the fit message, then PostFilter's) and
  waits in the unschedulable pool for a cluster event that the plugins that rejected it
  registered; a pod rejected at Reserve or Permit skips PostFilter (kube's PostFilter runs
  before them); a scheduling error is retried with backoff and its nomination cleared.
- **Preemption**: PostFilter's nomination is recorded at once (the queue's nominator:
  lower-priority pods leave room there from the next cycle on, and lose their own
  nomination on that node) and the ``Preemptor`` port evicts the victims and patches
  ``status.nominatedNodeName``. A nominated pod is never batched (KEP-5598): its queued copy
  carries the node, and is signed again once the nomination is cleared.
- **Preemption in flight**: while a ``TrackedPreemptor`` still writes a preemption's
  evictions, and until the watch shows the victims terminating or gone, the queue holds the
  preemptor back (kube's DefaultPreemption PreEnqueue): scheduled again earlier, it would
  see its victims still running and preempt on a second node.

The scheduling cycle (cycle/schedule_one.py) and the binding cycle (cycle/binding_cycle.py)
hand their failures here.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from scheduler import logs
from scheduler.cycle.ports import NoPreemptor, TrackedPreemptor
from scheduler.framework.diagnosis import FitError
from scheduler.metrics.labels import Result

if TYPE_CHECKING:
    from collections.abc import Mapping

    from scheduler.batching.signature import Signer
    from scheduler.cache.cluster_state import ClusterState
    from scheduler.cycle.ports import Preemptor, Reporter
    from scheduler.framework.cycle_state import CycleState
    from scheduler.framework.diagnosis import SchedulingError
    from scheduler.framework.profile import Profile
    from scheduler.metrics.registry import Metrics
    from scheduler.model.keys import Uid
    from scheduler.model.pod import Pod
    from scheduler.queueing.queued_pod import QueuedPodInfo
    from scheduler.queueing.scheduling_queue import SchedulingQueue

log = logs.get_logger(__name__)


class FailureHandler:
    """The not-placed side of every cycle, and the nominations and preemptions it makes."""

    def __init__(
        self,
        *,
        profiles: Mapping[str, Profile],
        signers: Mapping[str, Signer],
        cluster: ClusterState,
        queue: SchedulingQueue,
        metrics: Metrics,
        reporter: Reporter,
        preemptor: Preemptor | None,
    ) -> None:
        self.profiles = profiles
        self.signers = signers
        self.cluster = cluster
        self.queue = queue
        self.metrics = metrics
        self.reporter = reporter
        self.preemptor: Preemptor = preemptor or NoPreemptor()
        self._tracked = preemptor if isinstance(preemptor, TrackedPreemptor) else None
        self.preempting: dict[Uid, tuple[Uid, ...]] = {}
        """Preemptor uid → its victims, while it waits for them to terminate (the cycle
        drops a pod it places)."""
        if self._tracked is not None:
            self._tracked.on_finished(self.preemption_finished)
            queue.hold = self.waiting_for_preemption

    def not_placed(
        self,
        info: QueuedPodInfo,
        outcome: FitError | SchedulingError,
        elapsed: float,
        state: CycleState | None,
        *,
        post_filter: bool = True,
    ) -> None:
        """kube's handleSchedulingFailure: PostFilter for a pod that fits nowhere (not for
        one rejected at Reserve or Permit: kube's PostFilter runs before them), then
        requeue and report (``state`` None: no cycle ran, no PostFilter either)."""
        pod = info.pod
        if isinstance(outcome, FitError):
            message = outcome.message()
            extra = ""
            if post_filter and state is not None:
                extra = self._post_filter(info, outcome, state)
            if extra:
                message = f"{message} {extra}"
            pod = info.pod  # a nomination changed the queued copy
            self.metrics.observe_attempt(Result.UNSCHEDULABLE, pod.scheduler_name, elapsed)
            log.info(
                "pod_unschedulable",
                pod=pod.key,
                reason=message,
                signature_refused_by=info.refused_by or None,
            )
            self.queue.requeue_unschedulable(
                info, frozenset(outcome.diagnosis.unschedulable_plugins)
            )
            self.reporter.unschedulable(pod, message)
        else:
            self.metrics.observe_attempt(Result.ERROR, pod.scheduler_name, elapsed)
            log.warning("scheduling_error", pod=pod.key, error=outcome.message)
            self.clear_nomination(info)
            pod = info.pod
            self.queue.requeue_backoff(info)
            self.reporter.failed(pod, outcome.message)

    def group_member_rejected(self, info: QueuedPodInfo, message: str, elapsed: float) -> None:
        """A member of a pod group that failed, or that its group's cycle did not reach:
        unschedulable with the group's words (no plugin to wake it: the group retries)."""
        pod = info.pod
        self.metrics.observe_attempt(Result.UNSCHEDULABLE, pod.scheduler_name, elapsed)
        log.info("pod_unschedulable", pod=pod.key, reason=message)
        self.queue.requeue_unschedulable(info, frozenset())
        self.reporter.unschedulable(pod, message)

    def _post_filter(self, info: QueuedPodInfo, fit: FitError, state: CycleState) -> str:
        """Run PostFilter for a pod that fits nowhere and act on its nomination (kube's
        schedule_one.go + handleSchedulingFailure + the preemption Executor, whose API calls
        go through the Preemptor port). Returns PostFilter's message ("" when none)."""
        pod = info.pod
        profile = self.profiles[pod.scheduler_name]
        if fit.num_all_nodes == 0:
            # kube: no nodes is an error of its own, PostFilter does not run, and the
            # nomination is cleared (schedule_one.go, ErrNoNodesAvailable).
            self.clear_nomination(info)
            return ""
        result = profile.run_post_filter(state, pod, fit)
        if profile.post_filter_plugins:
            self.metrics.preemption_attempts.inc()
        nominator = self.queue.nominator
        if result.status.is_success and result.nominated_node:
            node = result.nominated_node
            lower = [
                other
                for other in nominator.lower_priority_on(node, pod.priority)
                if other.uid != pod.uid
            ]
            # A nominated pod is never batched (KEP-5598): no signature until it is cleared.
            self.queue.update_signature(info, nominator.add(pod, node), None, "NominatedNode")
            self.metrics.preemption_victims.observe(len(result.victims))
            log.info(
                "pod_preempting",
                pod=pod.key,
                node=node,
                victims=[victim.key for victim in result.victims],
                pdb_violations=result.pdb_violations,
            )
            if self._tracked is not None:
                self.preempting[pod.uid] = tuple(victim.uid for victim in result.victims)
            self.preemptor.preempt(info.pod, node, result.victims)
            if lower:
                # They may no longer fit there: let them look elsewhere (kube clears them),
                # in the nominator and in their queued copies (which would else try that
                # node first and stay unsignable).
                for other in lower:
                    nominator.delete(other.uid)
                    queued = self.queue.get(other.uid)
                    if queued is not None:
                        self._unnominate(queued)
                self.preemptor.clear_nominated_node(lower)
        elif result.nominated_node == "":
            self.clear_nomination(info)
        return result.status.message()

    def clear_nomination(self, info: QueuedPodInfo) -> None:
        """Forget ``info``'s nomination, here and in the API (kube's clearNominatedNode)."""
        pod = info.pod
        if not (pod.nominated_node_name or self.queue.nominator.node_of(pod.uid)):
            return
        self.queue.nominator.delete(pod.uid)
        self._unnominate(info)
        self.preemptor.clear_nominated_node([pod])

    def _unnominate(self, info: QueuedPodInfo) -> None:
        """The queued copy without its nominated node, signed again (it may batch now)."""
        if not info.pod.nominated_node_name:
            return
        pod = replace(info.pod, nominated_node_name="")
        signed = self.signers[pod.scheduler_name].sign(pod)
        self.queue.update_signature(info, pod, signed.signature, signed.refused_by)

    # -- preemption in flight (kube's async preemption) ---------------------------------

    def waiting_for_preemption(self, pod: Pod) -> bool:
        """The queue's ``hold``: True while ``pod``'s evictions are being written, and then
        until the cache shows every victim terminating or gone (kube's
        IsPodRunningPreemption, which reads the last victim from its informer)."""
        if self._tracked is None:
            return False
        if self._tracked.is_running(pod.uid):
            return True
        victims = self.preempting.get(pod.uid)
        if victims is None:
            return False
        for uid in victims:
            victim = self.cluster.get_pod(uid)
            if victim is not None and not victim.deleting and not victim.terminal:
                return True  # deleted in the API; the watch has not shown it yet
        del self.preempting[pod.uid]
        return False

    def preemption_finished(self, uid: Uid, ok: bool) -> None:
        """The Preemptor's callback: let the pod go back to the active pool. A failed
        preemption waits for nothing (no deletion will come); a successful one until the
        watch shows its victims terminating (their removal then wakes the pod)."""
        if not ok or uid not in self.queue:  # failed, or the pod is gone meanwhile
            self.preempting.pop(uid, None)
        self.queue.activate(uid)
