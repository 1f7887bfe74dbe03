"""The chaos suite's cluster objects, and writes that outlast the faults.

Nodes of 4 CPU, 16Gi and 110 pods; pods of 500m and 1Gi (eight fit a node: a burst of
5000 on 1000 nodes fills 62 % of the CPU, enough that a scheduler that loses track of its
assumptions overcommits a node), each labelled with one of :data:`APPS` apps, so that a
Service and a ReplicaSet made later select them (the default-spreading race). A gang's
members name a PodGroup (``spec.schedulingGroup``, gate ``GenericWorkload``) of
:data:`GANG_SIZE`.

The suite's own writes must survive what it injects: :func:`create_retrying` retries a
create through refused connections, 429 and 5xx until it lands (a 409 then means an earlier
attempt landed), as a controller would.

Neighbours: :mod:`bench.chaos.run` (the run), :mod:`bench.chaos.scenarios` (the faults).
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

import aiohttp

from bench.scheduler_perf.api import ApiError
from scheduler.sim import workload

if TYPE_CHECKING:
    from bench.scheduler_perf.api import Api

Obj = dict[str, Any]
NAMESPACE = "chaos"
PODS = f"/api/v1/namespaces/{NAMESPACE}/pods"
NODE_CPU, NODE_MEMORY, NODE_PODS = "4", "16Gi", "110"
POD_CPU, POD_MEMORY = "500m", "1Gi"
APPS = 20
"""Apps the pods belong to (label ``app``): runs of :data:`APP_RUN` pods, so that ours
batches them (equal pods, equal signature) while the faults hit."""
APP_RUN = 50
GANG_SIZE = 5
RETRY_SECONDS = 0.2
PODGROUPS = f"/apis/scheduling.k8s.io/v1beta1/namespaces/{NAMESPACE}/podgroups"


def node_name(index: int) -> str:
    return f"chaos-node-{index:05d}"


def node(index: int) -> Obj:
    made = workload.make_nodes(1, cpu=NODE_CPU, memory=NODE_MEMORY, pods=NODE_PODS)[0]
    name = node_name(index)
    made["metadata"]["name"] = name
    made["metadata"]["labels"]["kubernetes.io/hostname"] = name
    return made


def app(index: int) -> str:
    return f"app-{index // APP_RUN % APPS}"


def pod_name(index: int) -> str:
    return f"pod-{index:05d}"


def pod(index: int, *, scheduler_name: str, gang: bool = False) -> Obj:
    """Pod ``index`` of :func:`app` ``(index)``; with ``gang``, a member of gang
    ``index // GANG_SIZE``."""
    made = workload.make_pods(
        1,
        cpu=POD_CPU,
        memory=POD_MEMORY,
        namespace=NAMESPACE,
        scheduler_name=scheduler_name,
        labels={"app": app(index)},
    )[0]
    made["metadata"]["name"] = pod_name(index)
    if gang:
        made["spec"]["schedulingGroup"] = {"podGroupName": gang_name(index // GANG_SIZE)}
    return made


def gang_name(index: int) -> str:
    return f"gang-{index}"


def pod_group(index: int) -> Obj:
    """The PodGroup of gang ``index``: all :data:`GANG_SIZE` members or none."""
    return {
        "apiVersion": "scheduling.k8s.io/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": gang_name(index), "namespace": NAMESPACE},
        "spec": {"schedulingPolicy": {"gang": {"minCount": GANG_SIZE}}},
    }


def service(name: str) -> Obj:
    """A Service selecting app ``name``'s pods (default spreading then applies to them)."""
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": name, "namespace": NAMESPACE},
        "spec": {"selector": {"app": name}, "ports": [{"port": 80, "targetPort": 80}]},
    }


def replica_set(name: str) -> Obj:
    """A ReplicaSet selecting app ``name``'s pods; no controller-manager runs, so it
    creates nothing: it is only an owner whose selector default spreading reads."""
    template = workload.make_pods(1, cpu=POD_CPU, memory=POD_MEMORY, labels={"app": name})[0]
    return {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {"name": name, "namespace": NAMESPACE},
        "spec": {
            "replicas": 0,
            "selector": {"matchLabels": {"app": name}},
            "template": {"metadata": {"labels": {"app": name}}, "spec": template["spec"]},
        },
    }


def retriable(exc: BaseException) -> bool:
    """A failure a retry may get past: the server away, stalled, or shedding load."""
    if isinstance(exc, ApiError):
        return exc.status == 429 or exc.status >= 500
    return isinstance(exc, (aiohttp.ClientError, OSError, TimeoutError))


async def create_retrying(api: Api, path: str, body: Obj) -> None:
    """Create ``body`` until it exists (409: an earlier attempt landed)."""
    while True:
        try:
            await api.create(path, body, ok=(409,))
            return
        except (ApiError, aiohttp.ClientError, OSError, TimeoutError) as exc:
            if not retriable(exc):
                raise
        await asyncio.sleep(RETRY_SECONDS)


async def delete_retrying(api: Api, path: str) -> None:
    """Delete ``path`` until it is gone (404: already)."""
    while True:
        try:
            await api.request("DELETE", path, ok=(404,))
            return
        except (ApiError, aiohttp.ClientError, OSError, TimeoutError) as exc:
            if not retriable(exc):
                raise
        await asyncio.sleep(RETRY_SECONDS)


async def list_retrying(api: Api, path: str) -> list[Obj]:
    while True:
        try:
            return await api.list_all(path)
        except (ApiError, aiohttp.ClientError, OSError, TimeoutError) as exc:
            if not retriable(exc):
                raise
        await asyncio.sleep(RETRY_SECONDS)


async def resource_version(api: Api, path: str) -> int:
    """The collection's current resourceVersion (a revision of etcd, ordered)."""
    while True:
        try:
            page = await api.request("GET", path, params={"limit": "1"})
            return int((page.get("metadata") or {}).get("resourceVersion") or 0)
        except (ApiError, aiohttp.ClientError, OSError, TimeoutError) as exc:
            if not retriable(exc):
                raise
        await asyncio.sleep(RETRY_SECONDS)
