"""Default topology spreading and namespaceSelector on the real API server, as the scheduler's
ServiceAccount (the new watches: namespaces, services, replicationcontrollers, replicasets,
statefulsets; no 403 in its log).

The scheduler scores with NodeResourcesFit ``MostAllocated``, which stacks pods on the fullest
node: pods spread over the nodes only if PodTopologySpread's default constraints apply to
them, so the placements tell whether the Service and ReplicaSet reached the cache. Two
profiles: ``batch-scheduler`` (kube's ``defaultingType: System``: a Deployment's pods get the
built-in constraints and are never batched) and ``batch-scheduler-list`` (``List`` without
``defaultConstraints``, what docs/operations.md tells an admin to set to batch Deployment
pods: no default applies, the pods are batched).
"""

from __future__ import annotations

import time
import uuid
from collections import Counter
from typing import TYPE_CHECKING, Any

import kubernetes
import pytest
import yaml

from tests.cluster.conftest import (
    assert_no_forbidden,
    placements,
    pod,
    start_scheduler,
    wait_for_default_account,
)
from tests.scheduler_process import BATCHING, wait_for

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from controlplane.launcher import ControlPlane
    from tests.scheduler_process import SchedulerProc

SYSTEM, LIST = "batch-scheduler", "batch-scheduler-list"
FIT = {
    "name": "NodeResourcesFit",
    "args": {
        "scoringStrategy": {
            "type": "MostAllocated",
            "resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}],
        }
    },
}
CPU, MEMORY = "4", "16Gi"
"""Per pod: 1/16 of a node, so MostAllocated's score moves with every pod placed."""


def _config(path: Path) -> Path:
    config = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "leaderElection": {"leaderElect": False},
        "profiles": [
            {"schedulerName": SYSTEM, "pluginConfig": [FIT]},
            {
                "schedulerName": LIST,
                "pluginConfig": [
                    FIT,
                    {"name": "PodTopologySpread", "args": {"defaultingType": "List"}},
                ],
            },
        ],
    }
    path.write_text(yaml.safe_dump(config))
    return path


@pytest.fixture(scope="module")
def spreading_scheduler(
    control_plane: ControlPlane, nodes: list[str], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[SchedulerProc]:
    tmp = tmp_path_factory.mktemp("spreading")
    config = _config(tmp / "config.yaml")
    proc = start_scheduler(control_plane, tmp / "scheduler.log", "--config", str(config))
    try:
        yield proc
    finally:
        code = proc.terminate()
    proc.assert_clean_exit(code)
    assert_no_forbidden(proc)


def _template(labels: dict[str, str], scheduler_name: str, **spec: Any) -> dict[str, Any]:
    made = pod("x", cpu=CPU, memory=MEMORY, labels=labels, annotations=BATCHING)
    made["spec"]["schedulerName"] = scheduler_name
    made["spec"].update(spec)
    return {"metadata": {"labels": labels, "annotations": BATCHING}, "spec": made["spec"]}


def _deploy(
    admin_api: kubernetes.client.ApiClient, namespace: str, name: str, replicas: int, profile: str
) -> None:
    """A Service and a Deployment of ``replicas`` pods, both selecting ``app=name``."""
    labels = {"app": name}
    kubernetes.client.CoreV1Api(admin_api).create_namespaced_service(
        namespace,
        {"metadata": {"name": name}, "spec": {"selector": labels, "ports": [{"port": 80}]}},
    )
    # The Service reaches the scheduler through kopf's watch, the pods through the faster
    # pod informer: a pod that overtakes it is signed without default spreading (as kube
    # signs one its listers have not caught up with), so let the Service arrive first.
    time.sleep(2.0)
    kubernetes.client.AppsV1Api(admin_api).create_namespaced_deployment(
        namespace,
        {
            "metadata": {"name": name},
            "spec": {
                "replicas": replicas,
                "selector": {"matchLabels": labels},
                "template": _template(labels, profile),
            },
        },
    )


def _nodes_of(core: kubernetes.client.CoreV1Api, namespace: str, prefix: str, count: int) -> Any:
    """Once ``count`` pods named ``prefix…`` are bound: their node per pod, else None."""
    placed = {k: v for k, v in placements(core, namespace).items() if k.startswith(prefix)}
    if len(placed) == count and all(placed.values()):
        return placed
    return None


def _hints_used(proc: SchedulerProc, profile: str) -> float:
    return proc.metric("scheduler_batch_attempts_total", profile=profile, result="hint_used")


def test_system_defaults_spread_deployment_pods_and_job_pods_still_batch(
    admin_api: kubernetes.client.ApiClient,
    core: kubernetes.client.CoreV1Api,
    spreading_scheduler: SchedulerProc,
    namespace: str,
    nodes: list[str],
) -> None:
    """kube's System defaults: 8 replicas behind a Service land 2 per node (MostAllocated
    alone would stack them), placed by the exact batch (kube's batching refuses them); a
    Job's pods (no Service, no RS) stack on one node through batching."""
    proc = spreading_scheduler
    before = _hints_used(proc, SYSTEM)
    _deploy(admin_api, namespace, "web", 8, SYSTEM)
    placed = wait_for(lambda: _nodes_of(core, namespace, "web-", 8), 60)
    assert placed, placements(core, namespace)
    assert sorted(Counter(placed.values()).values()) == [2, 2, 2, 2], placed
    assert _hints_used(proc, SYSTEM) == before  # not kube's batching: default spreading
    exact = proc.metric("batch_scheduler_exact_batch_total", profile=SYSTEM, outcome="placed")
    assert exact >= 1  # the exact batch placed some, where the full pass would

    kubernetes.client.BatchV1Api(admin_api).create_namespaced_job(
        namespace,
        {
            "metadata": {"name": "crunch"},
            "spec": {
                "parallelism": 6,
                "completions": 6,
                "template": _template({"job": "crunch"}, SYSTEM, restartPolicy="Never"),
            },
        },
    )
    placed = wait_for(lambda: _nodes_of(core, namespace, "crunch-", 6), 60)
    assert placed, placements(core, namespace)
    assert len(set(placed.values())) == 1, placed
    assert _hints_used(proc, SYSTEM) > before
    assert proc.events("default_spreading_unsignable"), "no startup line about defaults"


def test_list_defaulting_without_constraints_batches_deployment_pods(
    admin_api: kubernetes.client.ApiClient,
    core: kubernetes.client.CoreV1Api,
    spreading_scheduler: SchedulerProc,
    namespace: str,
    nodes: list[str],
) -> None:
    """``defaultingType: List`` with no defaultConstraints: the same Deployment and Service,
    no default applies, so its pods are batched and stack (MostAllocated)."""
    proc = spreading_scheduler
    before = _hints_used(proc, LIST)
    _deploy(admin_api, namespace, "api", 4, LIST)
    placed = wait_for(lambda: _nodes_of(core, namespace, "api-", 4), 60)
    assert placed, placements(core, namespace)
    assert len(set(placed.values())) == 1, placed
    assert _hints_used(proc, LIST) > before


def test_pod_affinity_namespace_selector_matches_a_labelled_namespace(
    core: kubernetes.client.CoreV1Api,
    spreading_scheduler: SchedulerProc,
    namespace: str,
    nodes: list[str],
) -> None:
    """A namespace labelled after the scheduler started (a watch event, not the initial
    LIST): pods whose required affinity selects pods of that namespace by namespaceSelector
    join its pod's node."""
    team = f"team-{uuid.uuid4().hex[:6]}"
    other = f"t-{uuid.uuid4().hex[:8]}"
    core.create_namespace({"metadata": {"name": other, "labels": {"team": team}}})
    try:
        wait_for_default_account(core, other)
        anchor = pod("anchor", labels={"app": "anchor"})
        anchor["metadata"]["namespace"] = other
        anchor["spec"]["nodeName"] = nodes[2]  # bound at creation: nobody schedules it
        core.create_namespaced_pod(other, anchor)
        affinity = {
            "podAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [
                    {
                        "labelSelector": {"matchLabels": {"app": "anchor"}},
                        "namespaceSelector": {"matchLabels": {"team": team}},
                        "topologyKey": "kubernetes.io/hostname",
                    }
                ]
            }
        }
        for i in range(3):
            near = pod(f"near-{i}", affinity=affinity)
            near["metadata"]["namespace"] = namespace
            core.create_namespaced_pod(namespace, near)
        placed = wait_for(lambda: _nodes_of(core, namespace, "near-", 3), 60)
        assert placed, placements(core, namespace)
        assert set(placed.values()) == {nodes[2]}, placed
    finally:
        core.delete_namespace(other)
