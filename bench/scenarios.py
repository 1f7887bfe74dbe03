"""The end-to-end workloads (:mod:`bench.e2e`, :mod:`bench.real`): each scenario builds,
for a node count, the pods of one burst in creation order (docs/performance.md, Scenarios).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from scheduler.framework.config import DEFAULT_SCHEDULER_NAME
from scheduler.sim import workload

if TYPE_CHECKING:
    from collections.abc import Callable

SCHEDULER_NAME = DEFAULT_SCHEDULER_NAME
"""The scheduler's default profile name: the pods name it, the scheduler takes them."""


ZONES = ("zone-a", "zone-b", "zone-c")
"""The zones a ``zoned`` scenario's nodes are labelled with, round robin."""
HOSTNAME = "kubernetes.io/hostname"


def _no_objects(nodes: int) -> list[dict[str, Any]]:
    return []


@dataclass(frozen=True)
class Scenario:
    name: str
    description: str
    pods_per_node: int
    build: Callable[[int], list[dict[str, Any]]]
    """nodes → the pod objects, in creation order."""
    objects: Callable[[int], list[dict[str, Any]]] = _no_objects
    """nodes → the objects created before the scheduler starts (a Service, a ReplicaSet),
    in the pods' namespace; none by default."""
    zoned: bool = False
    """Whether the nodes need a zone label (:data:`ZONES`)."""


def _pods(count: int, prefix: str = "p-", **kw: Any) -> list[dict[str, Any]]:
    return workload.make_pods(count, prefix=prefix, scheduler_name=SCHEDULER_NAME, **kw)


def _one_per_node(nodes: int) -> list[dict[str, Any]]:
    # scheduler_perf's batching ResourceSaturation: 3-CPU pods on 4-CPU nodes.
    return _pods(nodes, cpu="3", memory="1Gi", labels={"app": "saturate"})


def _host_port(nodes: int) -> list[dict[str, Any]]:
    # scheduler_perf's HostPortConflict pods: hostPort 80, 100m / 100Mi.
    return _pods(nodes, cpu="100m", memory="100Mi", host_port=80, labels={"app": "port"})


def _statefulset(nodes: int) -> list[dict[str, Any]]:
    # One-pod-per-node's pods as a StatefulSet's: its controller labels each pod with its own
    # name and ordinal, which split kube's InterPodAffinity signature (issue 36).
    pods = _pods(nodes, "db-", cpu="3", memory="1Gi", labels={"app": "db"})
    for index, pod in enumerate(pods):
        pod["metadata"]["labels"] |= {
            "statefulset.kubernetes.io/pod-name": pod["metadata"]["name"],
            "apps.kubernetes.io/pod-index": str(index),
        }
    return pods


def _multi_per_node(nodes: int) -> list[dict[str, Any]]:
    # scheduler_perf's default pod (100m / 500Mi), four per node on average.
    return _pods(4 * nodes, cpu="100m", memory="500Mi", labels={"app": "web"})


_ANTI_AFFINITY = {
    "podAntiAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": [
            {
                "labelSelector": {"matchLabels": {"bench-avoid": "true"}},
                "topologyKey": "kubernetes.io/hostname",
            }
        ]
    }
}
"""Required anti-affinity against a label no pod carries: the pod cannot be signed (so it
is never batched) but the constraint never conflicts, so every pod fits anywhere."""


def _unsignable(nodes: int) -> list[dict[str, Any]]:
    return _pods(nodes, cpu="100m", memory="500Mi", labels={"app": "anti"}, affinity=_ANTI_AFFINITY)


def _mixed(nodes: int) -> list[dict[str, Any]]:
    # Three signatures round robin (job, web, unsignable), so consecutive pods differ:
    # batch state is flushed as pod_incompatible at almost every pod.
    per = (2 * nodes) // 3
    kinds = [
        _pods(per, "m-job-", cpu="3", memory="1Gi", labels={"app": "job"}),
        _pods(per, "m-web-", cpu="100m", memory="500Mi", labels={"app": "web"}),
        _pods(per, "m-anti-", cpu="100m", memory="500Mi", affinity=_ANTI_AFFINITY),
    ]
    out: list[dict[str, Any]] = []
    for trio in zip(*kinds, strict=True):
        out.extend(trio)
    return out


DEPLOYMENT = "web"
TEMPLATE_HASH = "5d8f7c9b6"
"""The ReplicaSet ``web-<hash>`` a Deployment ``web`` would make; its pods carry the hash."""


def _deployment(nodes: int) -> list[dict[str, Any]]:
    # A Deployment's pods: the ReplicaSet's controller reference and a Service selecting
    # them, so kube's default configuration gives them System default spreading.
    pods = _pods(
        2 * nodes,
        "d-",
        cpu="100m",
        memory="500Mi",
        labels={"app": DEPLOYMENT, "pod-template-hash": TEMPLATE_HASH},
    )
    owner = {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "name": f"{DEPLOYMENT}-{TEMPLATE_HASH}",
        # No ReplicaSet controller counts these pods (none runs on the real API server;
        # the emulator's counts pods by this uid): the set is there to be read, at 0 replicas.
        "uid": "00000000-0000-0000-0000-00000000b0b0",
        "controller": True,
    }
    for pod in pods:
        pod["metadata"]["ownerReferences"] = [dict(owner)]
    return pods


def _deployment_objects(nodes: int) -> list[dict[str, Any]]:
    labels = {"app": DEPLOYMENT, "pod-template-hash": TEMPLATE_HASH}
    service = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": DEPLOYMENT},
        "spec": {"selector": {"app": DEPLOYMENT}, "ports": [{"port": 80}]},
    }
    template = _pods(1, cpu="100m", memory="500Mi", labels=labels)[0]
    replica_set = {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {"name": f"{DEPLOYMENT}-{TEMPLATE_HASH}", "labels": labels},
        "spec": {
            "replicas": 0,
            "selector": {"matchLabels": labels},
            "template": {"metadata": {"labels": labels}, "spec": template["spec"]},
        },
    }
    return [service, replica_set]


def _spread(key: str, hard: bool, app: str) -> dict[str, Any]:
    return {
        "maxSkew": 1,
        "topologyKey": key,
        "whenUnsatisfiable": "DoNotSchedule" if hard else "ScheduleAnyway",
        "labelSelector": {"matchLabels": {"app": app}},
    }


def _zone_spread(nodes: int) -> list[dict[str, Any]]:
    pods = _pods(nodes, "z-", cpu="100m", memory="500Mi", labels={"app": "zoned"})
    for pod in pods:
        pod["spec"]["topologySpreadConstraints"] = [
            _spread(workload.ZONE_LABEL, True, "zoned"),
            _spread(HOSTNAME, False, "zoned"),
        ]
    return pods


_ONE_PER_NODE = {
    "podAntiAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {"matchLabels": {"app": "replica"}}, "topologyKey": HOSTNAME}
        ]
    }
}


def _self_anti_affinity(nodes: int) -> list[dict[str, Any]]:
    return _pods(
        nodes, "a-", cpu="100m", memory="500Mi", labels={"app": "replica"}, affinity=_ONE_PER_NODE
    )


SCENARIOS: dict[str, Scenario] = {
    s.name: s
    for s in (
        Scenario("one-pod-per-node", "3-CPU pods on 4-CPU nodes, one per node", 1, _one_per_node),
        Scenario("host-port", "hostPort 80 (100m/100Mi), one per node", 1, _host_port),
        Scenario(
            "statefulset",
            "one-pod-per-node's pods with StatefulSet pod-name and pod-index labels",
            1,
            _statefulset,
        ),
        Scenario("multi-pod-per-node", "100m/500Mi pods, four per node", 4, _multi_per_node),
        Scenario("unsignable", "required anti-affinity (never conflicts)", 1, _unsignable),
        Scenario("mixed", "job / web / unsignable interleaved", 2, _mixed),
        Scenario(
            "deployment",
            "100m/500Mi ReplicaSet pods a Service selects (System default spreading), two per node",
            2,
            _deployment,
            objects=_deployment_objects,
        ),
        Scenario(
            "zone-spread",
            "zone DoNotSchedule maxSkew 1 + hostname ScheduleAnyway, one per node",
            1,
            _zone_spread,
            zoned=True,
        ),
        Scenario(
            "one-per-node",
            "required anti-affinity against its own pods on the hostname",
            1,
            _self_anti_affinity,
        ),
    )
}


def object_path(obj: dict[str, Any], namespace: str) -> str:
    """The collection URL path that creates ``obj`` (a Service, a ReplicaSet) in ``namespace``."""
    group = obj["apiVersion"]
    root = "/api/v1" if group == "v1" else f"/apis/{group}"
    return f"{root}/namespaces/{namespace}/{obj['kind'].lower()}s"


CEILING_SCENARIOS = ("one-pod-per-node", "multi-pod-per-node")
"""The bind ceiling is measured with these workloads (the others bind the same way)."""
