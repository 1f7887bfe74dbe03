"""PodGroups against the emulator: which kinds a run keeps (gate, discovery), the initial
LIST into the cache, and the PodGroupInitiallyScheduled condition written back."""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from scheduler.cycle.eventhandlers import EventHandlers
from scheduler.framework.feature_gates import parse_feature_gates
from scheduler.kube.client import MERGE_PATCH
from scheduler.kube.controller.operator import Controller, default_kinds, watched_kinds
from scheduler.kube.controller.settings import ControllerOptions
from scheduler.kube.group_status import GroupStatus
from scheduler.kube.kinds import Kind
from scheduler.model.parse_pod_groups import pod_group_from_raw
from scheduler.model.pod_groups import GroupCondition
from tests.harness import scheduler_for
from tests.kube.kube_helpers import FailFirst

if TYPE_CHECKING:
    from collections.abc import Callable

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


async def test_the_podgroup_informer_lists_and_watches(api: ApiClient) -> None:
    """A PodGroup listed before the start, one created later, minCount lowered, deleted: the
    cache follows, through the typed informer the controller builds with the gate."""
    await api.request("POST", GROUPS, body=_group("early", 3))
    scheduler, _, _ = scheduler_for([])
    controller = Controller(
        EventHandlers(scheduler),
        client=api,
        metrics=scheduler.metrics,
        reporter=scheduler.reporter,
        options=ControllerOptions(watch_server_timeout=1),
        kinds=default_kinds() | {Kind.POD_GROUPS},
    )
    assert Kind.POD_GROUPS not in controller.kopf_kinds
    reflector = controller.reflectors[Kind.POD_GROUPS]
    await controller.sync.initial()
    groups = scheduler.cluster.pod_groups

    def min_count(name: str) -> int | None:
        found = [g.min_count for g in groups if g.name == name]
        return found[0] if found else None

    assert min_count("early") == 3
    task = asyncio.create_task(reflector.run())
    try:
        await api.request("POST", GROUPS, body=_group("later", 4))
        await _until(lambda: min_count("later") == 4)
        lowered = {"spec": {"schedulingPolicy": {"gang": {"minCount": 2}}}}
        await api.request("PATCH", f"{GROUPS}/later", body=lowered, content_type=MERGE_PATCH)
        await _until(lambda: min_count("later") == 2)
        await api.request("DELETE", f"{GROUPS}/early")
        await _until(lambda: min_count("early") is None)
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


async def _until(predicate: Callable[[], bool]) -> None:
    """Poll ``predicate`` (the emulator runs in another thread)."""
    for _ in range(500):
        if predicate():
            return
        await asyncio.sleep(0.02)
    raise AssertionError("not within 10 s")


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


async def test_only_what_changed_since_the_known_condition_is_patched(
    sim: SimServer, api: ApiClient
) -> None:
    """kube's two-way diff: against the condition the cycle knew, only the changed fields
    go (no lastTransitionTime while the status stays); a field left out keeps the API's
    value, so a write judged against an older copy leaves the rest as it is."""
    created = await api.request("POST", GROUPS, body=_group("diff"))
    writer = GroupStatus(api)
    scheduled = GroupCondition("True", "Scheduled", "", 1)
    writer.pod_group_condition(pod_group_from_raw(created), "PodGroupInitiallyScheduled", scheduled)
    assert await writer.drain(5.0)
    older = GroupCondition("False", "Unschedulable", "minCount (3) cannot be satisfied", 1)
    stale = replace(pod_group_from_raw(created), condition=older)
    newer = GroupCondition("False", "Unschedulable", "pod group is unschedulable", 1)
    writer.pod_group_condition(stale, "PodGroupInitiallyScheduled", newer)
    assert await writer.drain(5.0)
    read = await api.request("GET", f"{GROUPS}/diff")
    (condition,) = read["status"]["conditions"]
    fields = ("status", "reason", "message")
    assert tuple(condition[f] for f in fields) == (
        "True",
        "Scheduled",
        "pod group is unschedulable",
    )
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
