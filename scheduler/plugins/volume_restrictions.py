"""VolumeRestrictions: a disk one pod mounts read-write cannot be mounted by another pod on the
same node, and a ReadWriteOncePod claim serves one pod in the whole cluster.

Port of kube-scheduler's plugins/volumerestrictions (v1.37). Filter refuses a node where a pod
already mounts the same GCE PD, AWS EBS volume, ISCSI IQN or RBD image (kube's
isVolumeConflict: EBS always conflicts, the others unless both mounts are read-only, RBD
only when the monitors overlap), and refuses every node while another cached pod uses one
of the pod's ReadWriteOncePod claims. Both are Unschedulable (preemption may free them).

kube counts the claims in use from its snapshot's per-node PVC reference counts; here
PreFilter looks through the cached pods of the pod's namespace (``pod_index``), and only
for a pod that has a ReadWriteOncePod claim. It counts references (pods x volumes), as
kube's conflictingPVCRefCount, so that the AddPod/RemovePod extensions can keep the count
current in a dry run without a rescan.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from scheduler.framework import status as st
from scheduler.framework.cycle_state import StateKey
from scheduler.framework.events import ClusterEvent
from scheduler.model.volumes import READ_WRITE_ONCE_POD
from scheduler.plugins import names, plugin_args
from scheduler.plugins.volume_helpers import not_found, volumes_fragment

if TYPE_CHECKING:
    from collections.abc import Hashable

    from scheduler.cache.node_info import NodeInfo
    from scheduler.cache.snapshot import Snapshot
    from scheduler.framework.cycle_state import CycleState
    from scheduler.framework.interfaces import Handle, PluginArgs
    from scheduler.model.pod import Pod

ERR_DISK_CONFLICT: Final = "node(s) had no available disk"
ERR_RWOP_CONFLICT: Final = (
    "node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod access mode "
    "already in-use by another pod"
)
_REJECT_DISK: Final = st.unschedulable(ERR_DISK_CONFLICT)
_REJECT_RWOP: Final = st.unschedulable(ERR_RWOP_CONFLICT)


@dataclass(frozen=True, slots=True)
class _State:
    rwop_claims: frozenset[str]
    """The pod's ReadWriteOncePod claims."""
    conflicting_claims: int
    """References to those claims from cached pods of the namespace (Filter: > 0 rejects)."""


_KEY: Final[StateKey[_State]] = StateKey("PreFilter" + names.VOLUME_RESTRICTIONS)


def claim_references(pod: Pod, namespace: str, names: frozenset[str]) -> int:
    """How many of ``pod``'s volumes use one of the claims ``names`` of ``namespace``."""
    if pod.namespace != namespace:
        return 0
    return sum(1 for volume in pod.volumes if volume.claim_name in names and not volume.ephemeral)


def claims_in_use(snapshot: Snapshot, namespace: str, names: frozenset[str]) -> int:
    """References to the claims ``names`` of ``namespace`` from the cached pods."""
    return sum(
        claim_references(pod, namespace, names) for pod, _ in snapshot.pod_index.pods_in(namespace)
    )


_EVENTS: Final = (
    ClusterEvent.NODE_ADD,
    ClusterEvent.ASSIGNED_POD_DELETE,
    ClusterEvent.STORAGE_CHANGE,
)
"""The cluster events that may undo a rejection (see :meth:`events_to_register`)."""


class VolumeRestrictions:
    """PreFilter, Filter, Sign. Takes no args."""

    name: str = names.VOLUME_RESTRICTIONS

    def __init__(self, args: PluginArgs, handle: Handle) -> None:
        plugin_args.check_fields(args, "VolumeRestrictionsArgs", ())

    def events_to_register(self) -> tuple[ClusterEvent, ...]:
        """kube: Node/Add, AssignedPod/Delete (releases a claim), PersistentVolumeClaim/Add."""
        return _EVENTS

    def pre_filter(
        self, state: CycleState, pod: Pod, snapshot: Snapshot
    ) -> tuple[frozenset[str] | None, st.Status]:
        needs_disk_check = any(v.disk is not None for v in pod.volumes)
        volumes = snapshot.volumes
        rwop: set[str] = set()
        for volume in pod.volumes:
            if not volume.claim_name or volume.ephemeral:
                continue
            pvc = volumes.api_pvc(pod.namespace, volume.claim_name)
            if pvc is None:
                return None, st.unresolvable(not_found("persistentvolumeclaim", volume.claim_name))
            if READ_WRITE_ONCE_POD in pvc.access_modes:
                rwop.add(pvc.name)
        claims = frozenset(rwop)
        conflicting = claims_in_use(snapshot, pod.namespace, claims) if claims else 0
        if not needs_disk_check and conflicting == 0:
            return None, st.SKIP  # kube's rule: its extensions then do not run either
        state.write(_KEY, _State(claims, conflicting))
        return None, st.SUCCESS

    def add_pod(self, state: CycleState, pod: Pod, to_add: Pod, node_info: NodeInfo) -> st.Status:
        """Count ``to_add``'s references to the pod's ReadWriteOncePod claims (kube's AddPod)."""
        _update(state, pod, to_add, 1)
        return st.SUCCESS

    def remove_pod(
        self, state: CycleState, pod: Pod, to_remove: Pod, node_info: NodeInfo
    ) -> st.Status:
        """Stop counting ``to_remove``'s references (kube's RemovePod)."""
        _update(state, pod, to_remove, -1)
        return st.SUCCESS

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> st.Status:
        disks = [v.disk for v in pod.volumes if v.disk is not None]
        if disks:
            for existing in node_info.pods.values():
                for volume in existing.volumes:
                    other = volume.disk
                    if other is not None and any(d.conflicts(other) for d in disks):
                        return _REJECT_DISK
        data = state.read(_KEY)
        if data is not None and data.conflicting_claims > 0:
            return _REJECT_RWOP
        return st.SUCCESS

    def sign_pod(self, pod: Pod) -> Hashable | None:
        return volumes_fragment(pod)


def _update(state: CycleState, pod: Pod, other: Pod, delta: int) -> None:
    """Move the reference count by ``other``'s references, as a new state value."""
    data = state.read(_KEY)
    if data is None or not data.rwop_claims:
        return
    refs = claim_references(other, pod.namespace, data.rwop_claims)
    if refs:
        state.write(_KEY, _State(data.rwop_claims, data.conflicting_claims + refs * delta))
