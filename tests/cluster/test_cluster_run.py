"""The real ``run`` path against kube-apiserver v1.37, as the scheduler's ServiceAccount."""

from __future__ import annotations

import shutil
import time
from typing import TYPE_CHECKING, Any

import pytest

from tests.cluster.conftest import placements, pod
from tests.scheduler_process import BATCHING, wait_for
from tests.sim.kubectl_helpers import kubectl

if TYPE_CHECKING:
    import kubernetes

    from controlplane.launcher import ControlPlane
    from tests.scheduler_process import SchedulerProc


def _create(core: kubernetes.client.CoreV1Api, namespace: str, pods: list[dict[str, Any]]) -> None:
    for body in pods:
        body["metadata"]["namespace"] = namespace
        core.create_namespaced_pod(namespace, body)


def test_ours_bound_annotated_batched_others_untouched(
    core: kubernetes.client.CoreV1Api, scheduler: SchedulerProc, namespace: str, nodes: list[str]
) -> None:
    hinted_before = scheduler.metric("scheduler_batch_attempts_total", result="hint_used")
    plain = [pod(f"plain-{i}") for i in range(5)]
    batched = [pod(f"batched-{i}", annotations=BATCHING) for i in range(20)]
    other = pod("other-0")
    other["spec"]["schedulerName"] = "default-scheduler"
    fixed = pod("fixed-0")
    fixed["spec"]["nodeName"] = nodes[0]  # placed by its author: not ours to touch
    _create(core, namespace, [*plain, *batched, other, fixed])

    def ours_bound() -> bool:
        seen = placements(core, namespace)
        return all(seen.get(p["metadata"]["name"]) for p in plain + batched)

    assert wait_for(ours_bound, 30), placements(core, namespace)
    time.sleep(1.0)  # a stray bind of the other scheduler's pod would land within this
    seen = placements(core, namespace)
    assert seen["other-0"] is None
    assert seen["fixed-0"] == nodes[0]
    assert set(seen.values()) - {None} <= set(nodes)
    assert scheduler.metric("scheduler_batch_attempts_total", result="hint_used") > hinted_before
    events = core.list_namespaced_event(namespace).items
    scheduled = {e.involved_object.name for e in events if e.reason == "Scheduled"}
    assert scheduled == {p["metadata"]["name"] for p in plain + batched}


def test_impossible_pod_reported_as_kube_stores_it(
    core: kubernetes.client.CoreV1Api,
    scheduler: SchedulerProc,
    namespace: str,
    control_plane: ControlPlane,
    nodes: list[str],
) -> None:
    _create(core, namespace, [pod("huge", cpu="1000")])

    def condition() -> Any:
        conditions = core.read_namespaced_pod("huge", namespace).status.conditions or []
        return next((c for c in conditions if c.type == "PodScheduled"), None)

    found = wait_for(condition, 30)
    assert found is not None, "no PodScheduled condition"
    assert (found.status, found.reason) == ("False", "Unschedulable")
    # kube's PostFilter (DefaultPreemption) appends why preemption cannot help either: the
    # request exceeds every node's allocatable, so NodeResourcesFit's status is unresolvable.
    n = len(nodes)
    assert found.message == (
        f"0/{n} nodes are available: {n} Insufficient cpu. preemption: 0/{n} nodes are"
        f" available: {n} Preemption is not helpful for scheduling."
    )
    assert found.last_transition_time is not None

    def failed() -> list[Any]:
        events = core.list_namespaced_event(namespace, field_selector="involvedObject.name=huge")
        return [e for e in events.items if e.reason == "FailedScheduling"]

    events = wait_for(failed, 15)
    assert events, "no FailedScheduling event"
    assert events[0].type == "Warning"
    assert events[0].message == found.message
    if shutil.which("kubectl") is None:
        pytest.skip("kubectl not installed")
    described = kubectl(control_plane.admin_kubeconfig, "describe", "pod", "huge", "-n", namespace)
    assert "FailedScheduling" in described
    assert "Insufficient cpu" in described
    assert "PodScheduled" in described
