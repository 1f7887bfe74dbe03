"""In-tree plugins, one module each; ``in_tree_registry`` names them (nothing registers at import).

Plugins are synchronous and do no I/O; a contract test walks their AST to keep it so.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scheduler.plugins import names
from scheduler.plugins.balanced_allocation import NodeResourcesBalancedAllocation
from scheduler.plugins.default_preemption import DefaultPreemption
from scheduler.plugins.dynamic_resources.plugin import DynamicResources
from scheduler.plugins.gang_scheduling import GangScheduling
from scheduler.plugins.image_locality import ImageLocality
from scheduler.plugins.inter_pod_affinity import InterPodAffinity
from scheduler.plugins.node_affinity import NodeAffinity
from scheduler.plugins.node_name import NodeName
from scheduler.plugins.node_ports import NodePorts
from scheduler.plugins.node_resources_fit import NodeResourcesFit
from scheduler.plugins.node_unschedulable import NodeUnschedulable
from scheduler.plugins.node_volume_limits import NodeVolumeLimits
from scheduler.plugins.pod_topology_spread import PodTopologySpread
from scheduler.plugins.scheduling_gates import SchedulingGates
from scheduler.plugins.taint_toleration import TaintToleration
from scheduler.plugins.volume_binding import VolumeBinding
from scheduler.plugins.volume_restrictions import VolumeRestrictions
from scheduler.plugins.volume_zone import VolumeZone

if TYPE_CHECKING:
    from scheduler.framework.profile import PluginFactory


def in_tree_registry() -> dict[str, PluginFactory]:
    """Plugin name (byte-for-byte kube-scheduler's) → factory(args, handle)."""
    return {
        names.SCHEDULING_GATES: SchedulingGates,
        names.NODE_UNSCHEDULABLE: NodeUnschedulable,
        names.NODE_NAME: NodeName,
        names.TAINT_TOLERATION: TaintToleration,
        names.NODE_AFFINITY: NodeAffinity,
        names.NODE_PORTS: NodePorts,
        names.NODE_RESOURCES_FIT: NodeResourcesFit,
        names.VOLUME_RESTRICTIONS: VolumeRestrictions,
        names.NODE_VOLUME_LIMITS: NodeVolumeLimits,
        names.VOLUME_BINDING: VolumeBinding,
        names.VOLUME_ZONE: VolumeZone,
        names.POD_TOPOLOGY_SPREAD: PodTopologySpread,
        names.INTER_POD_AFFINITY: InterPodAffinity,
        names.DYNAMIC_RESOURCES: DynamicResources,
        names.DEFAULT_PREEMPTION: DefaultPreemption,
        names.NODE_RESOURCES_BALANCED_ALLOCATION: NodeResourcesBalancedAllocation,
        names.IMAGE_LOCALITY: ImageLocality,
        names.GANG_SCHEDULING: GangScheduling,
    }
