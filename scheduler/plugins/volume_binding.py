"""VolumeBinding: a pod's claims decide which nodes it may use, and the binding the scheduler
makes for delayed-binding claims.

Port of kube-scheduler's plugins/volumebinding (v1.37) and its SchedulerVolumeBinder:

- PreFilter sorts the pod's claims (``persistentVolumeClaim`` volumes and generic ephemeral
  ones, ``<pod>-<volume>``) into bound, unbound with a ``WaitForFirstConsumer`` class
  (delayed) and unbound otherwise (immediate: the pod waits for the PV controller).
- Filter (FindPodVolumes): a bound claim's PV must accept the node by its node affinity; a
  delayed claim gets the smallest available PV of its class that fits the node (static
  binding), else its class must provision (a provisioner, and ``allowedTopologies``
  accepting the node). Reasons are kube's strings.
- Score (StorageCapacityScoring, on by default since v1.37): with static bindings, the
  fuller a node's chosen PVs would be, the lower (kube's default shape: 100 at 0 %, 0 at
  100 %). Dynamic provisions score 0: we do not watch CSIStorageCapacity.
- Reserve assumes the bindings in ``cache.volumes`` (a PV's claimRef, a claim's
  selected-node annotation) and keeps the plan in the pod's CycleState; Unreserve restores
  them. PreBind hands the plan to the volume binder the Handle lends (:data:`VOLUME_BINDER`:
  ``kube.volume_binder`` against the API, ``app.local_binder`` offline), which writes it
  and waits for the PV controller; the plugin itself does no I/O.

Not ported: in-tree → CSI translation of PVs (a PV's node affinity is read as written),
CSIStorageCapacity checks (every node has enough), VolumeAttributesClass feature gates (on).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final, Protocol

from scheduler.framework import status as st
from scheduler.framework.cycle_state import StateKey
from scheduler.framework.events import ClusterEvent
from scheduler.framework.interfaces import ServiceKey
from scheduler.model.volumes import (
    CLAIM_LOST,
    NO_PROVISIONER,
    WAIT_FOR_FIRST_CONSUMER,
    PersistentVolume,
    PersistentVolumeClaim,
)
from scheduler.plugins import names, plugin_args
from scheduler.plugins.volume_helpers import not_found, not_owner, volumes_fragment

if TYPE_CHECKING:
    from collections.abc import Awaitable, Collection, Hashable, Mapping, Sequence

    from scheduler.cache.node_info import NodeInfo
    from scheduler.cache.snapshot import Snapshot
    from scheduler.cache.volumes import Volumes
    from scheduler.framework.cycle_state import CycleState
    from scheduler.framework.interfaces import Handle, PluginArgs
    from scheduler.model.pod import Pod

ERR_BIND_CONFLICT: Final = "node(s) didn't find available persistent volumes to bind"
ERR_NODE_CONFLICT: Final = "node(s) didn't match PersistentVolume's node affinity"
ERR_PV_NOT_EXIST: Final = (
    "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)"
)
ERR_UNBOUND_IMMEDIATE: Final = "pod has unbound immediate PersistentVolumeClaims"
DEFAULT_BIND_TIMEOUT_SECONDS: Final = 600
_MAX_UTILIZATION: Final = 100


@dataclass(frozen=True, slots=True)
class PodVolumes:
    """What one node would need (kube's PodVolumes): PVs to bind, claims to provision."""

    static_bindings: tuple[tuple[PersistentVolume, PersistentVolumeClaim], ...] = ()
    provisions: tuple[PersistentVolumeClaim, ...] = ()

    def restore(self, volumes: Volumes) -> None:
        """Drop what Reserve assumed for this plan (kube's revertAssumedPVs/PVCs)."""
        for pv, _ in self.static_bindings:
            volumes.restore_pv(pv.name)
        for pvc in self.provisions:
            volumes.restore_pvc(pvc.namespace, pvc.name)


@dataclass(slots=True)
class _State:
    bound: tuple[PersistentVolumeClaim, ...] = ()
    delayed: tuple[PersistentVolumeClaim, ...] = ()
    by_node: dict[str, PodVolumes] = field(default_factory=dict)
    has_static_bindings: bool = False


_KEY: Final[StateKey[_State]] = StateKey("PreFilter" + names.VOLUME_BINDING)
_PLAN: Final[StateKey[PodVolumes]] = StateKey("Reserve" + names.VOLUME_BINDING)
"""What Reserve assumed for the pod: written as a new value into the pod's own state (the
PreFilter state may be shared by the pods of an exact batch)."""
_NOTHING: Final = PodVolumes()


class VolumeBinderPort(Protocol):
    """What PreBind needs from outside: write ``plan`` for ``pod`` on ``node_name`` and wait
    until the PV controller has bound it, at most ``timeout`` seconds (kube's
    BindPodVolumes). Returns the Status, or an awaitable of it when it does I/O."""

    def bind_pod_volumes(
        self, pod: Pod, node_name: str, plan: PodVolumes, *, timeout: float
    ) -> st.Status | Awaitable[st.Status]: ...


VOLUME_BINDER: Final[ServiceKey[VolumeBinderPort]] = ServiceKey("VolumeBinder")
"""The Handle's service the composition root provides for PreBind."""


def delay_binding(volumes: Volumes, pvc: PersistentVolumeClaim) -> bool | str:
    """kube's IsDelayBindingMode: whether the claim's class waits for the first consumer; a
    message when the class leaves ``volumeBindingMode`` unset."""
    if not pvc.storage_class:
        return False
    storage_class = volumes.storage_class(pvc.storage_class)
    if storage_class is None:
        return False
    if storage_class.binding_mode is None:
        return f'VolumeBindingMode not set for StorageClass "{pvc.storage_class}"'
    return storage_class.binding_mode == WAIT_FOR_FIRST_CONSUMER


def find_matching_volume(
    claim: PersistentVolumeClaim,
    candidates: Sequence[PersistentVolume],
    node_labels: Mapping[str, str],
    excluded: Collection[str],
) -> PersistentVolume | None:
    """kube's FindMatchingVolume for a delayed claim and a node: the PV already bound to the
    claim (if it fits the node), else the smallest available PV of the claim's class, mode,
    attributes class, selector and access modes that fits the node (ties: by name)."""
    best: PersistentVolume | None = None
    for pv in candidates:
        if pv.name in excluded:
            continue
        if pv.claim_ref is not None and not pv.bound_to(claim):
            continue
        if pv.capacity < claim.request or pv.volume_mode != claim.volume_mode:
            continue
        if pv.attributes_class != claim.attributes_class or pv.deleting:
            continue
        fits = pv.fits_node(node_labels)
        if pv.bound_to(claim):
            return pv if fits else None
        if pv.phase != "Available":
            continue
        if claim.selector is not None and not claim.selector.matches(pv.labels):
            continue
        if pv.storage_class != claim.storage_class or not fits:
            continue
        if not claim.access_modes <= pv.access_modes:
            continue
        if best is None or (pv.capacity, pv.name) < (best.capacity, best.name):
            best = pv
    return best


KUBE_DEFAULT_SHAPE: Final = [{"utilization": 0, "score": 10}, {"utilization": 100, "score": 0}]
"""VolumeBindingArgs.shape as kube-scheduler defaults it (scores out of 10), what
``_utilization_score`` computes."""


def _utilization_score(requested: int, capacity: int) -> int:
    """kube's default shape (0 % → 100, 100 % → 0), broken-linear with integer steps."""
    if capacity == 0 or requested > capacity:
        return 0
    return _MAX_UTILIZATION - requested * _MAX_UTILIZATION // capacity


_EVENTS: Final = (ClusterEvent.NODE_ADD, ClusterEvent.NODE_UPDATE, ClusterEvent.STORAGE_CHANGE)
"""The cluster events that may undo a rejection (see :meth:`events_to_register`)."""


class VolumeBinding:
    """PreFilter, Filter, PreScore, Score, Reserve/Unreserve, PreBind, Sign; see the module
    docstring.

    Args (``VolumeBindingArgs``): ``bindTimeoutSeconds`` (default 600), read by PreBind;
    ``shape`` only as kube's default (which kube-scheduler writes into its configuration), the
    one we score with; another shape is refused."""

    name: str = names.VOLUME_BINDING

    def __init__(self, args: PluginArgs, handle: Handle) -> None:
        plugin_args.check_fields(args, "VolumeBindingArgs", ("bindTimeoutSeconds", "shape"))
        if "shape" in args and args["shape"] != KUBE_DEFAULT_SHAPE:
            raise ValueError(
                f"VolumeBindingArgs.shape: only kube's default {KUBE_DEFAULT_SHAPE} is "
                f"supported, got {args['shape']!r}"
            )
        timeout = args.get("bindTimeoutSeconds", DEFAULT_BIND_TIMEOUT_SECONDS)
        if isinstance(timeout, bool) or not isinstance(timeout, int) or timeout < 0:
            raise ValueError(
                f"VolumeBindingArgs: bindTimeoutSeconds: must be a non-negative integer, "
                f"got {timeout!r}"
            )
        self.bind_timeout_seconds = timeout
        self._handle = handle

    # -- PreFilter ----------------------------------------------------------------------------

    def events_to_register(self) -> tuple[ClusterEvent, ...]:
        """kube: Node/Add|UpdateNodeLabel; StorageClass, PersistentVolumeClaim,
        PersistentVolume, CSINode, CSIDriver and CSIStorageCapacity changes."""
        return _EVENTS

    def pre_filter(
        self, state: CycleState, pod: Pod, snapshot: Snapshot
    ) -> tuple[frozenset[str] | None, st.Status]:
        volumes = snapshot.volumes
        bound: list[PersistentVolumeClaim] = []
        delayed: list[PersistentVolumeClaim] = []
        immediate = False
        claims = [v for v in pod.volumes if v.claim_name]
        if not claims:
            state.write(_KEY, _State())
            return None, st.SKIP
        for volume in claims:
            name = volume.claim_name
            pvc = volumes.pvc(pod.namespace, name)
            if pvc is None:
                if volume.ephemeral:
                    return None, st.unresolvable(
                        "waiting for ephemeral volume controller to create the "
                        f'persistentvolumeclaim "{name}"'
                    )
                return None, st.unresolvable(not_found("persistentvolumeclaim", name))
            if pvc.phase == CLAIM_LOST:
                return None, st.unresolvable(
                    f'persistentvolumeclaim "{name}" bound to non-existent persistentvolume '
                    f'"{pvc.volume_name}"'
                )
            if pvc.deleting:
                return None, st.unresolvable(f'persistentvolumeclaim "{name}" is being deleted')
            if volume.ephemeral and pvc.controller_uid != pod.uid:
                return None, st.unresolvable(not_owner(pod, pvc.namespace, name))
            if pvc.fully_bound:
                bound.append(pvc)
                continue
            delay = delay_binding(volumes, pvc)
            if isinstance(delay, str):
                return None, st.error(delay)
            if delay and not pvc.volume_name:
                delayed.append(pvc)
            else:
                immediate = True
        if immediate:
            return None, st.unresolvable(ERR_UNBOUND_IMMEDIATE)
        state.write(_KEY, _State(bound=tuple(bound), delayed=tuple(delayed)))
        return None, st.SUCCESS

    # -- Filter -------------------------------------------------------------------------------

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> st.Status:
        data = state.read(_KEY)
        node = node_info.node
        if data is None or node is None:
            return st.error(f"{names.VOLUME_BINDING}: no PreFilter state for pod {pod.key}")
        volumes = self._handle.snapshot.volumes
        labels = node.labels
        node_conflict = False
        pv_missing = False
        for pvc in data.bound:
            pv = volumes.pv(pvc.volume_name)
            if pv is None:
                pv_missing = True
                break
            if not pv.fits_node(labels):
                node_conflict = True
                break
        unbound_ok = True
        bindings: list[tuple[PersistentVolume, PersistentVolumeClaim]] = []
        provisions: list[PersistentVolumeClaim] = []
        if data.delayed:
            to_match: list[PersistentVolumeClaim] = []
            to_provision: list[PersistentVolumeClaim] = []
            for pvc in data.delayed:
                if pvc.selected_node is None:
                    to_match.append(pvc)
                elif pvc.selected_node != node.name:
                    unbound_ok = False
                    break
                else:
                    to_provision.append(pvc)
            if unbound_ok:
                chosen: set[str] = set()
                for pvc in sorted(to_match, key=lambda c: c.request):
                    candidates = volumes.pvs_of_class(pvc.storage_class)
                    pv = find_matching_volume(pvc, candidates, labels, chosen)
                    if pv is None:
                        to_provision.append(pvc)
                        unbound_ok = False
                        continue
                    chosen.add(pv.name)
                    bindings.append((pv, pvc))
                if to_provision:
                    outcome = self._check_provisions(volumes, to_provision, labels)
                    if isinstance(outcome, st.Status):
                        return outcome
                    unbound_ok = outcome
                    if unbound_ok:
                        provisions = to_provision
        reasons = [
            reason
            for failed, reason in (
                (node_conflict, ERR_NODE_CONFLICT),
                (not unbound_ok, ERR_BIND_CONFLICT),
                (pv_missing, ERR_PV_NOT_EXIST),
            )
            if failed
        ]
        if reasons:
            return st.unresolvable(*reasons)
        data.by_node[node.name] = PodVolumes(tuple(bindings), tuple(provisions))
        data.has_static_bindings = data.has_static_bindings or bool(bindings)
        return st.SUCCESS

    @staticmethod
    def _check_provisions(
        volumes: Volumes, claims: Sequence[PersistentVolumeClaim], labels: Mapping[str, str]
    ) -> bool | st.Status:
        """kube's checkVolumeProvisions: each claim's class can provision on this node."""
        for pvc in claims:
            if not pvc.storage_class:
                return st.error(f'no class for claim "{pvc.namespace}/{pvc.name}"')
            storage_class = volumes.storage_class(pvc.storage_class)
            if storage_class is None:
                return st.error(f'failed to find storage class "{pvc.storage_class}"')
            if storage_class.provisioner in ("", NO_PROVISIONER):
                return False
            if not storage_class.topology_allows(labels):
                return False
        return True

    # -- Score --------------------------------------------------------------------------------

    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> st.Status:
        # Only static bindings score above 0 without CSIStorageCapacity: skip the rest.
        data = state.read(_KEY)
        return st.SUCCESS if data is not None and data.has_static_bindings else st.SKIP

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        data = state.read(_KEY)
        if data is None:
            return 0
        planned = data.by_node.get(node_info.name)
        if planned is None or not planned.static_bindings:
            return 0
        by_class: dict[str, list[int]] = {}
        for pv, pvc in planned.static_bindings:
            totals = by_class.setdefault(pv.storage_class, [0, 0])
            totals[0] += pvc.request
            totals[1] += pv.capacity
        total = sum(_utilization_score(req, cap) for req, cap in by_class.values())
        return math.floor(total / len(by_class) + 0.5)

    # -- Reserve, Unreserve, PreBind --------------------------------------------------------

    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> st.Status:
        """kube's AssumePodVolumes: shadow the PVs and claims the binding will change."""
        state.write(_PLAN, _NOTHING)
        data = state.read(_KEY)
        if data is None:
            return st.SUCCESS
        planned = data.by_node.get(node_name)
        volumes = self._handle.snapshot.volumes
        if planned is None or self._all_bound(volumes, pod):
            return st.SUCCESS
        bindings: list[tuple[PersistentVolume, PersistentVolumeClaim]] = []
        provisions: list[PersistentVolumeClaim] = []
        try:
            for pv, pvc in planned.static_bindings:
                if not (pv.bound_to(pvc) and pv.claim_ref and pv.claim_ref.uid == pvc.uid):
                    pv = pv.with_claim(pvc)
                    volumes.assume_pv(pv)
                bindings.append((pv, pvc))
            for pvc in planned.provisions:
                pvc = pvc.with_selected_node(node_name)
                volumes.assume_pvc(pvc)
                provisions.append(pvc)
        except KeyError as exc:
            PodVolumes(tuple(bindings), tuple(provisions)).restore(volumes)
            return st.error(str(exc))
        state.write(_PLAN, PodVolumes(tuple(bindings), tuple(provisions)))
        return st.SUCCESS

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        """kube's RevertAssumedPodVolumes; idempotent (the plan is dropped once restored)."""
        plan = self.bind_plan(state)
        if plan is not None:
            plan.restore(self._handle.snapshot.volumes)
            state.write(_PLAN, _NOTHING)

    def bind_plan(self, state: CycleState) -> PodVolumes | None:
        """What PreBind must write for the reserved node; None when there is nothing."""
        plan = state.read(_PLAN)
        return plan if plan is not None and (plan.static_bindings or plan.provisions) else None

    def pre_bind_pre_flight(self, state: CycleState, pod: Pod, node_name: str) -> st.Status:
        return st.SKIP if self.bind_plan(state) is None else st.SUCCESS

    def pre_bind(
        self, state: CycleState, pod: Pod, node_name: str
    ) -> st.Status | Awaitable[st.Status]:
        """kube's BindPodVolumes, through the Handle's volume binder."""
        plan = self.bind_plan(state)
        if plan is None:
            return st.SUCCESS
        binder = self._handle.service(VOLUME_BINDER)
        if binder is None:
            return st.error("no volume binder to write the volume bindings with")
        return binder.bind_pod_volumes(pod, node_name, plan, timeout=self.bind_timeout_seconds)

    @staticmethod
    def _all_bound(volumes: Volumes, pod: Pod) -> bool:
        for name in pod.claim_names:
            pvc = volumes.pvc(pod.namespace, name)
            if pvc is None or not pvc.fully_bound:
                return False
        return True

    def sign_pod(self, pod: Pod) -> Hashable | None:
        return volumes_fragment(pod)
