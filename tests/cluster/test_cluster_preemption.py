"""Preemption against the real kube-apiserver, as our ServiceAccount under our RBAC: low-priority
pods fill two nodes of the test's own, a high-priority pod evicts exactly one of them and is
bound to the node it was nominated to; a low pod created right after it stays pending. A
PodDisruptionBudget (watched, its status written by kube-controller-manager) over one node's
pods sends the preemption to the other node."""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING, Any

import kubernetes
import pytest

from scheduler.sim import workload
from tests.scheduler_process import SCHEDULER, SchedulerProc, wait_for

if TYPE_CHECKING:
    from collections.abc import Iterator

KEY = "batch-scheduler.io/preemption-test"


@pytest.fixture
def fenced(core: kubernetes.client.CoreV1Api, namespace: str) -> Iterator[str]:
    """Two 4-cpu nodes only this test's pods tolerate and select (the session's shared nodes
    are far too big to fill)."""
    made = workload.make_nodes(
        2,
        prefix=f"{namespace}-n",
        cpu="4",
        memory="16Gi",
        labels={KEY: namespace},
        taints=[{"key": KEY, "value": namespace, "effect": "NoSchedule"}],
    )
    for node in made:
        core.create_node(node)
    yield namespace
    for node in made:
        core.delete_node(node["metadata"]["name"])


@pytest.fixture
def classes(admin_api: kubernetes.client.ApiClient) -> Iterator[tuple[str, str]]:
    """A low (0) and a high (1000) PriorityClass: Priority admission refuses a bare
    ``spec.priority``, so pods name a class."""
    scheduling = kubernetes.client.SchedulingV1Api(admin_api)
    suffix = uuid.uuid4().hex[:6]
    names = (f"preempt-low-{suffix}", f"preempt-high-{suffix}")
    for name, value in zip(names, (0, 1000), strict=True):
        scheduling.create_priority_class(
            {
                "apiVersion": "scheduling.k8s.io/v1",
                "kind": "PriorityClass",
                "metadata": {"name": name},
                "value": value,
            }
        )
    yield names
    for name in names:
        scheduling.delete_priority_class(name)


def _pod(name: str, namespace: str, priority_class: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace, "labels": {"name": name}},
        "spec": {
            "schedulerName": SCHEDULER,
            "priorityClassName": priority_class,
            # No kubelets here: a victim must go at once, not wait for one to confirm.
            "terminationGracePeriodSeconds": 0,
            "nodeSelector": {KEY: namespace},
            "tolerations": [{"key": KEY, "operator": "Equal", "value": namespace}],
            "containers": [
                {
                    "name": "c",
                    "image": "registry.k8s.io/pause:3.10",
                    "resources": {"requests": {"cpu": "2", "memory": "64Mi"}},
                }
            ],
        },
    }


def _pods(core: kubernetes.client.CoreV1Api, namespace: str) -> dict[str, Any]:
    return {p.metadata.name: p for p in core.list_namespaced_pod(namespace).items}


def _events(core: kubernetes.client.CoreV1Api, namespace: str, pod: str, reason: str) -> list[Any]:
    selector = f"involvedObject.name={pod},reason={reason}"
    return list(core.list_namespaced_event(namespace, field_selector=selector).items)


def test_high_priority_pod_preempts_one_victim_and_binds_there(
    core: kubernetes.client.CoreV1Api,
    scheduler: SchedulerProc,
    fenced: str,
    classes: tuple[str, str],
) -> None:
    """Exactly one low pod is evicted (DisruptionTarget, then deleted, a Preempted Event),
    the high pod is nominated to and bound on that pod's node, the late low pod waits."""
    namespace = fenced
    low, high = classes
    for i in range(4):
        core.create_namespaced_pod(namespace, _pod(f"low-{i}", namespace, low))

    def filled() -> bool:
        pods = _pods(core, namespace)
        return len(pods) == 4 and all(p.spec.node_name for p in pods.values())

    assert wait_for(filled, 30), scheduler.stderr()[-3000:]
    placed = {name: p.spec.node_name for name, p in _pods(core, namespace).items()}

    core.create_namespaced_pod(namespace, _pod("high", namespace, high))
    core.create_namespaced_pod(namespace, _pod("thief", namespace, low))

    def high_bound() -> str | None:
        pod = _pods(core, namespace).get("high")
        return pod.spec.node_name if pod is not None else None

    node = wait_for(high_bound, 60)
    assert node, scheduler.stderr()[-3000:]
    pods = _pods(core, namespace)
    gone = sorted(set(placed) - set(pods))
    assert len(gone) == 1, gone
    (victim,) = gone
    assert placed[victim] == node
    assert pods["thief"].spec.node_name is None

    preempted = wait_for(lambda: _events(core, namespace, victim, "Preempted"), 30)
    assert preempted, "no Preempted event on the victim"
    uid = pods["high"].metadata.uid
    assert preempted[0].message == f"Preempted by pod {uid} on node {node}"
    failed = _events(core, namespace, "high", "FailedScheduling")
    assert any(
        f"preemption: found a potential placement for pod on node {node}, preempting 1 victims"
        in e.message
        for e in failed
    ), [e.message for e in failed]


def test_a_disruption_budget_sends_the_preemption_elsewhere(
    admin_api: kubernetes.client.ApiClient,
    core: kubernetes.client.CoreV1Api,
    scheduler: SchedulerProc,
    fenced: str,
    classes: tuple[str, str],
) -> None:
    """The two pods of one node are under a budget that allows no disruption (no kubelet
    makes them Ready): the high pod's victim is on the other node."""
    namespace = fenced
    low, high = classes
    for i in range(4):
        core.create_namespaced_pod(namespace, _pod(f"low-{i}", namespace, low))

    def filled() -> bool:
        pods = _pods(core, namespace)
        return len(pods) == 4 and all(p.spec.node_name for p in pods.values())

    assert wait_for(filled, 30), scheduler.stderr()[-3000:]
    placed = {name: p.spec.node_name for name, p in _pods(core, namespace).items()}
    guarded_node = placed["low-0"]
    guarded = sorted(name for name, node in placed.items() if node == guarded_node)
    policy = kubernetes.client.PolicyV1Api(admin_api)
    policy.create_namespaced_pod_disruption_budget(
        namespace,
        {
            "apiVersion": "policy/v1",
            "kind": "PodDisruptionBudget",
            "metadata": {"name": "guard"},
            "spec": {
                "minAvailable": len(guarded),
                "selector": {
                    "matchExpressions": [{"key": "name", "operator": "In", "values": guarded}]
                },
            },
        },
    )

    def counted() -> bool:
        status = policy.read_namespaced_pod_disruption_budget("guard", namespace).status
        return status is not None and status.expected_pods == len(guarded)

    assert wait_for(counted, 30), "the disruption controller wrote no status"
    core.create_namespaced_pod(namespace, _pod("high", namespace, high))

    def high_bound() -> str | None:
        pod = _pods(core, namespace).get("high")
        return pod.spec.node_name if pod is not None else None

    node = wait_for(high_bound, 60)
    assert node, scheduler.stderr()[-3000:]
    assert node != guarded_node
    gone = sorted(set(placed) - set(_pods(core, namespace)))
    assert len(gone) == 1, gone
    assert placed[gone[0]] == node
