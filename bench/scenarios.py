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


@dataclass(frozen=True)
class Scenario:
    name: str
    description: str
    pods_per_node: int
    build: Callable[[int], list[dict[str, Any]]]
    """nodes → the pod objects, in creation order."""


def _pods(count: int, prefix: str = "p-", **kw: Any) -> list[dict[str, Any]]:
    return workload.make_pods(count, prefix=prefix, scheduler_name=SCHEDULER_NAME, **kw)


def _one_per_node(nodes: int) -> list[dict[str, Any]]:
    # scheduler_perf's batching ResourceSaturation: 3-CPU pods on 4-CPU nodes.
    return _pods(nodes, cpu="3", memory="1Gi", labels={"app": "saturate"})


def _host_port(nodes: int) -> list[dict[str, Any]]:
    # scheduler_perf's HostPortConflict pods: hostPort 80, 100m / 100Mi.
    return _pods(nodes, cpu="100m", memory="100Mi", host_port=80, labels={"app": "port"})


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


SCENARIOS: dict[str, Scenario] = {
    s.name: s
    for s in (
        Scenario("one-pod-per-node", "3-CPU pods on 4-CPU nodes, one per node", 1, _one_per_node),
        Scenario("host-port", "hostPort 80 (100m/100Mi), one per node", 1, _host_port),
        Scenario("multi-pod-per-node", "100m/500Mi pods, four per node", 4, _multi_per_node),
        Scenario("unsignable", "required anti-affinity (never conflicts)", 1, _unsignable),
        Scenario("mixed", "job / web / unsignable interleaved", 2, _mixed),
    )
}


CEILING_SCENARIOS = ("one-pod-per-node", "multi-pod-per-node")
"""The bind ceiling is measured with these workloads (the others bind the same way)."""
