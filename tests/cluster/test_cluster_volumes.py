"""Pods with volumes through the real ``run`` path against kube-apiserver v1.37, with
kube-controller-manager's PV controller doing the binding.

A StatefulSet (``Parallel``: no kubelet makes a pod Ready here) with a claim template of a
WaitForFirstConsumer class over one local PV per node, the PVs created in another order
than the nodes: VolumeBinding chooses a PV that fits the node, PreBind writes its claimRef
(as our ServiceAccount: RBAC allows exactly that), the PV controller binds the claim, and
then the pod is bound: each replica on the node of its PV.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import kubernetes
import pytest

from scheduler.plugins import names
from tests.cluster.conftest import placements
from tests.scheduler_process import SCHEDULER, wait_for

if TYPE_CHECKING:
    from tests.scheduler_process import SchedulerProc

pytestmark = pytest.mark.skipif(
    "VolumeBinding" not in getattr(names, "IN_TREE", ()),
    reason="the volume plugins are not in the default profile yet",
)

HOST = "kubernetes.io/hostname"
REPLICAS = 3


def _local_pv(name: str, storage_class: str, node: str) -> dict[str, Any]:
    term = {"matchExpressions": [{"key": HOST, "operator": "In", "values": [node]}]}
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": {"name": name},
        "spec": {
            "capacity": {"storage": "10Gi"},
            "accessModes": ["ReadWriteOnce"],
            "storageClassName": storage_class,
            "local": {"path": f"/mnt/{name}"},
            "nodeAffinity": {"required": {"nodeSelectorTerms": [term]}},
        },
    }


def _stateful_set(storage_class: str) -> dict[str, Any]:
    labels = {"app": "db"}
    container = {
        "name": "db",
        "image": "registry.k8s.io/pause:3.10",
        "resources": {"requests": {"cpu": "100m"}},
        "volumeMounts": [{"name": "data", "mountPath": "/data"}],
    }
    return {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": "db"},
        "spec": {
            "replicas": REPLICAS,
            "podManagementPolicy": "Parallel",
            "serviceName": "db",
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {"schedulerName": SCHEDULER, "containers": [container]},
            },
            "volumeClaimTemplates": [
                {
                    "metadata": {"name": "data"},
                    "spec": {
                        "accessModes": ["ReadWriteOnce"],
                        "storageClassName": storage_class,
                        "resources": {"requests": {"storage": "1Gi"}},
                    },
                }
            ],
        },
    }


def test_stateful_set_replicas_land_on_the_nodes_of_their_local_pvs(
    core: kubernetes.client.CoreV1Api,
    scheduler: SchedulerProc,
    namespace: str,
    nodes: list[str],
) -> None:
    storage = kubernetes.client.StorageV1Api(core.api_client)
    storage_class = f"local-{namespace}"
    storage.create_storage_class(
        {
            "apiVersion": "storage.k8s.io/v1",
            "kind": "StorageClass",
            "metadata": {"name": storage_class},
            "provisioner": "kubernetes.io/no-provisioner",
            "volumeBindingMode": "WaitForFirstConsumer",
        }
    )
    used = nodes[:REPLICAS]
    pv_node = {f"{namespace}-pv-{i}": node for i, node in enumerate(used)}
    for name in sorted(pv_node, reverse=True):
        core.create_persistent_volume(_local_pv(name, storage_class, pv_node[name]))
    kubernetes.client.AppsV1Api(core.api_client).create_namespaced_stateful_set(
        namespace, _stateful_set(storage_class)
    )

    def all_placed() -> dict[str, str | None] | None:
        seen = placements(core, namespace)
        return seen if len(seen) == REPLICAS and all(seen.values()) else None

    seen = wait_for(all_placed, 60)
    assert seen, (placements(core, namespace), scheduler.stderr()[-3000:])
    volumes: dict[str, str] = {}
    for i in range(REPLICAS):
        claim = core.read_namespaced_persistent_volume_claim(f"data-db-{i}", namespace)
        assert claim.status.phase == "Bound"
        volumes[f"db-{i}"] = claim.spec.volume_name
        assert seen[f"db-{i}"] == pv_node[claim.spec.volume_name]
    assert sorted(v for v in seen.values() if v) == sorted(used)
    print("placements (pod: node, pv):", {p: (seen[p], volumes[p]) for p in sorted(volumes)})
    for name in pv_node:
        core.delete_persistent_volume(name)
    storage.delete_storage_class(storage_class)
