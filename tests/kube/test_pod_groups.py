"""PodGroups against the emulator: which kinds a run keeps (gate, discovery), the initial
LIST into the cache, and the PodGroupInitiallyScheduled condition written back."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from scheduler.cycle.eventhandlers import EventHandlers
from scheduler.framework.feature_gates import parse_feature_gates
from scheduler.kube.controller.objects import ObjectEvents
from scheduler.kube.controller.operator import default_kinds, watched_kinds
from scheduler.kube.group_status import GroupStatus
from scheduler.kube.kinds import Kind
from scheduler.model.parse_pod_groups import pod_group_from_raw
from scheduler.model.pod_groups import GroupCondition
from tests.harness import scheduler_for
from tests.kube.kube_helpers import FailFirst

if TYPE_CHECKING:
    from scheduler.kube.client import ApiClient
    from scheduler.sim.server import SimServer

GROUPS = "/apis/scheduling.k8s.io/v1beta1/namespaces/default/podgroups"


def _group(name: str, min_count: int = 2) -> dict[str, Any]:
    return {
        "apiVersion": "scheduling.k8s.io/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"schedulingPolicy": {"gang": {"minCount": min_count}}},
    }


async def test_podgroups_are_kept_only_with_the_gate(api: ApiClient) -> None:
    """Without GenericWorkload no PodGroup kind; with it kube's, and Coscheduling's only
    where discovery says its CRD is served (not in the emulator)."""
    off = await watched_kinds(api, parse_feature_gates(None))
    assert off == default_kinds()
    assert Kind.POD_GROUPS not in off
    on = await watched_kinds(api, parse_feature_gates("GenericWorkload=true"))
    assert on == default_kinds() | {Kind.POD_GROUPS}


async def test_a_listed_podgroup_reaches_the_cache(api: ApiClient) -> None:
    created = await api.request("POST", GROUPS, body=_group("train", 3))
    scheduler, _, _ = scheduler_for([])
    events = ObjectEvents(EventHandlers(scheduler), Kind.POD_GROUPS, metrics=scheduler.metrics)
    listed = await api.request("GET", Kind.POD_GROUPS.path)
    for item in listed["items"]:
        events.apply("ADDED", item)
    group = pod_group_from_raw(created)
    cached = scheduler.cluster.pod_groups.pod_group(group.key)
    assert cached is not None
    assert (cached.name, cached.min_count, cached.gang) == ("train", 3, True)


async def test_the_condition_is_patched_into_status_and_retried(
    sim: SimServer, api: ApiClient
) -> None:
    """The condition lands in ``status.conditions`` (merged by type); a 500 is retried; a
    second write with the same status keeps ``lastTransitionTime``."""
    created = await api.request("POST", GROUPS, body=_group("train"))
    group = pod_group_from_raw(created)
    writer = GroupStatus(api)
    faults = FailFirst(sim, "patch", 1)
    unschedulable = GroupCondition("False", "Unschedulable", "0/3 nodes are available", 1)
    writer.pod_group_condition(group, "PodGroupInitiallyScheduled", unschedulable)
    assert await writer.drain(5.0)
    assert faults.injected == 1
    assert writer.written == 1
    read = await api.request("GET", f"{GROUPS}/train")
    (condition,) = read["status"]["conditions"]
    assert condition["type"] == "PodGroupInitiallyScheduled"
    assert (condition["status"], condition["reason"]) == ("False", "Unschedulable")
    assert condition["message"] == "0/3 nodes are available"
    assert condition["observedGeneration"] == 1
    first = condition["lastTransitionTime"]
    again = pod_group_from_raw(read)
    await asyncio.sleep(1.1)  # timestamps have 1 s resolution
    other = GroupCondition("False", "Unschedulable", "0/3 nodes fit", 1)
    writer.pod_group_condition(again, "PodGroupInitiallyScheduled", other)
    assert await writer.drain(5.0)
    read = await api.request("GET", f"{GROUPS}/train")
    (condition,) = read["status"]["conditions"]
    assert condition["message"] == "0/3 nodes fit"
    assert condition["lastTransitionTime"] == first
    await writer.stop()


async def test_a_vanished_podgroup_is_dropped_quietly(api: ApiClient) -> None:
    created = await api.request("POST", GROUPS, body=_group("gone"))
    await api.request("DELETE", f"{GROUPS}/gone")
    writer = GroupStatus(api)
    condition = GroupCondition("True", "Scheduled", "", 1)
    writer.pod_group_condition(pod_group_from_raw(created), "PodGroupInitiallyScheduled", condition)
    assert await writer.drain(5.0)
    assert writer.written == 0
    await writer.stop()
