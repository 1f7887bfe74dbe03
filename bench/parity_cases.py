"""Seeded clusters for :mod:`bench.parity`: nodes, running pods and pending pods as raw API
dicts, each pending pod tagged with the feature families it exercises.

Everything comes from one ``random.Random(seed)``: the same seed builds the same case. The
node count stays under 100 so that both schedulers evaluate every node
(``percentageOfNodesToScore``' floor is 100 feasible nodes), which makes a decision depend on
the cluster alone, not on where a previous cycle stopped searching.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from typing import Any

ZONE = "topology.kubernetes.io/zone"
HOSTNAME = "kubernetes.io/hostname"
ZONES = ("zone-a", "zone-b", "zone-c")
APPS = ("web", "db", "cache", "batch")
PORTS = (8080, 9090, 9091)
IMAGES = {
    "registry.example/app/web:1.0": 300 * 2**20,
    "registry.example/app/db:2.1": 800 * 2**20,
    "registry.example/app/cache:7": 120 * 2**20,
    "registry.example/tools/batch:0.3": 500 * 2**20,
    "nginx:1.27": 190 * 2**20,
    "busybox": 5 * 2**20,
}
GPU = "example.com/gpu"
PAUSE = "registry.k8s.io/pause:3.10"
RUNTIME_CLASS = "with-overhead"
OVERHEAD = {"cpu": "250m", "memory": "128Mi"}
PRIORITY_CLASSES = {"parity-low": 100, "parity-high": 10000}
TAINTS = (
    {"key": "dedicated", "value": "gpu", "effect": "NoSchedule"},
    {"key": "dedicated", "value": "infra", "effect": "NoSchedule"},
    {"key": "spot", "value": "true", "effect": "PreferNoSchedule"},
    {"key": "maintenance", "effect": "NoExecute"},
)
FAMILIES = (
    "resources",
    "init-sidecar",
    "overhead",
    "node-selector",
    "node-affinity-required",
    "node-affinity-preferred",
    "tolerations",
    "host-ports",
    "pod-affinity",
    "pod-anti-affinity",
    "topology-spread",
    "priority",
    "image-locality",
    "extended-resources",
    "service-spread",
)
"""What a pending pod may carry; every pod also meets the nodes' taints, unschedulable flags
and images, and requests resources."""
OTHER_NAMESPACE = "parity-other"
"""Some running pods live here: affinity terms count them only when they name it."""
SERVICE = "parity-front"
SERVICE_LABEL = {"svc": "front"}
REPLICA_SET = "parity-workload"
REPLICA_SET_LABEL = {"rs": "workload"}


@dataclass
class Case:
    seed: int
    nodes: list[dict[str, Any]]
    running: list[dict[str, Any]]
    pending: list[dict[str, Any]]
    families: dict[str, list[str]] = field(default_factory=dict)
    """pending pod name → the families it exercises."""


def cluster_objects(namespace: str) -> list[tuple[str, dict[str, Any]]]:
    """(collection path, object) created once per control plane: the RuntimeClass whose
    overhead admission copies into ``spec.overhead``, the PriorityClasses admission turns
    into ``spec.priority``, and a Service in ``namespace`` whose selector kube's default
    topology spreading uses."""
    objects: list[tuple[str, dict[str, Any]]] = [
        (
            "/apis/node.k8s.io/v1/runtimeclasses",
            {
                "apiVersion": "node.k8s.io/v1",
                "kind": "RuntimeClass",
                "metadata": {"name": RUNTIME_CLASS},
                "handler": "runc",
                "overhead": {"podFixed": dict(OVERHEAD)},
            },
        )
    ]
    for name, value in PRIORITY_CLASSES.items():
        body = {
            "apiVersion": "scheduling.k8s.io/v1",
            "kind": "PriorityClass",
            "metadata": {"name": name},
            "value": value,
        }
        objects.append(("/apis/scheduling.k8s.io/v1/priorityclasses", body))
    service = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": SERVICE},
        "spec": {"selector": dict(SERVICE_LABEL), "ports": [{"port": 80, "protocol": "TCP"}]},
    }
    objects.append((f"/api/v1/namespaces/{namespace}/services", service))
    return objects


def _quantity_cpu(millis: int) -> str:
    return f"{millis}m"


def _node(rng: random.Random, name: str, index: int) -> dict[str, Any]:
    cpu = rng.choice((2, 4, 8, 16))
    memory = rng.choice((4, 8, 16, 32))
    pods = rng.choice(("8", "20", "110"))
    labels = {
        HOSTNAME: name,
        "kubernetes.io/os": "linux",
        ZONE: ZONES[index % len(ZONES)] if rng.random() < 0.9 else rng.choice(ZONES),
        "disk": rng.choice(("ssd", "hdd")),
        "rank": str(rng.randint(1, 9)),
    }
    if rng.random() < 0.4:
        labels["tier"] = rng.choice(("gold", "silver"))
    if rng.random() < 0.1:
        del labels[ZONE]  # a node outside every zone (topology spread skips it)
    spec: dict[str, Any] = {}
    if rng.random() < 0.3:
        picked = rng.sample(TAINTS, rng.randint(1, 2))
        if len({(t["key"], t["effect"]) for t in picked}) < len(picked):
            picked = picked[:1]  # unique by key and effect, as validation requires
        spec["taints"] = [dict(t) for t in picked]
    if rng.random() < 0.08:
        spec["unschedulable"] = True
    capacity = {
        "cpu": str(cpu),
        "memory": f"{memory}Gi",
        "pods": pods,
        "ephemeral-storage": "100Gi",
    }
    if rng.random() < 0.3:
        capacity[GPU] = str(rng.choice((1, 2, 4)))
    allocatable = dict(capacity)
    allocatable["cpu"] = _quantity_cpu(cpu * 1000 - rng.choice((0, 100, 250)))
    images = [
        # A kubelet reports a tag and a digest name; ``busybox`` only as ``busybox:latest``.
        {
            "names": [f"{image}:latest" if ":" not in image else image, f"{image}@sha256:{i}"],
            "sizeBytes": size,
        }
        for i, (image, size) in enumerate(IMAGES.items())
        if rng.random() < 0.4
    ]
    ident = f"{index:032x}"
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": labels},
        "spec": spec,
        "status": {
            "capacity": capacity,
            "allocatable": allocatable,
            "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady"}],
            "images": images,
            "nodeInfo": {
                "architecture": "amd64",
                "bootID": ident,
                "containerRuntimeVersion": "parity://1.0",
                "kernelVersion": "parity",
                "kubeProxyVersion": "",
                "kubeletVersion": "v1.37.2",
                "machineID": ident,
                "operatingSystem": "linux",
                "osImage": "parity",
                "systemUUID": ident,
            },
            "phase": "Running",
        },
    }


def _container(name: str, image: str, cpu: int, memory: int) -> dict[str, Any]:
    return {
        "name": name,
        "image": image,
        "resources": {"requests": {"cpu": f"{cpu}m", "memory": f"{memory}Mi"}},
    }


def _pod(name: str, app: str, scheduler: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "labels": {"app": app}},
        "spec": {
            "schedulerName": scheduler,
            "automountServiceAccountToken": False,
            "containers": [],
        },
    }


def _selector(app: str) -> dict[str, Any]:
    return {"matchLabels": {"app": app}}


def _running(rng: random.Random, name: str, nodes: list[dict[str, Any]]) -> dict[str, Any]:
    app = rng.choice(APPS)
    pod = _pod(name, app, "default-scheduler")
    node = rng.choice(nodes)
    pod["spec"]["nodeName"] = node["metadata"]["name"]
    pod["spec"]["tolerations"] = [{"operator": "Exists"}]
    if rng.random() < 0.3:
        pod["metadata"]["labels"].update(SERVICE_LABEL)
    main = _container("main", rng.choice(list(IMAGES)), rng.choice((100, 250, 500, 1000)), 256)
    if rng.random() < 0.2:
        main["ports"] = [{"containerPort": 8080, "hostPort": 8080, "protocol": "TCP"}]
    pod["spec"]["containers"] = [main]
    if rng.random() < 0.2:
        pod["metadata"]["namespace"] = OTHER_NAMESPACE
    # Existing pods' terms count too: required anti-affinity filters the newcomers it
    # matches; required affinity (hardPodAffinityWeight) and preferred terms score them.
    term: dict[str, Any] = {"labelSelector": _selector(rng.choice(APPS)), "topologyKey": HOSTNAME}
    affinity: dict[str, Any]
    draw = rng.random()
    if draw < 0.15:
        affinity = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}
    elif draw < 0.23:
        term["topologyKey"] = ZONE
        affinity = {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}
    elif draw < 0.38:
        kind = rng.choice(("podAffinity", "podAntiAffinity"))
        weighted = {"weight": rng.randint(1, 100), "podAffinityTerm": term}
        affinity = {kind: {"preferredDuringSchedulingIgnoredDuringExecution": [weighted]}}
    else:
        return pod
    pod["spec"]["affinity"] = affinity
    return pod


def _node_term(rng: random.Random, seed: int, nodes: int) -> dict[str, Any]:
    choice = rng.randrange(6)
    if choice == 0:
        expr = {"key": "disk", "operator": "In", "values": [rng.choice(("ssd", "hdd"))]}
    elif choice == 1:
        expr = {"key": "tier", "operator": rng.choice(("Exists", "DoesNotExist"))}
    elif choice == 2:
        expr = {
            "key": "rank",
            "operator": rng.choice(("Gt", "Lt")),
            "values": [str(rng.randint(2, 8))],
        }
    elif choice == 3:
        expr = {"key": ZONE, "operator": "NotIn", "values": [rng.choice(ZONES)]}
    elif choice == 4:
        expr = {"key": ZONE, "operator": "In", "values": rng.sample(ZONES, 2)}
    else:
        # A field selector takes exactly one value (API validation).
        field = {
            "key": "metadata.name",
            "operator": rng.choice(("In", "NotIn")),
            "values": [f"s{seed}-n{rng.randrange(nodes):02d}"],
        }
        return {"matchFields": [field]}
    return {"matchExpressions": [expr]}


def _pending(
    rng: random.Random, name: str, scheduler: str, seed: int, nodes: int
) -> tuple[dict[str, Any], list[str]]:
    app = rng.choice(APPS)
    pod = _pod(name, app, scheduler)
    spec = pod["spec"]
    families = ["resources", *rng.sample(FAMILIES[1:], rng.randint(0, 3))]
    image = rng.choice(list(IMAGES)) if "image-locality" in families else PAUSE
    big = rng.random() < 0.15
    cpu = rng.choice((3000, 6000, 12000)) if big else rng.choice((50, 100, 200, 500, 1000))
    memory = rng.choice((64, 256, 512, 1024, 4096))
    spec["containers"] = [_container("main", image, cpu, memory)]
    if rng.random() < 0.05:
        spec["containers"][0]["resources"] = {}  # best effort: the non-zero defaults score it
    affinity: dict[str, Any] = {}
    for family in families:
        if family == "init-sidecar":
            spec["initContainers"] = [
                _container("init", rng.choice(list(IMAGES)), rng.choice((500, 2000, 5000)), 128),
                {
                    **_container("sidecar", PAUSE, rng.choice((100, 300)), 64),
                    "restartPolicy": "Always",
                },
            ]
        elif family == "overhead":
            spec["runtimeClassName"] = RUNTIME_CLASS
        elif family == "node-selector":
            spec["nodeSelector"] = rng.choice(({"disk": "ssd"}, {"tier": "gold"}, {ZONE: "zone-b"}))
        elif family == "node-affinity-required":
            terms = [_node_term(rng, seed, nodes) for _ in range(rng.randint(1, 2))]
            affinity.setdefault("nodeAffinity", {})[
                "requiredDuringSchedulingIgnoredDuringExecution"
            ] = {"nodeSelectorTerms": terms}
        elif family == "node-affinity-preferred":
            affinity.setdefault("nodeAffinity", {})[
                "preferredDuringSchedulingIgnoredDuringExecution"
            ] = [
                {"weight": rng.randint(1, 100), "preference": _node_term(rng, seed, nodes)}
                for _ in range(rng.randint(1, 3))
            ]
        elif family == "tolerations":
            spec["tolerations"] = rng.sample(
                [
                    {
                        "key": "dedicated",
                        "operator": "Equal",
                        "value": "gpu",
                        "effect": "NoSchedule",
                    },
                    {"key": "dedicated", "operator": "Exists"},
                    {"key": "spot", "operator": "Exists", "effect": "PreferNoSchedule"},
                    {"key": "maintenance", "operator": "Exists", "effect": "NoExecute"},
                    {"key": "node.kubernetes.io/unschedulable", "operator": "Exists"},
                    {"operator": "Exists", "effect": "NoSchedule"},
                ],
                rng.randint(1, 2),
            )
        elif family == "host-ports":
            port = rng.choice(PORTS)
            entry: dict[str, Any] = {
                "containerPort": port,
                "hostPort": port,
                "protocol": rng.choice(("TCP", "TCP", "UDP")),
            }
            if rng.random() < 0.3:
                entry["hostIP"] = rng.choice(("127.0.0.1", "0.0.0.0"))
            spec["containers"][0]["ports"] = [entry]
        elif family in ("pod-affinity", "pod-anti-affinity"):
            kind = "podAffinity" if family == "pod-affinity" else "podAntiAffinity"
            term: dict[str, Any] = {
                "labelSelector": _selector(rng.choice((*APPS, app))),
                "topologyKey": rng.choice((HOSTNAME, ZONE)),
            }
            if rng.random() < 0.2:
                term["namespaceSelector"] = {}  # every namespace
            elif rng.random() < 0.2:
                term["namespaces"] = [OTHER_NAMESPACE]
            elif rng.random() < 0.2:
                term["labelSelector"] = {
                    "matchExpressions": [
                        {"key": "app", "operator": "In", "values": rng.sample(APPS, 2)}
                    ]
                }
            if rng.random() < 0.5:
                affinity[kind] = {"requiredDuringSchedulingIgnoredDuringExecution": [term]}
            else:
                affinity[kind] = {
                    "preferredDuringSchedulingIgnoredDuringExecution": [
                        {"weight": rng.randint(1, 100), "podAffinityTerm": term}
                    ]
                }
        elif family == "topology-spread":
            constraint: dict[str, Any] = {
                "maxSkew": rng.randint(1, 2),
                "topologyKey": rng.choice((ZONE, HOSTNAME)),
                "whenUnsatisfiable": rng.choice(("DoNotSchedule", "ScheduleAnyway")),
                "labelSelector": _selector(app),
            }
            if rng.random() < 0.3:
                constraint["nodeTaintsPolicy"] = "Honor"
            if rng.random() < 0.2:
                constraint["nodeAffinityPolicy"] = "Ignore"
            if rng.random() < 0.2:
                constraint["matchLabelKeys"] = ["tier"]
                pod["metadata"]["labels"]["tier"] = rng.choice(("front", "back"))
            if rng.random() < 0.2 and constraint["whenUnsatisfiable"] == "DoNotSchedule":
                constraint["minDomains"] = rng.randint(2, 4)
            spec["topologySpreadConstraints"] = [constraint]
            if rng.random() < 0.25:
                other = ZONE if constraint["topologyKey"] == HOSTNAME else HOSTNAME
                spec["topologySpreadConstraints"].append(
                    {
                        "maxSkew": rng.randint(1, 3),
                        "topologyKey": other,
                        "whenUnsatisfiable": rng.choice(("DoNotSchedule", "ScheduleAnyway")),
                        "labelSelector": _selector(app),
                    }
                )
        elif family == "extended-resources":
            want = {GPU: str(rng.choice((1, 2, 3)))}
            spec["containers"][0]["resources"].setdefault("requests", {}).update(want)
            spec["containers"][0]["resources"]["limits"] = dict(want)
        elif family == "service-spread":
            pod["metadata"]["labels"].update(SERVICE_LABEL)
        elif family == "priority":
            spec["priorityClassName"] = rng.choice(list(PRIORITY_CLASSES))
    if affinity:
        spec["affinity"] = affinity
    return pod, families


def replica_set(namespace: str) -> tuple[str, dict[str, Any]]:
    """(collection path, object) of the ReplicaSet that ``build(replicas=...)``'s workloads
    name as their controller: kube's DefaultSelector then spreads them by its selector. At 0
    replicas, and no controller-manager runs: nothing reconciles its pods."""
    body = {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {"name": REPLICA_SET},
        "spec": {
            "replicas": 0,
            "selector": {"matchLabels": dict(REPLICA_SET_LABEL)},
            "template": {
                "metadata": {"labels": dict(REPLICA_SET_LABEL)},
                "spec": {"containers": [{"name": "main", "image": PAUSE}]},
            },
        },
    }
    return f"/apis/apps/v1/namespaces/{namespace}/replicasets", body


def build(
    seed: int,
    *,
    nodes: int,
    running: int,
    pending: int,
    scheduler: str,
    replicas: int = 1,
    replica_set_uid: str | None = None,
) -> Case:
    """The case of ``seed``: ``nodes`` nodes, ``running`` bound pods, ``pending`` pods.

    ``replicas`` > 1: the pending pods come as workloads, each drawn shape ``replicas``
    times in a row (equal pods, as a Deployment's), half of the workloads owned by the
    ReplicaSet whose uid is ``replica_set_uid`` (family ``replicaset``), so batching meets
    runs of equal signatures. With 1 the cases are those of every earlier run."""
    if not 1 <= nodes < 100:
        raise ValueError(f"nodes: {nodes} must be within 1..99 (every node evaluated)")
    rng = random.Random(seed)
    made = [_node(rng, f"s{seed}-n{i:02d}", i) for i in range(nodes)]
    bound = [_running(rng, f"s{seed}-r{i:03d}", made) for i in range(running)]
    case = Case(seed, made, bound, [])
    i = 0
    while i < pending:
        pod, families = _pending(rng, f"s{seed}-p{i:03d}", scheduler, seed, nodes)
        copies = min(replicas, pending - i)
        if replicas > 1 and replica_set_uid is not None and rng.random() < 0.5:
            _own(pod, replica_set_uid)
            families = [*families, "replicaset"]
        for j in range(copies):
            replica = json.loads(json.dumps(pod)) if j else pod
            replica["metadata"]["name"] = f"s{seed}-p{i:03d}"
            case.pending.append(replica)
            case.families[replica["metadata"]["name"]] = families
            i += 1
    return case


def _own(pod: dict[str, Any], uid: str) -> None:
    """``pod`` becomes a pod of the ReplicaSet :func:`replica_set` made."""
    pod["metadata"]["labels"].update(REPLICA_SET_LABEL)
    pod["metadata"]["ownerReferences"] = [
        {
            "apiVersion": "apps/v1",
            "kind": "ReplicaSet",
            "name": REPLICA_SET,
            "uid": uid,
            "controller": True,
            "blockOwnerDeletion": True,
        }
    ]
