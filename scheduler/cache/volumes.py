"""Volumes: the PersistentVolumes, claims, StorageClasses and CSINodes the volume plugins read.

kube-scheduler reads them through informers, and keeps PVs and PVCs in *assume caches*:
VolumeBinding's Reserve records the binding it is about to make (a PV's claimRef, a claim's
selected-node annotation) so that the next pod's cycle does not pick the same PV, and
PreBind later compares the API's objects with what it assumed. Here, as there, an assumed
object shadows the API's until the watch delivers a newer version of it (or Unreserve
restores it); ``api_pv``/``api_pvc`` always answer with the API's.

PVs are also kept by storage class, so a claim's candidates cost that class, not every PV.

Neighbours: ``model.volumes`` (the records), ``cache.snapshot`` (lends this to plugins),
``plugins.volume_binding`` (assumes), ``kube.volume_binder`` (waits on the API's objects).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from scheduler.model.volumes import (
        CSINode,
        PersistentVolume,
        PersistentVolumeClaim,
        StorageClass,
    )

__all__ = ["Volumes"]

ClaimKey = tuple[str, str]


class Volumes:
    """PVs, PVCs (each with an assume layer), StorageClasses and CSINodes; see the module
    docstring."""

    __slots__ = (
        "_assumed_pvcs",
        "_assumed_pvs",
        "_by_class",
        "_classes",
        "_csi_nodes",
        "_pvcs",
        "_pvs",
        "generation",
    )

    def __init__(self) -> None:
        self._pvs: dict[str, PersistentVolume] = {}
        self._pvcs: dict[ClaimKey, PersistentVolumeClaim] = {}
        self._classes: dict[str, StorageClass] = {}
        self._csi_nodes: dict[str, CSINode] = {}
        self._assumed_pvs: dict[str, PersistentVolume] = {}
        self._assumed_pvcs: dict[ClaimKey, PersistentVolumeClaim] = {}
        self._by_class: dict[str, dict[str, PersistentVolume]] = {}
        """Storage class → PV name → the PV as plugins see it (assumed or API)."""
        self.generation = 0
        """Bumped on every change, so callers can tell whether anything moved."""

    # -- write side (watch handlers) --------------------------------------------------------

    def set_pv(self, pv: PersistentVolume) -> None:
        """The API's version of ``pv``; it replaces an assumed one (the watch is newer)."""
        self._unindex(pv.name)
        self._pvs[pv.name] = pv
        self._assumed_pvs.pop(pv.name, None)
        self._index(pv)
        self.generation += 1

    def remove_pv(self, name: str) -> None:
        self._unindex(name)
        self._pvs.pop(name, None)
        self._assumed_pvs.pop(name, None)
        self.generation += 1

    def set_pvc(self, pvc: PersistentVolumeClaim) -> None:
        self._pvcs[pvc.key] = pvc
        self._assumed_pvcs.pop(pvc.key, None)
        self.generation += 1

    def remove_pvc(self, namespace: str, name: str) -> None:
        self._pvcs.pop((namespace, name), None)
        self._assumed_pvcs.pop((namespace, name), None)
        self.generation += 1

    def set_storage_class(self, storage_class: StorageClass) -> None:
        self._classes[storage_class.name] = storage_class
        self.generation += 1

    def remove_storage_class(self, name: str) -> None:
        self._classes.pop(name, None)
        self.generation += 1

    def set_csi_node(self, csi_node: CSINode) -> None:
        self._csi_nodes[csi_node.name] = csi_node
        self.generation += 1

    def remove_csi_node(self, name: str) -> None:
        self._csi_nodes.pop(name, None)
        self.generation += 1

    # -- assume layer (VolumeBinding's Reserve/Unreserve) ------------------------------------

    def assume_pv(self, pv: PersistentVolume) -> None:
        """Plugins see ``pv`` instead of the API's version until the watch or
        :meth:`restore_pv` replaces it. An unknown PV cannot be assumed."""
        if pv.name not in self._pvs:
            raise KeyError(f"PersistentVolume {pv.name} is not in the cache")
        self._unindex(pv.name)
        self._assumed_pvs[pv.name] = pv
        self._index(pv)
        self.generation += 1

    def restore_pv(self, name: str) -> None:
        if name not in self._assumed_pvs:
            return
        self._unindex(name)
        del self._assumed_pvs[name]
        api = self._pvs.get(name)
        if api is not None:
            self._index(api)
        self.generation += 1

    def assume_pvc(self, pvc: PersistentVolumeClaim) -> None:
        if pvc.key not in self._pvcs:
            raise KeyError(f"PersistentVolumeClaim {pvc.namespace}/{pvc.name} is not in the cache")
        self._assumed_pvcs[pvc.key] = pvc
        self.generation += 1

    def restore_pvc(self, namespace: str, name: str) -> None:
        if self._assumed_pvcs.pop((namespace, name), None) is not None:
            self.generation += 1

    # -- read side --------------------------------------------------------------------------

    def pv(self, name: str) -> PersistentVolume | None:
        """The PV as plugins see it: the assumed version if any, else the API's."""
        return self._assumed_pvs.get(name) or self._pvs.get(name)

    def api_pv(self, name: str) -> PersistentVolume | None:
        return self._pvs.get(name)

    def pvs(self) -> list[PersistentVolume]:
        return [self.pv(name) or pv for name, pv in self._pvs.items()]

    def pvs_of_class(self, storage_class: str) -> list[PersistentVolume]:
        """The PVs of ``storage_class`` as plugins see them (kube's ListPVs)."""
        return list(self._by_class.get(storage_class, {}).values())

    def pvc(self, namespace: str, name: str) -> PersistentVolumeClaim | None:
        key = (namespace, name)
        return self._assumed_pvcs.get(key) or self._pvcs.get(key)

    def api_pvc(self, namespace: str, name: str) -> PersistentVolumeClaim | None:
        return self._pvcs.get((namespace, name))

    def pvcs(self) -> list[PersistentVolumeClaim]:
        return [self.pvc(*key) or pvc for key, pvc in self._pvcs.items()]

    def storage_class(self, name: str) -> StorageClass | None:
        return self._classes.get(name)

    def storage_classes(self) -> list[StorageClass]:
        return list(self._classes.values())

    def csi_node(self, name: str) -> CSINode | None:
        return self._csi_nodes.get(name)

    def csi_nodes(self) -> list[CSINode]:
        return list(self._csi_nodes.values())

    # -- index ------------------------------------------------------------------------------

    def _index(self, pv: PersistentVolume) -> None:
        self._by_class.setdefault(pv.storage_class, {})[pv.name] = pv

    def _unindex(self, name: str) -> None:
        current = self.pv(name)
        if current is None:
            return
        by_name = self._by_class.get(current.storage_class)
        if by_name is not None:
            by_name.pop(name, None)
            if not by_name:
                del self._by_class[current.storage_class]
