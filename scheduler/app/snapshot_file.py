"""Read a ``simulate`` snapshot: the cluster objects a scheduling decision depends on.

A snapshot is what a user gets from ``kubectl get nodes,pods,namespaces,services,
replicasets,statefulsets,replicationcontrollers,pv,pvc,storageclasses,csinodes,pdb -A -o yaml``
(one ``kind: List`` document; add ``podgroups`` where the cluster has PodGroups)
or a hand-written multi-document YAML; both are read, and so are lists inside either
(``v1/List``, or a typed list such as ``PodList`` whose items may leave out their kind).

Used, each through the same ``model.parse`` function as ``run``: Nodes, Pods, Namespaces
(labels, for pod-affinity ``namespaceSelector``), Services, ReplicationControllers,
ReplicaSets and StatefulSets (the DefaultSelector of default topology spreading),
PersistentVolumes, PersistentVolumeClaims, StorageClasses and CSINodes (the volume plugins),
PodDisruptionBudgets (preemption's choice of victims, by their
``status.disruptionsAllowed``), PodGroups (``scheduling.k8s.io``, and scheduler-plugins'
``scheduling.x-k8s.io`` CRD: gang scheduling), DeviceClasses, ResourceSlices and
ResourceClaims (``resource.k8s.io/v1``: DynamicResources). Every other kind Kubernetes
serves cannot affect a decision and is counted by kind in ``Snapshot.ignored`` (ConfigMaps,
Deployments, Events, ...; also PriorityClasses: admission has already written each pod's
``spec.priority`` from its class, and that is what the scheduler reads). So is a custom
resource (an API group that is not Kubernetes' own, ``app.kube_kinds``); a kind of ours from
such a group (a Knative ``serving.knative.dev/Service``) is counted as
``Service.serving.knative.dev``. A kind Kubernetes does not serve (``kind: Pdo``), or a kind
of its own under an apiVersion that does not serve it (``extensions/v1beta1`` Deployments),
is an :class:`InputError` naming the document: a typo would otherwise leave an object out
unnoticed.

What is not used is said, never skipped in silence: :func:`notices` gives one line per
ignored kind (``ignored: 2 ConfigMap (not read by the scheduler)``) and per schedulerName
whose pending pods were left out, for the commands to print on stderr. A snapshot without
any object (an empty file or stdin, a List with no items) is an :class:`InputError`: an
empty report would look like a cluster with nothing to do.

A file cut short is named as truncated: ``app.input_file`` says so where the text ends
mid-document, and a ``kubectl`` List whose ``kind: List`` (written after the items) is
missing is named so here.

Pods with ``schedulingGates`` are pending pods like the others; the queue keeps them gated.

A malformed object of a used kind is an :class:`InputError` naming where it is, the
object and the field: ``document 0, items[3]: Pod ns/name: spec.containers[0]...``.

What the API server would have added, and a hand-written file leaves out, is added here:
a uid per object, the ``kubernetes.io/metadata.name`` label on every Namespace, and a
Namespace for every namespace an object is in but no document declares.

Neighbours: ``app.input_file`` (bytes to documents), ``model.parse`` (object to record),
``app.simulate`` (puts the records into the cache and places the pods).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from scheduler.app.input_file import InputFileError, display_name, read_documents
from scheduler.app.kube_kinds import KINDS, kind_problem
from scheduler.model.errors import ModelError
from scheduler.model.parse import (
    controller_from_raw,
    namespace_from_raw,
    node_from_raw,
    pod_from_raw,
    service_from_raw,
)
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
from scheduler.model.workloads import Controller, ControllerKind, Namespace, Service

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from scheduler.model.disruption import PodDisruptionBudget
    from scheduler.model.dra_claims import DeviceClass, ResourceClaim
    from scheduler.model.dra_devices import ResourceSlice
    from scheduler.model.node import Node
    from scheduler.model.pod import Pod
    from scheduler.model.pod_groups import PodGroup
    from scheduler.model.volumes import (
        CSINode,
        PersistentVolume,
        PersistentVolumeClaim,
        StorageClass,
    )

    _Record = (
        Namespace
        | Service
        | Controller
        | PersistentVolume
        | PersistentVolumeClaim
        | StorageClass
        | CSINode
        | PodDisruptionBudget
        | PodGroup
        | DeviceClass
        | ResourceSlice
        | ResourceClaim
    )

__all__ = [
    "COSCHEDULING_GROUP",
    "NAMESPACE_NAME_LABEL",
    "USED_KINDS",
    "InputError",
    "Snapshot",
    "notices",
    "read_snapshot_file",
    "snapshot_from_documents",
]

NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name"
"""Set by the API server on every Namespace (to its name), so selectors can name one."""

USED_KINDS = {
    "Node": "",
    "Pod": "",
    "Namespace": "",
    "Service": "",
    "ReplicationController": "",
    "ReplicaSet": "apps",
    "StatefulSet": "apps",
    "PersistentVolume": "",
    "PersistentVolumeClaim": "",
    "StorageClass": "storage.k8s.io",
    "CSINode": "storage.k8s.io",
    "PodDisruptionBudget": "policy",
    "PodGroup": "scheduling.k8s.io",
    "DeviceClass": "resource.k8s.io",
    "ResourceSlice": "resource.k8s.io",
    "ResourceClaim": "resource.k8s.io",
}
"""Kind → API group of the objects a decision reads today; every other kind is ignored
(but Coscheduling's PodGroup, :data:`COSCHEDULING_GROUP`)."""
READ_VERSIONS = {
    "PodGroup": "scheduling.k8s.io/v1beta1",
    "DeviceClass": "resource.k8s.io/v1",
    "ResourceSlice": "resource.k8s.io/v1",
    "ResourceClaim": "resource.k8s.io/v1",
}
"""The one version of these kinds kube-scheduler v1.37 reads (``kubectl get`` prints that
one); another version's schema differs, so such an object is counted, not read."""
POD_GROUP_VERSION = READ_VERSIONS["PodGroup"]
"""The PodGroups kube-scheduler v1.37 reads (``kubectl get podgroups`` prints them so)."""
COSCHEDULING_GROUP = "scheduling.x-k8s.io"
"""scheduler-plugins' PodGroup CRD: its PodGroups are read too (gangs by label)."""

_RECORD_KINDS: dict[str, tuple[Callable[[dict[str, object]], _Record], str]] = {
    "Namespace": (namespace_from_raw, "namespaces"),
    "Service": (service_from_raw, "services"),
    "ReplicationController": (
        lambda raw: controller_from_raw(raw, ControllerKind.REPLICATION_CONTROLLER),
        "controllers",
    ),
    "ReplicaSet": (lambda raw: controller_from_raw(raw, ControllerKind.REPLICA_SET), "controllers"),
    "StatefulSet": (
        lambda raw: controller_from_raw(raw, ControllerKind.STATEFUL_SET),
        "controllers",
    ),
    "PersistentVolume": (pv_from_raw, "pvs"),
    "PersistentVolumeClaim": (pvc_from_raw, "pvcs"),
    "StorageClass": (storage_class_from_raw, "storage_classes"),
    "CSINode": (csi_node_from_raw, "csi_nodes"),
    "PodDisruptionBudget": (pdb_from_raw, "disruption_budgets"),
    "PodGroup": (pod_group_from_raw, "pod_groups"),
    "DeviceClass": (device_class_from_raw, "device_classes"),
    "ResourceSlice": (resource_slice_from_raw, "resource_slices"),
    "ResourceClaim": (resource_claim_from_raw, "resource_claims"),
    f"PodGroup.{COSCHEDULING_GROUP}": (coscheduling_group_from_raw, "pod_groups"),
}
"""Kinds besides Nodes and Pods: the parser and the ``Snapshot`` list each record joins
(duplicates are named ``Kind [namespace/]name``)."""


class InputError(ValueError):
    """The snapshot is not valid: names the document (and list item), object and field."""


@dataclass(slots=True)
class Snapshot:
    """The records of a snapshot file, ready for the cache (see the module docstring)."""

    nodes: list[Node] = field(default_factory=list)
    running: list[Pod] = field(default_factory=list)
    pending: list[Pod] = field(default_factory=list)
    namespaces: list[Namespace] = field(default_factory=list)
    services: list[Service] = field(default_factory=list)
    controllers: list[Controller] = field(default_factory=list)
    pvs: list[PersistentVolume] = field(default_factory=list)
    pvcs: list[PersistentVolumeClaim] = field(default_factory=list)
    storage_classes: list[StorageClass] = field(default_factory=list)
    csi_nodes: list[CSINode] = field(default_factory=list)
    disruption_budgets: list[PodDisruptionBudget] = field(default_factory=list)
    pod_groups: list[PodGroup] = field(default_factory=list)
    """kube's PodGroups and Coscheduling's (``PodGroup.api`` tells them apart)."""
    device_classes: list[DeviceClass] = field(default_factory=list)
    resource_slices: list[ResourceSlice] = field(default_factory=list)
    resource_claims: list[ResourceClaim] = field(default_factory=list)
    ignored: dict[str, int] = field(default_factory=dict)
    """Objects skipped because they cannot affect a decision, counted by kind."""
    left_out: dict[str, int] = field(default_factory=dict)
    """Pending pods of a schedulerName no profile serves, counted by that name."""
    objects: int = 0
    """Objects read (list items one by one), used or not: 0 is an empty snapshot."""


_IGNORED_BECAUSE = {
    "PriorityClass": "admission already wrote each pod's spec.priority from it",
    "Deployment": "the scheduler reads the ReplicaSets it owns",
    "ResourceClaimTemplate": "the resourceclaim controller makes the pods' claims from it; "
    "the scheduler reads the claims",
    **{
        kind: f"another version: the scheduler reads {version} {kind}s"
        for kind, version in READ_VERSIONS.items()
    },
}
"""Why a kind is not read, where a user may expect it to be; others: not read at all."""


def notices(snapshot: Snapshot) -> list[str]:
    """One line per ignored kind and per schedulerName whose pending pods were left out,
    for stderr: ``ignored: 2 ConfigMap (not read by the scheduler)``."""
    lines: list[str] = []
    for kind, count in sorted(snapshot.ignored.items()):
        if kind in _IGNORED_BECAUSE:
            why = _IGNORED_BECAUSE[kind]
        elif kind in KINDS:
            why = "not read by the scheduler"
        else:
            why = "a custom resource: not read by the scheduler"
        lines.append(f"ignored: {count} {kind} ({why})")
    for name, count in sorted(snapshot.left_out.items()):
        lines.append(
            f"left out: {count} pending Pod of schedulerName {name} (no profile of ours serves it)"
        )
    return lines


@dataclass(frozen=True, slots=True)
class _Place:
    """Where an object is: a document and, inside lists, the item indices."""

    document: int
    items: tuple[int, ...] = ()

    def item(self, index: int) -> _Place:
        return _Place(self.document, (*self.items, index))

    @property
    def uid(self) -> str:
        """The identity the API server would have given a hand-written object."""
        return "-".join(["simulate", str(self.document), *map(str, self.items)])

    def __str__(self) -> str:
        path = ".".join(f"items[{i}]" for i in self.items)
        return f"document {self.document}, {path}" if path else f"document {self.document}"


def read_snapshot_file(path: Path, scheduler_names: set[str]) -> Snapshot:
    """The snapshot in ``path``; InputError (one line: file, document, object, field), also
    for a snapshot without any object (``kubectl`` refuses such input too: "no objects
    passed to apply")."""
    try:
        docs = read_documents(path)
    except InputFileError as exc:
        raise InputError(str(exc)) from None
    try:
        snapshot = snapshot_from_documents(docs, scheduler_names)
    except InputError as exc:
        raise InputError(f"{display_name(path)}: {exc}") from None
    if not snapshot.objects:
        raise InputError(
            f"{display_name(path)}: no objects in the snapshot (an empty input, or a List "
            "with no items)"
        )
    return snapshot


def snapshot_from_documents(docs: list[object], scheduler_names: set[str]) -> Snapshot:
    """The records of parsed documents; pods of other schedulers that are not running are
    left out (they neither consume nor wait for us)."""
    builder = _Builder(scheduler_names)
    for index, doc in enumerate(docs):
        if doc is not None:  # an empty document (``---`` twice) is allowed, as kubectl does
            builder.add(doc, _Place(index))
    return builder.finish()


class _Builder:
    """Collects records, detects objects given twice, counts the ignored ones."""

    def __init__(self, scheduler_names: set[str]) -> None:
        self._names = scheduler_names
        self._snapshot = Snapshot()
        self._first_seen: dict[str, _Place] = {}

    def add(
        self, raw: object, place: _Place, *, implied: tuple[str | None, str] | None = None
    ) -> None:
        """One object or list; ``implied`` is the (apiVersion, kind) of a typed list's items."""
        if not isinstance(raw, dict):
            raise InputError(f"{place}: must be a mapping, got {type(raw).__name__}")
        api_version = raw.get("apiVersion", implied[0] if implied else None)
        kind = raw.get("kind", implied[1] if implied else None)
        if kind is None and not place.items and "items" in raw:
            raise InputError(
                f"{place}: kind: missing after the items: the file looks truncated "
                "(kubectl writes a List's kind after its items)"
            )
        if not isinstance(kind, str) or not kind:
            raise InputError(f"{place}: kind: must be a non-empty string, got {kind!r}")
        if api_version is not None and not isinstance(api_version, str):
            raise InputError(f"{place}: apiVersion: must be a string, got {api_version!r}")
        if kind == "List" or (kind.endswith("List") and "items" in raw):
            self._add_list(raw, kind, api_version, place)
            return
        if problem := kind_problem(api_version, kind):
            raise InputError(f"{place}: {problem}")
        self._snapshot.objects += 1
        group = api_version.rpartition("/")[0] if api_version else None
        expected = USED_KINDS.get(kind)
        if kind == "PodGroup" and group == COSCHEDULING_GROUP:
            kind = f"PodGroup.{COSCHEDULING_GROUP}"  # read, as its own record kind
        elif kind in READ_VERSIONS and api_version not in (None, READ_VERSIONS[kind]):
            self._snapshot.ignored[kind] = self._snapshot.ignored.get(kind, 0) + 1
            return  # another version's schema (v1alpha3, v1beta2): not what the scheduler reads
        elif expected is None or (group is not None and group != expected):
            key = kind if expected is None else f"{kind}.{group}"  # kubectl's Kind.group
            self._snapshot.ignored[key] = self._snapshot.ignored.get(key, 0) + 1
            return
        metadata = raw.get("metadata")
        if isinstance(metadata, dict) and not metadata.get("uid"):
            metadata["uid"] = place.uid
        try:
            self._use(kind, raw, place)
        except ModelError as exc:
            raise InputError(f"{place}: {exc}") from exc

    def _add_list(self, raw: dict[str, object], kind: str, api: str | None, at: _Place) -> None:
        items = raw.get("items")
        if items is None:  # kubectl prints ``items: []``; a missing list is as empty
            return
        if not isinstance(items, list):
            raise InputError(f"{at}: items: expected a list, got {type(items).__name__}")
        # A typed list's items are of its kind; a v1 List holds anything, so each says.
        implied = (api, kind.removesuffix("List")) if kind != "List" else None
        for index, item in enumerate(items):
            self.add(item, at.item(index), implied=implied)

    def _use(self, kind: str, raw: dict[str, object], place: _Place) -> None:
        snapshot = self._snapshot
        if kind == "Node":
            node = node_from_raw(raw)
            self._once(f"Node {node.name}", place)
            self._once(f"uid {node.uid}", place)
            snapshot.nodes.append(node)
        elif kind == "Pod":
            pod = pod_from_raw(raw)
            self._once(f"Pod {pod.key}", place)
            self._once(f"uid {pod.uid}", place)
            if pod.node_name:
                snapshot.running.append(pod)
            elif pod.terminal:
                pass  # Succeeded or Failed: neither consumes nor waits
            elif pod.scheduler_name in self._names:
                snapshot.pending.append(pod)
            else:
                left = snapshot.left_out
                left[pod.scheduler_name] = left.get(pod.scheduler_name, 0) + 1
        else:
            parse, field_name = _RECORD_KINDS[kind]
            record = parse(raw)
            namespace = getattr(record, "namespace", None)
            name = record.name if namespace is None else f"{namespace}/{record.name}"
            self._once(f"{kind} {name}", place)
            getattr(snapshot, field_name).append(record)

    def _once(self, what: str, place: _Place) -> None:
        """Two documents with the same name (or uid) are one API object written twice (the
        API server would refuse the second): using both would invent capacity or pods."""
        earlier = self._first_seen.setdefault(what, place)
        if earlier == place:
            return
        if not earlier.items and not place.items:
            raise InputError(f"documents {earlier.document} and {place.document}: both are {what}")
        raise InputError(f"{earlier} and {place}: both are {what}")

    def finish(self) -> Snapshot:
        """The snapshot, with the namespaces the API server would hold (module docstring)."""
        snapshot = self._snapshot
        declared = {namespace.name for namespace in snapshot.namespaces}
        named = {pod.namespace for pod in (*snapshot.running, *snapshot.pending)}
        named |= {service.namespace for service in snapshot.services}
        named |= {controller.namespace for controller in snapshot.controllers}
        named |= {pvc.namespace for pvc in snapshot.pvcs}
        named |= {budget.namespace for budget in snapshot.disruption_budgets}
        named |= {group.namespace for group in snapshot.pod_groups}
        named |= {claim.namespace for claim in snapshot.resource_claims}
        snapshot.namespaces += [
            Namespace(name=name, resource_version="", labels={})
            for name in sorted(named - declared)
        ]
        snapshot.namespaces = [
            dataclasses.replace(ns, labels={**ns.labels, NAMESPACE_NAME_LABEL: ns.name})
            for ns in snapshot.namespaces
        ]
        return snapshot
