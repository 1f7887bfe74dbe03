"""Where cluster changes enter the scheduler (kube's ``eventhandlers.go``).

The watch (``kube/controller``), ``simulate``, the test harness and the benchmarks all feed
parsed records here; this module alone decides what a change means for the cache and the
queue, and which unschedulable pods it may help (``ClusterEvent``).

Pods:

* **deleted** → dropped from the queue and the cache, and rejected if it waits at Permit
  (as kube's RejectWaitingPod); an assigned pod that held resources wakes unschedulable pods
  (``ASSIGNED_POD_DELETE``);
* **assigned** (``spec.nodeName`` set, by anyone) → upserted into the cache; one that is new
  to the cache (or was only assumed by us) is ``ASSIGNED_POD_ADD``; one that finished
  (Succeeded/Failed) leaves the cache: ``ASSIGNED_POD_DELETE``; an update of a cached one
  raises what changed against the cached copy (kube's ``PodSchedulingPropertiesChange``):
  ``ASSIGNED_POD_LABEL_UPDATE`` for new labels, ``ASSIGNED_POD_SCALE_DOWN`` for a request
  that shrank or went (an in-place resize), both when both; status-only updates raise
  nothing;
* **pending and ours** → signed and queued, unless it is terminating or terminal, which drops
  it from the queue, or a PreEnqueue plugin of its profile refuses it (SchedulingGates: it
  has ``spec.schedulingGates``), which keeps it out, gated, until an update. A queued pod
  whose update changes nothing the scheduler reads (status-only updates such as our own
  ``PodScheduled=False`` patch) keeps its place and pool: re-activating it would retry an
  unschedulable pod on every condition patch (kube's ``isPodUpdated``). A pod we assumed is
  not queued again: its pending event only means the watch has not caught up with our bind
  yet;
* **pending, not ours** → ignored;
* **a member of a pod group** (``spec.schedulingGroup``, the GenericWorkload gate) → counted
  in its group (cache/pod_groups.py) and queued into its group's entity, whose PreEnqueue
  (every member's) the queue runs; its arrival, or its binding, re-checks a group held
  back for too few members (GangScheduling's hints).

Nodes: added → ``NODE_ADD``; changed → ``NODE_UPDATE``, but only when something the
scheduler reads changed (allocatable, labels, taints, unschedulable, images): real nodes
update their status every few seconds, and waking every unschedulable pod on each heartbeat
would spin the queue for nothing (kube's ``nodeSchedulingPropertiesChange``); deleted →
``NODE_DELETE`` (a topology domain may have gone: PodTopologySpread), and its NodeInfo stays
a ghost while pods still name it.

Other objects (:data:`ClusterObject`): Namespaces feed InterPodAffinity's
``namespaceSelector``; Services and the three pod controllers feed default topology
spreading, so a change re-signs the namespace's queued pods (whether default spreading
applies, and so whether a pod can batch, depends on them); storage objects feed the volume
plugins and raise ``STORAGE_CHANGE``; PodDisruptionBudgets feed preemption's victim choice;
PodGroups gather their members into one queue entity (and a group held back for its
PodGroup, or for a larger minCount, is checked again); DeviceClasses and ResourceSlices feed
DynamicResources and raise ``DEVICE_CLASS_CHANGE``/``RESOURCE_SLICE_CHANGE``; ResourceClaims
go through ``claim_events`` (their assume layer, and the pods that use them: a pending pod
with claims is tracked by the claims it names).
kube registers no scheduling event for Namespaces, Services, controllers or budgets, so
they wake nobody here either.

Everything here is synchronous and await-free: one change is applied atomically with
respect to the scheduling cycle.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from scheduler import logs
from scheduler.cycle.claim_events import ClaimEvents
from scheduler.framework.events import ClusterEvent
from scheduler.model.disruption import PodDisruptionBudget
from scheduler.model.dra_claims import DeviceClass, ResourceClaim
from scheduler.model.dra_devices import ResourceSlice
from scheduler.model.pod_groups import PodGroup
from scheduler.model.volumes import CSINode, PersistentVolume, PersistentVolumeClaim, StorageClass
from scheduler.model.workloads import Controller, Namespace, Service
from scheduler.queueing.queued_pod import Pool

if TYPE_CHECKING:
    from scheduler.cycle.schedule_one import Scheduler
    from scheduler.model.keys import Uid
    from scheduler.model.node import Node
    from scheduler.model.pod import Pod
    from scheduler.model.pod_groups import GroupKey
    from scheduler.model.resources import Resources

log = logs.get_logger(__name__)

ClusterObject = (
    Namespace
    | Service
    | Controller
    | StorageClass
    | PersistentVolume
    | PersistentVolumeClaim
    | CSINode
    | PodDisruptionBudget
    | PodGroup
    | DeviceClass
    | ResourceSlice
    | ResourceClaim
)
"""The records besides pods and nodes that the scheduler reads."""

_VOLUME_OBJECTS = (StorageClass, PersistentVolume, PersistentVolumeClaim, CSINode)


def _same_for_scheduling(old: Pod, new: Pod) -> bool:
    """Equal but for the resource version: nothing a plugin reads changed."""
    return dataclasses.replace(new, resource_version=old.resource_version) == old


def assigned_pod_update_events(old: Pod, new: Pod) -> tuple[ClusterEvent, ...]:
    """The events an update of an assigned pod raises, as kube's
    ``PodSchedulingPropertiesChange`` for the changes an in-tree plugin registers."""
    found: list[ClusterEvent] = []
    if old.labels != new.labels:
        found.append(ClusterEvent.ASSIGNED_POD_LABEL_UPDATE)
    if _scaled_down(old.requests, new.requests):
        found.append(ClusterEvent.ASSIGNED_POD_SCALE_DOWN)
    return tuple(found)


def _scaled_down(old: Resources, new: Resources) -> bool:
    """Whether any request of ``old`` is smaller, or gone, in ``new`` (kube's
    ``extractPodScaleDown``: the effective requests, in-place resizes included)."""
    if (
        new.milli_cpu < old.milli_cpu
        or new.memory < old.memory
        or new.ephemeral_storage < old.ephemeral_storage
    ):
        return True
    return any(new.scalar.get(name, 0) < amount for name, amount in old.scalar.items())


def _unversioned(record: Node | ClusterObject) -> Node | ClusterObject:
    """The record without its resourceVersion, for comparing what the scheduler reads."""
    return dataclasses.replace(record, resource_version="")


class EventHandlers:
    """Applies cluster changes to one Scheduler's cache and queue; see the module
    docstring."""

    def __init__(self, scheduler: Scheduler) -> None:
        self.scheduler = scheduler
        self.cluster = scheduler.cluster
        self.queue = scheduler.queue
        self.claims = ClaimEvents(self.cluster.dra, self.queue, self.wake, self.on_pod)
        """ResourceClaims: the cache's assume layer and the pods a change concerns."""

    # -- pods ------------------------------------------------------------------------------

    def on_pod(self, pod: Pod) -> bool:
        """A pod was added or updated. Returns whether the scheduler holds it now (in the
        cache or the queue), which is when its version matters to the caller."""
        if pod.node_name:
            return self._assigned(pod)
        return self._pending(pod)

    def on_assumed_pod_bound(self, uid: Uid) -> bool:
        """The watch shows our bind of an assumed pod and no other change the scheduler
        reads (the intake checked it): what ``on_pod`` does with that update, without a
        record. Returns whether the pod was assumed (then it is held, as after
        ``on_pod``)."""
        self.queue.delete(uid)
        if not self.cluster.confirm(uid):
            return False
        self._wake(ClusterEvent.ASSIGNED_POD_ADD)
        return True

    def on_pod_deleted(self, uid: Uid) -> None:
        """The pod is gone from the API: drop it from the queue and the cache."""
        queued = self.queue.get(uid)
        if queued is not None:
            self.cluster.pod_groups.gone(queued.pod)  # a pending member no more
        self.cluster.dra.untrack_pod(uid)
        self.queue.delete(uid)
        self.scheduler.reject_waiting_pod(uid)
        self.scheduler.failures.preempting.pop(uid, None)  # a preemptor waits no more
        # An assumed pod goes too (its bind then fails and is dropped; forget is a no-op):
        # either way its resources are free now, which may help an unschedulable pod.
        if self.cluster.remove_pod(uid) is not None:
            self._wake(ClusterEvent.ASSIGNED_POD_DELETE)

    def on_pod_unreadable(self, uid: Uid) -> bool:
        """A pod's new version cannot be parsed: what we held of it is stale, and a bad
        assigned pod cannot be accounted. Returns whether we still hold it (an assumption
        of ours stays until its bind ends)."""
        self.queue.delete(uid)
        if self.cluster.is_assumed(uid):
            return True
        self.cluster.remove_pod(uid)
        return False

    def _assigned(self, pod: Pod) -> bool:
        cluster = self.cluster
        self.queue.delete(pod.uid)  # bound meanwhile (by us or anyone): not pending
        cluster.dra.untrack_pod(pod.uid)
        known = cluster.get_pod(pod.uid)
        was_assumed = cluster.is_assumed(pod.uid)
        cluster.add_pod(pod)  # upsert; confirms an assumption; a terminal pod leaves
        if pod.terminal:
            if known is not None:
                self._wake(ClusterEvent.ASSIGNED_POD_DELETE)
            return False
        if known is None or was_assumed:
            self._wake(ClusterEvent.ASSIGNED_POD_ADD)
            key = self.scheduler.group_of(pod)
            if key is not None:
                self.queue.group_changed(key)  # a member bound: its group may be complete
        else:
            for event in assigned_pod_update_events(known, pod):
                self._wake(event)
        return True

    def _pending(self, pod: Pod) -> bool:
        scheduler = self.scheduler
        # Pending in the API: harmless for the cache (an assumption survives a stale event).
        self.cluster.add_pod(pod)
        if not scheduler.owns(pod):
            return False
        assumed = self.cluster.is_assumed(pod.uid)
        if pod.deleting or pod.terminal:
            self.queue.delete(pod.uid)
            self.cluster.pod_groups.gone(pod)
            self.cluster.dra.untrack_pod(pod.uid)
            return assumed
        if pod.has_resource_claims:
            self.cluster.dra.track_pod(pod)  # a change of its claims re-checks it
        key = scheduler.group_of(pod)
        if key is not None:
            return self._pending_member(pod, key, assumed)
        if not scheduler.pre_enqueue(pod).is_success:
            # Gated (kube's PreEnqueue): it comes back with an update that a plugin passes.
            self.queue.gate(pod.uid)
            return assumed
        queued = self.queue.get(pod.uid)
        if queued is not None and _same_for_scheduling(queued.pod, pod):
            self.queue.refresh(pod)  # keeps its place and pool: nothing we read changed
            return True
        if queued is None and assumed:
            return True  # our bind is in flight; the watch has not caught up yet
        scheduler.enqueue(pod)
        label = "PodUpdate" if queued is not None else "PodAdd"
        scheduler.metrics.queue_incoming_pods.labels(queue=Pool.ACTIVE, event=label).inc()
        return True

    def _pending_member(self, pod: Pod, key: GroupKey, assumed: bool) -> bool:
        """A pending pod of a group: into its group's entity (the queue gates the group as
        a whole, so no PreEnqueue runs for the pod alone), counted as a member."""
        queued = self.queue.get(pod.uid)
        if queued is not None and _same_for_scheduling(queued.pod, pod):
            self.queue.refresh(pod)
            return True
        if queued is None and assumed:
            return True
        self.cluster.pod_groups.pending(pod)
        self.scheduler.enqueue(pod)
        self.queue.group_changed(key)  # kube's UnscheduledPod/Add hint: minCount reached?
        label = "PodUpdate" if queued is not None else "PodAdd"
        self.scheduler.metrics.queue_incoming_pods.labels(queue=Pool.ACTIVE, event=label).inc()
        return True

    # -- nodes -----------------------------------------------------------------------------

    def on_node(self, node: Node) -> None:
        """A node was added or updated (a heartbeat that changes nothing we read is
        dropped here: the cache keeps the version it has)."""
        info = self.cluster.node_info(node.name)
        old = info.node if info is not None else None
        if old is not None and _unversioned(old) == _unversioned(node):
            return
        self.cluster.add_node(node)
        self._wake(ClusterEvent.NODE_ADD if old is None else ClusterEvent.NODE_UPDATE)

    def on_node_deleted(self, name: str) -> None:
        info = self.cluster.node_info(name)
        if info is None or info.node is None:
            return  # not known (or a ghost already): nothing left that could help
        self.cluster.remove_node(name)
        self._wake(ClusterEvent.NODE_DELETE)

    # -- other objects ---------------------------------------------------------------------

    def on_object(self, record: ClusterObject, old: ClusterObject | None) -> None:
        """An object was added (``old`` None) or updated. The cache always takes the new
        version (PreBind's patches carry it: a stale one would meet 409 on every retry);
        re-signing and waking follow only a change of what we read."""
        if isinstance(record, ResourceClaim):
            self.claims.set(record)
            return
        _put(self.scheduler, record)
        if old is None or _unversioned(old) != _unversioned(record):
            self._object_changed(record)

    def on_object_deleted(self, record: ClusterObject) -> None:
        if isinstance(record, ResourceClaim):
            self.claims.deleted(record)
            return
        _drop(self.scheduler, record)
        self._object_changed(record)

    def _object_changed(self, record: ClusterObject) -> None:
        if isinstance(record, PodGroup):
            if self.cluster.pod_groups.pod_group(record.key) is None:
                self.queue.pod_group_deleted(record.key)
            else:
                self.queue.pod_group_added(record.key)
        elif isinstance(record, _VOLUME_OBJECTS):
            self._wake(ClusterEvent.STORAGE_CHANGE)
        elif isinstance(record, ResourceSlice):
            self._wake(ClusterEvent.RESOURCE_SLICE_CHANGE)
        elif isinstance(record, DeviceClass):
            self._wake(ClusterEvent.DEVICE_CLASS_CHANGE)
        elif isinstance(record, Service | Controller):
            resigned = self.scheduler.resign(record.namespace)
            if resigned:
                log.debug(
                    "queued_pods_resigned",
                    kind=record.kind.rpartition("/")[2]
                    if isinstance(record, Controller)
                    else "Service",
                    object=f"{record.namespace}/{record.name}",
                    pods=resigned,
                )

    def wake(self, event: ClusterEvent) -> None:
        """Move the unschedulable pods ``event`` may help (``claim_events`` calls it)."""
        self._wake(event)

    def _wake(self, event: ClusterEvent) -> None:
        # Only unschedulable pods can be woken; skip the scan when there are none.
        if self.queue.pending()[Pool.UNSCHEDULABLE]:
            self.queue.on_cluster_event(event)


def _put(scheduler: Scheduler, record: ClusterObject) -> None:
    cluster = scheduler.cluster
    match record:
        case Namespace():
            cluster.set_namespace(record.name, record.labels)
        case Service():
            cluster.workloads.set_service(record)
        case Controller():
            cluster.workloads.set_controller(record)
        case PersistentVolume():
            cluster.volumes.set_pv(record)
        case PersistentVolumeClaim():
            cluster.volumes.set_pvc(record)
        case StorageClass():
            cluster.volumes.set_storage_class(record)
        case CSINode():
            cluster.volumes.set_csi_node(record)
        case PodDisruptionBudget():
            cluster.disruption_budgets.add(record)
        case PodGroup():
            cluster.pod_groups.set_pod_group(record)
        case DeviceClass():
            cluster.dra.set_class(record)
        case ResourceSlice():
            cluster.dra.set_slice(record)


def _drop(scheduler: Scheduler, record: ClusterObject) -> None:
    cluster = scheduler.cluster
    match record:
        case Namespace():
            cluster.remove_namespace(record.name)
        case Service():
            cluster.workloads.remove_service(record.namespace, record.name)
        case Controller():
            cluster.workloads.remove_controller(record.kind, record.namespace, record.name)
        case PersistentVolume():
            cluster.volumes.remove_pv(record.name)
        case PersistentVolumeClaim():
            cluster.volumes.remove_pvc(record.namespace, record.name)
        case StorageClass():
            cluster.volumes.remove_storage_class(record.name)
        case CSINode():
            cluster.volumes.remove_csi_node(record.name)
        case PodDisruptionBudget():
            cluster.disruption_budgets.remove(record.namespace, record.name)
        case PodGroup():
            cluster.pod_groups.remove_pod_group(record.key)
        case DeviceClass():
            cluster.dra.remove_class(record.name)
        case ResourceSlice():
            cluster.dra.remove_slice(record.name)
