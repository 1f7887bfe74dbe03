"""The resources the emulator serves, and the discovery documents that announce them.

Clients find resources through discovery before they list or watch anything: kopf
silently never starts a watcher for a resource that is not listed with
``singularName`` and ``list``/``watch`` verbs, and kubectl resolves short names
(``po``, ``no``) here. The table is the single source of truth for the router.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

VERSION_INFO: dict[str, str] = {
    "major": "1",
    "minor": "32",
    "gitVersion": "v1.32.0-sim",
    "gitCommit": "0000000000000000000000000000000000000000",
    "gitTreeState": "clean",
    "buildDate": "2024-12-11T00:00:00Z",
    "goVersion": "go1.23.4",
    "compiler": "gc",
    "platform": "linux/amd64",
}

_RW = ("create", "delete", "deletecollection", "get", "list", "patch", "update", "watch")


@dataclass(frozen=True, slots=True)
class ResourceType:
    """One served resource in one group/version."""

    group: str
    version: str
    plural: str
    singular: str
    kind: str
    namespaced: bool
    short_names: tuple[str, ...] = ()
    subresources: tuple[str, ...] = ()
    storage: str = ""  # resources sharing a storage key share objects (events in two groups)
    categories: tuple[str, ...] = field(default=())

    @property
    def api_version(self) -> str:
        """``v1`` or ``group/version``."""
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def qualified(self) -> str:
        """``pods`` or ``leases.coordination.k8s.io``: the name used in error messages."""
        return f"{self.plural}.{self.group}" if self.group else self.plural

    @property
    def storage_key(self) -> str:
        """Key of the object table holding this resource's objects."""
        return self.storage or self.qualified


PODS = ResourceType(
    "", "v1", "pods", "pod", "Pod", True, ("po",), ("binding", "status"), categories=("all",)
)
NODES = ResourceType("", "v1", "nodes", "node", "Node", False, ("no",), ("status",))
NAMESPACES = ResourceType(
    "", "v1", "namespaces", "namespace", "Namespace", False, ("ns",), ("status", "finalize")
)
EVENTS = ResourceType("", "v1", "events", "event", "Event", True, ("ev",), storage="events")
EVENTS_V1 = ResourceType(
    "events.k8s.io", "v1", "events", "event", "Event", True, ("ev",), storage="events"
)
LEASES = ResourceType("coordination.k8s.io", "v1", "leases", "lease", "Lease", True)
DEPLOYMENTS = ResourceType(
    "apps",
    "v1",
    "deployments",
    "deployment",
    "Deployment",
    True,
    ("deploy",),
    ("scale", "status"),
    categories=("all",),
)
JOBS = ResourceType(
    "batch", "v1", "jobs", "job", "Job", True, ("job",), ("status",), categories=("all",)
)
SERVICES = ResourceType(
    "", "v1", "services", "service", "Service", True, ("svc",), ("status",), categories=("all",)
)
REPLICATION_CONTROLLERS = ResourceType(
    "",
    "v1",
    "replicationcontrollers",
    "replicationcontroller",
    "ReplicationController",
    True,
    ("rc",),
    ("scale", "status"),
    categories=("all",),
)
REPLICA_SETS = ResourceType(
    "apps",
    "v1",
    "replicasets",
    "replicaset",
    "ReplicaSet",
    True,
    ("rs",),
    ("scale", "status"),
    categories=("all",),
)
STATEFUL_SETS = ResourceType(
    "apps",
    "v1",
    "statefulsets",
    "statefulset",
    "StatefulSet",
    True,
    ("sts",),
    ("scale", "status"),
    categories=("all",),
)
PERSISTENT_VOLUMES = ResourceType(
    "",
    "v1",
    "persistentvolumes",
    "persistentvolume",
    "PersistentVolume",
    False,
    ("pv",),
    ("status",),
)
PERSISTENT_VOLUME_CLAIMS = ResourceType(
    "",
    "v1",
    "persistentvolumeclaims",
    "persistentvolumeclaim",
    "PersistentVolumeClaim",
    True,
    ("pvc",),
    ("status",),
)
STORAGE_CLASSES = ResourceType(
    "storage.k8s.io", "v1", "storageclasses", "storageclass", "StorageClass", False, ("sc",)
)
CSI_NODES = ResourceType("storage.k8s.io", "v1", "csinodes", "csinode", "CSINode", False)
POD_DISRUPTION_BUDGETS = ResourceType(
    "policy",
    "v1",
    "poddisruptionbudgets",
    "poddisruptionbudget",
    "PodDisruptionBudget",
    True,
    ("pdb",),
    ("status",),
)
PRIORITY_CLASSES = ResourceType(
    "scheduling.k8s.io", "v1", "priorityclasses", "priorityclass", "PriorityClass", False, ("pc",)
)
POD_GROUPS = ResourceType(
    "scheduling.k8s.io",
    "v1beta1",
    "podgroups",
    "podgroup",
    "PodGroup",
    True,
    (),
    ("status",),
)
"""kube-apiserver serves these with the GenericWorkload gate; the emulator always does."""
DEVICE_CLASSES = ResourceType(
    "resource.k8s.io", "v1", "deviceclasses", "deviceclass", "DeviceClass", False
)
RESOURCE_SLICES = ResourceType(
    "resource.k8s.io", "v1", "resourceslices", "resourceslice", "ResourceSlice", False
)
RESOURCE_CLAIMS = ResourceType(
    "resource.k8s.io",
    "v1",
    "resourceclaims",
    "resourceclaim",
    "ResourceClaim",
    True,
    (),
    ("status",),
)
RESOURCE_CLAIM_TEMPLATES = ResourceType(
    "resource.k8s.io",
    "v1",
    "resourceclaimtemplates",
    "resourceclaimtemplate",
    "ResourceClaimTemplate",
    True,
)
"""Dynamic Resource Allocation (``resource.k8s.io/v1``, GA: served by default)."""

RESOURCES: tuple[ResourceType, ...] = (
    PODS,
    NODES,
    NAMESPACES,
    EVENTS,
    EVENTS_V1,
    LEASES,
    SERVICES,
    REPLICATION_CONTROLLERS,
    DEPLOYMENTS,
    REPLICA_SETS,
    STATEFUL_SETS,
    JOBS,
    PRIORITY_CLASSES,
    POD_GROUPS,
    PERSISTENT_VOLUMES,
    PERSISTENT_VOLUME_CLAIMS,
    STORAGE_CLASSES,
    CSI_NODES,
    POD_DISRUPTION_BUDGETS,
    DEVICE_CLASSES,
    RESOURCE_SLICES,
    RESOURCE_CLAIMS,
    RESOURCE_CLAIM_TEMPLATES,
)
WORKLOADS: tuple[ResourceType, ...] = (
    DEPLOYMENTS,
    REPLICA_SETS,
    STATEFUL_SETS,
    REPLICATION_CONTROLLERS,
    JOBS,
)
"""Resources with a pod template (and a controller in :mod:`scheduler.sim.controllers`)."""

_BY_PATH: dict[tuple[str, str, str], ResourceType] = {
    (r.group, r.version, r.plural): r for r in RESOURCES
}
GROUP_VERSIONS: dict[str, tuple[str, ...]] = {
    "": ("v1",),
    "apps": ("v1",),
    "batch": ("v1",),
    "coordination.k8s.io": ("v1",),
    "events.k8s.io": ("v1",),
    "policy": ("v1",),
    "resource.k8s.io": ("v1",),
    "scheduling.k8s.io": ("v1", "v1beta1"),
    "storage.k8s.io": ("v1",),
}


def lookup(group: str, version: str, plural: str) -> ResourceType | None:
    """The resource served at ``/api(s)/group/version/plural``, if any."""
    return _BY_PATH.get((group, version, plural))


def _subresource_entry(r: ResourceType, sub: str) -> dict[str, Any]:
    kinds = {"binding": "Binding", "status": r.kind, "finalize": r.kind, "scale": "Scale"}
    verbs = {"binding": ["create"], "finalize": ["update"]}
    entry = {
        "name": f"{r.plural}/{sub}",
        "singularName": "",
        "namespaced": r.namespaced,
        "kind": kinds[sub],
        "verbs": verbs.get(sub, ["get", "patch", "update"]),
    }
    if sub == "scale":  # kube announces the Scale kind's own group/version
        entry.update(group="autoscaling", version="v1")
    return entry


def resource_list(group: str, version: str) -> dict[str, Any] | None:
    """The APIResourceList for one group/version, or None if it is not served."""
    if version not in GROUP_VERSIONS.get(group, ()):
        return None
    entries: list[dict[str, Any]] = []
    for r in RESOURCES:
        if r.group != group or r.version != version:
            continue
        entry: dict[str, Any] = {
            "name": r.plural,
            "singularName": r.singular,
            "namespaced": r.namespaced,
            "kind": r.kind,
            "verbs": list(_RW),
            "storageVersionHash": "",
        }
        if r.short_names:
            entry["shortNames"] = list(r.short_names)
        if r.categories:
            entry["categories"] = list(r.categories)
        entries.append(entry)
        entries.extend(_subresource_entry(r, s) for s in r.subresources)
    gv = f"{group}/{version}" if group else version
    return {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv, "resources": entries}


def api_versions() -> dict[str, Any]:
    """``/api``: the legacy core group."""
    return {
        "kind": "APIVersions",
        "versions": ["v1"],
        "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": "127.0.0.1"}],
    }


def api_group(group: str) -> dict[str, Any]:
    """One APIGroup entry (also served at ``/apis/{group}``)."""
    versions = [{"groupVersion": f"{group}/{v}", "version": v} for v in GROUP_VERSIONS[group]]
    return {
        "kind": "APIGroup",
        "apiVersion": "v1",
        "name": group,
        "versions": versions,
        "preferredVersion": versions[0],
    }


def api_group_list() -> dict[str, Any]:
    """``/apis``: every named group."""
    groups = [api_group(g) for g in GROUP_VERSIONS if g]
    for g in groups:
        del g["kind"], g["apiVersion"]
    return {"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}
