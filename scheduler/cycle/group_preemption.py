"""Workload-aware preemption: DefaultPreemption's PodGroupPostFilter (kube v1.37's
PodGroupEvaluator.Preempt, GenericWorkload), for a pod group that did not fit.

The domain is the whole cluster and the preemptor the group, with its PodGroup's priority:

1. a member with ``preemptionPolicy: Never`` keeps the group from preempting;
2. a member whose nominated node still holds a lower-priority pod being evicted for it means
   the preemption is under way: the members keep their nominations;
3. every bound pod of lower priority than the group is a potential victim — a pod of a
   PodGroup with its group's priority, and a PodGroup with ``disruptionMode: all`` as one
   victim made of all its pods; none: ``No preemption victims found for incoming preemptor``;
4. all potential victims leave the cache, and the group's algorithm runs again
   (cycle/schedule_group.py): if even then the group does not fit, that is the answer;
5. otherwise victims are given back, most important first (those whose eviction would break
   a PodDisruptionBudget before the others), each kept if every member still passes Filter
   on the node it was placed on, the members assumed in order as kube does; the rest are
   evicted, and every placed member is nominated to its node.

The cache is put back as it was before the method returns: the cycle is synchronous, so
nothing else sees the removed victims or the members assumed for the dry run.

Neighbours: cycle/schedule_group.py (the caller), framework/preemption.py (single-pod
preemption's victim order and PodDisruptionBudget rule), cycle/ports.py (the Preemptor that
evicts).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from scheduler import logs
from scheduler.cycle.ports import GroupPreemptor
from scheduler.framework import status as st
from scheduler.framework.preemption import start_time
from scheduler.model.pod import PREEMPT_NEVER

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from scheduler.cache.cluster_state import ClusterState
    from scheduler.cycle.decision import Reserved
    from scheduler.cycle.ports import Preemptor
    from scheduler.framework.profile import Profile
    from scheduler.model.keys import Uid
    from scheduler.model.pod import Pod
    from scheduler.model.pod_groups import PodGroup
    from scheduler.queueing.queued_pod import QueuedPodInfo
    from scheduler.queueing.scheduling_queue import SchedulingQueue

log = logs.get_logger(__name__)

PREFIX = "pod group preemption: "
NO_VICTIMS = "No preemption victims found for incoming preemptor"
NOT_ELIGIBLE = "not eligible due to preemptionPolicy=Never."
ONGOING = "ongoing preemption on nominated nodes"


class Placed(Protocol):
    """A member the dry run placed: where, and the state it was decided and reserved in."""

    @property
    def info(self) -> QueuedPodInfo: ...

    @property
    def reserved(self) -> Reserved | None: ...

    @property
    def status(self) -> st.Status | None: ...


@dataclass(slots=True)
class _Victim:
    """A unit of eviction: one pod, or a whole PodGroup with ``disruptionMode: all``."""

    pods: list[Pod]
    priority: int
    group: bool

    def importance(self) -> tuple[int, int, int, float]:
        """kube's MoreImportantVictim, most important first."""
        earliest = min(start_time(pod) for pod in self.pods)
        return (-self.priority, -(2 if self.group else 1), -len(self.pods), earliest)


@dataclass(slots=True)
class Preemption:
    """What the PodGroupPostFilter decided."""

    status: st.Status
    victims: list[Pod] = field(default_factory=list)
    nominations: dict[Uid, str] = field(default_factory=dict)
    """Member uid → the node it is nominated to."""


def preempt_for_group(
    pod_group: PodGroup,
    members: Sequence[QueuedPodInfo],
    *,
    cluster: ClusterState,
    profile: Profile,
    place: Callable[[], tuple[Sequence[Placed], st.Status]],
    release: Callable[[Reserved], None],
) -> Preemption:
    """Run the steps of the module docstring; the cache is as before when it returns.
    ``place`` runs the group's algorithm on the cache as it is then (the members it places
    are assumed and reserved); ``release`` undoes one such member."""
    if any(info.pod.preemption_policy == PREEMPT_NEVER for info in members):
        return Preemption(st.unschedulable(NOT_ELIGIBLE))
    ongoing = _ongoing(pod_group, members, cluster)
    if ongoing is not None:
        return ongoing
    units = _potential_victims(pod_group, cluster)
    if not units:
        return Preemption(st.unresolvable(NO_VICTIMS))
    removed = [pod for unit in units for pod in unit.pods]
    for pod in removed:
        cluster.remove_pod(pod.uid)
    try:
        placed, status = place()
        assignments = [p for p in placed if p.status is not None and p.status.is_success]
        for member in reversed(assignments):
            assert member.reserved is not None
            release(member.reserved)
        if not status.is_success:
            return Preemption(status)
        units.sort(key=_Victim.importance)
        violating, keeping = _split_by_budget(units, cluster)
        evicted = [
            unit
            for unit in (*violating, *keeping)
            if not _reprieve(unit, assignments, cluster, profile)
        ]
    finally:
        for pod in removed:
            cluster.add_pod(pod)
    evicted.sort(key=_Victim.importance)
    victims = [pod for unit in evicted for pod in unit.pods]
    nominations = {p.info.pod.uid: p.reserved.node for p in assignments if p.reserved is not None}
    message = f"found a placement for podgroup, preempting {len(victims)} victims"
    return Preemption(st.Status(st.Code.SUCCESS, (message,)), victims, nominations)


def actuate(
    pod_group: PodGroup,
    members: Sequence[QueuedPodInfo],
    preemption: Preemption,
    *,
    queue: SchedulingQueue,
    preemptor: Preemptor,
) -> None:
    """Nominate each member the preemption placed to its node, here and in the API, and
    evict the victims (kube's actuatePodGroupPreemption)."""
    nominator = queue.nominator
    nominated: list[tuple[Pod, str]] = []
    for info in members:
        node = preemption.nominations.get(info.pod.uid)
        if not node:
            continue
        pod = nominator.add(info.pod, node)
        queue.update_signature(info, pod, None, "NominatedNode")
        nominated.append((pod, node))
    if not preemption.victims or not nominated:
        return
    log.info(
        "group_preempting",
        group=pod_group.key,
        victims=[victim.key for victim in preemption.victims],
    )
    if isinstance(preemptor, GroupPreemptor):
        preemptor.preempt_group(pod_group, preemption.victims, nominated)
        return
    # No group actuation: each victim is evicted once, by the first member nominated to its
    # node (or the first member at all), and every member gets its nomination.
    first_on: dict[str, Pod] = {}
    for pod, node in nominated:
        first_on.setdefault(node, pod)
    victims: dict[str, list[Pod]] = {pod.uid: [] for pod, _ in nominated}
    for victim in preemption.victims:
        owner = first_on.get(victim.node_name, nominated[0][0])
        victims[owner.uid].append(victim)
    for pod, node in nominated:
        preemptor.preempt(pod, node, victims[pod.uid])


def _ongoing(
    pod_group: PodGroup, members: Sequence[QueuedPodInfo], cluster: ClusterState
) -> Preemption | None:
    """kube's isOngoingPreemption: a member's nominated node holds a lower-priority pod that
    is being evicted by a preemption."""
    nodes = {info.pod.nominated_node_name for info in members if info.pod.nominated_node_name}
    for name in nodes:
        info = cluster.snapshot.get(name)
        if info is None:
            continue
        for pod in info.pods.values():
            lower = _priority(pod, cluster) < pod_group.priority
            if lower and pod.preempted and pod.deleting:
                nominations = {
                    m.pod.uid: m.pod.nominated_node_name
                    for m in members
                    if m.pod.nominated_node_name
                }
                return Preemption(st.Status(st.Code.SUCCESS, (ONGOING,)), [], nominations)
    return None


def _priority(pod: Pod, cluster: ClusterState) -> int:
    """kube's GetPodPriority: a member of a PodGroup has its group's priority."""
    groups = cluster.pod_groups
    key = groups.key_of(pod)
    pod_group = groups.pod_group(key) if key is not None else None
    return pod_group.priority if pod_group is not None else pod.priority


def _potential_victims(pod_group: PodGroup, cluster: ClusterState) -> list[_Victim]:
    """Bound pods of lower priority, a ``disruptionMode: all`` group as one unit."""
    groups = cluster.pod_groups
    units: list[_Victim] = []
    whole: dict[str, _Victim] = {}
    for info in cluster.snapshot.node_infos:
        for pod in info.pods.values():
            if cluster.is_assumed(pod.uid) or pod.deleting:
                continue  # a bind in flight, or a pod already leaving
            key = groups.key_of(pod)
            victim_group = groups.pod_group(key) if key is not None else None
            priority = victim_group.priority if victim_group is not None else pod.priority
            if priority >= pod_group.priority:
                continue
            if victim_group is not None and victim_group.disruption_all and key is not None:
                unit = whole.get(key)
                if unit is None:
                    unit = whole[key] = _Victim([], priority, group=True)
                    units.append(unit)
                unit.pods.append(pod)
            else:
                units.append(_Victim([pod], priority, group=False))
    return units


def _split_by_budget(
    units: Sequence[_Victim], cluster: ClusterState
) -> tuple[list[_Victim], list[_Victim]]:
    """kube's FilterVictimsWithPDBViolation over units, in their order: a unit violates if
    evicting its pods would break a budget (each budget's allowance spent in order)."""
    budgets = cluster.disruption_budgets.list()
    allowed = [budget.disruptions_allowed for budget in budgets]
    violating: list[_Victim] = []
    keeping: list[_Victim] = []
    for unit in units:
        breaks = False
        for pod in unit.pods:
            if not pod.labels:
                continue
            for index, budget in enumerate(budgets):
                if not budget.selects(pod.namespace, pod.labels):
                    continue
                if pod.name not in budget.disrupted_pods:
                    allowed[index] -= 1
                    breaks = breaks or allowed[index] < 0
        (violating if breaks else keeping).append(unit)
    return violating, keeping


def _reprieve(
    unit: _Victim, assignments: Sequence[Placed], cluster: ClusterState, profile: Profile
) -> bool:
    """Give ``unit`` back and check every placed member on its node, assuming each in turn
    (kube's reprieveVictim). True: the unit stays (it is not evicted)."""
    for pod in unit.pods:
        cluster.add_pod(pod)
        info = cluster.node_info(pod.node_name)
        for member in assignments:
            assert member.reserved is not None
            assert info is not None
            profile.run_pre_filter_extension_add_pod(
                member.reserved.state, member.info.pod, pod, info
            )
    assumed: list[Reserved] = []
    fits = True
    try:
        for member in assignments:
            reserved = member.reserved
            assert reserved is not None
            node = cluster.snapshot.get(reserved.node)
            status = (
                profile.run_filters_with_nominated_pods(reserved.state, member.info.pod, node)
                if node is not None
                else st.unresolvable("node is gone")
            )
            if not status.is_success:
                fits = False
                break
            # As kube: the member assumed and reserved, for the members after it.
            placed = cluster.assume(member.info.pod, reserved.node)
            profile.binding.run_reserve(reserved.state, placed, reserved.node)
            assumed.append(reserved)
    finally:
        for reserved in reversed(assumed):
            held = cluster.get_pod(reserved.pod.uid)
            if held is not None:
                profile.binding.run_unreserve(reserved.state, held, reserved.node)
            cluster.forget(reserved.pod.uid)
    if not fits:
        for pod in unit.pods:
            cluster.remove_pod(pod.uid)
            info = cluster.node_info(pod.node_name)
            for member in assignments:
                assert member.reserved is not None
                assert info is not None
                profile.run_pre_filter_extension_remove_pod(
                    member.reserved.state, member.info.pod, pod, info
                )
    return fits
