"""DRA side by side: the same GPU pods placed by kube-scheduler v1.37.2 and by ours on the
real API server, kube-controller-manager generating each pod's claim from its template.

One control plane of the module's own runs kube-scheduler (default profile: DynamicResources
on) beside ``batch-scheduler run``. The test publishes a fake driver's ResourceSlices for two
identical groups of five nodes, ``kube-dra-*`` and ``ours-dra-*`` (a pool per node: no device
is shared between the groups): 4 A100s, 2 H100s, 1 A100, none, 1 T4. Each scheduler's pods carry
a nodeSelector for their group and are created one at a time, the same pod in both groups
together; each pod's outcome — the node, the claim's ``status.allocation`` (devices, node
selector, ``allocationTimestamp``), ``reservedFor``, the finalizer, or the
``PodScheduled=False`` message — must be kube's, node and pool names compared without their
group prefix:

1. a prioritized list (H100, else A100): the H100 node, by DynamicResources' Score;
2. four GPUs: the node that has four;
3. two GPUs: none has two left (one H100, one A100, one T4): kube's message;
4. one A100: the last one;
5. one H100: the last one.

Then a claim shared by two pods (``resourceClaimName``): the first pod allocates it, the
second follows it to its node, both in ``reservedFor``.
"""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING, Any

import kubernetes
import pytest

from controlplane.launcher import ControlPlane
from controlplane.processes import missing_binaries
from scheduler.sim import workload
from tests.cluster.conftest import REQUIRE, assert_no_forbidden, start_scheduler
from tests.scheduler_process import SCHEDULER, wait_for

if TYPE_CHECKING:
    from collections.abc import Iterator

    from tests.scheduler_process import SchedulerProc

GROUP, VERSION = "resource.k8s.io", "v1"
DRIVER = "gpu.example.com"
FINALIZER = "resource.kubernetes.io/delete-protection"
POOL_LABEL = "example.com/pool"
SIDES = {"kube": "default-scheduler", "ours": SCHEDULER}
GPUS = (("a100", 4), ("h100", 2), ("a100", 1), ("", 0), ("t4", 1))
"""Per node of a group: model and count of its GPUs."""


def _model(model: str) -> dict[str, Any]:
    return {"cel": {"expression": f'device.attributes["{DRIVER}"].model == "{model}"'}}


TEMPLATES: dict[str, list[dict[str, Any]]] = {
    "prefer-h100": [
        {
            "name": "gpu",
            "firstAvailable": [
                {"name": "h100", "deviceClassName": "gpu", "selectors": [_model("h100")]},
                {"name": "a100", "deviceClassName": "gpu", "selectors": [_model("a100")]},
            ],
        }
    ],
    "four": [{"name": "gpu", "exactly": {"deviceClassName": "gpu", "count": 4}}],
    "two": [{"name": "gpu", "exactly": {"deviceClassName": "gpu", "count": 2}}],
    "one-a100": [
        {"name": "gpu", "exactly": {"deviceClassName": "gpu", "selectors": [_model("a100")]}}
    ],
    "one-h100": [
        {"name": "gpu", "exactly": {"deviceClassName": "gpu", "selectors": [_model("h100")]}}
    ],
}
STEPS = ("prefer-h100", "four", "two", "one-a100", "one-h100")
SHARED = {
    "devices": {
        "requests": [
            {"name": "gpu", "exactly": {"deviceClassName": "gpu", "selectors": [_model("t4")]}}
        ]
    }
}
"""The spec of the claim two pods share."""


@pytest.fixture(scope="module")
def cp(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ControlPlane]:
    reason = missing_binaries()
    if reason:
        if os.environ.get(REQUIRE):
            pytest.fail(f"cluster tier required ({REQUIRE}) but {reason}")
        pytest.skip(f"cluster tier skipped: {reason}")
    workdir = tmp_path_factory.mktemp("dra")
    with ControlPlane.start(workdir / "cp", kube_scheduler=True) as plane:
        yield plane


@pytest.fixture(scope="module")
def api(cp: ControlPlane) -> Iterator[kubernetes.client.ApiClient]:
    client = kubernetes.config.new_client_from_config(config_file=str(cp.admin_kubeconfig))
    with client:
        yield client


def _slice(node: str, model: str, count: int) -> dict[str, Any]:
    devices = [
        {
            "name": f"gpu-{i}",
            "attributes": {"model": {"string": model}},
            "capacity": {"memory": {"value": "80Gi" if model == "h100" else "40Gi"}},
        }
        for i in range(count)
    ]
    return {
        "apiVersion": f"{GROUP}/{VERSION}",
        "kind": "ResourceSlice",
        "metadata": {"name": f"{node}-{DRIVER}"},
        "spec": {
            "driver": DRIVER,
            "nodeName": node,
            "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
            "devices": devices,
        },
    }


@pytest.fixture(scope="module")
def cluster(cp: ControlPlane, api: kubernetes.client.ApiClient) -> None:
    """Both groups' nodes and slices, the DeviceClass, a namespace per side with the
    templates."""
    core = kubernetes.client.CoreV1Api(api)
    custom = kubernetes.client.CustomObjectsApi(api)
    custom.create_cluster_custom_object(
        GROUP,
        VERSION,
        "deviceclasses",
        {
            "apiVersion": f"{GROUP}/{VERSION}",
            "kind": "DeviceClass",
            "metadata": {"name": "gpu"},
            "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}]},
        },
    )
    for side in SIDES:
        nodes = workload.make_nodes(
            len(GPUS), prefix=f"{side}-dra-", cpu="8", memory="64Gi", labels={POOL_LABEL: side}
        )
        for node, (model, count) in zip(nodes, GPUS, strict=True):
            core.create_node(node)
            if count:
                slice_ = _slice(node["metadata"]["name"], model, count)
                custom.create_cluster_custom_object(GROUP, VERSION, "resourceslices", slice_)
        core.create_namespace({"metadata": {"name": side}})
        _wait_for_account(core, side)
        for name, requests in TEMPLATES.items():
            template = {
                "apiVersion": f"{GROUP}/{VERSION}",
                "kind": "ResourceClaimTemplate",
                "metadata": {"name": name},
                "spec": {"spec": {"devices": {"requests": requests}}},
            }
            custom.create_namespaced_custom_object(
                GROUP, VERSION, side, "resourceclaimtemplates", template
            )


def _wait_for_account(core: kubernetes.client.CoreV1Api, namespace: str) -> None:
    def made() -> bool:
        try:
            core.read_namespaced_service_account("default", namespace)
        except kubernetes.client.ApiException as exc:
            if exc.status == 404:
                return False
            raise
        return True

    assert wait_for(made, 30), f"no default ServiceAccount in {namespace}"


@pytest.fixture(scope="module")
def ours(
    cp: ControlPlane, cluster: None, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[SchedulerProc]:
    proc = start_scheduler(cp, tmp_path_factory.mktemp("logs") / "scheduler.log")
    try:
        yield proc
    finally:
        code = proc.terminate()
    proc.assert_clean_exit(code)
    assert_no_forbidden(proc)


def _pod(name: str, side: str, template: str = "", claim: str = "") -> dict[str, Any]:
    source = {"resourceClaimName": claim} if claim else {"resourceClaimTemplateName": template}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {
            "schedulerName": SIDES[side],
            "nodeSelector": {POOL_LABEL: side},
            "containers": [
                {
                    "name": "c",
                    "image": "registry.k8s.io/pause:3.10",
                    "resources": {"requests": {"cpu": "100m"}, "claims": [{"name": "gpus"}]},
                }
            ],
            "resourceClaims": [{"name": "gpus", **source}],
        },
    }


def _local(text: str, side: str) -> str:
    return text.replace(f"{side}-dra-", "dra-")


def _outcome(api: kubernetes.client.ApiClient, side: str, name: str) -> dict[str, Any] | None:
    """What a scheduler made of the pod, group prefixes taken out; None while undecided."""
    core = kubernetes.client.CoreV1Api(api)
    pod = core.read_namespaced_pod(name, side)
    if not pod.spec.node_name:
        for condition in pod.status.conditions or []:
            if condition.type == "PodScheduled" and condition.status == "False":
                return {"unschedulable": _local(condition.message or "", side)}
        return None
    claim_name = (
        pod.spec.resource_claims[0].resource_claim_name
        or pod.status.resource_claim_statuses[0].resource_claim_name
    )
    claim = kubernetes.client.CustomObjectsApi(api).get_namespaced_custom_object(
        GROUP, VERSION, side, "resourceclaims", claim_name
    )
    status = claim.get("status") or {}
    allocation = dict(status.get("allocation") or {})
    stamped = bool(allocation.pop("allocationTimestamp", None))
    reserved = status.get("reservedFor") or []
    return {
        "node": _local(pod.spec.node_name, side),
        "allocation": json.loads(_local(json.dumps(allocation), side)),
        "allocation_timestamp": stamped,
        "reserved_for": [{k: v for k, v in r.items() if k != "uid"} for r in reserved],
        "reserved_for_the_pod": pod.metadata.uid in [r.get("uid") for r in reserved],
        "finalizer": FINALIZER in (claim["metadata"].get("finalizers") or []),
        "owners": [
            ref["uid"] == pod.metadata.uid for ref in claim["metadata"].get("ownerReferences") or []
        ],
    }


def _place(api: kubernetes.client.ApiClient, ours: SchedulerProc, pods: dict[str, Any]) -> Any:
    """Create the pod of each side (``pods``: side → body) and wait until both are decided;
    the two outcomes."""
    core = kubernetes.client.CoreV1Api(api)
    name = next(iter(pods.values()))["metadata"]["name"]
    for side, body in pods.items():
        core.create_namespaced_pod(side, body)
    outcomes: dict[str, Any] = {}

    def decided() -> bool:
        for side in SIDES:
            if outcomes.get(side) is None:
                outcomes[side] = _outcome(api, side, name)
        return all(outcomes.get(side) is not None for side in SIDES)

    assert wait_for(decided, 60), (name, outcomes, ours.stderr()[-3000:])
    return outcomes["kube"], outcomes["ours"]


@pytest.mark.usefixtures("cluster")
def test_gpu_pods_land_and_claims_are_written_as_kube_scheduler_does(
    api: kubernetes.client.ApiClient, ours: SchedulerProc
) -> None:
    """Every step's pod: kube's node, devices and claim write-back, or kube's message."""
    seen: dict[str, dict[str, Any]] = {}
    for step in STEPS:
        kube, mine = _place(api, ours, {side: _pod(f"p-{step}", side, step) for side in SIDES})
        assert mine == kube, step
        seen[step] = mine
    # The run is worth asserting on: the prioritized list chose by score, one pod waits.
    assert seen["prefer-h100"]["node"] == "dra-1"
    assert seen["prefer-h100"]["allocation"]["devices"]["results"][0]["request"] == "gpu/h100"
    assert seen["four"]["node"] == "dra-0"
    assert seen["two"]["unschedulable"].startswith("0/10 nodes are available: 5 cannot allocate")
    assert seen["one-a100"]["node"] == "dra-2"
    assert seen["one-h100"]["node"] == "dra-1"
    assert all(
        o["allocation_timestamp"] and o["reserved_for_the_pod"] and o["finalizer"] and o["owners"]
        for step, o in seen.items()
        if step != "two"
    )


@pytest.mark.usefixtures("cluster")
def test_a_shared_claim_is_allocated_once_and_reserved_for_both_pods(
    api: kubernetes.client.ApiClient, ours: SchedulerProc
) -> None:
    """The first pod allocates the claim on the T4 node; the second goes where the claim's
    node selector says, and is added to ``reservedFor``, as with kube."""
    custom = kubernetes.client.CustomObjectsApi(api)
    for side in SIDES:
        body = {"apiVersion": f"{GROUP}/{VERSION}", "kind": "ResourceClaim"}
        body |= {"metadata": {"name": "shared"}, "spec": SHARED}
        custom.create_namespaced_custom_object(GROUP, VERSION, side, "resourceclaims", body)
    first = _place(api, ours, {side: _pod("s-first", side, claim="shared") for side in SIDES})
    second = _place(api, ours, {side: _pod("s-second", side, claim="shared") for side in SIDES})
    assert first[1] == first[0]
    assert second[1] == second[0]
    assert first[1]["node"] == second[1]["node"] == "dra-4"
    assert second[1]["reserved_for"] == [
        {"name": "s-first", "resource": "pods"},
        {"name": "s-second", "resource": "pods"},
    ]
    assert second[1]["owners"] == []  # made by the test, not from a template


@pytest.mark.usefixtures("cluster")
def test_a_pod_rejected_before_dynamic_resources_gets_kubes_message(
    api: kubernetes.client.ApiClient, ours: SchedulerProc
) -> None:
    """A PreFilter before DynamicResources' rejects the pod (its PVC does not exist): kube's
    DynamicResources PostFilter then finds no state of its own and ends PostFilter with
    "not found" before DefaultPreemption; ours does the same, message for message."""
    pods = {}
    for side in SIDES:
        body = _pod("no-pvc", side, "one-h100")
        del body["spec"]["resourceClaims"]
        body["spec"]["containers"][0]["resources"].pop("claims")
        body["spec"]["volumes"] = [{"name": "v", "persistentVolumeClaim": {"claimName": "nowhere"}}]
        pods[side] = body
    kube, mine = _place(api, ours, pods)
    assert mine == kube
    assert mine["unschedulable"].endswith(". not found")
