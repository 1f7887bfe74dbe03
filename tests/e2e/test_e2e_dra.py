"""Pods with DRA resource claims through the real ``run`` path against the emulator.

A fake driver's ResourceSlices (one per node, with 0, 1 and 2 GPUs), a DeviceClass, and pods
taking GPUs from a ResourceClaimTemplate: the emulator's resource-claim controller makes each
pod's claim and names it in the pod's status, DynamicResources allocates devices on the node
it picks, PreBind writes the claim's finalizer, ``status.allocation`` and
``status.reservedFor``, and the pod is bound there. A pod asking for more than any node has
is reported with kube's message, a claim deallocated later lets a waiting pod in, and a
fresh scheduler process (as after a restart) gives no allocated device twice.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import kubernetes
import pytest

from tests.scheduler_process import SCHEDULER, SchedulerProc, wait_for

if TYPE_CHECKING:
    from pathlib import Path

pytestmark = pytest.mark.e2e

NS = "default"
GROUP, VERSION = "resource.k8s.io", "v1"
DRIVER = "gpu.example.com"
FINALIZER = "resource.kubernetes.io/delete-protection"


def _custom(core: kubernetes.client.CoreV1Api) -> kubernetes.client.CustomObjectsApi:
    return kubernetes.client.CustomObjectsApi(core.api_client)


def _slice(node: str, gpus: int) -> dict[str, Any]:
    return {
        "apiVersion": f"{GROUP}/{VERSION}",
        "kind": "ResourceSlice",
        "metadata": {"name": f"{node}-gpus"},
        "spec": {
            "driver": DRIVER,
            "nodeName": node,
            "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
            "devices": [
                {"name": f"gpu-{i}", "attributes": {"model": {"string": "a100"}}}
                for i in range(gpus)
            ],
        },
    }


def _template(name: str, count: int) -> dict[str, Any]:
    request = {"name": "gpu", "exactly": {"deviceClassName": "gpu", "count": count}}
    return {
        "apiVersion": f"{GROUP}/{VERSION}",
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": name, "namespace": NS},
        "spec": {"spec": {"devices": {"requests": [request]}}},
    }


def _pod(name: str, template: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": NS},
        "spec": {
            "schedulerName": SCHEDULER,
            "containers": [
                {
                    "name": "c",
                    "image": "registry.k8s.io/pause:3.10",
                    "resources": {"requests": {"cpu": "100m"}, "claims": [{"name": "gpus"}]},
                }
            ],
            "resourceClaims": [{"name": "gpus", "resourceClaimTemplateName": template}],
        },
    }


@pytest.fixture(scope="module")
def devices(core: kubernetes.client.CoreV1Api) -> None:
    """Class ``gpu`` (the driver's devices), slices node-0: 0, node-1: 1, node-2: 2 GPUs, and
    templates ``one-gpu`` and ``two-gpus``."""
    custom = _custom(core)
    device_class = {
        "apiVersion": f"{GROUP}/{VERSION}",
        "kind": "DeviceClass",
        "metadata": {"name": "gpu"},
        "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}]},
    }
    custom.create_cluster_custom_object(GROUP, VERSION, "deviceclasses", device_class)
    for i, gpus in enumerate((0, 1, 2)):
        custom.create_cluster_custom_object(
            GROUP, VERSION, "resourceslices", _slice(f"node-{i}", gpus)
        )
    for name, count in (("one-gpu", 1), ("two-gpus", 2)):
        custom.create_namespaced_custom_object(
            GROUP, VERSION, NS, "resourceclaimtemplates", _template(name, count)
        )


def _claim_of(core: kubernetes.client.CoreV1Api, pod: str) -> dict[str, Any]:
    statuses = core.read_namespaced_pod(pod, NS).status.resource_claim_statuses or []
    name = statuses[0].resource_claim_name
    claim: dict[str, Any] = _custom(core).get_namespaced_custom_object(
        GROUP, VERSION, NS, "resourceclaims", name
    )
    return claim


def _node_of(core: kubernetes.client.CoreV1Api, pod: str) -> str | None:
    node: str | None = core.read_namespaced_pod(pod, NS).spec.node_name
    return node


@pytest.mark.usefixtures("devices")
def test_a_pod_gets_gpus_from_a_template_and_its_claim_is_written_back(
    core: kubernetes.client.CoreV1Api, scheduler: SchedulerProc
) -> None:
    """Two GPUs exist together only on node-2: the pod lands there, its claim allocated with
    node-2's devices, reserved for it, protected by kube's finalizer."""
    core.create_namespaced_pod(NS, _pod("trainer", "two-gpus"))
    assert wait_for(lambda: _node_of(core, "trainer") is not None, 20), scheduler.stderr()
    assert _node_of(core, "trainer") == "node-2"
    claim = _claim_of(core, "trainer")
    pod = core.read_namespaced_pod("trainer", NS)
    assert claim["metadata"]["ownerReferences"][0]["uid"] == pod.metadata.uid
    assert FINALIZER in claim["metadata"]["finalizers"]
    allocation = claim["status"]["allocation"]
    assert allocation["devices"]["results"] == [
        {"request": "gpu", "driver": DRIVER, "pool": "node-2", "device": "gpu-0"},
        {"request": "gpu", "driver": DRIVER, "pool": "node-2", "device": "gpu-1"},
    ]
    assert allocation["nodeSelector"] == {
        "nodeSelectorTerms": [
            {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["node-2"]}]}
        ]
    }
    assert allocation["allocationTimestamp"]
    assert claim["status"]["reservedFor"] == [
        {"resource": "pods", "name": "trainer", "uid": pod.metadata.uid}
    ]


@pytest.mark.usefixtures("devices")
def test_the_last_gpu_goes_to_one_pod_and_the_next_waits_with_kubes_message(
    core: kubernetes.client.CoreV1Api, scheduler: SchedulerProc
) -> None:
    """node-1's one GPU is the last free one (node-2's are taken above): one pod gets it, the
    next is unschedulable with kube's text, until the first pod's claim is deallocated."""
    core.create_namespaced_pod(NS, _pod("first", "one-gpu"))
    assert wait_for(lambda: _node_of(core, "first") is not None, 20), scheduler.stderr()
    assert _node_of(core, "first") == "node-1"
    core.create_namespaced_pod(NS, _pod("second", "one-gpu"))

    def message() -> str | None:
        for c in core.read_namespaced_pod("second", NS).status.conditions or []:
            if c.type == "PodScheduled" and c.status == "False":
                return str(c.message)
        return None

    assert wait_for(lambda: message() is not None, 20), scheduler.stderr()
    assert message() == (
        "0/3 nodes are available: 3 cannot allocate all claims. preemption: 0/3 nodes are "
        "available: 3 Preemption is not helpful for scheduling."
    )
    # The first pod goes (the emulator's controller takes it out of reservedFor, its claim
    # is collected with it): the devices are free and the waiting pod gets node-1's GPU.
    core.delete_namespaced_pod("first", NS)
    assert wait_for(lambda: _node_of(core, "second") is not None, 30), scheduler.stderr()
    assert _node_of(core, "second") == "node-1"
    assert (
        _claim_of(core, "second")["status"]["allocation"]["devices"]["results"][0]["device"]
        == "gpu-0"
    )


@pytest.mark.usefixtures("devices")
def test_a_fresh_scheduler_respects_claims_allocated_before_it_started(
    core: kubernetes.client.CoreV1Api,
    scheduler: SchedulerProc,
    kubeconfig: Path,
    tmp_path: Path,
) -> None:
    """Another scheduler process (another name: as after a restart, its cache starts from
    the LIST) sees every GPU taken by the claims above and allocates none of them twice."""
    assert wait_for(lambda: _node_of(core, "second") is not None, 30)
    fresh = SchedulerProc(kubeconfig, tmp_path / "fresh.log", "--scheduler-name", "fresh")
    try:
        fresh.wait_ready()
        body = _pod("late", "one-gpu")
        body["spec"]["schedulerName"] = "fresh"
        core.create_namespaced_pod(NS, body)

        def message() -> str | None:
            for c in core.read_namespaced_pod("late", NS).status.conditions or []:
                if c.type == "PodScheduled" and c.status == "False":
                    return str(c.message)
            return None

        assert wait_for(lambda: message() is not None, 20), fresh.stderr()
        assert message() is not None
        assert str(message()).startswith("0/3 nodes are available: 3 cannot allocate all claims.")
    finally:
        code = fresh.terminate()
    assert code == 0, fresh.stderr()
