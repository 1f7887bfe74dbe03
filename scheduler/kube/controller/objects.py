"""Namespace, Service, ReplicationController, ReplicaSet, StatefulSet, StorageClass,
PersistentVolume, PersistentVolumeClaim, CSINode and PodDisruptionBudget events → cache.

One applier, :class:`ObjectEvents`, serves the ten kinds; a :class:`Target` per kind says
how its record is parsed and where it goes:

* Namespaces → ``ClusterState.set_namespace``/``remove_namespace`` (InterPodAffinity's
  ``namespaceSelector``). kube-scheduler registers no cluster event for Namespaces (no
  plugin's ``EventsToRegister`` names them), so a label change wakes no unschedulable pod
  here either: such a pod is retried by the periodic flush, as in kube.
* Services and the three controllers → ``ClusterState.workloads`` (the selector of default
  topology spreading). Every add, delete or selector change re-signs the queued pods of the
  namespace (``Scheduler.resign``): whether default spreading applies to a pod, and so
  whether it can be batched, depends on them. kube wakes no pod for these either.
* StorageClasses, PVs, PVCs and CSINodes → ``ClusterState.volumes`` (the volume plugins).
  Each change raises ``ClusterEvent.STORAGE_CHANGE``, which wakes the unschedulable pods the
  volume plugins rejected (kube's volume plugins register these events), and a watched PV
  or claim replaces the version VolumeBinding's Reserve assumed.
* PodDisruptionBudgets → ``ClusterState.disruption_budgets`` (DefaultPreemption's victim
  choice reads ``status.disruptionsAllowed``, so a status change is a change here). They wake
  no pod and re-sign none: kube registers no scheduling event for them.

Like ``nodes``: an object listed again at a resourceVersion already applied is skipped
unparsed, and an update that changes nothing we read (a ReplicaSet's status, written on
every replica change; a Service's endpoints-related fields) only refreshes the cached
record's resourceVersion (PreBind's patches carry it): compared as records without their
resourceVersion, it re-signs and wakes nothing. An object that cannot be parsed
is skipped with one warning per problem naming the object and field, counted in
``batch_scheduler_bad_objects_total{kind}``, and the copy we held leaves the cache: a
selector we cannot read may be the one that should spread the pods.

Synchronous and await-free, like ``pods`` and ``nodes``. Neighbours: ``kinds`` (the kind
table), ``operator`` (kopf), ``sync`` (LISTs feed :meth:`ObjectEvents.apply` and remove
through :meth:`ObjectEvents.remove`).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING

from scheduler import logs
from scheduler.kube.controller.kinds import Kind, key_of, resource_version
from scheduler.model.disruption import PodDisruptionBudget
from scheduler.model.errors import ModelError
from scheduler.model.parse import controller_from_raw, namespace_from_raw, service_from_raw
from scheduler.model.parse_disruption import pdb_from_raw
from scheduler.model.parse_volumes import (
    csi_node_from_raw,
    pv_from_raw,
    pvc_from_raw,
    storage_class_from_raw,
)
from scheduler.model.volumes import CSINode, PersistentVolume, PersistentVolumeClaim, StorageClass
from scheduler.model.workloads import Controller, ControllerKind, Namespace, Service
from scheduler.queueing.scheduling_queue import ClusterEvent, Pool

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from scheduler.cycle.schedule_one import Scheduler
    from scheduler.metrics import Metrics

log = logs.get_logger(__name__)

STORAGE_EVENT = ClusterEvent.STORAGE_CHANGE
"""The event a storage change raises: it wakes the pods a volume plugin rejected."""

DELETED = "DELETED"

Record = (
    Namespace
    | Service
    | Controller
    | StorageClass
    | PersistentVolume
    | PersistentVolumeClaim
    | CSINode
    | PodDisruptionBudget
)


@dataclass(frozen=True, slots=True)
class Target:
    """How one kind's records reach the cache."""

    parse: Callable[[Mapping[str, object]], Record]
    put: Callable[[Scheduler, Record], None]
    drop: Callable[[Scheduler, Record], None]
    resign: bool
    """Whether a change re-signs the namespace's queued pods (default spreading reads it)."""
    wakes: bool = False
    """Whether a change may make unschedulable pods schedulable (the volume kinds)."""


def _put_namespace(scheduler: Scheduler, record: Record) -> None:
    assert isinstance(record, Namespace)
    scheduler.cluster.set_namespace(record.name, record.labels)


def _drop_namespace(scheduler: Scheduler, record: Record) -> None:
    scheduler.cluster.remove_namespace(record.name)


def _put_service(scheduler: Scheduler, record: Record) -> None:
    assert isinstance(record, Service)
    scheduler.cluster.workloads.set_service(record)


def _drop_service(scheduler: Scheduler, record: Record) -> None:
    assert isinstance(record, Service)
    scheduler.cluster.workloads.remove_service(record.namespace, record.name)


def _put_controller(scheduler: Scheduler, record: Record) -> None:
    assert isinstance(record, Controller)
    scheduler.cluster.workloads.set_controller(record)


def _drop_controller(scheduler: Scheduler, record: Record) -> None:
    assert isinstance(record, Controller)
    scheduler.cluster.workloads.remove_controller(record.kind, record.namespace, record.name)


def _controller(kind: ControllerKind) -> Target:
    return Target(
        parse=lambda raw: controller_from_raw(raw, kind),
        put=_put_controller,
        drop=_drop_controller,
        resign=True,
    )


def _put_volume_object(scheduler: Scheduler, record: Record) -> None:
    volumes = scheduler.cluster.volumes
    if isinstance(record, PersistentVolume):
        volumes.set_pv(record)
    elif isinstance(record, PersistentVolumeClaim):
        volumes.set_pvc(record)
    elif isinstance(record, StorageClass):
        volumes.set_storage_class(record)
    elif isinstance(record, CSINode):
        volumes.set_csi_node(record)


def _drop_volume_object(scheduler: Scheduler, record: Record) -> None:
    volumes = scheduler.cluster.volumes
    if isinstance(record, PersistentVolume):
        volumes.remove_pv(record.name)
    elif isinstance(record, PersistentVolumeClaim):
        volumes.remove_pvc(record.namespace, record.name)
    elif isinstance(record, StorageClass):
        volumes.remove_storage_class(record.name)
    elif isinstance(record, CSINode):
        volumes.remove_csi_node(record.name)


def _volume_kind(parse: Callable[[Mapping[str, object]], Record]) -> Target:
    return Target(parse, _put_volume_object, _drop_volume_object, resign=False, wakes=True)


def _put_budget(scheduler: Scheduler, record: Record) -> None:
    assert isinstance(record, PodDisruptionBudget)
    scheduler.cluster.disruption_budgets.add(record)


def _drop_budget(scheduler: Scheduler, record: Record) -> None:
    assert isinstance(record, PodDisruptionBudget)
    scheduler.cluster.disruption_budgets.remove(record.namespace, record.name)


TARGETS: dict[Kind, Target] = {
    Kind.NAMESPACES: Target(namespace_from_raw, _put_namespace, _drop_namespace, resign=False),
    Kind.SERVICES: Target(service_from_raw, _put_service, _drop_service, resign=True),
    Kind.REPLICATION_CONTROLLERS: _controller(ControllerKind.REPLICATION_CONTROLLER),
    Kind.REPLICA_SETS: _controller(ControllerKind.REPLICA_SET),
    Kind.STATEFUL_SETS: _controller(ControllerKind.STATEFUL_SET),
    Kind.STORAGE_CLASSES: _volume_kind(storage_class_from_raw),
    Kind.PERSISTENT_VOLUMES: _volume_kind(pv_from_raw),
    Kind.PERSISTENT_VOLUME_CLAIMS: _volume_kind(pvc_from_raw),
    Kind.CSI_NODES: _volume_kind(csi_node_from_raw),
    Kind.POD_DISRUPTION_BUDGETS: Target(pdb_from_raw, _put_budget, _drop_budget, resign=False),
}
"""The kinds :class:`ObjectEvents` serves (pods and nodes have appliers of their own)."""


def _unversioned(record: Record) -> Record:
    return dataclasses.replace(record, resource_version="")


class ObjectEvents:
    """Applies one kind's events to one Scheduler's cache; see the module docstring."""

    def __init__(self, scheduler: Scheduler, kind: Kind, *, metrics: Metrics | None = None) -> None:
        self.scheduler = scheduler
        self.kind = kind
        self.target = TARGETS[kind]
        self.metrics = metrics
        self.records: dict[str, Record] = {}
        """The record of each object in the cache, by key (``kinds.key_of``)."""
        self._bad: dict[str, str] = {}

    def apply(self, event_type: str | None, raw: Mapping[str, object]) -> None:
        """One watch event (``None``: a listed object)."""
        key = key_of(self.kind, raw)
        if event_type == DELETED:
            self.remove(key)
            return
        held = self.records.get(key)
        if (
            event_type is None
            and held is not None
            and (held.resource_version == resource_version(raw) != "")
        ):
            return  # listed again (kopf's own LIST, a re-list after 410): already applied
        try:
            record = self.target.parse(raw)
        except ModelError as exc:
            self._unreadable(key, exc)
            return
        self._bad.pop(key, None)
        self.records[key] = record
        # The cache always gets the new version: PreBind's patches carry it (a stale one
        # would meet 409 on every retry). Re-signing and waking only follow a change of
        # what we read; a status- or metadata-only update is most of a ReplicaSet's events.
        self.target.put(self.scheduler, record)
        if held is None or _unversioned(held) != _unversioned(record):
            self._changed(record)

    def remove(self, key: str) -> None:
        """The object is gone from the API (or unreadable): drop it from the cache."""
        self._bad.pop(key, None)
        held = self.records.pop(key, None)
        if held is None:
            return
        self.target.drop(self.scheduler, held)
        self._changed(held)

    def held(self) -> dict[str, str]:
        """key → resourceVersion of every object in the cache (the Replace compares them)."""
        return {key: record.resource_version for key, record in self.records.items()}

    def version(self, key: str) -> str | None:
        """The resourceVersion cached for ``key`` (None: not cached)."""
        record = self.records.get(key)
        return None if record is None else record.resource_version

    def _changed(self, record: Record) -> None:
        if self.target.wakes:
            self._wake()
        if not self.target.resign or not isinstance(record, Service | Controller):
            return
        resigned = self.scheduler.resign(record.namespace)
        if resigned:
            log.debug(
                "queued_pods_resigned",
                kind=self.kind.kind_name,
                object=f"{record.namespace}/{record.name}",
                pods=resigned,
            )

    def _wake(self) -> None:
        """A storage object changed: pods a volume plugin rejected may fit now (kube's
        VolumeBinding, VolumeZone, VolumeRestrictions and NodeVolumeLimits register these
        events)."""
        queue = self.scheduler.queue
        if queue.pending()[Pool.UNSCHEDULABLE]:
            queue.on_cluster_event(STORAGE_EVENT)

    def _unreadable(self, key: str, exc: ModelError) -> None:
        if key in self.records:
            self.remove(key)  # stale now: see the module docstring
        message = str(exc)
        if self._bad.get(key) == message:
            return
        self._bad[key] = message
        kind = self.kind.kind_name
        if self.metrics is not None:
            self.metrics.bad_objects.labels(kind=kind).inc()
        log.warning(
            "bad_object_skipped", kind=kind, object=exc.obj, field=exc.field, error=exc.message
        )
