"""Keyword builders for raw storage objects (PV, PVC, StorageClass, CSINode) and pod volumes."""

from __future__ import annotations

from typing import Any

Raw = dict[str, Any]

WAIT = "wait-sc"
IMMEDIATE = "immediate-sc"


def claim_volume(claim: str, name: str | None = None, *, read_only: bool = False) -> Raw:
    source: Raw = {"claimName": claim}
    if read_only:
        source["readOnly"] = True
    return {"name": name or claim, "persistentVolumeClaim": source}


def ephemeral_volume(name: str, storage_class: str = WAIT) -> Raw:
    return {
        "name": name,
        "ephemeral": {
            "volumeClaimTemplate": {
                "spec": {"storageClassName": storage_class, "accessModes": ["ReadWriteOnce"]}
            }
        },
    }


def make_pv(
    name: str,
    storage_class: str = WAIT,
    *,
    capacity: str = "1Gi",
    phase: str = "Available",
    node_affinity: dict[str, list[str]] | None = None,
    labels: dict[str, str] | None = None,
    claim: tuple[str, str, str] | None = None,
    access_modes: tuple[str, ...] = ("ReadWriteOnce",),
    csi: tuple[str, str] | None = None,
    resource_version: str = "1",
) -> Raw:
    """A PV; ``node_affinity`` is one required term of ``In`` expressions; ``claim`` is
    (namespace, name, uid) for ``spec.claimRef``."""
    spec: Raw = {
        "storageClassName": storage_class,
        "capacity": {"storage": capacity},
        "accessModes": list(access_modes),
    }
    if node_affinity:
        spec["nodeAffinity"] = {
            "required": {
                "nodeSelectorTerms": [
                    {
                        "matchExpressions": [
                            {"key": k, "operator": "In", "values": v}
                            for k, v in node_affinity.items()
                        ]
                    }
                ]
            }
        }
    if claim is not None:
        spec["claimRef"] = {"namespace": claim[0], "name": claim[1], "uid": claim[2]}
    if csi is not None:
        spec["csi"] = {"driver": csi[0], "volumeHandle": csi[1]}
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": {"name": name, "resourceVersion": resource_version, "labels": labels or {}},
        "spec": spec,
        "status": {"phase": phase},
    }


def make_pvc(
    name: str,
    storage_class: str | None = WAIT,
    *,
    namespace: str = "default",
    request: str | None = None,
    volume_name: str = "",
    bound: bool = False,
    phase: str = "Pending",
    access_modes: tuple[str, ...] = ("ReadWriteOnce",),
    annotations: dict[str, str] | None = None,
    owner_uid: str | None = None,
    deleting: bool = False,
) -> Raw:
    """A claim; ``bound=True`` means bound to ``volume_name`` with bind-completed set."""
    spec: Raw = {"accessModes": list(access_modes)}
    if storage_class is not None:
        spec["storageClassName"] = storage_class
    if request is not None:
        spec["resources"] = {"requests": {"storage": request}}
    if volume_name:
        spec["volumeName"] = volume_name
    notes = dict(annotations or {})
    if bound:
        notes["pv.kubernetes.io/bind-completed"] = "yes"
        phase = "Bound" if phase == "Pending" else phase
    metadata: Raw = {
        "name": name,
        "namespace": namespace,
        "uid": f"uid-pvc-{namespace}-{name}",
        "resourceVersion": "1",
        "annotations": notes,
    }
    if owner_uid is not None:
        metadata["ownerReferences"] = [
            {"apiVersion": "v1", "kind": "Pod", "name": "p", "uid": owner_uid, "controller": True}
        ]
    if deleting:
        metadata["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": metadata,
        "spec": spec,
        "status": {"phase": phase},
    }


def make_storage_class(
    name: str,
    mode: str | None = "WaitForFirstConsumer",
    *,
    provisioner: str = "kubernetes.io/no-provisioner",
    allowed_topologies: list[dict[str, list[str]]] | None = None,
) -> Raw:
    raw: Raw = {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": {"name": name, "resourceVersion": "1"},
        "provisioner": provisioner,
    }
    if mode is not None:
        raw["volumeBindingMode"] = mode
    if allowed_topologies:
        raw["allowedTopologies"] = [
            {"matchLabelExpressions": [{"key": k, "values": v} for k, v in term.items()]}
            for term in allowed_topologies
        ]
    return raw


def make_csi_node(name: str, limits: dict[str, int | None]) -> Raw:
    drivers: list[Raw] = []
    for driver, count in limits.items():
        entry: Raw = {"name": driver, "nodeID": name, "topologyKeys": []}
        if count is not None:
            entry["allocatable"] = {"count": count}
        drivers.append(entry)
    return {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "CSINode",
        "metadata": {"name": name, "resourceVersion": "1"},
        "spec": {"drivers": drivers},
    }
