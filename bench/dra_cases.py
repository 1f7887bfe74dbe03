"""Seeded random DRA clusters and workloads for the batching differential (issue 40 item 4).

A case is nodes with one ResourceSlice per node and driver (devices with attributes and a
capacity), DeviceClasses with CEL selectors, claim specs as ResourceClaimTemplates would
give them (ExactCount and All, request selectors, ``matchAttribute``), and steps: bursts
of pods whose claims were generated from a template (the claim as the resource-claim
controller makes it, owned by the pod and named in ``status.resourceClaimStatuses``),
pods with a claim of their own (``resourceClaimName``: never batched), claims another
scheduler allocates, bound pods deleted with their claims (devices given back), a node's
slice published again, and in some cases a network-attached slice (``allNodes``).

Neighbours: :mod:`bench.dra_differential` (replays a case with batching off and on),
``tests/unit/batching/test_dra_batching.py`` (a small sample).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

Raw = dict[str, Any]
NAMESPACE = "dra"
SCHEDULER = "batch-scheduler"
GPU, NIC = "gpu.example.com", "nic.example.com"
MODELS = ("l4", "a100", "h100")
CLASS_SELECTORS: dict[str, list[str]] = {
    "gpu": [f'device.driver == "{GPU}"'],
    "big-gpu": [f'device.driver == "{GPU}"', f'device.attributes["{GPU}"].memory >= 40'],
    "nic": [f'device.driver == "{NIC}"'],
    "fast-nic": [f'device.driver == "{NIC}" && device.attributes["{NIC}"].speed > 10'],
}
REQUEST_SELECTORS = (
    f'device.attributes["{GPU}"].model == "h100"',
    f'device.attributes["{GPU}"].model != "l4"',
    f'device.capacity["{GPU}"].mem.compareTo(quantity("16Gi")) >= 0',
    f'device.attributes["{GPU}"].index < 4',
    f'"{GPU}" in device.attributes && device.attributes["{GPU}"].memory > 8',
)
NIC_SELECTORS = (f'device.attributes["{NIC}"].speed >= 25',)


@dataclass
class Case:
    seed: int
    percentage: int
    nodes: list[Raw]
    classes: list[Raw]
    slices: list[Raw]
    steps: list[tuple[str, Any]] = field(default_factory=list)
    """("pods", [(pod, [claims])]) | ("allocate", claim) | ("free", index of a pod placed
    before, in placement order) | ("slice", a node's GPU slice published again)."""


def _node(i: int, rng: random.Random) -> Raw:
    amounts = {"cpu": str(rng.choice((2, 4, 8))), "memory": "32Gi", "pods": "110"}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": f"node-{i:03d}",
            "labels": {"zone": rng.choice("abc"), "kubernetes.io/hostname": f"node-{i:03d}"},
        },
        "spec": {},
        "status": {"capacity": dict(amounts), "allocatable": dict(amounts)},
    }


def _gpu(i: int, rng: random.Random) -> Raw:
    memory = rng.choice((8, 16, 40, 80))
    return {
        "name": f"gpu-{i}",
        "attributes": {
            "model": {"string": rng.choice(MODELS)},
            "memory": {"int": memory},
            "index": {"int": i},
        },
        "capacity": {"mem": {"value": f"{memory}Gi"}},
    }


def _nic(i: int, rng: random.Random) -> Raw:
    return {"name": f"nic-{i}", "attributes": {"speed": {"int": rng.choice((10, 25, 100))}}}


def _slice(node: str, driver: str, devices: list[Raw], generation: int = 1) -> Raw:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": f"{node}-{driver}"},
        "spec": {
            "driver": driver,
            "nodeName": node,
            "pool": {"name": node, "generation": generation, "resourceSliceCount": 1},
            "devices": devices,
        },
    }


def _shared_slice(rng: random.Random) -> Raw:
    """NICs reachable from every node (``allNodes``): no DRA pod is batched then."""
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": "shared-nics"},
        "spec": {
            "driver": NIC,
            "allNodes": True,
            "pool": {"name": "shared", "generation": 1, "resourceSliceCount": 1},
            "devices": [_nic(100 + i, rng) for i in range(rng.choice((1, 4)))],
        },
    }


def _class(name: str) -> Raw:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceClass",
        "metadata": {"name": name},
        "spec": {"selectors": [{"cel": {"expression": e}} for e in CLASS_SELECTORS[name]]},
    }


def _request(name: str, rng: random.Random) -> Raw:
    cls = rng.choice(("gpu", "gpu", "gpu", "big-gpu", "nic", "fast-nic"))
    exactly: Raw = {"deviceClassName": cls}
    if rng.random() < 0.05:
        exactly["allocationMode"] = "All"
    else:
        exactly["allocationMode"] = "ExactCount"
        exactly["count"] = rng.choice((1, 1, 1, 1, 2, 3))
    pool = REQUEST_SELECTORS if "gpu" in cls else NIC_SELECTORS
    if rng.random() < 0.4:
        exactly["selectors"] = [{"cel": {"expression": rng.choice(pool)}}]
    return {"name": name, "exactly": exactly}


def claim_spec(rng: random.Random) -> Raw:
    """A template's ``spec.spec``: one or two requests, sometimes a matchAttribute."""
    requests = [_request(f"req-{i}", rng) for i in range(rng.choice((1, 1, 2)))]
    devices: Raw = {"requests": requests}
    gpu_requests = [r["name"] for r in requests if "gpu" in r["exactly"]["deviceClassName"]]
    if len(gpu_requests) == 2 and rng.random() < 0.5:
        devices["constraints"] = [
            {"requests": gpu_requests, "matchAttribute": f"{GPU}/model"},
        ]
    return {"devices": devices}


def claim(name: str, spec: Raw, *, owner_uid: str | None = None) -> Raw:
    meta: Raw = {
        "name": name,
        "namespace": NAMESPACE,
        "uid": f"uid-claim-{name}",
        "resourceVersion": "1",
    }
    if owner_uid is not None:
        meta["ownerReferences"] = [
            {"apiVersion": "v1", "kind": "Pod", "name": name, "uid": owner_uid, "controller": True}
        ]
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": meta,
        "spec": spec,
    }


def pod(name: str, entries: list[Raw], statuses: list[Raw], cpu: str | None) -> Raw:
    container: Raw = {"name": "c", "image": "registry.k8s.io/pause:3.10"}
    if cpu is not None:
        container["resources"] = {"requests": {"cpu": cpu}}
    raw: Raw = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": NAMESPACE,
            "uid": f"uid-{name}",
            "resourceVersion": "1",
            "labels": {"app": name.rsplit("-", 1)[0]},
        },
        "spec": {"schedulerName": SCHEDULER, "containers": [container], "resourceClaims": entries},
        "status": {"phase": "Pending"},
    }
    if statuses:
        raw["status"]["resourceClaimStatuses"] = statuses
    return raw


def _workload(
    name: str, specs: list[Raw], count: int, rng: random.Random
) -> list[tuple[Raw, list[Raw]]]:
    """``count`` pods of one template set: their claims made as the controller makes them."""
    chosen = rng.sample(range(len(specs)), rng.choice((1, 1, 2)) if len(specs) > 1 else 1)
    cpu = rng.choice((None, None, "500m", "1"))
    pods = []
    for k in range(count):
        pod_name = f"{name}-{k}"
        entries, statuses, claims = [], [], []
        for e, spec_index in enumerate(chosen):
            entry = f"dev{e}"
            claim_name = f"{pod_name}-{entry}-x{rng.randrange(1000):03d}"
            entries.append({"name": entry, "resourceClaimTemplateName": f"t{spec_index}"})
            statuses.append({"name": entry, "resourceClaimName": claim_name})
            claims.append(claim(claim_name, specs[spec_index], owner_uid=f"uid-{pod_name}"))
        pods.append((pod(pod_name, entries, statuses, cpu), claims))
    return pods


def _own_claim_pod(name: str, specs: list[Raw], rng: random.Random) -> tuple[Raw, list[Raw]]:
    """A pod with a claim of its own name (``resourceClaimName``): never signed."""
    own = claim(f"{name}-own", rng.choice(specs))
    entries = [{"name": "own", "resourceClaimName": own["metadata"]["name"]}]
    return pod(name, entries, [], None), [own]


def _foreign_allocation(i: int, slices: list[Raw], rng: random.Random) -> Raw:
    """A claim another scheduler allocated: one device of a random node's slice, or all."""
    s = rng.choice([s for s in slices if "nodeName" in s["spec"]])
    devices = s["spec"]["devices"]
    cls = "gpu" if s["spec"]["driver"] == GPU else "nic"
    raw = claim(
        f"foreign-{i}",
        {"devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": cls}}]}},
    )
    names = [d["name"] for d in devices] or ["none"]
    # One device, or the whole slice (the node's verdict flips for the pods after it).
    chosen = names if rng.random() < 0.5 else [rng.choice(names)]
    node = s["spec"]["nodeName"]
    driver = s["spec"]["driver"]
    raw["status"] = {
        "allocation": {
            "devices": {
                "results": [
                    {"request": "r", "driver": driver, "pool": node, "device": device}
                    for device in chosen
                ]
            },
            "nodeSelector": {
                "nodeSelectorTerms": [
                    {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}
                ]
            },
        }
    }
    return raw


def case(seed: int, *, max_nodes: int = 40, max_pods: int = 60) -> Case:
    """One seeded case: the cluster, then steps that place at most ``max_pods`` pods."""
    rng = random.Random(seed)
    count = rng.randint(max(1, max_nodes // 4), max_nodes)
    nodes = [_node(i, rng) for i in range(count)]
    slices = []
    for raw in nodes:
        name = raw["metadata"]["name"]
        gpus = rng.choice((0, 1, 2, 4, 8, 8))
        if gpus:
            slices.append(_slice(name, GPU, [_gpu(i, rng) for i in range(gpus)]))
        if rng.random() < 0.5:
            slices.append(_slice(name, NIC, [_nic(i, rng) for i in range(rng.choice((1, 2)))]))
    if rng.random() < 0.15:
        slices.append(_shared_slice(rng))
    classes = [_class(name) for name in CLASS_SELECTORS]
    specs = [claim_spec(rng) for _ in range(rng.randint(1, 3))]
    result = Case(seed, rng.choice((0, 0, 30, 100)), nodes, classes, slices)
    placed = workloads = 0
    while placed < max_pods:
        roll = rng.random()
        if roll < 0.04:
            name = rng.choice(nodes)["metadata"]["name"]
            devices = [_gpu(i, rng) for i in range(rng.choice((0, 2, 8)))]
            result.steps.append(("slice", _slice(name, GPU, devices, generation=2 + placed)))
        elif roll < 0.1 and placed:
            result.steps.append(("free", rng.randrange(placed)))
        elif roll < 0.14 and any("nodeName" in s["spec"] for s in slices):
            result.steps.append(("allocate", _foreign_allocation(placed, slices, rng)))
        elif roll < 0.2:
            result.steps.append(("pods", [_own_claim_pod(f"own{placed}", specs, rng)]))
            placed += 1
        else:
            size = min(max_pods - placed, rng.randint(2, 20))
            result.steps.append(("pods", _workload(f"w{workloads}", specs, size, rng)))
            workloads += 1
            placed += size
    return result
