"""Pod: the scheduler's record of a pod, built once from the API's dict (``model.parse``).

Everything a plugin reads is precomputed here (effective requests, non-zero requests, host
ports, normalized image names), so the per-node hot path never touches raw dicts.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Mapping

    from scheduler.model.affinity import (
        PodAffinityTerm,
        TopologySpreadConstraint,
        WeightedPodAffinityTerm,
    )
    from scheduler.model.dra_claims import PodResourceClaim, PodResourceClaimStatus
    from scheduler.model.keys import NodeName, PodKey, Uid
    from scheduler.model.labels import NodeSelector, PreferredSchedulingTerm
    from scheduler.model.resources import Resources
    from scheduler.model.taints import Toleration
    from scheduler.model.volumes import PodVolume
    from scheduler.model.workloads import ControllerRef

BATCHING_ANNOTATION = "batch-scheduler.io/batching"
PREEMPT_LOWER_PRIORITY = "PreemptLowerPriority"
PREEMPT_NEVER = "Never"


@dataclass(frozen=True, slots=True)
class HostPort:
    """A wanted host port. ``host_ip`` is ``0.0.0.0`` when unset, ``protocol`` ``TCP``."""

    host_ip: str
    protocol: str
    port: int


@dataclass(frozen=True, slots=True)
class Pod:
    key: PodKey
    namespace: str
    name: str
    uid: Uid
    resource_version: str
    labels: Mapping[str, str]
    annotations: Mapping[str, str]
    scheduler_name: str
    node_name: NodeName
    """Empty while pending."""
    phase: str
    priority: int
    deleting: bool
    """``metadata.deletionTimestamp`` is set."""
    scheduling_gates: tuple[str, ...]
    """``spec.schedulingGates``: while any is left the pod is not scheduled (kube's
    SchedulingGates PreEnqueue); the update that removes the last one queues it."""
    creation_timestamp: str

    requests: Resources
    """Effective requests: max(sum of containers + restartable init containers,
    max over init containers (with the sidecars started before each)) + overhead."""
    non_zero_milli_cpu: int
    """As ``requests.milli_cpu`` but a container without a cpu request counts 100m."""
    non_zero_memory: int
    """As ``requests.memory`` but a container without a memory request counts 200Mi."""

    host_ports: tuple[HostPort, ...]
    images: tuple[str, ...]
    """Image names of all containers, normalized as kube's ImageLocality does (``:latest``
    appended when there is no tag or digest)."""
    tolerations: tuple[Toleration, ...]
    node_selector: Mapping[str, str]
    required_node_affinity: NodeSelector | None
    preferred_node_affinity: tuple[PreferredSchedulingTerm, ...]
    required_pod_affinity: tuple[PodAffinityTerm, ...]
    preferred_pod_affinity: tuple[WeightedPodAffinityTerm, ...]
    required_pod_anti_affinity: tuple[PodAffinityTerm, ...]
    preferred_pod_anti_affinity: tuple[WeightedPodAffinityTerm, ...]
    topology_spread_constraints: tuple[TopologySpreadConstraint, ...]
    nominated_node_name: str
    resource_claims: tuple[PodResourceClaim, ...]
    """``spec.resourceClaims``: the DRA claims the pod uses (DynamicResources)."""
    controller_ref: ControllerRef | None = None
    """The ``ownerReferences`` entry with ``controller: true`` (default spreading reads it)."""
    preemption_policy: str = PREEMPT_LOWER_PRIORITY
    """``spec.preemptionPolicy``: ``Never`` keeps the pod from preempting others."""
    start_time: str = ""
    """``status.startTime`` (RFC 3339), empty until the kubelet starts the pod: preemption
    prefers victims that started last."""
    preempted: bool = False
    """``status.conditions`` holds ``DisruptionTarget=True`` with reason
    ``PreemptionByScheduler``: a scheduler chose the pod as a preemption victim."""
    volumes: tuple[PodVolume, ...] = ()
    """``spec.volumes`` as the volume plugins read them (claims, inline disks, signature)."""
    resource_claim_statuses: tuple[PodResourceClaimStatus, ...] = ()
    """``status.resourceClaimStatuses``: the claims kube-controller-manager generated for the
    pod's claim templates (DynamicResources waits for them)."""
    scheduling_group: str = ""
    """``spec.schedulingGroup.podGroupName``: the PodGroup of the pod's namespace it belongs
    to (kube's GenericWorkload; ``model.pod_groups.group_of``); empty for none."""
    template_id: int = field(default=0, compare=False)
    """Non-zero for a pod the watch built from a pod template parsed before
    (``kube.intake.templates``): pods of one id are equal but for their identity (key,
    name, uid, resource version), so the Signer signs a template once. Not compared:
    how a record was built is not what it says."""

    def copied(self) -> Pod:
        """A copy, slot by slot through the slots' own descriptors: per pod on the hot
        paths (assume, the watch's pods of one template), where ``dataclasses.replace``
        and ``__init__`` cost three times as much. Callers set what differs with
        ``object.__setattr__`` before anyone else sees the copy."""
        copy = object.__new__(Pod)
        for get, put in _SLOT_ACCESS:
            put(copy, get(self))
        return copy

    def with_node_name(self, node_name: str) -> Pod:
        """A copy placed on ``node_name`` (assume)."""
        placed = self.copied()
        object.__setattr__(placed, "node_name", node_name)
        return placed

    @property
    def batching_annotation(self) -> str | None:
        return self.annotations.get(BATCHING_ANNOTATION)

    @property
    def has_pod_affinity(self) -> bool:
        return bool(self.required_pod_affinity or self.preferred_pod_affinity)

    @property
    def has_pod_anti_affinity(self) -> bool:
        return bool(self.required_pod_anti_affinity or self.preferred_pod_anti_affinity)

    @property
    def has_resource_claims(self) -> bool:
        """Uses DRA resource claims (``spec.resourceClaims``)."""
        return bool(self.resource_claims)

    @property
    def claim_names(self) -> tuple[str, ...]:
        """Names of the claims the pod uses (ephemeral ones included), in volume order."""
        return tuple(v.claim_name for v in self.volumes if v.claim_name)

    @property
    def terminal(self) -> bool:
        """Succeeded or Failed: consumes nothing on its node."""
        return self.phase in ("Succeeded", "Failed")


_SLOT_ACCESS = tuple(
    (getattr(Pod, f.name).__get__, getattr(Pod, f.name).__set__) for f in fields(Pod)
)
"""(get, set) of each slot's member descriptor: they bypass the frozen ``__setattr__``."""
