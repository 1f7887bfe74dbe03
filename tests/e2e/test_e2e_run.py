"""The real ``run`` path against the emulator: binds, events, conditions, wakeups, metrics."""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from typing import TYPE_CHECKING, Any

import kubernetes
import pytest

from scheduler.sim import workload
from scheduler.sim.discovery import PODS
from tests.scheduler_process import BATCHING, SCHEDULER, SchedulerProc, wait_for

if TYPE_CHECKING:
    from pathlib import Path

    from scheduler.sim.server import SimServer

pytestmark = pytest.mark.e2e

NS = "default"


def _create(core: kubernetes.client.CoreV1Api, objects: list[dict[str, Any]]) -> None:
    for obj in objects:
        if obj["kind"] == "Node":
            core.create_node(obj)
        else:
            core.create_namespaced_pod(NS, obj)


def _nodes_of(core: kubernetes.client.CoreV1Api, prefix: str) -> dict[str, str | None]:
    pods = core.list_namespaced_pod(NS).items
    return {p.metadata.name: p.spec.node_name for p in pods if p.metadata.name.startswith(prefix)}


def _all_bound(core: kubernetes.client.CoreV1Api, prefix: str, count: int) -> bool:
    nodes = _nodes_of(core, prefix)
    return len(nodes) == count and all(nodes.values())


def _events(core: kubernetes.client.CoreV1Api, pod: str, reason: str) -> list[Any]:
    selector = f"involvedObject.name={pod},reason={reason}"
    return list(core.list_namespaced_event(NS, field_selector=selector).items)


def _condition(core: kubernetes.client.CoreV1Api, pod: str) -> Any:
    conditions = core.read_namespaced_pod(pod, NS).status.conditions or []
    return next((c for c in conditions if c.type == "PodScheduled"), None)


def test_binds_ours_and_leaves_other_schedulers_pods_alone(
    core: kubernetes.client.CoreV1Api, scheduler: SchedulerProc, kubeconfig: Path
) -> None:
    """Pods naming us get bound (kubectl sees them bound); default-scheduler pods stay pending."""
    ours = workload.make_pods(6, prefix="ours-", scheduler_name=SCHEDULER)
    others = workload.make_pods(2, prefix="others-")  # schedulerName: default-scheduler
    _create(core, ours + others)
    assert wait_for(lambda: _all_bound(core, "ours-", 6)), _nodes_of(core, "ours-")
    time.sleep(0.5)  # a stray bind of the others would land within this
    assert _nodes_of(core, "others-") == {"others-0": None, "others-1": None}
    assert scheduler.metric("batch_scheduler_binds_total", result="success") >= 6
    if shutil.which("kubectl") is None:
        pytest.skip("kubectl not installed")
    out = subprocess.run(
        ["kubectl", "--kubeconfig", str(kubeconfig), "get", "pods", "-n", NS, "-o", "json"],
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    ).stdout
    seen = {p["metadata"]["name"]: p["spec"].get("nodeName") for p in json.loads(out)["items"]}
    assert all(seen[f"ours-{i}"] for i in range(6)), seen
    assert seen["others-0"] is None


def test_unschedulable_pod_is_reported_then_scheduled_on_a_new_node(
    core: kubernetes.client.CoreV1Api, scheduler: SchedulerProc
) -> None:
    """FailedScheduling + PodScheduled=False with kube's message; a fitting node then takes it."""
    _create(core, workload.make_pods(1, prefix="huge-", cpu="16", scheduler_name=SCHEDULER))
    events = wait_for(lambda: _events(core, "huge-0", "FailedScheduling"))
    assert events, "no FailedScheduling event"
    assert "nodes are available" in events[0].message
    assert "Insufficient cpu" in events[0].message
    condition = wait_for(lambda: _condition(core, "huge-0"))
    assert condition is not None
    assert (condition.status, condition.reason) == ("False", "Unschedulable")
    assert core.read_namespaced_pod("huge-0", NS).spec.node_name is None

    _create(core, workload.make_nodes(1, prefix="big-", cpu="32"))
    assert wait_for(lambda: _nodes_of(core, "huge-")["huge-0"]) == "big-0"
    scheduled = wait_for(lambda: _events(core, "huge-0", "Scheduled"))
    assert scheduled, "no Scheduled event"
    assert scheduled[0].message == "Successfully assigned default/huge-0 to big-0"


def test_deleted_pending_pod_is_dropped(
    core: kubernetes.client.CoreV1Api, scheduler: SchedulerProc
) -> None:
    """A pending pod deleted while unschedulable leaves the queue; a later node never gets it."""
    pods = workload.make_pods(
        1, prefix="doomed-", scheduler_name=SCHEDULER, node_selector={"e2e": "doomed"}
    )
    _create(core, pods)
    assert wait_for(lambda: _events(core, "doomed-0", "FailedScheduling"))
    unschedulable = "scheduler_pending_pods"
    assert wait_for(lambda: scheduler.metric(unschedulable, queue="unschedulable") >= 1)
    before = scheduler.metric(unschedulable, queue="unschedulable")
    core.delete_namespaced_pod("doomed-0", NS)
    assert wait_for(lambda: scheduler.metric(unschedulable, queue="unschedulable") == before - 1)

    attempts = scheduler.metric("scheduler_schedule_attempts_total")
    _create(core, workload.make_nodes(1, prefix="doomed-node-", labels={"e2e": "doomed"}))
    time.sleep(1.5)  # NODE_ADD would have retried the pod at once had it still been queued
    assert scheduler.metric("scheduler_schedule_attempts_total") == attempts


def test_batching_metrics_move_for_annotated_pods_only(
    core: kubernetes.client.CoreV1Api, scheduler: SchedulerProc
) -> None:
    """Annotated pods use batch hints (hint_used grows); unannotated ones never do."""
    hint_used = {"result": "hint_used"}
    before = scheduler.metric("scheduler_batch_attempts_total", **hint_used)
    _create(
        core,
        workload.make_pods(8, prefix="batched-", scheduler_name=SCHEDULER, annotations=BATCHING),
    )
    assert wait_for(lambda: _all_bound(core, "batched-", 8))
    after_annotated = scheduler.metric("scheduler_batch_attempts_total", **hint_used)
    assert after_annotated > before

    _create(core, workload.make_pods(8, prefix="plain-", scheduler_name=SCHEDULER))
    assert wait_for(lambda: _all_bound(core, "plain-", 8))
    assert scheduler.metric("scheduler_batch_attempts_total", **hint_used) == after_annotated


def test_bad_pod_is_reported_with_its_field_and_others_still_scheduled(
    sim: SimServer, core: kubernetes.client.CoreV1Api, scheduler: SchedulerProc
) -> None:
    """A malformed quantity yields FailedScheduling naming the field; the scheduler goes on."""
    bad = workload.make_pods(1, prefix="bad-", cpu="lots", scheduler_name=SCHEDULER)
    good = workload.make_pods(2, prefix="fine-", scheduler_name=SCHEDULER)
    # kube-apiserver refuses such a pod (400); the emulator stores it only with this fault on,
    # so that the scheduler's own defence is what is tested.
    sim.faults.config.accept_invalid = True
    try:
        _create(core, bad)
    finally:
        sim.faults.config.accept_invalid = False
    _create(core, good)
    events = wait_for(lambda: _events(core, "bad-0", "FailedScheduling"))
    assert events, "no FailedScheduling for the bad pod"
    assert "spec.containers[0].resources.requests.cpu" in events[0].message
    assert wait_for(lambda: _all_bound(core, "fine-", 2))
    assert scheduler.metric("batch_scheduler_bad_objects_total", kind="Pod") == 1
    assert core.read_namespaced_pod("bad-0", NS).spec.node_name is None


def test_pod_deleted_during_a_watch_gap_leaves_the_cache_at_the_relist(
    sim: SimServer, core: kubernetes.client.CoreV1Api, scheduler: SchedulerProc
) -> None:
    """A delete hidden by a 410 re-list (no DELETED event) leaves the cache at that re-list
    (the fixture's safety-net LIST every 2 s would too, but it would count a repair)."""
    _create(core, workload.make_pods(1, prefix="ghost-", scheduler_name=SCHEDULER))
    assert wait_for(lambda: _all_bound(core, "ghost-", 1))
    cached = "batch_scheduler_cache_pods"
    assert wait_for(lambda: scheduler.metric(cached) == _assigned_count(core))
    before = scheduler.metric(cached)

    def vanish() -> None:
        # Atomically on the emulator's loop: no watcher sees the delete, and resuming from
        # any earlier version yields 410 Gone, so kopf re-lists instead.
        sim.store.close_watchers()
        sim.store.delete(PODS, NS, "ghost-0")
        sim.store.compact()

    sim.run_sync(vanish)
    assert wait_for(lambda: scheduler.metric(cached) == before - 1, timeout=10)
    assert "reconcile_removed" in scheduler.log_events()
    assert scheduler.metric("batch_scheduler_cache_repairs_total") == 0


def _assigned_count(core: kubernetes.client.CoreV1Api) -> int:
    return sum(1 for p in core.list_pod_for_all_namespaces().items if p.spec.node_name)
