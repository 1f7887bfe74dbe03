"""VolumeRestrictions: a disk one pod mounts read-write cannot be mounted by another pod on the
same node, and a ReadWriteOncePod claim serves one pod in the whole cluster.

Port of kube-scheduler's plugins/volumerestrictions (v1.37). Filter refuses a node where a pod
already mounts the same GCE PD, AWS EBS volume, ISCSI IQN or RBD image (kube's
isVolumeConflict: EBS always conflicts, the others unless both mounts are read-only, RBD
only when the monitors overlap), and refuses every node while another cached pod uses one
of the pod's ReadWriteOncePod claims. Both are Unschedulable (preemption may free them).

kube counts the claims in use from its snapshot's per-node PVC reference counts; here
PreFilter looks through the cached pods of the pod's namespace (``pod_index``), and only
for a pod that has a ReadWriteOncePod claim.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from scheduler.framework import status as st
from scheduler.framework.cycle_state import StateKey
from scheduler.model.volumes import READ_WRITE_ONCE_POD
from scheduler.plugins import helpers
from scheduler.plugins.volume_helpers import VOLUME_RESTRICTIONS, not_found, volumes_fragment

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
    conflicting_claims: int


_KEY: Final[StateKey[_State]] = StateKey("PreFilter" + VOLUME_RESTRICTIONS)


def claims_in_use(snapshot: Snapshot, namespace: str, names: frozenset[str]) -> int:
    """How many of the claims ``names`` of ``namespace`` some cached pod uses."""
    used: set[str] = set()
    for pod, _ in snapshot.pod_index.pods_in(namespace):
        for volume in pod.volumes:
            if volume.claim_name in names and not volume.ephemeral:
                used.add(volume.claim_name)
    return len(used)


class VolumeRestrictions:
    """PreFilter, Filter, Sign. Takes no args."""

    name: str = VOLUME_RESTRICTIONS

    def __init__(self, args: PluginArgs, handle: Handle) -> None:
        helpers.check_fields(args, "VolumeRestrictionsArgs", ())

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
        conflicting = claims_in_use(snapshot, pod.namespace, frozenset(rwop)) if rwop else 0
        if not needs_disk_check and conflicting == 0:
            return None, st.SKIP
        state.write(_KEY, _State(conflicting))
        return None, st.SUCCESS

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
