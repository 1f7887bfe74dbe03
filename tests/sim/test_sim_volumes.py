"""The emulator's storage: discovery, defaults, the PV controller's binding, claim templates."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import kubernetes

from scheduler.sim.server import SimServer, run_in_thread
from tests.scheduler_process import wait_for

if TYPE_CHECKING:
    from kubernetes.client import CoreV1Api


def _pv(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": {"name": name},
        "spec": {
            "capacity": {"storage": "1Gi"},
            "accessModes": ["ReadWriteOnce"],
            "storageClassName": "local",
            "hostPath": {"path": "/tmp"},
        },
    }


def _pvc(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": name},
        "spec": {
            "accessModes": ["ReadWriteOnce"],
            "storageClassName": "local",
            "resources": {"requests": {"storage": "1Gi"}},
        },
    }


def test_storage_kinds_defaults_and_binding(core: CoreV1Api) -> None:
    storage = kubernetes.client.StorageV1Api(core.api_client)
    made = storage.create_storage_class(
        {
            "apiVersion": "storage.k8s.io/v1",
            "kind": "StorageClass",
            "metadata": {"name": "local"},
            "provisioner": "x",
        }
    )
    assert made.volume_binding_mode == "Immediate"
    core.create_persistent_volume(_pv("pv-1"))
    assert wait_for(lambda: core.read_persistent_volume("pv-1").status.phase == "Available", 5.0)
    core.create_namespaced_persistent_volume_claim("default", _pvc("data"))
    claim = core.read_namespaced_persistent_volume_claim("data", "default")
    assert (claim.status.phase, claim.spec.volume_mode) == ("Pending", "Filesystem")
    # What the scheduler's PreBind writes: the PV's claimRef.
    core.patch_persistent_volume(
        "pv-1",
        {"spec": {"claimRef": {"namespace": "default", "name": "data", "uid": claim.metadata.uid}}},
    )

    def bound() -> bool:
        pvc = core.read_namespaced_persistent_volume_claim("data", "default")
        notes = pvc.metadata.annotations or {}
        return pvc.status.phase == "Bound" and "pv.kubernetes.io/bind-completed" in notes

    assert wait_for(bound, 5.0)
    assert (
        core.read_namespaced_persistent_volume_claim("data", "default").spec.volume_name == "pv-1"
    )
    assert core.read_persistent_volume("pv-1").status.phase == "Bound"
    core.delete_namespaced_persistent_volume_claim("data", "default")
    assert wait_for(lambda: core.read_persistent_volume("pv-1").status.phase == "Released", 5.0)
    assert storage.list_csi_node().items == []


def test_stateful_set_claim_templates() -> None:
    server = SimServer(nodes=1)
    with run_in_thread(server):
        config = kubernetes.client.Configuration(host=server.url)
        with kubernetes.client.ApiClient(config) as api:
            core, apps = kubernetes.client.CoreV1Api(api), kubernetes.client.AppsV1Api(api)
            labels = {"app": "db"}
            apps.create_namespaced_stateful_set(
                "default",
                {
                    "apiVersion": "apps/v1",
                    "kind": "StatefulSet",
                    "metadata": {"name": "db"},
                    "spec": {
                        "replicas": 2,
                        "serviceName": "db",
                        "selector": {"matchLabels": labels},
                        "template": {
                            "metadata": {"labels": labels},
                            "spec": {"containers": [{"name": "c", "image": "pause"}]},
                        },
                        "volumeClaimTemplates": [
                            {"metadata": {"name": "data"}, "spec": _pvc("x")["spec"]}
                        ],
                    },
                },
            )

            def pods() -> list[Any]:
                found = core.list_namespaced_pod("default", label_selector="app=db").items
                return found if len(found) == 2 else []

            made = wait_for(pods, 5.0)
            assert made
            claims = {
                p.metadata.name: p.spec.volumes[0].persistent_volume_claim.claim_name for p in made
            }
            assert claims == {"db-0": "data-db-0", "db-1": "data-db-1"}
            listed = core.list_namespaced_persistent_volume_claim("default").items
            assert sorted(c.metadata.name for c in listed) == ["data-db-0", "data-db-1"]
            assert all(c.metadata.labels == labels for c in listed)
