"""Volumes: what the four volume plugins read of pods, PersistentVolumes, PersistentVolumeClaims,
StorageClasses and CSINodes.

kube-scheduler's VolumeBinding, VolumeRestrictions, VolumeZone and NodeVolumeLimits read these
objects through informers. The records keep only the fields those plugins (and the PreBind
API writes) use, with quantities as exact byte counts.

Neighbours: ``parse_volumes`` (dict → record), ``cache.volumes`` (the store the plugins read),
``model.pod`` (``Pod.volumes``).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from collections.abc import Mapping

    from scheduler.model.labels import LabelSelector, NodeSelector

ANN_SELECTED_NODE: Final = "volume.kubernetes.io/selected-node"
"""Set on a claim by the scheduler: provision its volume for this node."""
ANN_BIND_COMPLETED: Final = "pv.kubernetes.io/bind-completed"
"""Set on a claim by the PV controller once the claim/volume binding is complete."""
ANN_BOUND_BY_CONTROLLER: Final = "pv.kubernetes.io/bound-by-controller"
"""Set on a volume whose claimRef a controller (or the scheduler) wrote."""
ANN_BETA_STORAGE_CLASS: Final = "volume.beta.kubernetes.io/storage-class"
"""The deprecated storage class annotation; it wins over ``storageClassName``."""
NO_PROVISIONER: Final = "kubernetes.io/no-provisioner"
"""A StorageClass provisioner that means: static volumes only."""

WAIT_FOR_FIRST_CONSUMER: Final = "WaitForFirstConsumer"
IMMEDIATE: Final = "Immediate"
READ_WRITE_ONCE_POD: Final = "ReadWriteOncePod"
FILESYSTEM: Final = "Filesystem"
AVAILABLE: Final = "Available"
CLAIM_LOST: Final = "Lost"


@dataclass(frozen=True, slots=True)
class InlineDisk:
    """A GCE PD, AWS EBS, ISCSI or RBD volume written in the pod: VolumeRestrictions refuses a
    node where another pod mounts the same disk (unless both mount it read-only, EBS aside)."""

    kind: str
    """``gcePersistentDisk``, ``awsElasticBlockStore``, ``iscsi`` or ``rbd``."""
    ident: str
    """The PD name, EBS volume ID, ISCSI IQN, or RBD ``pool/image``."""
    read_only: bool
    monitors: frozenset[str] = frozenset()
    """RBD only: the Ceph monitors (two RBD disks conflict only if these overlap)."""

    def conflicts(self, other: InlineDisk) -> bool:
        if self.kind != other.kind or self.ident != other.ident:
            return False
        if self.kind == "awsElasticBlockStore":
            return True
        if self.read_only and other.read_only:
            return False
        return self.kind != "rbd" or bool(self.monitors & other.monitors)


@dataclass(frozen=True, slots=True)
class PodVolume:
    """One entry of ``spec.volumes``. Its name is not kept: nothing reads it once the
    claim of an ephemeral volume is named (and the pods of one template, whose volume
    names differ, share a record: ``kube.intake.templates``)."""

    claim_name: str = ""
    """The claim: ``persistentVolumeClaim.claimName``, or ``<pod>-<volume>`` for a generic
    ephemeral volume (the claim the ephemeral controller creates); empty otherwise."""
    ephemeral: bool = False
    disk: InlineDisk | None = None
    source_fragment: str | None = None
    """The volume source as canonical JSON (kube's VolumesSigner); None for ConfigMap and
    Secret volumes, which never change where a pod fits."""

    @property
    def uses_claim(self) -> bool:
        return bool(self.claim_name) or self.ephemeral


@dataclass(frozen=True, slots=True)
class ClaimRef:
    namespace: str
    name: str
    uid: str = ""


@dataclass(frozen=True, slots=True)
class PersistentVolume:
    name: str
    resource_version: str
    labels: Mapping[str, str]
    storage_class: str
    """The beta annotation if present, else ``spec.storageClassName``."""
    capacity: int
    """``spec.capacity.storage`` in bytes (rounded up)."""
    access_modes: frozenset[str]
    volume_mode: str
    claim_ref: ClaimRef | None
    phase: str
    node_affinity: NodeSelector | None
    """``spec.nodeAffinity.required``."""
    deleting: bool
    csi_driver: str = ""
    csi_handle: str = ""
    attributes_class: str = ""
    bound_by_controller: bool = False

    def bound_to(self, claim: PersistentVolumeClaim) -> bool:
        """kube's IsVolumeBoundToClaim: the claimRef names the claim (and its uid, if set)."""
        ref = self.claim_ref
        if ref is None or ref.name != claim.name or ref.namespace != claim.namespace:
            return False
        return not ref.uid or ref.uid == claim.uid

    def fits_node(self, node_labels: Mapping[str, str]) -> bool:
        """kube's CheckNodeAffinity: the required terms against the node's labels only."""
        return self.node_affinity is None or self.node_affinity.matches(node_labels, "")

    def with_claim(self, claim: PersistentVolumeClaim) -> PersistentVolume:
        """The volume as the scheduler binds it to ``claim`` (GetBindVolumeToClaim)."""
        return replace(
            self,
            claim_ref=ClaimRef(claim.namespace, claim.name, claim.uid),
            bound_by_controller=True,
        )


@dataclass(frozen=True, slots=True)
class PersistentVolumeClaim:
    namespace: str
    name: str
    uid: str
    resource_version: str
    storage_class: str
    """The beta annotation if present, else ``spec.storageClassName``; empty when neither."""
    volume_name: str
    phase: str
    access_modes: frozenset[str]
    volume_mode: str
    request: int
    """``spec.resources.requests.storage`` in bytes (rounded up), 0 when unset."""
    selector: LabelSelector | None
    selected_node: str | None
    """The ``volume.kubernetes.io/selected-node`` annotation (None when absent)."""
    bind_completed: bool
    deleting: bool
    controller_uid: str = ""
    """The uid of the ``ownerReferences`` entry with ``controller: true`` (ephemeral claims)."""
    attributes_class: str = ""

    @property
    def key(self) -> tuple[str, str]:
        return (self.namespace, self.name)

    @property
    def fully_bound(self) -> bool:
        """kube's isPVCFullyBound: a volume name and the bind-completed annotation."""
        return bool(self.volume_name) and self.bind_completed

    def with_selected_node(self, node_name: str) -> PersistentVolumeClaim:
        return replace(self, selected_node=node_name)


@dataclass(frozen=True, slots=True)
class TopologySelectorTerm:
    """One ``allowedTopologies`` term: every key must carry one of its values (ANDed)."""

    requirements: tuple[tuple[str, frozenset[str]], ...]

    def matches(self, labels: Mapping[str, str]) -> bool:
        for key, values in self.requirements:
            value = labels.get(key)
            if value is None or value not in values:
                return False
        return True


@dataclass(frozen=True, slots=True)
class StorageClass:
    name: str
    resource_version: str
    provisioner: str
    binding_mode: str | None
    """``volumeBindingMode``; None when unset (the API server defaults it to Immediate)."""
    allowed_topologies: tuple[TopologySelectorTerm, ...]

    def topology_allows(self, labels: Mapping[str, str]) -> bool:
        """kube's MatchTopologySelectorTerms: no terms allow every node, else one must match."""
        return not self.allowed_topologies or any(
            t.matches(labels) for t in self.allowed_topologies
        )


@dataclass(frozen=True, slots=True)
class CSINode:
    name: str
    resource_version: str
    limits: Mapping[str, int]
    """Driver name → ``allocatable.count`` for the drivers that declare one."""
