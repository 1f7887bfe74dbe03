"""The gang differential (issue 38): a pod group's cycle against placing its members one by
one, on seeded random clusters of gangs mixed with plain pods and nodes filling up.

``python -m bench.gang_differential [--seeds 400] [--first 0] [--min-gang-pods 10000]``
runs seeds until at least ``--min-gang-pods`` pods of groups were compared, each seed's
scenario three times:

1. the group cycle (GenericWorkload), batching off, against a sequential reference — each
   member through the plain pod cycle in the group's order, one full pass each, a gang's
   placements undone when fewer than minCount fit (no member tried once minCount is out of
   reach, as the group cycle): every pod on the same node (the same tie draws);
2. the group cycle with batching on (hint, rescore, exact path shared by the members of a
   signature) against 1: as many pods of every entity placed, and every batched decision
   one a full pass makes (``verify_ratio`` 1: no ``lower_score`` or ``exact_mismatch``).

Every node is scored (``percentageOfNodesToScore: 100``): KEP-5598's hint ranks the nodes
the first pod's full pass scored, so under kube's adaptive sampling (clusters above 100
nodes) a later full pass may look at other nodes and find a better one — in kube as here,
and not what this compares.

It prints the pods compared, per decision path, and the differences; exit 1 on any.
``tests/property/test_gang_batching_equivalence.py`` runs a sample in ``make test``.
"""

from __future__ import annotations

import argparse
import random
import sys
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from scheduler.app.core import build_scheduler
from scheduler.app.local_binder import LocalBinder, attempt_queued
from scheduler.batching.signature import BatchingMode
from scheduler.clock import FakeClock
from scheduler.cycle.eventhandlers import EventHandlers
from scheduler.cycle.ports import NoPreemptor
from scheduler.cycle.schedule_one import BatchingSettings, Scheduler
from scheduler.framework.config import API_VERSION, DEFAULT_SCHEDULER_NAME, KIND, load_config
from scheduler.framework.feature_gates import FeatureGates, parse_feature_gates
from scheduler.logs.setup import configure_logging
from scheduler.model.parse import node_from_raw, pod_from_raw
from scheduler.model.parse_pod_groups import pod_group_from_raw

if TYPE_CHECKING:
    from scheduler.model.pod import Pod

Raw = dict[str, Any]
GATES = parse_feature_gates("GenericWorkload=true")
ZONE = "topology.kubernetes.io/zone"


@dataclass
class Scenario:
    """Nodes, then entities in arrival order: a plain pod, or a PodGroup and its members."""

    nodes: list[Raw]
    entities: list[tuple[Raw | None, list[Raw]]] = field(default_factory=list)

    @property
    def gang_pods(self) -> int:
        return sum(len(members) for group, members in self.entities if group is not None)


def scenario(
    seed: int, *, nodes: tuple[int, int] = (3, 10), entities: tuple[int, int] = (3, 8)
) -> Scenario:
    """Seeded nodes of 2-8 CPUs in 1-3 zones; entities of one signature each: a plain pod,
    a basic group or a gang (minCount 1..size), a third of groups spread by host or zone."""
    rnd = random.Random(seed)
    zones = ["a", "b", "c"][: rnd.randint(1, 3)]
    out = Scenario(
        [
            _node(f"n{i:03}", rnd.choice([2, 4, 8]), rnd.choice([4, 8, 16]), rnd.choice(zones))
            for i in range(rnd.randint(*nodes))
        ]
    )
    for e in range(rnd.randint(*entities)):
        cpu = rnd.choice(["500m", "1", "2", "3"])
        if rnd.random() < 0.3:
            out.entities.append((None, [_pod(f"solo-{e}", cpu)]))
            continue
        size = rnd.randint(2, 6)
        min_count = rnd.randint(1, size) if rnd.random() < 0.8 else None
        spread = None
        if rnd.random() < 0.3:
            spread = {
                "maxSkew": 1,
                "topologyKey": rnd.choice(["kubernetes.io/hostname", ZONE]),
                "whenUnsatisfiable": rnd.choice(["DoNotSchedule", "ScheduleAnyway"]),
                "labelSelector": {"matchLabels": {"group": f"g{e}"}},
            }
        members = [_pod(f"g{e}-m{m}", cpu, group=f"g{e}", spread=spread) for m in range(size)]
        out.entities.append((_pod_group(f"g{e}", min_count), members))
    return out


def run_groups(
    case: Scenario, mode: BatchingMode, *, seed: int, verify: float = 0.0
) -> tuple[dict[str, str | None], Scheduler]:
    """Every entity through a scheduler with GenericWorkload, one at a time, in order."""
    scheduler = _scheduler(case, mode, seed=seed, gates=GATES, verify=verify)
    events = EventHandlers(scheduler)
    placed: dict[str, str | None] = {}
    for group, members in case.entities:
        if group is not None:
            events.on_object(pod_group_from_raw(group), None)
        for raw in members:
            events.on_pod(pod_from_raw(raw))
        placed.update(_attempt(scheduler))
    return placed, scheduler


def run_sequential(case: Scenario, *, seed: int) -> dict[str, str | None]:
    """The reference of the module docstring (batching off, no gate: plain pods)."""
    scheduler = _scheduler(case, BatchingMode.OFF, seed=seed, gates=FeatureGates())
    events = EventHandlers(scheduler)
    placed: dict[str, str | None] = {}
    for group, members in case.entities:
        pods = sorted((pod_from_raw(raw) for raw in members), key=lambda pod: pod.name)
        min_count = 1 if group is None else pod_group_from_raw(group).min_count
        done: list[Pod] = []
        remaining = len(pods)
        for pod in pods:
            if len(done) + remaining < min_count:
                break
            scheduler.enqueue(pod)
            result = _attempt(scheduler)
            remaining -= 1
            if result.get(pod.key):
                done.append(pod)
        placed.update({pod.key: None for pod in pods})
        if len(done) < min_count:
            for pod in done:  # all or nothing: the gang's placements go
                events.on_pod_deleted(pod.uid)
            continue
        for pod in done:
            held = scheduler.cluster.get_pod(pod.uid)
            placed[pod.key] = held.node_name if held is not None else None
    return placed


def compare(seed: int, case: Scenario) -> tuple[list[str], dict[str, float]]:
    """The differences of one seed (empty: none) and the batched run's decision paths."""
    differences: list[str] = []
    grouped, _ = run_groups(case, BatchingMode.OFF, seed=seed)
    sequential = run_sequential(case, seed=seed)
    for key, node in sequential.items():
        if grouped.get(key) != node:
            differences.append(
                f"seed {seed}: {key}: group cycle {grouped.get(key)}, one by one {node}"
            )
    batched, scheduler = run_groups(case, BatchingMode.ALL, seed=seed, verify=1.0)
    for group, members in case.entities:
        keys = [f"default/{raw['metadata']['name']}" for raw in members]
        on = sum(1 for key in keys if batched.get(key))
        off = sum(1 for key in keys if grouped.get(key))
        if on != off:
            name = group["metadata"]["name"] if group else keys[0]
            differences.append(f"seed {seed}: {name}: {on} placed batched, {off} unbatched")
    metrics = scheduler.metrics
    divergences = metrics.by_label(metrics.batch_divergence, "kind")
    differences += [
        f"seed {seed}: {int(divergences[kind])} {kind}"
        for kind in ("lower_score", "exact_mismatch")
        if divergences.get(kind)
    ]
    return differences, metrics.by_label(metrics.decision_duration, "path")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.gang_differential")
    parser.add_argument("--seeds", type=int, default=400, help="at most this many seeds")
    parser.add_argument("--first", type=int, default=0, help="first seed")
    parser.add_argument("--min-gang-pods", type=int, default=10_000)
    args = parser.parse_args(argv)
    configure_logging(level="warning")
    compared = gang = 0
    paths: dict[str, float] = {}
    differences: list[str] = []
    for seed in range(args.first, args.first + args.seeds):
        case = scenario(seed, nodes=(20, 120), entities=(20, 60))
        found, seen = compare(seed, case)
        differences += found
        compared += sum(len(members) for _, members in case.entities)
        gang += case.gang_pods
        for path, count in seen.items():
            paths[path] = paths.get(path, 0.0) + count
        if gang >= args.min_gang_pods:
            break
    by_path = ", ".join(f"{path} {int(n)}" for path, n in sorted(paths.items()))
    print(
        f"seeds {seed - args.first + 1}, pods compared {compared}, of groups {gang}, "
        f"batched decisions by path: {by_path}, differences {len(differences)}"
    )
    for line in differences[:20]:
        print(line)
    return 1 if differences else 0


def _scheduler(
    case: Scenario, mode: BatchingMode, *, seed: int, gates: FeatureGates, verify: float = 0.0
) -> Scheduler:
    binder = LocalBinder()
    every_node = {"apiVersion": API_VERSION, "kind": KIND, "percentageOfNodesToScore": 100}
    scheduler = build_scheduler(
        load_config(every_node, gates=gates),
        clock=FakeClock(),
        binder=binder,
        reporter=_Silent(),
        batching=BatchingSettings(mode=mode, verify_ratio=verify),
        seed=seed,
        gates=gates,
        preemptor=NoPreemptor(),
    )
    binder.scheduler = scheduler
    events = EventHandlers(scheduler)
    for raw in case.nodes:
        events.on_node(node_from_raw(raw))
    return scheduler


def _attempt(scheduler: Scheduler) -> dict[str, str | None]:
    return {pod.key: node for pod, node in attempt_queued(scheduler)}


class _Silent:
    """A Reporter that reports nothing (only placements are compared)."""

    def scheduled(self, pod: Pod, node: str) -> None:
        return None

    def unschedulable(self, pod: Pod, message: str) -> None:
        return None

    def failed(self, pod: Pod, message: str) -> None:
        return None


def _node(name: str, cpu: int, memory: int, zone: str) -> Raw:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, ZONE: zone}},
        "status": {"allocatable": {"cpu": str(cpu), "memory": f"{memory}Gi", "pods": "110"}},
    }


def _pod(name: str, cpu: str, *, group: str | None = None, spread: Raw | None = None) -> Raw:
    spec: Raw = {
        "schedulerName": DEFAULT_SCHEDULER_NAME,
        "containers": [{"name": "c", "image": "pause", "resources": {"requests": {"cpu": cpu}}}],
    }
    labels = {}
    if group is not None:
        spec["schedulingGroup"] = {"podGroupName": group}
        labels["group"] = group
    if spread is not None:
        spec["topologySpreadConstraints"] = [spread]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}", "labels": labels},
        "spec": spec,
        "status": {"phase": "Pending"},
    }


def _pod_group(name: str, min_count: int | None) -> Raw:
    policy: Raw = {"basic": {}} if min_count is None else {"gang": {"minCount": min_count}}
    return {
        "apiVersion": "scheduling.k8s.io/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": name, "namespace": "default", "uid": f"uid-pg-{name}"},
        "spec": {"schedulingPolicy": policy},
    }


if __name__ == "__main__":
    sys.exit(main())
