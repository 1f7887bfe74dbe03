"""Synthetic clusters and workloads as raw API dicts, and a bulk creator over HTTP.

The default node mirrors kube-scheduler's scheduler_perf node (4 CPU, 32Gi, 110 pods),
so numbers measured here compare with upstream's. Used by the demo, the benchmarks and
the tests; every function returns fresh dicts the caller may change.
"""

from __future__ import annotations

import asyncio
import copy
from typing import TYPE_CHECKING, Any

import aiohttp

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence

ZONE_LABEL = "topology.kubernetes.io/zone"


def make_nodes(
    count: int,
    *,
    prefix: str = "node-",
    cpu: str = "4",
    memory: str = "32Gi",
    pods: str = "110",
    labels: Mapping[str, str] | None = None,
    zones: Sequence[str] = (),
    taints: Sequence[Mapping[str, Any]] = (),
    unschedulable: bool = False,
) -> list[dict[str, Any]]:
    """``count`` Ready nodes named ``prefix0..``; zones are assigned round-robin."""
    nodes = []
    for i in range(count):
        name = f"{prefix}{i}"
        node_labels = {
            "kubernetes.io/hostname": name,
            "kubernetes.io/os": "linux",
            **(labels or {}),
        }
        if zones:
            node_labels[ZONE_LABEL] = zones[i % len(zones)]
        capacity = {"cpu": cpu, "memory": memory, "pods": pods, "ephemeral-storage": "100Gi"}
        spec: dict[str, Any] = {}
        if taints:
            spec["taints"] = [dict(t) for t in taints]
        if unschedulable:
            spec["unschedulable"] = True
        nodes.append(
            {
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": {"name": name, "labels": node_labels},
                "spec": spec,
                "status": {
                    "capacity": capacity,
                    "allocatable": dict(capacity),
                    "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady"}],
                    "nodeInfo": _node_info(i),
                    "phase": "Running",
                },
            }
        )
    return nodes


def _node_info(i: int) -> dict[str, str]:
    # every field is required by the official client's (pydantic) NodeSystemInfo model
    ident = f"{i:032x}"
    return {
        "architecture": "amd64",
        "bootID": ident,
        "containerRuntimeVersion": "sim://1.0",
        "kernelVersion": "sim",
        "kubeProxyVersion": "",
        "kubeletVersion": "v1.32.0-sim",
        "machineID": ident,
        "operatingSystem": "linux",
        "osImage": "sim",
        "systemUUID": ident,
    }


def make_pods(
    count: int,
    *,
    prefix: str = "pod-",
    namespace: str = "default",
    cpu: str | None = "100m",
    memory: str | None = "500Mi",
    scheduler_name: str = "default-scheduler",
    labels: Mapping[str, str] | None = None,
    annotations: Mapping[str, str] | None = None,
    host_port: int | None = None,
    affinity: Mapping[str, Any] | None = None,
    node_selector: Mapping[str, str] | None = None,
    tolerations: Sequence[Mapping[str, Any]] = (),
    priority: int | None = None,
    start: int = 0,
) -> list[dict[str, Any]]:
    """``count`` pending pods ``prefix{start}..`` with one container each."""
    requests = {k: v for k, v in (("cpu", cpu), ("memory", memory)) if v is not None}
    container: dict[str, Any] = {
        "name": "main",
        "image": "registry.k8s.io/pause:3.10",
        "resources": {"requests": requests} if requests else {},
    }
    if host_port is not None:
        container["ports"] = [
            {"containerPort": host_port, "hostPort": host_port, "protocol": "TCP"}
        ]
    spec: dict[str, Any] = {"schedulerName": scheduler_name, "containers": [container]}
    if affinity:
        spec["affinity"] = copy.deepcopy(dict(affinity))
    if node_selector:
        spec["nodeSelector"] = dict(node_selector)
    if tolerations:
        spec["tolerations"] = [dict(t) for t in tolerations]
    if priority is not None:
        spec["priority"] = priority
    meta: dict[str, Any] = {"namespace": namespace, "labels": dict(labels or {})}
    if annotations:
        meta["annotations"] = dict(annotations)
    return [
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {**copy.deepcopy(meta), "name": f"{prefix}{start + i}"},
            "spec": copy.deepcopy(spec),
        }
        for i in range(count)
    ]


def collection_path(obj: Mapping[str, Any]) -> str:
    """The URL path that creates ``obj`` (pods, nodes, namespaces, core events, leases)."""
    kind = obj["kind"]
    ns = obj.get("metadata", {}).get("namespace") or "default"
    if kind == "Node":
        return "/api/v1/nodes"
    if kind == "Namespace":
        return "/api/v1/namespaces"
    if kind == "Lease":
        return f"/apis/coordination.k8s.io/v1/namespaces/{ns}/leases"
    return f"/api/v1/namespaces/{ns}/{kind.lower()}s"


async def create_all(
    url: str,
    objects: Iterable[Mapping[str, Any]],
    *,
    token: str | None = None,
    concurrency: int = 16,
) -> int:
    """POST every object to the API at ``url`` with bounded concurrency; returns the count.

    Raises RuntimeError with the server's message on the first failure.
    """
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    queue = list(objects)
    created = 0
    async with aiohttp.ClientSession(url, headers=headers) as session:

        async def worker() -> None:
            nonlocal created
            while queue:
                obj = queue.pop()
                async with session.post(collection_path(obj), json=obj) as resp:
                    if resp.status >= 300:
                        raise RuntimeError(
                            f"create {obj['metadata'].get('name')}: "
                            f"{resp.status} {await resp.text()}"
                        )
                    created += 1

        async with asyncio.TaskGroup() as tg:
            for _ in range(max(1, concurrency)):
                tg.create_task(worker())
    return created
