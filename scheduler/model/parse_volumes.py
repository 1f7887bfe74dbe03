"""Parse pod volumes, PersistentVolumes, PersistentVolumeClaims, StorageClasses and CSINodes.

Only what the volume plugins and the PreBind writes read is validated; ``ModelError`` names
the object and field, as for pods and nodes.

Neighbours: ``model.volumes`` (the records), ``parse_selectors`` (PV node affinity, claim
selectors), ``parse_workloads`` (naming readers, owner references).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from scheduler.model.parse_common import Reader, named_reader
from scheduler.model.parse_selectors import label_selector_from_raw, node_selector_from_raw
from scheduler.model.quantity import int_value
from scheduler.model.volumes import (
    ANN_BETA_STORAGE_CLASS,
    ANN_BIND_COMPLETED,
    ANN_BOUND_BY_CONTROLLER,
    ANN_SELECTED_NODE,
    FILESYSTEM,
    ClaimRef,
    CSINode,
    InlineDisk,
    PersistentVolume,
    PersistentVolumeClaim,
    PodVolume,
    StorageClass,
    TopologySelectorTerm,
)

if TYPE_CHECKING:
    from collections.abc import Mapping

    from scheduler.model.parse_common import RawMap

__all__ = [
    "csi_node_from_raw",
    "pod_volumes_from_raw",
    "pv_from_raw",
    "pvc_from_raw",
    "storage_class_from_raw",
]

_UNSIGNED_SOURCES = ("configMap", "secret")
"""Sources kube's VolumesSigner leaves out: they never change where a pod fits."""


# -- pod volumes -------------------------------------------------------------------------------


def _inline_disk(r: Reader, volume: RawMap, path: str) -> InlineDisk | None:
    for kind, ident_field in (
        ("gcePersistentDisk", "pdName"),
        ("awsElasticBlockStore", "volumeID"),
        ("iscsi", "iqn"),
    ):
        raw = volume.get(kind)
        if raw is not None:
            source = r.mapping(raw, f"{path}.{kind}")
            return InlineDisk(
                kind=kind,
                ident=r.string(source.get(ident_field), f"{path}.{kind}.{ident_field}"),
                read_only=r.boolean(source.get("readOnly"), f"{path}.{kind}.readOnly"),
            )
    raw = volume.get("rbd")
    if raw is None:
        return None
    source = r.mapping(raw, f"{path}.rbd")
    pool = r.string(source.get("pool"), f"{path}.rbd.pool") or "rbd"
    image = r.string(source.get("image"), f"{path}.rbd.image")
    return InlineDisk(
        kind="rbd",
        ident=f"{pool}/{image}",
        read_only=r.boolean(source.get("readOnly"), f"{path}.rbd.readOnly"),
        monitors=frozenset(r.strings(source.get("monitors"), f"{path}.rbd.monitors")),
    )


def _source_fragment(volume: RawMap) -> str | None:
    if any(volume.get(kind) is not None for kind in _UNSIGNED_SOURCES):
        return None
    source = {k: v for k, v in volume.items() if k != "name"}
    return json.dumps(source, sort_keys=True, separators=(",", ":"), default=str)


def pod_volumes_from_raw(r: Reader, value: object, pod_name: str) -> tuple[PodVolume, ...]:
    """``spec.volumes`` of pod ``pod_name``: claims (ephemeral ones named ``<pod>-<volume>``),
    inline disks and each source's signature fragment."""
    out: list[PodVolume] = []
    for path, volume in r.objects(value, "spec.volumes"):
        name = r.required_string(volume.get("name"), f"{path}.name")
        claim = volume.get("persistentVolumeClaim")
        claim_name = ""
        ephemeral = False
        if claim is not None:
            claim_map = r.mapping(claim, f"{path}.persistentVolumeClaim")
            claim_name = r.required_string(
                claim_map.get("claimName"), f"{path}.persistentVolumeClaim.claimName"
            )
        elif volume.get("ephemeral") is not None:
            r.mapping(volume.get("ephemeral"), f"{path}.ephemeral")
            claim_name = f"{pod_name}-{name}"
            ephemeral = True
        out.append(
            PodVolume(
                claim_name=claim_name,
                ephemeral=ephemeral,
                disk=_inline_disk(r, volume, path),
                source_fragment=_source_fragment(volume),
            )
        )
    return tuple(out)


# -- shared fields -----------------------------------------------------------------------------


def _controller_uid(r: Reader, meta: Mapping[str, object]) -> str:
    """The uid of the owner reference with ``controller: true`` (metav1.GetControllerOf)."""
    for path, owner in r.objects(meta.get("ownerReferences"), "metadata.ownerReferences"):
        if r.boolean(owner.get("controller"), f"{path}.controller"):
            return r.string(owner.get("uid"), f"{path}.uid")
    return ""


def _storage_class(r: Reader, annotations: RawMap, spec: RawMap) -> str:
    if ANN_BETA_STORAGE_CLASS in annotations:
        return str(annotations[ANN_BETA_STORAGE_CLASS])
    return r.string(spec.get("storageClassName"), "spec.storageClassName")


def _storage(r: Reader, amounts: object, field: str) -> int:
    storage = r.mapping(amounts, field).get("storage")
    if storage is None:
        return 0
    amount = r.quantity(storage, f"{field}.storage")
    if amount < 0:
        raise r.error(f"{field}.storage", "must not be negative")
    return int_value(amount)


def _access_modes(r: Reader, spec: RawMap) -> frozenset[str]:
    return frozenset(r.strings(spec.get("accessModes"), "spec.accessModes"))


# -- PersistentVolume --------------------------------------------------------------------------


def pv_from_raw(raw: object) -> PersistentVolume:
    r, meta = named_reader(raw, "PersistentVolume", namespaced=False)
    body: RawMap = raw if isinstance(raw, dict) else {}
    spec = r.mapping(body.get("spec"), "spec")
    status = r.mapping(body.get("status"), "status")
    annotations = r.string_map(meta.get("annotations"), "metadata.annotations")
    claim_ref = None
    ref_raw = spec.get("claimRef")
    if ref_raw is not None:
        ref = r.mapping(ref_raw, "spec.claimRef")
        claim_ref = ClaimRef(
            namespace=r.string(ref.get("namespace"), "spec.claimRef.namespace"),
            name=r.string(ref.get("name"), "spec.claimRef.name"),
            uid=r.string(ref.get("uid"), "spec.claimRef.uid"),
        )
    affinity = r.mapping(spec.get("nodeAffinity"), "spec.nodeAffinity")
    required = affinity.get("required")
    node_affinity = (
        None
        if required is None
        else node_selector_from_raw(required, obj=r.obj, field="spec.nodeAffinity.required")
    )
    csi = r.mapping(spec.get("csi"), "spec.csi")
    return PersistentVolume(
        name=str(meta["name"]),
        resource_version=r.string(meta.get("resourceVersion"), "metadata.resourceVersion"),
        labels=r.string_map(meta.get("labels"), "metadata.labels"),
        storage_class=_storage_class(r, annotations, spec),
        capacity=_storage(r, spec.get("capacity"), "spec.capacity"),
        access_modes=_access_modes(r, spec),
        volume_mode=r.string(spec.get("volumeMode"), "spec.volumeMode") or FILESYSTEM,
        claim_ref=claim_ref,
        phase=r.string(status.get("phase"), "status.phase"),
        node_affinity=node_affinity,
        deleting=meta.get("deletionTimestamp") is not None,
        csi_driver=r.string(csi.get("driver"), "spec.csi.driver"),
        csi_handle=r.string(csi.get("volumeHandle"), "spec.csi.volumeHandle"),
        attributes_class=r.string(
            spec.get("volumeAttributesClassName"), "spec.volumeAttributesClassName"
        ),
        bound_by_controller=ANN_BOUND_BY_CONTROLLER in annotations,
    )


# -- PersistentVolumeClaim ---------------------------------------------------------------------


def pvc_from_raw(raw: object) -> PersistentVolumeClaim:
    r, meta = named_reader(raw, "PersistentVolumeClaim", namespaced=True)
    body: RawMap = raw if isinstance(raw, dict) else {}
    spec = r.mapping(body.get("spec"), "spec")
    status = r.mapping(body.get("status"), "status")
    annotations = r.string_map(meta.get("annotations"), "metadata.annotations")
    resources = r.mapping(spec.get("resources"), "spec.resources")
    selector_raw = spec.get("selector")
    selector = (
        None
        if selector_raw is None
        else label_selector_from_raw(selector_raw, obj=r.obj, field="spec.selector")
    )
    return PersistentVolumeClaim(
        namespace=str(meta.get("namespace") or "default"),
        name=str(meta["name"]),
        uid=r.string(meta.get("uid"), "metadata.uid"),
        resource_version=r.string(meta.get("resourceVersion"), "metadata.resourceVersion"),
        storage_class=_storage_class(r, annotations, spec),
        volume_name=r.string(spec.get("volumeName"), "spec.volumeName"),
        phase=r.string(status.get("phase"), "status.phase"),
        access_modes=_access_modes(r, spec),
        volume_mode=r.string(spec.get("volumeMode"), "spec.volumeMode") or FILESYSTEM,
        request=_storage(r, resources.get("requests"), "spec.resources.requests"),
        selector=selector,
        selected_node=annotations.get(ANN_SELECTED_NODE),
        bind_completed=ANN_BIND_COMPLETED in annotations,
        deleting=meta.get("deletionTimestamp") is not None,
        controller_uid=_controller_uid(r, meta),
        attributes_class=r.string(
            spec.get("volumeAttributesClassName"), "spec.volumeAttributesClassName"
        ),
    )


# -- StorageClass, CSINode ---------------------------------------------------------------------


def _topology_term(r: Reader, raw: RawMap, path: str) -> TopologySelectorTerm:
    requirements: list[tuple[str, frozenset[str]]] = []
    for req_path, req in r.objects(
        raw.get("matchLabelExpressions"), f"{path}.matchLabelExpressions"
    ):
        key = r.required_string(req.get("key"), f"{req_path}.key")
        values = r.strings(req.get("values"), f"{req_path}.values")
        if not values:
            raise r.error(f"{req_path}.values", "must have at least one value")
        requirements.append((key, frozenset(values)))
    return TopologySelectorTerm(tuple(requirements))


def storage_class_from_raw(raw: object) -> StorageClass:
    r, meta = named_reader(raw, "StorageClass", namespaced=False)
    body: RawMap = raw if isinstance(raw, dict) else {}
    mode = body.get("volumeBindingMode")
    return StorageClass(
        name=str(meta["name"]),
        resource_version=r.string(meta.get("resourceVersion"), "metadata.resourceVersion"),
        provisioner=r.string(body.get("provisioner"), "provisioner"),
        binding_mode=None if mode is None else r.string(mode, "volumeBindingMode"),
        allowed_topologies=tuple(
            _topology_term(r, term, path)
            for path, term in r.objects(body.get("allowedTopologies"), "allowedTopologies")
        ),
    )


def csi_node_from_raw(raw: object) -> CSINode:
    r, meta = named_reader(raw, "CSINode", namespaced=False)
    body: RawMap = raw if isinstance(raw, dict) else {}
    spec = r.mapping(body.get("spec"), "spec")
    limits: dict[str, int] = {}
    for path, driver in r.objects(spec.get("drivers"), "spec.drivers"):
        name = r.required_string(driver.get("name"), f"{path}.name")
        allocatable = r.mapping(driver.get("allocatable"), f"{path}.allocatable")
        count = r.optional_integer(allocatable.get("count"), f"{path}.allocatable.count")
        if count is not None:
            if count < 0:
                raise r.error(f"{path}.allocatable.count", f"must not be negative, got {count}")
            limits[name] = count
    return CSINode(
        name=str(meta["name"]),
        resource_version=r.string(meta.get("resourceVersion"), "metadata.resourceVersion"),
        limits=limits,
    )
