"""Preemption through the real ``run`` path against the emulator: low-priority pods fill the
nodes, a high-priority pod arrives, exactly one victim is evicted and the preemptor binds to
the node it was nominated to; a lower pod arriving meanwhile does not take the room."""

from __future__ import annotations

from typing import Any

import kubernetes
import pytest

from tests.scheduler_process import SCHEDULER, SchedulerProc, wait_for

pytestmark = pytest.mark.e2e

NS = "default"


@pytest.fixture(scope="module")
def classes(core: kubernetes.client.CoreV1Api) -> None:
    """PriorityClasses ``e2e-low`` (0) and ``e2e-high`` (1000): admission sets priorities."""
    scheduling = kubernetes.client.SchedulingV1Api(core.api_client)
    for name, value in (("e2e-low", 0), ("e2e-high", 1000)):
        scheduling.create_priority_class(
            {
                "apiVersion": "scheduling.k8s.io/v1",
                "kind": "PriorityClass",
                "metadata": {"name": name},
                "value": value,
            }
        )


def _pod(name: str, priority_class: str, cpu: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": NS, "labels": {"test": "preemption"}},
        "spec": {
            "schedulerName": SCHEDULER,
            "priorityClassName": priority_class,
            "terminationGracePeriodSeconds": 0,
            "containers": [
                {
                    "name": "c",
                    "image": "registry.k8s.io/pause:3.10",
                    "resources": {"requests": {"cpu": cpu}},
                }
            ],
        },
    }


def _pods(core: kubernetes.client.CoreV1Api) -> dict[str, Any]:
    listed = core.list_namespaced_pod(NS, label_selector="test=preemption").items
    return {p.metadata.name: p for p in listed}


def _events(core: kubernetes.client.CoreV1Api, pod: str, reason: str) -> list[Any]:
    selector = f"involvedObject.name={pod},reason={reason}"
    return list(core.list_namespaced_event(NS, field_selector=selector).items)


@pytest.mark.usefixtures("classes")
def test_high_priority_pod_preempts_one_victim_and_binds_there(
    core: kubernetes.client.CoreV1Api, scheduler: SchedulerProc
) -> None:
    """3 nodes × 4 cpu full of 2-cpu low pods; a 2-cpu high pod evicts exactly one of them
    and binds to that pod's node, its nominated node; a low pod created right after it
    stays pending (the room is reserved, and it may preempt nobody)."""
    for i in range(6):
        core.create_namespaced_pod(NS, _pod(f"low-{i}", "e2e-low", "2"))
    assert wait_for(
        lambda: all(p.spec.node_name for p in _pods(core).values()) and len(_pods(core)) == 6
    )
    placed = {name: p.spec.node_name for name, p in _pods(core).items()}

    core.create_namespaced_pod(NS, _pod("high", "e2e-high", "2"))
    core.create_namespaced_pod(NS, _pod("thief", "e2e-low", "2"))

    def high_bound() -> str | None:
        high = _pods(core).get("high")
        return high.spec.node_name if high is not None else None

    node = wait_for(high_bound, timeout=30)
    assert node, scheduler.stderr()[-3000:]
    pods = _pods(core)
    gone = sorted(set(placed) - set(pods))
    assert len(gone) == 1, gone
    (victim,) = gone
    assert placed[victim] == node
    assert pods["high"].status.nominated_node_name in (node, None)
    assert pods["thief"].spec.node_name is None

    preempted = wait_for(lambda: _events(core, victim, "Preempted"))
    assert preempted, "no Preempted event on the victim"
    assert preempted[0].message == f"Preempted by pod {pods['high'].metadata.uid} on node {node}"
    failed = _events(core, "high", "FailedScheduling")
    assert any(
        f"preemption: found a potential placement for pod on node {node}, preempting 1 victims"
        in e.message
        for e in failed
    ), [e.message for e in failed]
    thief = wait_for(lambda: _events(core, "thief", "FailedScheduling"))
    assert thief, "the thief was never reported"
    assert "No preemption victims found for incoming pod" in thief[-1].message
    assert scheduler.metric("scheduler_preemption_attempts_total") >= 2
    print(
        "preemption:",
        {"victim": victim, "victim_node": placed[victim], "high_bound_to": node},
        "| high:",
        next(e.message for e in failed if "preemption:" in e.message),
        "| thief:",
        thief[-1].message,
    )
