"""The real ``run`` path against the emulator: the watch's node deletions and assigned-pod
label updates retry the pods they may help at once, not at the 5-minute flush (issue 29)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from scheduler.sim import workload
from tests.scheduler_process import SCHEDULER, SchedulerProc, wait_for

if TYPE_CHECKING:
    import kubernetes

pytestmark = pytest.mark.e2e

NS = "default"
ZONE = "topology.kubernetes.io/zone"
RETRIED_WITHIN = 10.0
"""Seconds: the pod's backoff after one attempt is 1 s; the unschedulable flush is 300 s."""


def _unschedulable(core: kubernetes.client.CoreV1Api, scheduler: SchedulerProc, pod: str) -> None:
    """Until ``pod`` was reported unschedulable and sits in the unschedulable pool."""
    selector = f"involvedObject.name={pod},reason=FailedScheduling"
    assert wait_for(lambda: core.list_namespaced_event(NS, field_selector=selector).items)
    assert wait_for(lambda: scheduler.metric("scheduler_pending_pods", queue="unschedulable") >= 1)


def _node_of(core: kubernetes.client.CoreV1Api, pod: str) -> str | None:
    node: str | None = core.read_namespaced_pod(pod, NS).spec.node_name
    return node


def _assigned(name: str, node: str, labels: dict[str, str]) -> dict[str, Any]:
    (pod,) = workload.make_pods(1, prefix=name, labels=labels)
    pod["metadata"]["name"] = name
    pod["spec"]["nodeName"] = node
    return pod


def test_an_assigned_pods_label_update_retries_the_pod_its_affinity_waits_for(
    core: kubernetes.client.CoreV1Api, scheduler: SchedulerProc
) -> None:
    """Required affinity to an ``app=db`` pod: none exists until a running pod is
    relabelled, and then the waiting pod joins it on its node."""
    core.create_namespaced_pod(NS, _assigned("peer", "node-1", {"app": "web"}))
    term = {
        "labelSelector": {"matchLabels": {"app": "db"}},
        "topologyKey": "kubernetes.io/hostname",
    }
    affinity = {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}
    core.create_namespaced_pod(
        NS,
        workload.make_pods(1, prefix="follower-", scheduler_name=SCHEDULER, affinity=affinity)[0],
    )
    _unschedulable(core, scheduler, "follower-0")
    assert _node_of(core, "follower-0") is None
    core.patch_namespaced_pod("peer", NS, {"metadata": {"labels": {"app": "db"}}})
    assert wait_for(lambda: _node_of(core, "follower-0"), timeout=RETRIED_WITHIN) == "node-1"


def test_a_node_deletion_retries_the_pod_its_topology_spread_waits_for(
    core: kubernetes.client.CoreV1Api, scheduler: SchedulerProc
) -> None:
    """Zone ``b``'s only node is tainted and holds no ``app=spread`` pod, so zone ``a``'s
    two are a skew of 3 > 1; once that node is deleted the pod goes to zone ``a``."""
    for node in (
        *workload.make_nodes(1, prefix="zone-a-", labels={ZONE: "a"}),
        *workload.make_nodes(
            1, prefix="zone-b-", labels={ZONE: "b"}, taints=[{"key": "gpu", "effect": "NoSchedule"}]
        ),
    ):
        core.create_node(node)
    for i in range(2):
        core.create_namespaced_pod(NS, _assigned(f"spread-old-{i}", "zone-a-0", {"app": "spread"}))
    (pod,) = workload.make_pods(
        1, prefix="spread-new-", scheduler_name=SCHEDULER, labels={"app": "spread"}
    )
    pod["spec"]["topologySpreadConstraints"] = [
        {
            "maxSkew": 1,
            "topologyKey": ZONE,
            "whenUnsatisfiable": "DoNotSchedule",
            "labelSelector": {"matchLabels": {"app": "spread"}},
        }
    ]
    core.create_namespaced_pod(NS, pod)
    _unschedulable(core, scheduler, "spread-new-0")
    assert _node_of(core, "spread-new-0") is None
    core.delete_node("zone-b-0")
    assert wait_for(lambda: _node_of(core, "spread-new-0"), timeout=RETRIED_WITHIN) == "zone-a-0"
