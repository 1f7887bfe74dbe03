"""Pods with volumes through the real ``run`` path against the emulator.

A StatefulSet with a ``volumeClaimTemplates`` entry of a WaitForFirstConsumer class over
three local PVs (one per node, listed in another order than the nodes): each replica gets
its own claim, VolumeBinding picks the PV that fits a node, PreBind writes its claimRef,
the emulator's PV controller binds the claim, and only then is the pod bound: each replica
on the node of its PV. A pod whose claim is missing is reported with kube's message.
"""

from __future__ import annotations

from typing import Any

import kubernetes
import pytest

from scheduler.plugins import names
from tests.scheduler_process import SCHEDULER, SchedulerProc, wait_for

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(
        "VolumeBinding" not in getattr(names, "IN_TREE", ()),
        reason="the volume plugins are not in the default profile yet",
    ),
]

NS = "default"
HOST = "kubernetes.io/hostname"


@pytest.fixture(scope="module")
def storage(core: kubernetes.client.CoreV1Api) -> None:
    """Class ``local`` (WaitForFirstConsumer, no provisioner) and PVs ``local-2..0``."""
    kubernetes.client.StorageV1Api(core.api_client).create_storage_class(
        {
            "apiVersion": "storage.k8s.io/v1",
            "kind": "StorageClass",
            "metadata": {"name": "local"},
            "provisioner": "kubernetes.io/no-provisioner",
            "volumeBindingMode": "WaitForFirstConsumer",
        }
    )
    for i in (2, 1, 0):
        core.create_persistent_volume(
            {
                "apiVersion": "v1",
                "kind": "PersistentVolume",
                "metadata": {"name": f"local-{i}"},
                "spec": {
                    "capacity": {"storage": "10Gi"},
                    "accessModes": ["ReadWriteOnce"],
                    "storageClassName": "local",
                    "local": {"path": f"/mnt/disk-{i}"},
                    "nodeAffinity": {
                        "required": {
                            "nodeSelectorTerms": [
                                {
                                    "matchExpressions": [
                                        {"key": HOST, "operator": "In", "values": [f"node-{i}"]}
                                    ]
                                }
                            ]
                        }
                    },
                },
            }
        )


def _stateful_set() -> dict[str, Any]:
    labels = {"app": "db"}
    return {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": "db", "namespace": NS},
        "spec": {
            "replicas": 3,
            "serviceName": "db",
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {
                    "schedulerName": SCHEDULER,
                    "containers": [
                        {
                            "name": "db",
                            "image": "registry.k8s.io/pause:3.10",
                            "resources": {"requests": {"cpu": "100m"}},
                            "volumeMounts": [{"name": "data", "mountPath": "/data"}],
                        }
                    ],
                },
            },
            "volumeClaimTemplates": [
                {
                    "metadata": {"name": "data"},
                    "spec": {
                        "accessModes": ["ReadWriteOnce"],
                        "storageClassName": "local",
                        "resources": {"requests": {"storage": "1Gi"}},
                    },
                }
            ],
        },
    }


@pytest.mark.usefixtures("storage")
def test_each_replica_lands_on_the_node_of_its_local_pv(
    core: kubernetes.client.CoreV1Api, scheduler: SchedulerProc
) -> None:
    apps = kubernetes.client.AppsV1Api(core.api_client)
    apps.create_namespaced_stateful_set(NS, _stateful_set())

    def placed() -> dict[str, str] | None:
        pods = core.list_namespaced_pod(NS, label_selector="app=db").items
        if len(pods) != 3 or not all(p.spec.node_name for p in pods):
            return None
        return {p.metadata.name: p.spec.node_name for p in pods}

    placements = wait_for(placed, timeout=30.0)
    assert placements, scheduler.stderr()[-3000:]
    for i in range(3):
        claim = core.read_namespaced_persistent_volume_claim(f"data-db-{i}", NS)
        assert claim.status.phase == "Bound"
        pv = core.read_persistent_volume(claim.spec.volume_name)
        wanted = pv.spec.node_affinity.required.node_selector_terms[0].match_expressions[0]
        assert placements[f"db-{i}"] == wanted.values[0]
    assert sorted(placements.values()) == ["node-0", "node-1", "node-2"]


def test_missing_claim_is_reported(
    core: kubernetes.client.CoreV1Api, scheduler: SchedulerProc
) -> None:
    core.create_namespaced_pod(
        NS,
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "orphan", "namespace": NS},
            "spec": {
                "schedulerName": SCHEDULER,
                "containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10"}],
                "volumes": [{"name": "v", "persistentVolumeClaim": {"claimName": "nowhere"}}],
            },
        },
    )

    def reported() -> str:
        events = core.list_namespaced_event(
            NS, field_selector="involvedObject.name=orphan,reason=FailedScheduling"
        ).items
        return events[0].message if events else ""

    message = wait_for(reported, timeout=15.0)
    assert 'persistentvolumeclaim "nowhere" not found' in message
