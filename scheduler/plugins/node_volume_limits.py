"""NodeVolumeLimits: a node takes no more CSI volumes of a driver than its CSINode allows.

Port of kube-scheduler's plugins/nodevolumelimits (CSILimits, v1.37). For a pod with claims,
Filter collects the CSI volumes the pod would attach (driver and volume handle of each
claim's PV; for a claim not bound yet, its class's provisioner and a handle unique to the
claim) and those the node's pods attach already, and refuses the node when, for a driver
with an ``allocatable.count`` in the node's CSINode, attached + new volumes exceed it.

Not ported: in-tree volumes migrated to CSI (inline and PV), VolumeAttachments (we do not
watch them: a volume attached to the node without a pod there is not counted), and the
VolumeLimitScaling feature (alpha) that refuses nodes missing a driver.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from scheduler.framework import status as st
from scheduler.framework.events import ClusterEvent
from scheduler.plugins import names, plugin_args
from scheduler.plugins.volume_helpers import (
    not_found,
    not_owner,
    volumes_fragment,
)

if TYPE_CHECKING:
    from collections.abc import Hashable

    from scheduler.cache.node_info import NodeInfo
    from scheduler.cache.snapshot import Snapshot
    from scheduler.cache.volumes import Volumes
    from scheduler.framework.cycle_state import CycleState
    from scheduler.framework.interfaces import Handle, PluginArgs
    from scheduler.model.pod import Pod
    from scheduler.model.volumes import PersistentVolumeClaim

ERR_MAX_VOLUME_COUNT: Final = "node(s) exceed max volume count"
_REJECT: Final = st.unschedulable(ERR_MAX_VOLUME_COUNT)
_PENDING_HANDLE: Final = "unbound"
"""Prefix of the handle a claim without a PV counts under (kube: a random prefix)."""


def _driver_and_handle(volumes: Volumes, pvc: PersistentVolumeClaim) -> tuple[str, str]:
    """kube's getCSIDriverInfo: the PV's CSI source, else (unbound or PV missing) the class's
    provisioner with a handle of the claim's own."""
    if pvc.volume_name:
        pv = volumes.api_pv(pvc.volume_name)
        if pv is not None:
            return pv.csi_driver, pv.csi_handle
    if not pvc.storage_class:
        return "", ""
    storage_class = volumes.storage_class(pvc.storage_class)
    if storage_class is None:
        return "", ""
    return storage_class.provisioner, f"{_PENDING_HANDLE}-{pvc.namespace}/{pvc.name}"


def attachable_volumes(volumes: Volumes, pod: Pod, *, new_pod: bool) -> dict[str, str] | st.Status:
    """Unique volume name (``driver/handle``) → driver, for the pod's claims. A missing claim
    refuses the node for the pod being scheduled and is skipped for pods already there."""
    out: dict[str, str] = {}
    for volume in pod.volumes:
        if not volume.claim_name:
            continue
        pvc = volumes.api_pvc(pod.namespace, volume.claim_name)
        if pvc is None:
            if new_pod:
                return st.unresolvable(
                    f"looking up PVC {pod.namespace}/{volume.claim_name}: "
                    + not_found("persistentvolumeclaim", volume.claim_name)
                )
            continue
        if volume.ephemeral and pvc.controller_uid != pod.uid:
            return st.error(not_owner(pod, pvc.namespace, pvc.name))
        driver, handle = _driver_and_handle(volumes, pvc)
        if driver and handle:
            out[f"{driver}/{handle}"] = driver
    return out


_EVENTS: Final = (ClusterEvent.ASSIGNED_POD_DELETE, ClusterEvent.STORAGE_CHANGE)
"""The cluster events that may undo a rejection (see :meth:`events_to_register`)."""


class NodeVolumeLimits:
    """PreFilter (Skip without claims), Filter, Sign. Takes no args."""

    name: str = names.NODE_VOLUME_LIMITS

    def __init__(self, args: PluginArgs, handle: Handle) -> None:
        plugin_args.check_fields(args, "NodeVolumeLimitsArgs", ())
        self._handle = handle

    def events_to_register(self) -> tuple[ClusterEvent, ...]:
        """kube: AssignedPod/Delete, CSINode/Add|Update, PersistentVolumeClaim/Add,
        VolumeAttachment/Delete; not Node/Add: the limits come with the node's CSINode."""
        return _EVENTS

    def pre_filter(
        self, state: CycleState, pod: Pod, snapshot: Snapshot
    ) -> tuple[frozenset[str] | None, st.Status]:
        if any(v.claim_name for v in pod.volumes):
            return None, st.SUCCESS
        return None, st.SKIP

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> st.Status:
        volumes = self._handle.snapshot.volumes
        new = attachable_volumes(volumes, pod, new_pod=True)
        if isinstance(new, st.Status):
            return new
        if not new:
            return st.SUCCESS
        csi_node = volumes.csi_node(node_info.name)
        limits = csi_node.limits if csi_node is not None else {}
        if not limits:
            return st.SUCCESS
        attached: dict[str, str] = {}
        for existing in node_info.pods.values():
            if not existing.volumes:
                continue
            found = attachable_volumes(volumes, existing, new_pod=False)
            if isinstance(found, st.Status):
                return found
            attached.update(found)
        attached_count: dict[str, int] = {}
        for unique, driver in attached.items():
            new.pop(unique, None)
            attached_count[driver] = attached_count.get(driver, 0) + 1
        new_count: dict[str, int] = {}
        for driver in new.values():
            new_count[driver] = new_count.get(driver, 0) + 1
        for driver, count in new_count.items():
            limit = limits.get(driver)
            if limit is not None and attached_count.get(driver, 0) + count > limit:
                return _REJECT
        return st.SUCCESS

    def sign_pod(self, pod: Pod) -> Hashable | None:
        return volumes_fragment(pod)
