"""The seeded bursts of :mod:`bench.exact_differential`: a cluster and the steps that follow,
built from one ``random.Random(seed)`` so that both runs replay the same burst.

A burst (:func:`burst_steps`) mixes the families of the exact batch (:data:`FAMILIES`:
Deployment pods under kube's System default spreading, explicit spread constraints with
``minDomains``, node policies and ``matchLabelKeys``, self affinity and anti-affinity),
on 1–150 nodes of a few sizes (ties) in unequal zones, some without a zone and some
tainted, with running pods of other owners in the same domains, under
``percentageOfNodesToScore`` adaptive, 30 or 100. Every other workload's pods carry a label
of their own (:data:`OWN`, as kube's scheduler_perf gives each pod), and some pods that
arrive running prefer to avoid the zone of a pod still to come by that label (the exact
batch signs only labels some term reads: a term on it must re-sign the queued pods).
Between groups of pods, nodes and pods are added, relabelled and deleted (the steps
:func:`bench.exact_differential.run` feeds to the event handlers, as the watch would). Raw
API dicts only: this module knows nothing of the scheduler but the default scheduler's
name. Neighbours: :mod:`bench.exact_differential` replays and compares;
``tests/property/test_exact_batching_equivalence.py`` samples it.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

from scheduler.framework.config import DEFAULT_SCHEDULER_NAME

Raw = dict[str, Any]

HOSTNAME = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"
NAMESPACE = "burst"
TAINT = {"key": "dedicated", "value": "batch", "effect": "NoSchedule"}
TOLERATION = {"key": "dedicated", "operator": "Equal", "value": "batch", "effect": "NoSchedule"}
NODE_SIZES = (("4", "8Gi"), ("4", "16Gi"), ("8", "16Gi"))
"""Few sizes, so that many nodes tie."""
POD_SIZES = (("100m", "256Mi"), ("500m", "1Gi"), ("1", "2Gi"), ("2", "3Gi"))
PERCENTAGES = (0, 30, 100)
"""percentageOfNodesToScore: 0 is kube's adaptive default (engages above 100 nodes)."""
OWN = "own"
"""The label of a pod's own (its name) that every other workload's pods carry."""


# -- the families ---------------------------------------------------------------------------


def _spread(key: str, skew: int, hard: bool, app: str, **extra: Any) -> Raw:
    return {
        "maxSkew": skew,
        "topologyKey": key,
        "whenUnsatisfiable": "DoNotSchedule" if hard else "ScheduleAnyway",
        "labelSelector": {"matchLabels": {"app": app}},
        **extra,
    }


def _term(key: str, app: str) -> Raw:
    return {"labelSelector": {"matchLabels": {"app": app}}, "topologyKey": key}


def _deployment(app: str, rng: random.Random) -> Raw:
    return {}  # only its Service and ReplicaSet (objects_for) make System defaults apply


def _zone_hard_host_soft(app: str, rng: random.Random) -> Raw:
    return {
        "topologySpreadConstraints": [
            _spread(ZONE, 1, True, app),
            _spread(HOSTNAME, 1, False, app),
        ]
    }


def _host_hard_zone_soft(app: str, rng: random.Random) -> Raw:
    return {
        "topologySpreadConstraints": [
            _spread(HOSTNAME, rng.choice((1, 2)), True, app),
            _spread(ZONE, 1, False, app),
        ]
    }


def _min_domains(app: str, rng: random.Random) -> Raw:
    return {
        "topologySpreadConstraints": [_spread(ZONE, 1, True, app, minDomains=rng.choice((2, 3, 5)))]
    }


def _node_policies(app: str, rng: random.Random) -> Raw:
    spec: Raw = {
        "topologySpreadConstraints": [
            _spread(
                ZONE,
                rng.choice((1, 2)),
                rng.random() < 0.5,
                app,
                nodeAffinityPolicy=rng.choice(("Honor", "Ignore")),
                nodeTaintsPolicy=rng.choice(("Honor", "Ignore")),
            )
        ]
    }
    if rng.random() < 0.5:
        spec["tolerations"] = [TOLERATION]
    if rng.random() < 0.5:  # node affinity: nodes with a zone only
        spec["affinity"] = {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {"matchExpressions": [{"key": ZONE, "operator": "Exists"}]}
                    ]
                }
            }
        }
    return spec


def _match_label_keys(app: str, rng: random.Random) -> Raw:
    return {
        "topologySpreadConstraints": [
            _spread(ZONE, 1, rng.random() < 0.5, app, matchLabelKeys=["pod-template-hash"]),
            _spread(HOSTNAME, 1, False, app, matchLabelKeys=["pod-template-hash"]),
        ]
    }


def _one_per_node(app: str, rng: random.Random) -> Raw:
    return {
        "affinity": {
            "podAntiAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [_term(HOSTNAME, app)]
            }
        }
    }


def _soft_anti_zone(app: str, rng: random.Random) -> Raw:
    weighted = {"weight": rng.choice((1, 50, 100)), "podAffinityTerm": _term(ZONE, app)}
    return {
        "affinity": {
            "podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [weighted]}
        }
    }


def _self_affinity_zone(app: str, rng: random.Random) -> Raw:
    return {
        "affinity": {
            "podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [_term(ZONE, app)]}
        }
    }


FAMILIES = {
    "deployment": _deployment,
    "zone-hard-host-soft": _zone_hard_host_soft,
    "host-hard-zone-soft": _host_hard_zone_soft,
    "min-domains": _min_domains,
    "node-policies": _node_policies,
    "match-label-keys": _match_label_keys,
    "one-per-node": _one_per_node,
    "soft-anti-zone": _soft_anti_zone,
    "self-affinity-zone": _self_affinity_zone,
}
"""Family name → the pod spec fields of one workload of it (app label ``app``)."""


@dataclass
class Workload:
    """One family's pods: a ReplicaSet-like owner of one template (and, for deployments,
    the Service and ReplicaSet that select them)."""

    app: str
    family: str
    spec: Raw
    cpu: str
    memory: str
    template_hash: str
    made: int = 0
    own_label: bool = False
    """Whether each pod carries :data:`OWN` with its name."""

    def next_name(self) -> str:
        return f"{self.app}-{self.template_hash}-{self.made}"

    def pod(self) -> Raw:
        name = self.next_name()
        self.made += 1
        labels = {"app": self.app, "pod-template-hash": self.template_hash}
        if self.own_label:
            labels[OWN] = name
        containers = [
            {
                "name": "c",
                "image": "registry.k8s.io/pause:3.10",
                "resources": {"requests": {"cpu": self.cpu, "memory": self.memory}},
            }
        ]
        owner = {
            "apiVersion": "apps/v1",
            "kind": "ReplicaSet",
            "name": f"{self.app}-{self.template_hash}",
            "uid": f"uid-rs-{self.app}-{self.template_hash}",
            "controller": True,
        }
        return {
            "metadata": {
                "name": name,
                "namespace": NAMESPACE,
                "uid": f"uid-{name}",
                "labels": labels,
                "ownerReferences": [owner],
            },
            "spec": {
                "schedulerName": DEFAULT_SCHEDULER_NAME,
                "containers": containers,
                **self.spec,
            },
        }


# -- a burst: steps both runs replay ------------------------------------------------------


@dataclass
class Burst:
    """What one seed makes: the cluster at the start and the steps that follow."""

    seed: int
    percentage: int
    nodes: list[Raw]
    objects: list[Raw]
    """Services (kind Service) and ReplicaSets (kind ReplicaSet) the deployments need."""
    running: list[Raw]
    steps: list[tuple[str, Any]] = field(default_factory=list)
    """("pods", [raw, ...]): create these pending pods, then attempt what is queued;
    ("node", raw): add or relabel a node; ("delete-node", name); ("running", raw): a pod
    another scheduler bound; ("delete-pod", uid)."""
    empties_cluster: bool = False
    """Whether some step deletes the last node (pods then meet a cluster of no nodes)."""


def _node(rng: random.Random, name: str, zones: list[str], weights: list[float]) -> Raw:
    cpu, memory = rng.choice(NODE_SIZES)
    labels = {HOSTNAME: name}
    if rng.random() >= 0.08:  # a few nodes without a zone
        labels[ZONE] = rng.choices(zones, weights)[0]
    spec: Raw = {"taints": [dict(TAINT)]} if rng.random() < 0.1 else {}
    amounts = {"cpu": cpu, "memory": memory, "pods": "110"}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "uid": f"uid-node-{name}", "labels": labels},
        "spec": spec,
        "status": {"capacity": dict(amounts), "allocatable": dict(amounts)},
    }


def _running(rng: random.Random, name: str, node: str, app: str) -> Raw:
    cpu, memory = rng.choice(POD_SIZES[:2])
    return {
        "metadata": {
            "name": name,
            "namespace": NAMESPACE,
            "uid": f"uid-{name}",
            "labels": {"app": app},
        },
        "spec": {
            "schedulerName": "other-scheduler",
            "nodeName": node,
            "containers": [
                {
                    "name": "c",
                    "image": "x",
                    "resources": {"requests": {"cpu": cpu, "memory": memory}},
                }
            ],
        },
        "status": {"phase": "Running"},
    }


def _avoid(name: str) -> Raw:
    """Preferred anti-affinity to the zone of the pod whose :data:`OWN` label is ``name``
    (a zone: more of the pod's candidates score differently than under a hostname term)."""
    term = {"labelSelector": {"matchLabels": {OWN: name}}, "topologyKey": ZONE}
    weighted = {"weight": 100, "podAffinityTerm": term}
    return {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [weighted]}}


def burst_steps(seed: int, *, max_nodes: int = 150, max_pods: int = 80) -> Burst:
    """The burst of ``seed``: see the module docstring."""
    rng = random.Random(seed)
    zones = [f"zone-{c}" for c in "abcd"[: rng.randint(1, 4)]]
    weights = [rng.uniform(0.2, 1.0) for _ in zones]  # unequal zones
    count = rng.choice(
        (rng.randint(1, 12), rng.randint(10, 60), rng.randint(90, max(90, max_nodes)))
    )
    count = min(count, max_nodes)
    nodes = [_node(rng, f"n{i:03}", zones, weights) for i in range(count)]
    workloads = []
    objects: list[Raw] = []
    for w in range(rng.randint(1, 4)):
        family = rng.choice(list(FAMILIES))
        app = f"w{w}-{family}"
        cpu, memory = rng.choice(POD_SIZES)
        workload = Workload(app, family, FAMILIES[family](app, rng), cpu, memory, f"h{w}x")
        workload.own_label = (seed + w) % 2 == 0  # not drawn: the seeds' draws stay as they were
        workloads.append(workload)
        if family == "deployment":
            objects.append(
                {
                    "kind": "Service",
                    "metadata": {"name": app, "namespace": NAMESPACE, "resourceVersion": "1"},
                    "spec": {"selector": {"app": app}},
                }
            )
            objects.append(
                {
                    "kind": "ReplicaSet",
                    "metadata": {
                        "name": f"{app}-{workload.template_hash}",
                        "namespace": NAMESPACE,
                        "resourceVersion": "1",
                    },
                    "spec": {
                        "selector": {
                            "matchLabels": {"app": app, "pod-template-hash": workload.template_hash}
                        }
                    },
                }
            )
    apps = [w.app for w in workloads] + ["other"]
    running = [
        _running(rng, f"run-{i}", rng.choice(nodes)["metadata"]["name"], rng.choice(apps))
        for i in range(rng.randint(0, 2 * count))
    ]
    burst = Burst(seed, rng.choice(PERCENTAGES), nodes, objects, running)
    live_nodes = [n["metadata"]["name"] for n in nodes]
    live_pods = [r["metadata"]["uid"] for r in running]
    added = 0
    pods = 0
    target = rng.randint(max_pods // 2, max_pods)
    while pods < target:
        roll = rng.random()
        if roll < 0.7 or not live_nodes:
            workload = rng.choice(workloads)
            group = [workload.pod() for _ in range(min(rng.randint(1, 12), target - pods))]
            burst.steps.append(("pods", group))
            pods += len(group)
            live_pods.extend(r["metadata"]["uid"] for r in group)
        elif roll < 0.78:
            name = f"m{added:03}"
            added += 1
            burst.steps.append(("node", _node(rng, name, zones, weights)))
            live_nodes.append(name)
        elif roll < 0.82:
            name = live_nodes.pop(rng.randrange(len(live_nodes)))
            burst.steps.append(("delete-node", name))
            burst.empties_cluster |= not live_nodes
        elif roll < 0.85:  # a node's labels change (its zone moves)
            relabelled = _node(rng, rng.choice(live_nodes), zones, weights)
            burst.steps.append(("node", relabelled))
        elif roll < 0.93:
            name = f"late-{len(burst.steps)}"
            raw = _running(rng, name, rng.choice(live_nodes), rng.choice(apps))
            owned = [w for w in workloads if w.own_label]
            if owned and len(burst.steps) % 3 == 0:
                raw["spec"]["affinity"] = _avoid(owned[len(burst.steps) % len(owned)].next_name())
            burst.steps.append(("running", raw))
            live_pods.append(raw["metadata"]["uid"])
        elif live_pods:
            burst.steps.append(("delete-pod", live_pods.pop(rng.randrange(len(live_pods)))))
    return burst
