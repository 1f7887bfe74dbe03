"""Keyword builders for raw API dicts (what the watch delivers), shared by every test tier."""

from __future__ import annotations

from typing import Any

Raw = dict[str, Any]


def make_node(
    name: str,
    *,
    cpu: str = "4",
    memory: str = "32Gi",
    pods: str = "110",
    ephemeral: str | None = None,
    extra: dict[str, str] | None = None,
    labels: dict[str, str] | None = None,
    taints: list[Raw] | None = None,
    unschedulable: bool = False,
    images: list[tuple[list[str], int]] | None = None,
    allocatable: bool = True,
) -> Raw:
    """A v1 Node. ``allocatable=False`` sets only ``status.capacity`` (API default case)."""
    amounts: dict[str, str] = {"cpu": cpu, "memory": memory, "pods": pods}
    if ephemeral is not None:
        amounts["ephemeral-storage"] = ephemeral
    amounts.update(extra or {})
    status: Raw = {"capacity": dict(amounts)}
    if allocatable:
        status["allocatable"] = dict(amounts)
    if images:
        status["images"] = [{"names": names, "sizeBytes": size} for names, size in images]
    spec: Raw = {}
    if taints:
        spec["taints"] = taints
    if unschedulable:
        spec["unschedulable"] = True
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "uid": f"uid-node-{name}",
            "resourceVersion": "1",
            "labels": {"kubernetes.io/hostname": name, **(labels or {})},
        },
        "spec": spec,
        "status": status,
    }


def make_container(
    name: str = "c",
    *,
    cpu: str | None = None,
    memory: str | None = None,
    requests: dict[str, str] | None = None,
    image: str = "registry.k8s.io/pause:3.10",
    host_ports: list[int] | None = None,
    restart_policy: str | None = None,
) -> Raw:
    reqs: dict[str, str] = dict(requests or {})
    if cpu is not None:
        reqs["cpu"] = cpu
    if memory is not None:
        reqs["memory"] = memory
    container: Raw = {"name": name, "image": image}
    if reqs:
        container["resources"] = {"requests": reqs}
    if host_ports:
        container["ports"] = [{"containerPort": p, "hostPort": p} for p in host_ports]
    if restart_policy is not None:
        container["restartPolicy"] = restart_policy
    return container


def make_pod(
    name: str,
    *,
    namespace: str = "default",
    cpu: str | None = None,
    memory: str | None = None,
    containers: list[Raw] | None = None,
    init_containers: list[Raw] | None = None,
    overhead: dict[str, str] | None = None,
    node_name: str | None = None,
    scheduler_name: str = "batch-scheduler",
    priority: int | None = None,
    phase: str = "Pending",
    labels: dict[str, str] | None = None,
    annotations: dict[str, str] | None = None,
    batching: bool | None = None,
    node_selector: dict[str, str] | None = None,
    affinity: Raw | None = None,
    tolerations: list[Raw] | None = None,
    host_ports: list[int] | None = None,
    topology_spread: list[Raw] | None = None,
    volumes: list[Raw] | None = None,
    image: str = "registry.k8s.io/pause:3.10",
    uid: str | None = None,
    pod_group: str | None = None,
    scheduling_gates: list[str] | None = None,
) -> Raw:
    """A v1 Pod with one container unless ``containers`` is given."""
    if containers is None:
        containers = [make_container(cpu=cpu, memory=memory, host_ports=host_ports, image=image)]
    spec: Raw = {"schedulerName": scheduler_name, "containers": containers}
    if init_containers:
        spec["initContainers"] = init_containers
    if overhead:
        spec["overhead"] = overhead
    if node_name:
        spec["nodeName"] = node_name
    if priority is not None:
        spec["priority"] = priority
    if node_selector:
        spec["nodeSelector"] = node_selector
    if affinity:
        spec["affinity"] = affinity
    if tolerations:
        spec["tolerations"] = tolerations
    if topology_spread:
        spec["topologySpreadConstraints"] = topology_spread
    if volumes:
        spec["volumes"] = volumes
    if pod_group:
        spec["schedulingGroup"] = {"podGroupName": pod_group}
    if scheduling_gates:
        spec["schedulingGates"] = [{"name": gate} for gate in scheduling_gates]
    notes = dict(annotations or {})
    if batching is not None:
        notes["batch-scheduler.io/batching"] = "true" if batching else "false"
    metadata: Raw = {
        "name": name,
        "namespace": namespace,
        "uid": uid or f"uid-{namespace}-{name}",
        "resourceVersion": "1",
        "creationTimestamp": "2026-01-01T00:00:00Z",
        "labels": dict(labels or {}),
    }
    if notes:
        metadata["annotations"] = notes
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": metadata,
        "spec": spec,
        "status": {"phase": phase},
    }


def make_pod_group(
    name: str,
    *,
    namespace: str = "default",
    min_count: int | None = None,
    priority: int | None = None,
    disruption_all: bool = False,
    generation: int = 1,
) -> Raw:
    """A scheduling.k8s.io/v1beta1 PodGroup: a gang of ``min_count``, or basic when None."""
    policy: Raw = {"basic": {}} if min_count is None else {"gang": {"minCount": min_count}}
    spec: Raw = {"schedulingPolicy": policy}
    if priority is not None:
        spec["priority"] = priority
    if disruption_all:
        spec["disruptionMode"] = {"all": {}}
    return {
        "apiVersion": "scheduling.k8s.io/v1beta1",
        "kind": "PodGroup",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "uid": f"uid-pg-{namespace}-{name}",
            "resourceVersion": "1",
            "generation": generation,
        },
        "spec": spec,
    }


def taint(key: str, value: str = "", effect: str = "NoSchedule") -> Raw:
    return {"key": key, "value": value, "effect": effect}


def toleration(key: str = "", value: str = "", effect: str = "", operator: str = "Equal") -> Raw:
    out: Raw = {"key": key, "operator": operator}
    if value:
        out["value"] = value
    if effect:
        out["effect"] = effect
    return out
