"""VolumeZone: a pod whose bound PVs carry zone or region labels fits only nodes in those
zones and regions.

Port of kube-scheduler's plugins/volumezone (v1.37). PreFilter reads the PV of each bound
``persistentVolumeClaim`` volume (claims of ``WaitForFirstConsumer`` classes not yet bound
are VolumeBinding's business) and keeps its topology labels: the beta and GA zone and region
keys, a value being one zone or several joined by ``__``. Filter passes a node without any
of those labels; otherwise each PV label must name the node's value (a beta key falls back
to its GA node label). Missing objects and classes give kube's unresolvable messages.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from scheduler.framework import status as st
from scheduler.framework.cycle_state import StateKey
from scheduler.framework.events import ClusterEvent
from scheduler.model.volumes import WAIT_FOR_FIRST_CONSUMER
from scheduler.plugins import names, plugin_args
from scheduler.plugins.volume_helpers import not_found, volumes_fragment

if TYPE_CHECKING:
    from collections.abc import Hashable

    from scheduler.cache.node_info import NodeInfo
    from scheduler.cache.snapshot import Snapshot
    from scheduler.framework.cycle_state import CycleState
    from scheduler.framework.interfaces import Handle, PluginArgs
    from scheduler.model.pod import Pod
    from scheduler.model.volumes import PersistentVolume

ERR_REASON_CONFLICT: Final = "node(s) had no available volume zone"
_REJECT: Final = st.unresolvable(ERR_REASON_CONFLICT)

BETA_ZONE: Final = "failure-domain.beta.kubernetes.io/zone"
BETA_REGION: Final = "failure-domain.beta.kubernetes.io/region"
ZONE: Final = "topology.kubernetes.io/zone"
REGION: Final = "topology.kubernetes.io/region"
TOPOLOGY_LABELS: Final = (BETA_ZONE, BETA_REGION, ZONE, REGION)
_GA: Final = {BETA_ZONE: ZONE, BETA_REGION: REGION}
_MULTI_ZONE_DELIMITER: Final = "__"


@dataclass(frozen=True, slots=True)
class PVTopology:
    pv_name: str
    key: str
    values: frozenset[str]


_KEY: Final[StateKey[tuple[PVTopology, ...]]] = StateKey("PreFilter" + names.VOLUME_ZONE)


def pv_topologies(pv: PersistentVolume) -> list[PVTopology]:
    """The PV's zone/region labels; a value with an empty zone in its list is ignored (kube
    logs and skips it)."""
    out: list[PVTopology] = []
    for key in TOPOLOGY_LABELS:
        value = pv.labels.get(key)
        if value is None:
            continue
        zones = [z.strip() for z in value.split(_MULTI_ZONE_DELIMITER)]
        if any(not z for z in zones):
            continue
        out.append(PVTopology(pv.name, key, frozenset(zones)))
    return out


_EVENTS: Final = (ClusterEvent.NODE_ADD, ClusterEvent.NODE_UPDATE, ClusterEvent.STORAGE_CHANGE)
"""The cluster events that may undo a rejection (see :meth:`events_to_register`)."""


class VolumeZone:
    """PreFilter, Filter, Sign. Takes no args."""

    name: str = names.VOLUME_ZONE

    def __init__(self, args: PluginArgs, handle: Handle) -> None:
        plugin_args.check_fields(args, "VolumeZoneArgs", ())

    def events_to_register(self) -> tuple[ClusterEvent, ...]:
        """kube: Node/Add|UpdateNodeLabel; StorageClass/Add, PersistentVolumeClaim and
        PersistentVolume Add|Update."""
        return _EVENTS

    def pre_filter(
        self, state: CycleState, pod: Pod, snapshot: Snapshot
    ) -> tuple[frozenset[str] | None, st.Status]:
        volumes = snapshot.volumes
        topologies: list[PVTopology] = []
        for volume in pod.volumes:
            if not volume.claim_name or volume.ephemeral:
                continue
            pvc = volumes.api_pvc(pod.namespace, volume.claim_name)
            if pvc is None:
                return None, st.unresolvable(not_found("persistentvolumeclaim", volume.claim_name))
            if not pvc.volume_name:
                class_name = pvc.storage_class
                if not class_name:
                    return None, st.unresolvable(
                        "PersistentVolumeClaim had no pv name and storageClass name"
                    )
                storage_class = volumes.storage_class(class_name)
                if storage_class is None:
                    return None, st.unresolvable(
                        not_found("storageclass.storage.k8s.io", class_name)
                    )
                if storage_class.binding_mode is None:
                    return None, st.unresolvable(
                        f'VolumeBindingMode not set for StorageClass "{class_name}"'
                    )
                if storage_class.binding_mode == WAIT_FOR_FIRST_CONSUMER:
                    continue
                return None, st.unresolvable("PersistentVolume had no name")
            pv = volumes.api_pv(pvc.volume_name)
            if pv is None:
                return None, st.unresolvable(not_found("persistentvolume", pvc.volume_name))
            topologies.extend(pv_topologies(pv))
        if not topologies:
            return None, st.SKIP
        state.write(_KEY, tuple(topologies))
        return None, st.SUCCESS

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> st.Status:
        topologies = state.read(_KEY)
        node = node_info.node
        if not topologies or node is None:
            return st.SUCCESS
        labels = node.labels
        if not any(key in labels for key in TOPOLOGY_LABELS):
            return st.SUCCESS
        for topology in topologies:
            value = labels.get(topology.key)
            if value is None:
                value = labels.get(_GA.get(topology.key, topology.key))
            if value is None or value not in topology.values:
                return _REJECT
        return st.SUCCESS

    def sign_pod(self, pod: Pod) -> Hashable | None:
        return volumes_fragment(pod)
