"""The kinds the watch side keeps in the cache: one table for the LISTs, kopf, the informers
and the metrics, and how a raw object of one is keyed, versioned and named.

kube-scheduler's informers cover, besides pods and nodes, the Namespaces that
InterPodAffinity's ``namespaceSelector`` matches, the Services, ReplicationControllers,
ReplicaSets and StatefulSets from which PodTopologySpread builds the selector of its default
constraints (``helper.DefaultSelector``), and the StorageClasses, PersistentVolumes,
PersistentVolumeClaims and CSINodes the four volume plugins read, the
PodDisruptionBudgets DefaultPreemption weighs victims against, the DeviceClasses,
ResourceSlices and ResourceClaims DynamicResources allocates devices from (kube's
DynamicResourceAllocation, GA and locked on: no gate), and — with the GenericWorkload gate —
the PodGroups gang scheduling reads (kube's ``scheduling.k8s.io``
ones, and Coscheduling's where its CRD is installed). Each :class:`Kind`
names its collection path (our LISTs), its kopf resource (``on.event``), the key it is
cached under and its labels in logs and metrics; ``sync``, ``relist`` and ``operator``
iterate over it instead of naming kinds.

Member order is the order of the initial LIST: nodes first (pods then land on known nodes
instead of creating ghosts), then the workloads and storage, then pods: a pod is signed when
it is queued, and its signature depends on the Services and controllers that select it
(default spreading) and on whether its claims are bound, so knowing them first signs each
listed pod once, right; a pod's resource claims are listed before it, so that a listed pod
is not held back waiting for a claim that exists.

Shared by both watch engines, one layer below them: ``controller`` (kopf for the low-rate
kinds: ``sync`` LISTs by ``path`` and keys by :func:`key_of`, ``operator`` registers kopf
handlers by ``api_version`` and plural, ``objects`` applies the workload kinds) and
``intake`` (the informers of ``INFORMED``, which read :func:`object_ref` and
:func:`resource_version` of what they cannot peek).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum, unique


@unique
class Kind(StrEnum):
    """A cached kind, by kopf's plural; iteration order is the initial LIST's."""

    NODES = "nodes"
    NAMESPACES = "namespaces"
    SERVICES = "services"
    REPLICATION_CONTROLLERS = "replicationcontrollers"
    REPLICA_SETS = "replicasets"
    STATEFUL_SETS = "statefulsets"
    STORAGE_CLASSES = "storageclasses"
    PERSISTENT_VOLUMES = "persistentvolumes"
    PERSISTENT_VOLUME_CLAIMS = "persistentvolumeclaims"
    CSI_NODES = "csinodes"
    POD_DISRUPTION_BUDGETS = "poddisruptionbudgets"
    POD_GROUPS = "podgroups"
    COSCHEDULING_POD_GROUPS = "podgroups.scheduling.x-k8s.io"
    DEVICE_CLASSES = "deviceclasses"
    RESOURCE_SLICES = "resourceslices"
    RESOURCE_CLAIMS = "resourceclaims"
    PODS = "pods"

    @property
    def label(self) -> str:
        """The ``kind`` label of ``batch_scheduler_cache_repairs_total``: node | pod | …"""
        return _SPECS[self].kind.lower()

    @property
    def kind_name(self) -> str:
        """The API kind (``ReplicaSet``): the ``kind`` label of ``bad_objects_total``."""
        return _SPECS[self].kind

    @property
    def api_version(self) -> str:
        """``v1``, ``apps/v1``, ``storage.k8s.io/v1`` or ``policy/v1``: what kopf's
        ``on.event`` takes before the plural."""
        return _SPECS[self].api_version

    @property
    def plural(self) -> str:
        """The resource's plural, as kopf's ``on.event`` takes it after the API version."""
        return _SPECS[self].plural or str(self)

    @property
    def path(self) -> str:
        """The cluster-wide collection a LIST reads."""
        return _SPECS[self].path

    @property
    def gate(self) -> str:
        """The feature gate without which the API server does not serve the kind (""
        for none): a PodGroup's ``GenericWorkload``."""
        return _SPECS[self].gate

    @property
    def namespaced(self) -> bool:
        return _SPECS[self].key == _NAMESPACED


@dataclass(frozen=True, slots=True)
class _Spec:
    kind: str
    api_version: str
    path: str
    key: str
    """How a cached object is keyed: ``name``, ``uid`` or ``namespace/name``."""
    gate: str = ""
    plural: str = ""
    """When the enum's value is not the plural (two API groups' ``podgroups``)."""


_NAME, _UID, _NAMESPACED = "name", "uid", "namespace/name"
_SPECS = {
    Kind.NODES: _Spec("Node", "v1", "/api/v1/nodes", _NAME),
    Kind.NAMESPACES: _Spec("Namespace", "v1", "/api/v1/namespaces", _NAME),
    Kind.SERVICES: _Spec("Service", "v1", "/api/v1/services", _NAMESPACED),
    Kind.REPLICATION_CONTROLLERS: _Spec(
        "ReplicationController", "v1", "/api/v1/replicationcontrollers", _NAMESPACED
    ),
    Kind.REPLICA_SETS: _Spec("ReplicaSet", "apps/v1", "/apis/apps/v1/replicasets", _NAMESPACED),
    Kind.STATEFUL_SETS: _Spec("StatefulSet", "apps/v1", "/apis/apps/v1/statefulsets", _NAMESPACED),
    Kind.STORAGE_CLASSES: _Spec(
        "StorageClass", "storage.k8s.io/v1", "/apis/storage.k8s.io/v1/storageclasses", _NAME
    ),
    Kind.PERSISTENT_VOLUMES: _Spec("PersistentVolume", "v1", "/api/v1/persistentvolumes", _NAME),
    Kind.PERSISTENT_VOLUME_CLAIMS: _Spec(
        "PersistentVolumeClaim", "v1", "/api/v1/persistentvolumeclaims", _NAMESPACED
    ),
    Kind.CSI_NODES: _Spec(
        "CSINode", "storage.k8s.io/v1", "/apis/storage.k8s.io/v1/csinodes", _NAME
    ),
    Kind.POD_DISRUPTION_BUDGETS: _Spec(
        "PodDisruptionBudget", "policy/v1", "/apis/policy/v1/poddisruptionbudgets", _NAMESPACED
    ),
    Kind.POD_GROUPS: _Spec(
        "PodGroup",
        "scheduling.k8s.io/v1beta1",
        "/apis/scheduling.k8s.io/v1beta1/podgroups",
        _NAMESPACED,
        gate="GenericWorkload",
    ),
    Kind.COSCHEDULING_POD_GROUPS: _Spec(
        "PodGroup",
        "scheduling.x-k8s.io/v1alpha1",
        "/apis/scheduling.x-k8s.io/v1alpha1/podgroups",
        _NAMESPACED,
        gate="GenericWorkload",
        plural="podgroups",
    ),
    Kind.DEVICE_CLASSES: _Spec(
        "DeviceClass", "resource.k8s.io/v1", "/apis/resource.k8s.io/v1/deviceclasses", _NAME
    ),
    Kind.RESOURCE_SLICES: _Spec(
        "ResourceSlice", "resource.k8s.io/v1", "/apis/resource.k8s.io/v1/resourceslices", _NAME
    ),
    Kind.RESOURCE_CLAIMS: _Spec(
        "ResourceClaim",
        "resource.k8s.io/v1",
        "/apis/resource.k8s.io/v1/resourceclaims",
        _NAMESPACED,
    ),
    Kind.PODS: _Spec("Pod", "v1", "/api/v1/pods", _UID),
}
"""Pods are keyed by uid (a pod re-created under its name is another pod to the queue);
the rest by name, as kube's listers and our cache look them up."""


INFORMED = frozenset(
    {Kind.NODES, Kind.PODS, Kind.POD_GROUPS, Kind.RESOURCE_SLICES, Kind.RESOURCE_CLAIMS}
)
"""The kinds kept by the typed informers (``kube.intake``): the hot ones (pods, nodes, and
the ResourceClaims that change with every DRA pod, the ResourceSlices drivers republish),
and kube's PodGroups (kube-scheduler's typed informer; a gang's members wait on them); kopf
watches the others."""
OPTIONAL = frozenset({Kind.COSCHEDULING_POD_GROUPS})
"""Kinds of a custom resource that may not be installed: watched only when the API server
serves them (scheduler-plugins' Coscheduling PodGroup CRD)."""


def key_of(kind: Kind, raw: Mapping[str, object]) -> str:
    """The cache key of a raw object of ``kind``, tolerating garbage (then ``""`` parts).

    A namespaced object without a namespace is in ``default``, as the parsers read it."""
    meta = raw.get("metadata")
    meta = meta if isinstance(meta, Mapping) else {}
    spec = _SPECS[kind]
    if spec.key == _NAMESPACED:
        return f"{_text(meta.get('namespace')) or 'default'}/{_text(meta.get('name'))}"
    return _text(meta.get(spec.key))


def resource_version(raw: Mapping[str, object]) -> str:
    """A raw object's ``metadata.resourceVersion`` (``""`` if it has none)."""
    meta = raw.get("metadata")
    version = meta.get("resourceVersion") if isinstance(meta, Mapping) else None
    return _text(version)


def object_ref(raw: Mapping[str, object]) -> tuple[str, str, str]:
    """(namespace, name, uid) of a raw object, tolerating garbage (for errors about it)."""
    meta = raw.get("metadata")
    meta = meta if isinstance(meta, Mapping) else {}
    return (
        _text(meta.get("namespace")) or "default",
        _text(meta.get("name")),
        _text(meta.get("uid")),
    )


def _text(value: object) -> str:
    return value if isinstance(value, str) else ""
