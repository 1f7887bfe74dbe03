"""Namespace, Service, ReplicationController, ReplicaSet, StatefulSet, StorageClass,
PersistentVolume, PersistentVolumeClaim, CSINode, PodDisruptionBudget, PodGroup and the DRA
kinds' (DeviceClass, ResourceSlice, ResourceClaim) events → parsed records for the event
handlers (``cycle/eventhandlers.py``, which decide what a change means: re-signing, waking,
nothing).

One applier, :class:`ObjectEvents`, serves these kinds; ``PARSERS`` says how each kind's
record is parsed. Like ``nodes``: an object listed again at a resourceVersion already
applied is skipped unparsed. An object that cannot be parsed is skipped with one warning
per problem naming the object and field, counted in ``batch_scheduler_bad_objects_total{kind}``,
and the copy we held leaves the cache: a selector we cannot read may be the one that should
spread the pods.

Synchronous and await-free, like ``pods`` and ``nodes``. Neighbours: ``kube.kinds`` (the kind
table), ``operator`` (kopf), ``sync`` (LISTs feed :meth:`ObjectEvents.apply` and remove
through :meth:`ObjectEvents.remove`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scheduler import logs
from scheduler.kube.kinds import Kind, key_of, resource_version
from scheduler.model.errors import ModelError
from scheduler.model.parse import controller_from_raw, namespace_from_raw, service_from_raw
from scheduler.model.parse_disruption import pdb_from_raw
from scheduler.model.parse_dra_claims import device_class_from_raw, resource_claim_from_raw
from scheduler.model.parse_dra_slices import resource_slice_from_raw
from scheduler.model.parse_pod_groups import coscheduling_group_from_raw, pod_group_from_raw
from scheduler.model.parse_volumes import (
    csi_node_from_raw,
    pv_from_raw,
    pvc_from_raw,
    storage_class_from_raw,
)
from scheduler.model.workloads import ControllerKind

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from scheduler.cycle.eventhandlers import ClusterObject, EventHandlers
    from scheduler.metrics.registry import Metrics

log = logs.get_logger(__name__)

DELETED = "DELETED"


def _controller(kind: ControllerKind) -> Callable[[Mapping[str, object]], ClusterObject]:
    return lambda raw: controller_from_raw(raw, kind)


PARSERS: dict[Kind, Callable[[Mapping[str, object]], ClusterObject]] = {
    Kind.NAMESPACES: namespace_from_raw,
    Kind.SERVICES: service_from_raw,
    Kind.REPLICATION_CONTROLLERS: _controller(ControllerKind.REPLICATION_CONTROLLER),
    Kind.REPLICA_SETS: _controller(ControllerKind.REPLICA_SET),
    Kind.STATEFUL_SETS: _controller(ControllerKind.STATEFUL_SET),
    Kind.STORAGE_CLASSES: storage_class_from_raw,
    Kind.PERSISTENT_VOLUMES: pv_from_raw,
    Kind.PERSISTENT_VOLUME_CLAIMS: pvc_from_raw,
    Kind.CSI_NODES: csi_node_from_raw,
    Kind.POD_DISRUPTION_BUDGETS: pdb_from_raw,
    Kind.POD_GROUPS: pod_group_from_raw,
    Kind.COSCHEDULING_POD_GROUPS: coscheduling_group_from_raw,
    Kind.DEVICE_CLASSES: device_class_from_raw,
    Kind.RESOURCE_SLICES: resource_slice_from_raw,
    Kind.RESOURCE_CLAIMS: resource_claim_from_raw,
}
"""The kinds :class:`ObjectEvents` serves (pods and nodes have appliers of their own)."""


class ObjectEvents:
    """Feeds one kind's events to the event handlers; see the module docstring."""

    def __init__(self, handlers: EventHandlers, kind: Kind, *, metrics: Metrics) -> None:
        self.handlers = handlers
        self.kind = kind
        self.parse = PARSERS[kind]
        self.metrics = metrics
        self.records: dict[str, ClusterObject] = {}
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
            record = self.parse(raw)
        except ModelError as exc:
            self._unreadable(key, exc)
            return
        self._bad.pop(key, None)
        self.records[key] = record
        self.handlers.on_object(record, held)

    def remove(self, key: str) -> None:
        """The object is gone from the API (or unreadable): drop it from the cache."""
        self._bad.pop(key, None)
        held = self.records.pop(key, None)
        if held is not None:
            self.handlers.on_object_deleted(held)

    def held(self) -> dict[str, str]:
        """key → resourceVersion of every object in the cache (the Replace compares them)."""
        return {key: record.resource_version for key, record in self.records.items()}

    def version(self, key: str) -> str | None:
        """The resourceVersion cached for ``key`` (None: not cached)."""
        record = self.records.get(key)
        return None if record is None else record.resource_version

    def _unreadable(self, key: str, exc: ModelError) -> None:
        if key in self.records:
            self.remove(key)  # stale now: see the module docstring
        message = str(exc)
        if self._bad.get(key) == message:
            return
        self._bad[key] = message
        kind = self.kind.kind_name
        self.metrics.bad_objects.labels(kind=kind).inc()
        log.warning(
            "bad_object_skipped", kind=kind, object=exc.obj, field=exc.field, error=exc.message
        )
