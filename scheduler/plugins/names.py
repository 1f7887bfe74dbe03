"""Plugin names, byte-for-byte kube-scheduler's (pkg/scheduler/framework/plugins/names).

They appear in the configuration file, in metrics labels and in Status.plugin, so the
plugins and the layers above them (batching, queueing, cycle, app) import them from here
rather than spelling them again. The one exception is ``framework.config``: it sits below
plugins and spells kube's default profile itself (``DEFAULT_PLUGINS``, ``BUILT_IN``); a
contract test keeps that list equal to ``IN_TREE``. The registry (``plugins/__init__.py``)
maps these names to factories; each plugin class also carries its name as the class
attribute ``name``.
"""

from __future__ import annotations

from typing import Final

PRIORITY_SORT: Final = "PrioritySort"
NODE_NAME: Final = "NodeName"
NODE_UNSCHEDULABLE: Final = "NodeUnschedulable"
TAINT_TOLERATION: Final = "TaintToleration"
NODE_AFFINITY: Final = "NodeAffinity"
NODE_PORTS: Final = "NodePorts"
NODE_RESOURCES_FIT: Final = "NodeResourcesFit"
NODE_RESOURCES_BALANCED_ALLOCATION: Final = "NodeResourcesBalancedAllocation"
IMAGE_LOCALITY: Final = "ImageLocality"
POD_TOPOLOGY_SPREAD: Final = "PodTopologySpread"
INTER_POD_AFFINITY: Final = "InterPodAffinity"
DEFAULT_PREEMPTION: Final = "DefaultPreemption"
VOLUME_RESTRICTIONS: Final = "VolumeRestrictions"
NODE_VOLUME_LIMITS: Final = "NodeVolumeLimits"
VOLUME_BINDING: Final = "VolumeBinding"
VOLUME_ZONE: Final = "VolumeZone"
SCHEDULING_GATES: Final = "SchedulingGates"
GANG_SCHEDULING: Final = "GangScheduling"
DYNAMIC_RESOURCES: Final = "DynamicResources"

IN_TREE: Final = (
    SCHEDULING_GATES,
    NODE_UNSCHEDULABLE,
    NODE_NAME,
    TAINT_TOLERATION,
    NODE_AFFINITY,
    NODE_PORTS,
    NODE_RESOURCES_FIT,
    VOLUME_RESTRICTIONS,
    NODE_VOLUME_LIMITS,
    VOLUME_BINDING,
    VOLUME_ZONE,
    POD_TOPOLOGY_SPREAD,
    INTER_POD_AFFINITY,
    DYNAMIC_RESOURCES,
    DEFAULT_PREEMPTION,
    NODE_RESOURCES_BALANCED_ALLOCATION,
    IMAGE_LOCALITY,
)
"""The scheduling plugins we implement, in kube's default-profile order."""

GATED: Final = (GANG_SCHEDULING,)
"""In-tree plugins a feature gate adds to the default profile (GenericWorkload)."""
