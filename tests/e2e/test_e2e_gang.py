"""``run --feature-gates GenericWorkload=true`` against the emulator: PodGroups gang-schedule
all or nothing, their PodGroupInitiallyScheduled condition and the members' events carry
kube's text, and pods waiting for their PodGroup are placed once it exists.

The emulator has 3 nodes of 4 CPU. Each test uses its own names; the module shares one
scheduler (as ``run`` serves a cluster)."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

import kubernetes
import pytest

from tests.builders import make_pod, make_pod_group
from tests.scheduler_process import SchedulerProc, wait_for

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from scheduler.sim.server import SimServer

pytestmark = pytest.mark.e2e

GROUP, VERSION, PLURAL = "scheduling.k8s.io", "v1beta1", "podgroups"


@pytest.fixture(scope="module")
def gang_scheduler(
    kubeconfig: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[SchedulerProc]:
    logs = tmp_path_factory.mktemp("logs") / "scheduler.log"
    proc = SchedulerProc(kubeconfig, logs, "--feature-gates", "GenericWorkload=true")
    try:
        proc.wait_ready()
        yield proc
    finally:
        code = proc.terminate()
    assert code == 0, proc.stderr()
    assert "Traceback" not in proc.stderr()


@pytest.fixture(scope="module")
def groups(sim: SimServer) -> Iterator[kubernetes.client.CustomObjectsApi]:
    with kubernetes.client.ApiClient(kubernetes.client.Configuration(host=sim.url)) as api:
        yield kubernetes.client.CustomObjectsApi(api)


def _create_group(api: kubernetes.client.CustomObjectsApi, name: str, min_count: int) -> None:
    body = make_pod_group(name, min_count=min_count)
    for field in ("uid", "resourceVersion", "generation"):
        del body["metadata"][field]
    api.create_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, body)


def _condition(api: kubernetes.client.CustomObjectsApi, name: str) -> dict[str, Any] | None:
    group = api.get_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, name)
    for condition in group.get("status", {}).get("conditions", []):
        if condition["type"] == "PodGroupInitiallyScheduled":
            return dict(condition)
    return None


def _create_members(core: kubernetes.client.CoreV1Api, group: str, n: int, cpu: str) -> None:
    for i in range(n):
        pod = make_pod(f"{group}-{i}", cpu=cpu, pod_group=group)
        del pod["metadata"]["uid"], pod["metadata"]["resourceVersion"]
        core.create_namespaced_pod("default", pod)


def _bound(core: kubernetes.client.CoreV1Api, group: str) -> int:
    pods = core.list_namespaced_pod("default").items
    return sum(1 for p in pods if p.metadata.name.startswith(f"{group}-") and p.spec.node_name)


def _events(core: kubernetes.client.CoreV1Api, pod: str, reason: str) -> list[str]:
    return [
        e.message
        for e in core.list_namespaced_event("default").items
        if e.involved_object.name == pod and e.reason == reason
    ]


def test_a_gang_that_fits_is_bound_whole_and_marked_scheduled(
    core: kubernetes.client.CoreV1Api,
    groups: kubernetes.client.CustomObjectsApi,
    gang_scheduler: SchedulerProc,
) -> None:
    _create_group(groups, "fits", 3)
    _create_members(core, "fits", 3, "1")
    assert wait_for(lambda: _bound(core, "fits") == 3 or None, timeout=20.0)
    condition = wait_for(lambda: _condition(groups, "fits"), timeout=10.0)
    assert (condition["status"], condition["reason"]) == ("True", "Scheduled")
    placed = [r for r in gang_scheduler.records() if r.get("event") == "group_placed"]
    assert any("fits" in str(r.get("group")) and r.get("placed") == 3 for r in placed), placed


def test_pods_wait_for_their_podgroup_then_bind(
    core: kubernetes.client.CoreV1Api,
    groups: kubernetes.client.CustomObjectsApi,
    gang_scheduler: SchedulerProc,
) -> None:
    """PreEnqueue holds members whose PodGroup does not exist; its creation releases them."""
    _create_members(core, "late", 2, "500m")
    time.sleep(1.0)  # the scheduler has seen them (its watch is well under a second behind)
    assert _bound(core, "late") == 0
    _create_group(groups, "late", 2)
    assert wait_for(lambda: _bound(core, "late") == 2 or None, timeout=20.0)


def test_a_gang_larger_than_the_cluster_binds_nothing_and_leaves_room(
    core: kubernetes.client.CoreV1Api,
    groups: kubernetes.client.CustomObjectsApi,
    gang_scheduler: SchedulerProc,
) -> None:
    """Four 3-CPU members on three 4-CPU nodes (a little used already): no member is bound,
    the condition says Unschedulable, each member's event gives kube's reasons; a plain pod
    created after it binds."""
    _create_group(groups, "huge", 4)
    _create_members(core, "huge", 4, "3")
    condition = wait_for(lambda: _condition(groups, "huge"), timeout=20.0)
    assert (condition["status"], condition["reason"]) == ("False", "Unschedulable")
    assert _bound(core, "huge") == 0
    messages = wait_for(lambda: _events(core, "huge-0", "FailedScheduling") or None)
    # kube's text: the group's error, then the algorithm's early exit, then PodGroupPostFilter
    early_exit = "pod group is unschedulable, minCount (4) cannot be satisfied: "
    assert all(message.startswith(early_exit) for message in messages), messages
    assert messages[0].endswith(
        ", pod group preemption: No preemption victims found for incoming preemptor"
    )
    single = make_pod("single-after-huge", cpu="1")
    del single["metadata"]["uid"], single["metadata"]["resourceVersion"]
    core.create_namespaced_pod("default", single)
    assert wait_for(
        lambda: core.read_namespaced_pod("single-after-huge", "default").spec.node_name,
        timeout=15.0,
    )
    assert _bound(core, "huge") == 0
