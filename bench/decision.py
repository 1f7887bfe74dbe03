"""Per-pod decision cost: full pass vs batched, at 100 to 5000 nodes (no API, no I/O).

``python -m bench.decision [--nodes 100,500,1000,5000] [--repeats N] [--out DIR]`` prints a
table and writes ``DIR/decision.json`` (default ``bench/results/``). Medians over repeats;
ratios are measured within one run on this machine. This is the core's micro-benchmark;
``make bench`` also runs the end-to-end scenarios against ``sim``.

``--filling 5000`` (0 to skip) measures the one-pod-per-node burst without batching: every
pod a full pass while the nodes fill (``filling_full_pass_p50_ms``, issue 19, item 2).

Besides the table it measures, on one populated cluster (``--cluster 5000x20000``: nodes in
three zones and running pods, issue 19), a full pass for a plain pod (``full_pass_ms``) and
for an unsignable one (``unsignable_full_pass_ms``: required pod anti-affinity on the
hostname and a DoNotSchedule zone spread constraint, both selecting its own app), the cost
InterPodAffinity and PodTopologySpread add to every pod that cannot batch.

``--exact 5000x20000x200`` (NODESxPODSxBURST, '' to skip; issue 28): on such a populated
cluster, BURST pods of each of :data:`EXACT_FAMILIES` with batching off (every pod a full
pass) and on (the exact batch), with every node scored (percentageOfNodesToScore 100) and
adaptive (0): the mean decision time by path (batch_scheduler_decision_duration_seconds),
the pods on path ``exact`` and the ratio exact / full pass.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scheduler.app.core import build_scheduler
from scheduler.app.local_binder import LocalBinder, attempt_queued
from scheduler.batching.signature import BatchingMode
from scheduler.clock import FakeClock
from scheduler.cycle.eventhandlers import EventHandlers
from scheduler.cycle.schedule_one import BatchingSettings, Scheduler
from scheduler.framework.config import default_config
from scheduler.framework.cycle_state import CycleState
from scheduler.framework.results import ScheduleResult
from scheduler.logs.setup import configure_logging
from scheduler.model.parse import node_from_raw, pod_from_raw
from scheduler.model.parse_workloads import controller_from_raw, service_from_raw
from scheduler.model.workloads import ControllerKind
from scheduler.sim.workload import ZONE_LABEL, make_nodes

if TYPE_CHECKING:
    from scheduler.model.pod import Pod

RESULTS = Path(__file__).parent / "results"


ZONES = ("zone-a", "zone-b", "zone-c")
APP_SIZE = 100
"""Running pods per app in the populated cluster (each app's pods on distinct nodes)."""


def _raw_pod(name: str, cpu: str, memory: str) -> dict[str, Any]:
    return {
        "metadata": {"name": name, "namespace": "bench", "uid": f"uid-{name}"},
        "spec": {
            "schedulerName": "batch-scheduler",
            "containers": [
                {
                    "name": "c",
                    "image": "registry.k8s.io/pause:3.10",
                    "resources": {"requests": {"cpu": cpu, "memory": memory}},
                }
            ],
        },
    }


def _pod(name: str, cpu: str, memory: str) -> Pod:
    return pod_from_raw(_raw_pod(name, cpu, memory))


def _unsignable_pod(app: str) -> Pod:
    """A replica of ``app``: at most one per node (required anti-affinity on the hostname)
    and zones within a skew of 1 (DoNotSchedule), as a spread-out StatefulSet asks."""
    return pod_from_raw(_spread_replica_raw(app, "unsignable"))


def _spread_replica_raw(app: str, name: str) -> dict[str, Any]:
    raw = _raw_pod(name, "100m", "500Mi")
    selector = {"matchLabels": {"app": app}}
    raw["metadata"]["labels"] = {"app": app}
    raw["spec"]["affinity"] = {
        "podAntiAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {"labelSelector": selector, "topologyKey": "kubernetes.io/hostname"}
            ]
        }
    }
    raw["spec"]["topologySpreadConstraints"] = [
        {
            "maxSkew": 1,
            "topologyKey": ZONE_LABEL,
            "whenUnsatisfiable": "DoNotSchedule",
            "labelSelector": selector,
        }
    ]
    return raw


class _Silent:
    def scheduled(self, pod: Pod, node: str) -> None: ...
    def unschedulable(self, pod: Pod, message: str) -> None: ...
    def failed(self, pod: Pod, message: str) -> None: ...


def _scheduler(
    nodes: int, mode: BatchingMode, percentage: int, zones: tuple[str, ...] = ()
) -> Scheduler:
    config = default_config()
    binder = LocalBinder()
    scheduler = build_scheduler(
        config,
        clock=FakeClock(),
        binder=binder,
        reporter=_Silent(),
        batching=BatchingSettings(mode=mode),
        seed=1,
    )
    binder.scheduler = scheduler
    for profile in scheduler.profiles.values():
        profile.percentage_of_nodes_to_score = percentage
    handlers = EventHandlers(scheduler)  # the watch's way in
    for i, raw in enumerate(make_nodes(nodes, zones=zones)):
        raw["metadata"]["uid"] = f"uid-node-{i}"
        handlers.on_node(node_from_raw(raw))
    return scheduler


def full_pass_ms(nodes: int, percentage: int, repeats: int) -> float:
    """Median time of one full pass for a default pod (100m / 500Mi)."""
    scheduler = _scheduler(nodes, BatchingMode.OFF, percentage)
    profile = scheduler.profiles["batch-scheduler"]
    pod = _pod("probe", "100m", "500Mi")
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        profile.schedule(CycleState(), pod)
        times.append(time.perf_counter() - started)
    return statistics.median(times) * 1000


def _populate(scheduler: Scheduler, nodes: int, pods: int) -> None:
    """``pods`` running pods, app ``i // APP_SIZE``, pod ``i`` on node ``i % nodes``."""
    handlers = EventHandlers(scheduler)
    for i in range(pods):
        raw = _raw_pod(f"run-{i}", "100m", "500Mi")
        raw["metadata"]["labels"] = {"app": f"app-{i // APP_SIZE}", "tier": "backend"}
        raw["spec"]["nodeName"] = f"node-{i % nodes}"
        raw["status"] = {"phase": "Running"}
        handlers.on_pod(pod_from_raw(raw))


def unsignable_ms(nodes: int, pods: int, repeats: int) -> dict[str, float]:
    """Median full pass for a plain and for an unsignable pod on one populated cluster."""
    scheduler = _scheduler(nodes, BatchingMode.OFF, 0, ZONES)
    _populate(scheduler, nodes, pods)
    profile = scheduler.profiles["batch-scheduler"]
    probes = {
        "full_pass_ms": _pod("probe", "100m", "500Mi"),
        "unsignable_full_pass_ms": _unsignable_pod("app-7"),
    }
    times: dict[str, list[float]] = {key: [] for key in probes}
    for _ in range(repeats):  # interleaved, so that drift touches both alike
        for key, pod in probes.items():
            started = time.perf_counter()
            result = profile.schedule(CycleState(), pod)
            times[key].append(time.perf_counter() - started)
            assert isinstance(result, ScheduleResult), f"{key}: {result}"
    out = {key: statistics.median(values) * 1000 for key, values in times.items()}
    out["unsignable_ratio"] = out["unsignable_full_pass_ms"] / out["full_pass_ms"]
    return out


EXACT_FAMILIES = ("deployment", "spread-replica")
"""The exact batch's pods measured: a Deployment's (its ReplicaSet and a Service select
it: System default spreading) and the unsignable probe's (self anti-affinity on the
hostname, zone DoNotSchedule), which issue 28's exact batch serves."""


def _exact_pod(family: str, app: str, i: int) -> Pod:
    """Pod ``i`` of ``app``'s ReplicaSet ``app-h`` (controller reference) of ``family``."""
    name = f"{app}-h-{i}"
    raw = (
        _spread_replica_raw(app, name)
        if family == "spread-replica"
        else _raw_pod(name, "100m", "500Mi")
    )
    raw["metadata"]["labels"] = {"app": app, "pod-template-hash": "h"}
    raw["metadata"]["ownerReferences"] = [
        {
            "apiVersion": "apps/v1",
            "kind": "ReplicaSet",
            "name": f"{app}-h",
            "uid": f"uid-rs-{app}",
            "controller": True,
        }
    ]
    return pod_from_raw(raw)


def _deployment_objects(handlers: EventHandlers, app: str) -> None:
    """The Service and the ReplicaSet that give ``app``'s pods System default spreading."""
    meta = {"namespace": "bench", "resourceVersion": "1"}
    handlers.on_object(
        service_from_raw({"metadata": {"name": app, **meta}, "spec": {"selector": {"app": app}}}),
        None,
    )
    selector = {"matchLabels": {"app": app, "pod-template-hash": "h"}}
    replica_set = {"metadata": {"name": f"{app}-h", **meta}, "spec": {"selector": selector}}
    handlers.on_object(controller_from_raw(replica_set, ControllerKind.REPLICA_SET), None)


def exact_ms(
    nodes: int, running: int, burst: int, family: str, percentage: int
) -> dict[str, float]:
    """Per-pod decision time of ``burst`` pods of ``family`` on one populated cluster
    (``nodes`` in three zones, ``running`` pods), batching off (every pod a full pass) and
    on (the exact batch): the means of batch_scheduler_decision_duration_seconds by path,
    and how many pods took path exact. ``percentage``: percentageOfNodesToScore (0:
    adaptive)."""
    out: dict[str, float] = {}
    for mode in (BatchingMode.OFF, BatchingMode.ALL):
        scheduler = _scheduler(nodes, mode, percentage, ZONES)
        _populate(scheduler, nodes, running)
        handlers = EventHandlers(scheduler)
        app = f"exact-{family}"
        _deployment_objects(handlers, app)
        for i in range(burst):
            handlers.on_pod(_exact_pod(family, app, i))
        placed = sum(node is not None for _, node in attempt_queued(scheduler))
        assert placed == burst, f"{family}: {placed} of {burst} placed"
        metrics = scheduler.metrics
        counts = metrics.by_label(metrics.decision_duration, "path")
        sums = metrics.by_label(metrics.decision_duration, "path", field="sum")
        paths = ("full",) if mode is BatchingMode.OFF else ("exact", "full")
        for path in paths:
            key = f"{path}_ms" if mode is BatchingMode.ALL else "off_full_ms"
            count = counts.get(path, 0)
            out[key] = sums[path] / count * 1000 if count else float("nan")
        if mode is BatchingMode.ALL:
            out["exact_pods"] = counts.get("exact", 0)
    out["ratio"] = out["exact_ms"] / out["off_full_ms"]
    return out


def batched_ms(nodes: int, cpu: str, memory: str, pods: int, repeats: int) -> dict[str, float]:
    """Median per-pod cost of hinted cycles and of full passes for a burst of equal pods."""
    hinted, full = [], []
    for r in range(repeats):
        scheduler = _scheduler(nodes, BatchingMode.ALL, 0)
        handlers = EventHandlers(scheduler)
        for i in range(pods):
            handlers.on_pod(_pod(f"r{r}-p{i}", cpu, memory))
        for _ in attempt_queued(scheduler):
            pass
        stats = scheduler.counts()
        if stats.batched:
            hinted.append(stats.batched_seconds / stats.batched)
        if stats.full_passes:
            full.append((stats.decision_seconds - stats.batched_seconds) / stats.full_passes)
    return {
        "batched_ms": statistics.median(hinted) * 1000 if hinted else float("nan"),
        "full_pass_ms": statistics.median(full) * 1000 if full else float("nan"),
    }


def filling_ms(nodes: int) -> dict[str, float]:
    """The one-pod-per-node burst without batching and without I/O: ``nodes`` pods of 3 CPU /
    1Gi onto ``nodes`` nodes of 4 CPU, each a full pass, in queue order. As the nodes fill, a
    pass must look past more full nodes to find its share of feasible ones (issue 19, item 2:
    the end-to-end burst's decision p50). Median and mean milliseconds per decision."""
    scheduler = _scheduler(nodes, BatchingMode.OFF, 0)
    handlers = EventHandlers(scheduler)
    for i in range(nodes):
        handlers.on_pod(_pod(f"fill-{i}", "3", "1Gi"))
    times = []
    started = time.perf_counter()
    for _, node in attempt_queued(scheduler):
        now = time.perf_counter()
        times.append(now - started)
        started = now
        assert node is not None, "every pod of the burst fits"
    return {
        "filling_full_pass_p50_ms": statistics.median(times) * 1000,
        "filling_full_pass_mean_ms": statistics.mean(times) * 1000,
    }


def main(argv: list[str] | None = None) -> dict[str, Any]:
    configure_logging(fmt="console", level="warning", stream=sys.stderr)
    parser = argparse.ArgumentParser(prog="python -m bench.decision")
    parser.add_argument("--nodes", default="100,500,1000,5000")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument(
        "--cluster",
        default="5000x20000",
        help="NODESxPODS of the populated cluster for the unsignable pass ('' to skip)",
    )
    parser.add_argument(
        "--filling",
        type=int,
        default=5000,
        help="nodes of the filling burst without batching (0 to skip)",
    )
    parser.add_argument(
        "--exact",
        default="5000x20000x200",
        help="NODESxPODSxBURST: the exact batch vs the full pass for BURST pods of each "
        "family on a populated cluster, every node scored and adaptive ('' to skip)",
    )
    parser.add_argument("--out", type=Path, default=RESULTS, help="directory for decision.json")
    args = parser.parse_args(argv)
    sizes = [int(n) for n in args.nodes.split(",") if n]
    random.seed(0)
    rows = []
    print(
        f"{'nodes':>6} {'full adaptive':>14} {'full 100%':>10} "
        f"{'1/node batched':>15} {'ratio':>7} {'many/node batched':>18} {'ratio':>7}"
    )
    for nodes in sizes:
        adaptive = full_pass_ms(nodes, 0, args.repeats * 3)
        everything = full_pass_ms(nodes, 100, args.repeats * 3)
        one = batched_ms(nodes, "3", "1Gi", min(nodes, 500), args.repeats)
        many = batched_ms(nodes, "100m", "500Mi", 500, args.repeats)
        row = {
            "nodes": nodes,
            "full_pass_adaptive_ms": adaptive,
            "full_pass_100pct_ms": everything,
            "one_per_node_batched_ms": one["batched_ms"],
            "one_per_node_ratio": one["batched_ms"] / adaptive,
            "many_per_node_batched_ms": many["batched_ms"],
            "many_per_node_ratio": many["batched_ms"] / adaptive,
        }
        rows.append(row)
        print(
            f"{nodes:>6} {adaptive:>12.3f}ms {everything:>8.2f}ms "
            f"{one['batched_ms']:>13.4f}ms {row['one_per_node_ratio']:>7.4f} "
            f"{many['batched_ms']:>16.4f}ms {row['many_per_node_ratio']:>7.4f}"
        )
    report: dict[str, Any] = {"benchmark": "decision", "repeats": args.repeats, "rows": rows}
    if args.cluster:
        nodes, _, pods = args.cluster.partition("x")
        populated = unsignable_ms(int(nodes), int(pods), args.repeats * 6)
        report.update(cluster_nodes=int(nodes), running_pods=int(pods), **populated)
        print(
            f"{nodes} nodes, {pods} running pods: full pass {populated['full_pass_ms']:.3f}ms, "
            f"unsignable {populated['unsignable_full_pass_ms']:.3f}ms "
            f"(ratio {populated['unsignable_ratio']:.2f})"
        )
    if args.filling:
        filling = filling_ms(args.filling)
        report.update(filling_nodes=args.filling, **filling)
        print(
            f"{args.filling} nodes filling, one pod per node, batching off: full pass p50 "
            f"{filling['filling_full_pass_p50_ms']:.3f}ms, "
            f"mean {filling['filling_full_pass_mean_ms']:.3f}ms"
        )
    if args.exact:
        nodes, running, burst = (int(v) for v in args.exact.split("x"))
        exact_rows = []
        for family in EXACT_FAMILIES:
            for percentage in (100, 0):
                # A collection of the old generation (about 50 ms at 5000 nodes and 20 000
                # pods) lands in some bursts and not others: medians over repeats.
                runs = [
                    exact_ms(nodes, running, burst, family, percentage)
                    for _ in range(max(1, min(args.repeats, 3)))
                ]
                row = {key: statistics.median(r[key] for r in runs) for key in runs[0]}
                exact_rows.append(
                    {"family": family, "percentage": percentage, "runs": len(runs), **row}
                )
                print(
                    f"{nodes} nodes, {running} running, {burst} {family} pods, "
                    f"percentageOfNodesToScore {percentage or 'adaptive'}: full pass "
                    f"{row['off_full_ms']:.3f}ms, exact {row['exact_ms']:.4f}ms "
                    f"({row['exact_pods']:.0f} pods on path exact), ratio {row['ratio']:.4f} "
                    f"(medians of {len(runs)}; ratios "
                    + ", ".join(f"{r['ratio']:.3f}" for r in runs)
                    + ")"
                )
        report.update(exact_nodes=nodes, exact_running_pods=running, exact_burst=burst)
        report["exact"] = exact_rows
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "decision.json").write_text(json.dumps(report, indent=2) + "\n")
    return report


if __name__ == "__main__":
    main()
