"""Pod watch events → cache and queue (kube's ``eventhandlers.go`` for pods).

Every pod event is classified once:

* **deleted** → dropped from the queue and the cache (an assigned pod that held resources
  wakes unschedulable pods: ``ASSIGNED_POD_DELETE``);
* **assigned** (``spec.nodeName`` set, by anyone) → upserted into the cache; one that is
  new to the cache (or was only assumed by us) is ``ASSIGNED_POD_ADD``; one that finished
  (Succeeded/Failed) leaves the cache: ``ASSIGNED_POD_DELETE``;
* **pending and ours** → signed and queued, unless it is gated (``spec.schedulingGates``),
  terminating or terminal, which drops it from the queue;
* **pending, not ours** → ignored.

A pod is parsed once per event (``model.parse``); a listed pod whose resourceVersion we
have already applied (kopf lists again after our initial LIST, and after every 410) is
skipped unparsed. A pod that cannot be parsed is never a
crash: it is counted (``batch_scheduler_bad_objects_total{kind="Pod"}``), logged with the
object and field, and — when it is a pending pod of ours — reported to its owner with a
``FailedScheduling`` event and ``PodScheduled=False`` naming the field, once per problem.

A queued pod whose update changes nothing the scheduler reads (status-only updates such as
our own ``PodScheduled=False`` patch) keeps its place and pool: re-activating it would retry
an unschedulable pod on every condition patch (kube's ``isPodUpdated``).

Everything here is synchronous and await-free: one event is applied atomically with respect
to the scheduling cycle. Neighbours: ``operator`` (kopf calls :meth:`PodEvents.apply`),
``sync`` (initial list and reconcile feed the same method), ``cycle.schedule_one`` (the
Scheduler whose cache and queue this updates).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import TYPE_CHECKING

from scheduler import logs
from scheduler.model.errors import ModelError
from scheduler.model.keys import Uid
from scheduler.model.parse import pod_from_raw
from scheduler.queueing.scheduling_queue import ClusterEvent, Pool

if TYPE_CHECKING:
    from scheduler.cycle.ports import Reporter
    from scheduler.cycle.schedule_one import Scheduler
    from scheduler.metrics import Metrics
    from scheduler.model.pod import Pod

log = logs.get_logger(__name__)

DELETED = "DELETED"


def _mapping(value: object) -> Mapping[str, object]:
    return value if isinstance(value, Mapping) else {}


def _text(value: object) -> str:
    return value if isinstance(value, str) else ""


def object_ref(raw: Mapping[str, object]) -> tuple[str, str, str]:
    """(namespace, name, uid) of a raw object, tolerating garbage (for errors about it)."""
    meta = _mapping(raw.get("metadata"))
    return (
        _text(meta.get("namespace")) or "default",
        _text(meta.get("name")),
        _text(meta.get("uid")),
    )


def resource_version(raw: Mapping[str, object]) -> str:
    return _text(_mapping(raw.get("metadata")).get("resourceVersion"))


def _identity_only(namespace: str, name: str, uid: str) -> Pod:
    """A Pod record carrying only the identity of a pod we cannot read, for the reporter
    (which needs namespace, name and uid); built by the parser from a minimal skeleton."""
    return pod_from_raw({"metadata": {"namespace": namespace, "name": name, "uid": uid}})


def _same_for_scheduling(old: Pod, new: Pod) -> bool:
    """Equal but for the resource version: nothing a plugin reads changed."""
    return dataclasses.replace(new, resource_version=old.resource_version) == old


class PodEvents:
    """Applies pod events to one Scheduler's cache and queue; see the module docstring."""

    def __init__(
        self,
        scheduler: Scheduler,
        *,
        metrics: Metrics | None = None,
        reporter: Reporter | None = None,
    ) -> None:
        self.scheduler = scheduler
        self.metrics = metrics
        self.reporter = reporter
        self.versions: dict[Uid, str] = {}
        """resourceVersion last applied per pod we hold (cached or queued): the reconcile
        must not drop a pod newer than its LIST (``sync``)."""
        self._bad: dict[str, str] = {}
        """uid → the parse error already reported (report each problem once, not on every
        update, and never loop on our own condition patch)."""

    def apply(self, event_type: str | None, raw: Mapping[str, object]) -> None:
        """One watch event (``None``: a listed object, as kopf's initial listing)."""
        if event_type == DELETED:
            _, _, uid = object_ref(raw)
            self.delete(Uid(uid))
            return
        if event_type is None:
            _, _, uid = object_ref(raw)
            held = self.versions.get(Uid(uid))
            if held and held == resource_version(raw):
                return  # listed again (kopf's own LIST, a re-list after 410): already applied
        try:
            pod = pod_from_raw(raw)
        except ModelError as exc:
            self._unreadable(raw, exc)
            return
        self._bad.pop(pod.uid, None)
        if pod.node_name:
            self._assigned(pod)
        else:
            self._pending(pod, raw)

    def delete(self, uid: Uid) -> None:
        """The pod is gone from the API: drop it from the queue and the cache."""
        scheduler = self.scheduler
        self.versions.pop(uid, None)
        self._bad.pop(uid, None)
        scheduler.queue.delete(uid)
        # An assumed pod goes too (its bind then ends in a 404, a no-op forget): either way
        # its resources are free now, which may help an unschedulable pod.
        if scheduler.cluster.remove_pod(uid) is not None:
            self._event(ClusterEvent.ASSIGNED_POD_DELETE)

    def remove(self, key: str) -> None:
        """``sync``'s name for :meth:`delete` (``key``: the uid)."""
        self.delete(Uid(key))

    def held(self) -> dict[str, str]:
        """uid → resourceVersion of every pod we hold (the Replace compares them)."""
        return {str(uid): version for uid, version in self.versions.items()}

    def version(self, key: str) -> str | None:
        """The resourceVersion applied for the pod of uid ``key`` (None: not held)."""
        return self.versions.get(Uid(key))

    # -- classification --------------------------------------------------------------------

    def _assigned(self, pod: Pod) -> None:
        scheduler = self.scheduler
        cluster = scheduler.cluster
        scheduler.queue.delete(pod.uid)  # bound meanwhile (by us or anyone): not pending
        known = cluster.get_pod(pod.uid)
        was_assumed = cluster.is_assumed(pod.uid)
        cluster.add_pod(pod)  # upsert; confirms an assumption; a terminal pod leaves
        if pod.terminal:
            self.versions.pop(pod.uid, None)
            if known is not None:
                self._event(ClusterEvent.ASSIGNED_POD_DELETE)
            return
        self.versions[pod.uid] = pod.resource_version
        if known is None or was_assumed:
            self._event(ClusterEvent.ASSIGNED_POD_ADD)

    def _pending(self, pod: Pod, raw: Mapping[str, object]) -> None:
        scheduler = self.scheduler
        # Pending in the API: harmless for the cache (an assumption survives a stale event).
        scheduler.cluster.add_pod(pod)
        if not scheduler.owns(pod):
            return
        spec = _mapping(raw.get("spec"))
        if pod.deleting or pod.terminal or spec.get("schedulingGates"):
            # Not schedulable now; a gated pod comes back with the update that ungates it.
            scheduler.queue.delete(pod.uid)
            if not scheduler.cluster.is_assumed(pod.uid):
                self.versions.pop(pod.uid, None)
            return
        self.versions[pod.uid] = pod.resource_version
        queued = scheduler.queue.get(pod.uid)
        if queued is not None and _same_for_scheduling(queued.pod, pod):
            queued.pod = pod  # keep its place and pool: nothing we read changed
            return
        if queued is None and scheduler.cluster.is_assumed(pod.uid):
            return  # our bind is in flight; the watch has not caught up yet
        scheduler.enqueue(pod)
        if self.metrics is not None:
            label = "PodUpdate" if queued is not None else "PodAdd"
            self.metrics.queue_incoming_pods.labels(queue=Pool.ACTIVE, event=label).inc()

    def _unreadable(self, raw: Mapping[str, object], exc: ModelError) -> None:
        """A pod we cannot parse: count it, say which field, tell its owner if it is ours."""
        namespace, name, uid = object_ref(raw)
        spec = _mapping(raw.get("spec"))
        assigned = bool(_text(spec.get("nodeName")))
        ours = not assigned and _text(spec.get("schedulerName")) in self.scheduler.profiles
        if uid:
            # Whatever we held for it is stale now; a bad assigned pod cannot be accounted.
            self.scheduler.queue.delete(Uid(uid))
            if not self.scheduler.cluster.is_assumed(uid):
                self.scheduler.cluster.remove_pod(uid)
                self.versions.pop(Uid(uid), None)
        if not (ours or assigned):
            return  # someone else's pending pod: not ours to judge
        message = str(exc)
        if self._bad.get(uid) == message:
            return
        self._bad[uid] = message
        if self.metrics is not None:
            self.metrics.bad_objects.labels(kind="Pod").inc()
        log.warning(
            "bad_pod", pod=f"{namespace}/{name}", field=exc.field, error=exc.message, uid=uid
        )
        if ours and self.reporter is not None and name and uid:
            self.reporter.unschedulable(
                _identity_only(namespace, name, uid),
                f"cannot read the pod: {exc.field}: {exc.message}",
            )

    def _event(self, event: ClusterEvent) -> None:
        queue = self.scheduler.queue
        # Only unschedulable pods can be woken; skip the scan when there are none.
        if queue.pending()[Pool.UNSCHEDULABLE]:
            queue.on_cluster_event(event)
