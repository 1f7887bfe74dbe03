"""Parse PodGroups — ``scheduling.k8s.io/v1beta1`` (kube-scheduler's, gate GenericWorkload)
and scheduler-plugins' ``scheduling.x-k8s.io/v1alpha1`` (Coscheduling) — into
``model.pod_groups.PodGroup``. ``ModelError`` names the object and field, as for pods.

kube's API validation already holds for objects an API server served; a snapshot or a
CRD without a schema may hold anything, so every field the scheduler reads is checked.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scheduler.model.parse_common import named_reader, resources_from_list
from scheduler.model.pod_groups import (
    INITIALLY_SCHEDULED,
    GroupApi,
    GroupCondition,
    PodGroup,
    group_key,
)

if TYPE_CHECKING:
    from collections.abc import Mapping

    from scheduler.model.parse_common import Reader

__all__ = ["coscheduling_group_from_raw", "pod_group_from_raw"]

MAX_PRIORITY = 1_000_000_000
"""kube's highest user-definable priority (system classes above it are not for groups)."""


def pod_group_from_raw(raw: object) -> PodGroup:
    """A ``scheduling.k8s.io/v1beta1`` PodGroup."""
    r, meta = named_reader(raw, "PodGroup", namespaced=True)
    assert isinstance(raw, dict)  # named_reader checked it
    spec = r.mapping(raw.get("spec"), "spec")
    policy = r.mapping(spec.get("schedulingPolicy"), "spec.schedulingPolicy")
    gang = r.optional_mapping(policy.get("gang"), "spec.schedulingPolicy.gang")
    basic = r.optional_mapping(policy.get("basic"), "spec.schedulingPolicy.basic")
    if (gang is None) == (basic is None):
        raise r.error("spec.schedulingPolicy", "must hold exactly one of basic or gang")
    min_count = 1
    if gang is not None:
        min_count = r.integer(gang.get("minCount"), "spec.schedulingPolicy.gang.minCount")
        if min_count < 1:
            raise r.error(
                "spec.schedulingPolicy.gang.minCount", f"must be at least 1, got {min_count}"
            )
    priority = r.integer(spec.get("priority"), "spec.priority")
    if priority > MAX_PRIORITY:
        raise r.error("spec.priority", f"must be at most {MAX_PRIORITY}, got {priority}")
    mode = r.mapping(spec.get("disruptionMode"), "spec.disruptionMode")
    namespace = str(meta.get("namespace") or "default")
    name = str(meta["name"])
    return PodGroup(
        key=group_key(GroupApi.KUBE, namespace, name),
        api=GroupApi.KUBE,
        namespace=namespace,
        name=name,
        uid=r.string(meta.get("uid"), "metadata.uid"),
        resource_version=r.string(meta.get("resourceVersion"), "metadata.resourceVersion"),
        generation=r.integer(meta.get("generation"), "metadata.generation"),
        gang=gang is not None,
        min_count=min_count,
        priority=priority,
        preemption_policy=r.string(spec.get("preemptionPolicy"), "spec.preemptionPolicy"),
        disruption_all=r.optional_mapping(mode.get("all"), "spec.disruptionMode.all") is not None,
        condition=_condition(r, r.mapping(raw.get("status"), "status")),
    )


def coscheduling_group_from_raw(raw: object) -> PodGroup:
    """A scheduler-plugins ``scheduling.x-k8s.io/v1alpha1`` PodGroup, as a gang of
    ``minMember`` (Coscheduling has no basic policy)."""
    r, meta = named_reader(raw, "PodGroup.scheduling.x-k8s.io", namespaced=True)
    assert isinstance(raw, dict)
    spec = r.mapping(raw.get("spec"), "spec")
    min_member = r.integer(spec.get("minMember"), "spec.minMember")
    if min_member < 1:
        raise r.error("spec.minMember", f"must be at least 1, got {min_member}")
    timeout = r.optional_integer(spec.get("scheduleTimeoutSeconds"), "spec.scheduleTimeoutSeconds")
    if timeout is not None and timeout < 0:
        raise r.error("spec.scheduleTimeoutSeconds", f"must not be negative, got {timeout}")
    minimum = None
    if spec.get("minResources") is not None:
        amounts = r.resource_list(spec.get("minResources"), "spec.minResources")
        minimum = resources_from_list(amounts, count_pods=False)
    namespace = str(meta.get("namespace") or "default")
    name = str(meta["name"])
    return PodGroup(
        key=group_key(GroupApi.COSCHEDULING, namespace, name),
        api=GroupApi.COSCHEDULING,
        namespace=namespace,
        name=name,
        uid=r.string(meta.get("uid"), "metadata.uid"),
        resource_version=r.string(meta.get("resourceVersion"), "metadata.resourceVersion"),
        generation=r.integer(meta.get("generation"), "metadata.generation"),
        gang=True,
        min_count=min_member,
        priority=0,
        schedule_timeout=float(timeout) if timeout else None,
        min_resources=minimum,
    )


def _condition(r: Reader, status: Mapping[str, object]) -> GroupCondition | None:
    for path, condition in r.objects(status.get("conditions"), "status.conditions"):
        if condition.get("type") != INITIALLY_SCHEDULED:
            continue
        return GroupCondition(
            status=r.string(condition.get("status"), f"{path}.status"),
            reason=r.string(condition.get("reason"), f"{path}.reason"),
            message=r.string(condition.get("message"), f"{path}.message"),
            observed_generation=r.integer(
                condition.get("observedGeneration"), f"{path}.observedGeneration"
            ),
            last_transition_time=r.string(
                condition.get("lastTransitionTime"), f"{path}.lastTransitionTime"
            ),
        )
    return None
