"""PodGroup: the policy a group of pods is scheduled by (gang: all or nothing; basic: one by
one), as kube-scheduler v1.37 reads it from ``scheduling.k8s.io/v1beta1`` PodGroups with
the ``GenericWorkload`` gate, and as scheduler-plugins' Coscheduling PodGroups
(``scheduling.x-k8s.io/v1alpha1``) are mapped onto it.

A pod names its group in ``spec.schedulingGroup.podGroupName`` (``Pod.scheduling_group``)
or, for Coscheduling, with the label ``scheduling.x-k8s.io/pod-group``; the group's key
(``GroupKey``) says which API the name belongs to, so two PodGroups of the same name in
the two APIs never meet.

Neighbours: ``model.parse_pod_groups`` (parsing), ``cache.pod_groups`` (the groups and
their members' counts), ``plugins.gang_scheduling`` and ``cycle.schedule_group``.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, NewType

if TYPE_CHECKING:
    from scheduler.model.pod import Pod
    from scheduler.model.resources import Resources

GroupKey = NewType("GroupKey", str)
"""``podgroup/<namespace>/<name>`` (kube's PodGroupKey) or ``coscheduling/<ns>/<name>``."""

COSCHEDULING_LABEL = "scheduling.x-k8s.io/pod-group"
"""The label that puts a pod in a Coscheduling PodGroup of its namespace."""
INITIALLY_SCHEDULED = "PodGroupInitiallyScheduled"
"""The condition kube-scheduler writes on a PodGroup after each attempt."""


class GroupApi(StrEnum):
    """Where a PodGroup comes from."""

    KUBE = "scheduling.k8s.io"
    COSCHEDULING = "scheduling.x-k8s.io"


def group_key(api: GroupApi, namespace: str, name: str) -> GroupKey:
    prefix = "podgroup" if api is GroupApi.KUBE else "coscheduling"
    return GroupKey(f"{prefix}/{namespace}/{name}")


def group_of(pod: Pod, *, coscheduling: bool = False) -> GroupKey | None:
    """The key of ``pod``'s group: ``spec.schedulingGroup`` first (kube's), then, when
    Coscheduling PodGroups are served, the Coscheduling label; None for a pod of no group."""
    if pod.scheduling_group:
        return group_key(GroupApi.KUBE, pod.namespace, pod.scheduling_group)
    if coscheduling:
        name = pod.labels.get(COSCHEDULING_LABEL)
        if name:
            return group_key(GroupApi.COSCHEDULING, pod.namespace, name)
    return None


@dataclass(frozen=True, slots=True)
class GroupCondition:
    """A PodGroup's ``PodGroupInitiallyScheduled`` condition as the API holds it."""

    status: str
    reason: str
    message: str
    observed_generation: int = 0
    last_transition_time: str = ""


@dataclass(frozen=True, slots=True)
class PodGroup:
    key: GroupKey
    api: GroupApi
    namespace: str
    name: str
    uid: str
    resource_version: str
    generation: int
    gang: bool
    """``spec.schedulingPolicy.gang`` (all or nothing); False: ``basic`` (one by one)."""
    min_count: int
    """``gang.minCount`` (Coscheduling's ``minMember``); 1 for a basic group (kube's
    getMinCount: a basic group is placed when any pod of it is)."""
    priority: int
    """``spec.priority`` (0 when unset): every member must have it."""
    preemption_policy: str = ""
    """``spec.preemptionPolicy`` (alpha in kube v1.37, read only with its gate)."""
    disruption_all: bool = False
    """``spec.disruptionMode.all``: as a preemption victim the group goes whole."""
    condition: GroupCondition | None = None
    """The ``PodGroupInitiallyScheduled`` condition, None when not written yet."""
    schedule_timeout: float | None = None
    """Coscheduling's ``scheduleTimeoutSeconds`` (the longest Permit wait)."""
    min_resources: Resources | None = None
    """Coscheduling's ``minResources``: checked against the cluster's free capacity."""

    @property
    def initially_scheduled(self) -> bool:
        """The condition is True: terminal, kube never writes it back to False."""
        return self.condition is not None and self.condition.status == "True"
