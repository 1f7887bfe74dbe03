"""Pods made by kube-controller-manager's Deployment and Job controllers are scheduled."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import kubernetes

from tests.scheduler_process import BATCHING, wait_for

if TYPE_CHECKING:
    from tests.scheduler_process import SchedulerProc

LABELS = {"app": "web"}


def _template(labels: dict[str, str], **spec: Any) -> dict[str, Any]:
    return {
        "metadata": {"labels": labels, "annotations": BATCHING},
        "spec": {
            "schedulerName": "batch-scheduler",
            "containers": [
                {
                    "name": "main",
                    "image": "registry.k8s.io/pause:3.10",
                    "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}},
                }
            ],
            **spec,
        },
    }


def _bound(core: kubernetes.client.CoreV1Api, namespace: str, selector: str, count: int) -> bool:
    pods = core.list_namespaced_pod(namespace, label_selector=selector).items
    return len(pods) == count and all(p.spec.node_name for p in pods)


def test_deployment_and_job_pods_are_scheduled(
    admin_api: kubernetes.client.ApiClient,
    core: kubernetes.client.CoreV1Api,
    scheduler: SchedulerProc,
    namespace: str,
    nodes: list[str],
) -> None:
    apps = kubernetes.client.AppsV1Api(admin_api)
    batch = kubernetes.client.BatchV1Api(admin_api)
    apps.create_namespaced_deployment(
        namespace,
        {
            "metadata": {"name": "web"},
            "spec": {
                "replicas": 12,
                "selector": {"matchLabels": LABELS},
                "template": _template(LABELS),
            },
        },
    )
    batch.create_namespaced_job(
        namespace,
        {
            "metadata": {"name": "crunch"},
            "spec": {
                "parallelism": 8,
                "completions": 8,
                "template": _template({"job": "crunch"}, restartPolicy="Never"),
            },
        },
    )
    assert wait_for(lambda: _bound(core, namespace, "app=web", 12), 60)
    assert wait_for(lambda: _bound(core, namespace, "job=crunch", 8), 60)
    pods = core.list_namespaced_pod(namespace).items
    owners = {p.metadata.owner_references[0].kind for p in pods if p.metadata.owner_references}
    assert owners == {"ReplicaSet", "Job"}
    assert {p.spec.node_name for p in pods} <= set(nodes)
