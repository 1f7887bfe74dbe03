"""PersistentVolumes, claims and StorageClasses in the emulator: kube-apiserver's defaults and
the binding half of kube-controller-manager's PV controller.

Defaults as kube-apiserver's: a PV gets ``persistentVolumeReclaimPolicy: Retain``,
``volumeMode: Filesystem`` and ``status.phase: Pending``; a claim ``volumeMode:
Filesystem`` and ``status.phase: Pending``; a StorageClass ``volumeBindingMode:
Immediate`` and ``reclaimPolicy: Delete``.

:func:`sync` plays the PV controller's part a scheduler depends on (``syncVolume`` and
``syncClaim`` for volumes that exist):

* a PV without a claimRef that is Pending becomes Available;
* a PV whose claimRef names an existing claim (the scheduler's PreBind writes it for a
  static binding), or a claim whose ``volumeName`` names a PV without a claimRef (pre-bound
  by a user), is bound both ways: the PV's claimRef gets the claim's uid and the PV turns
  Bound; the claim gets ``volumeName``, the ``pv.kubernetes.io/bind-completed`` and
  ``bound-by-controller`` annotations, phase Bound, the PV's capacity and access modes;
* a PV whose claim is gone turns Released.

Not emulated: binding ``Immediate`` claims to matching PVs (create them pre-bound), dynamic
provisioning (no external provisioner: a claim the scheduler marks with
``volume.kubernetes.io/selected-node`` stays Pending), reclaim (delete, recycle).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from scheduler.sim.discovery import PERSISTENT_VOLUME_CLAIMS, PERSISTENT_VOLUMES, STORAGE_CLASSES

if TYPE_CHECKING:
    from scheduler.sim.discovery import ResourceType
    from scheduler.sim.store import Record, Store

BIND_COMPLETED = "pv.kubernetes.io/bind-completed"
BOUND_BY_CONTROLLER = "pv.kubernetes.io/bound-by-controller"
STORAGES = frozenset(rt.storage_key for rt in (PERSISTENT_VOLUMES, PERSISTENT_VOLUME_CLAIMS))
"""Changes to these storages wake :func:`sync`."""


def set_defaults(rt: ResourceType, obj: dict[str, Any]) -> None:
    """kube-apiserver's defaults for the storage kinds (others untouched)."""
    if rt is PERSISTENT_VOLUMES:
        spec = obj.setdefault("spec", {})
        spec.setdefault("persistentVolumeReclaimPolicy", "Retain")
        spec.setdefault("volumeMode", "Filesystem")
        obj.setdefault("status", {}).setdefault("phase", "Pending")
    elif rt is PERSISTENT_VOLUME_CLAIMS:
        obj.setdefault("spec", {}).setdefault("volumeMode", "Filesystem")
        obj.setdefault("status", {}).setdefault("phase", "Pending")
    elif rt is STORAGE_CLASSES:
        obj.setdefault("volumeBindingMode", "Immediate")
        obj.setdefault("reclaimPolicy", "Delete")


def _write(store: Store, rt: ResourceType, rec: Record, obj: dict[str, Any]) -> None:
    if obj != rec.obj:
        store.update(rt, obj, expect_rv=None)


def _copy(rec: Record) -> dict[str, Any]:
    obj = dict(rec.obj)
    obj["metadata"] = dict(obj["metadata"])
    obj["spec"] = dict(obj.get("spec") or {})
    obj["status"] = dict(obj.get("status") or {})
    return obj


def _bind_claim(store: Store, pv: Record, claim: Record) -> None:
    obj = _copy(claim)
    obj["spec"]["volumeName"] = pv.obj["metadata"]["name"]
    annotations = dict(obj["metadata"].get("annotations") or {})
    annotations.setdefault(BIND_COMPLETED, "yes")
    annotations.setdefault(BOUND_BY_CONTROLLER, "yes")
    obj["metadata"]["annotations"] = annotations
    pv_spec = pv.obj.get("spec") or {}
    obj["status"].update(
        phase="Bound",
        accessModes=list(pv_spec.get("accessModes") or []),
        capacity=dict(pv_spec.get("capacity") or {}),
    )
    _write(store, PERSISTENT_VOLUME_CLAIMS, claim, obj)


def _sync_volume(store: Store, pv: Record) -> None:
    spec = pv.obj.get("spec") or {}
    ref = spec.get("claimRef")
    obj = _copy(pv)
    if not ref:
        if obj["status"].get("phase") in (None, "", "Pending"):
            obj["status"]["phase"] = "Available"
        _write(store, PERSISTENT_VOLUMES, pv, obj)
        return
    claim = store.try_get(
        PERSISTENT_VOLUME_CLAIMS, ref.get("namespace") or "default", ref.get("name") or ""
    )
    uid = ref.get("uid") or ""
    if claim is None or (uid and claim.obj["metadata"]["uid"] != uid):
        obj["status"]["phase"] = "Released" if uid else "Available"
        _write(store, PERSISTENT_VOLUMES, pv, obj)
        return
    volume_name = (claim.obj.get("spec") or {}).get("volumeName") or ""
    if volume_name not in ("", pv.obj["metadata"]["name"]):
        return  # the claim is bound to another volume: leave it to a human
    obj["spec"]["claimRef"] = {
        "kind": "PersistentVolumeClaim",
        "namespace": claim.obj["metadata"]["namespace"],
        "name": claim.obj["metadata"]["name"],
        "uid": claim.obj["metadata"]["uid"],
        "apiVersion": "v1",
        "resourceVersion": claim.obj["metadata"]["resourceVersion"],
    }
    if uid:
        obj["spec"]["claimRef"]["resourceVersion"] = ref.get("resourceVersion", "")
    obj["status"]["phase"] = "Bound"
    _write(store, PERSISTENT_VOLUMES, pv, obj)
    meta = claim.obj["metadata"]
    claim = store.try_get(PERSISTENT_VOLUME_CLAIMS, meta["namespace"], meta["name"])
    if claim is not None:
        _bind_claim(store, store.get(PERSISTENT_VOLUMES, "", pv.obj["metadata"]["name"]), claim)


def _sync_claim(store: Store, claim: Record) -> None:
    """A claim pre-bound to a PV that has no claimRef: give the PV its claimRef."""
    volume_name = (claim.obj.get("spec") or {}).get("volumeName") or ""
    if not volume_name:
        return
    pv = store.try_get(PERSISTENT_VOLUMES, "", volume_name)
    if pv is None or (pv.obj.get("spec") or {}).get("claimRef"):
        return
    obj = _copy(pv)
    meta = claim.obj["metadata"]
    obj["spec"]["claimRef"] = {
        "kind": "PersistentVolumeClaim",
        "namespace": meta["namespace"],
        "name": meta["name"],
        "uid": meta["uid"],
        "apiVersion": "v1",
    }
    _write(store, PERSISTENT_VOLUMES, pv, obj)


def sync(store: Store) -> None:
    """One pass of the PV controller over every PV and claim (see the module docstring)."""
    for claim in list(store.table(PERSISTENT_VOLUME_CLAIMS).values()):
        _sync_claim(store, claim)
    for pv in list(store.table(PERSISTENT_VOLUMES).values()):
        _sync_volume(store, pv)
