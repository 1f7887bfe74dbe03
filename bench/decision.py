"""Per-pod decision cost: full pass vs batched, at 100 to 5000 nodes (no API, no I/O).

``python -m bench.decision [--nodes 100,500,1000,5000] [--repeats N]`` prints a table and
writes ``bench/results/decision.json``. Medians over repeats; ratios are measured within one
run on this machine. This is the core's micro-benchmark; ``make bench`` also runs the
end-to-end scenarios against ``sim``.
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
from scheduler.batching.signature import BatchingMode
from scheduler.clock import FakeClock
from scheduler.cycle.ports import BindDone, BindRequest, BindResult
from scheduler.cycle.schedule_one import BatchingSettings, Scheduler
from scheduler.framework.config import default_config
from scheduler.framework.cycle_state import CycleState
from scheduler.logs.setup import configure_logging
from scheduler.model.parse import node_from_raw, pod_from_raw
from scheduler.sim.workload import make_nodes

if TYPE_CHECKING:
    from scheduler.model.pod import Pod

RESULTS = Path(__file__).parent / "results"


def _pod(name: str, cpu: str, memory: str) -> Pod:
    return pod_from_raw(
        {
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
    )


class _Binder:
    """Binds at once and confirms, as simulate does."""

    scheduler: Scheduler | None = None

    def dispatch(self, request: BindRequest, done: BindDone) -> None:
        done(request, BindResult.BOUND, "")
        assert self.scheduler is not None
        self.scheduler.cluster.add_pod(request.pod)


class _Silent:
    def scheduled(self, pod: Pod, node: str) -> None: ...
    def unschedulable(self, pod: Pod, message: str) -> None: ...
    def failed(self, pod: Pod, message: str) -> None: ...


def _scheduler(nodes: int, mode: BatchingMode, percentage: int) -> Scheduler:
    config = default_config()
    binder = _Binder()
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
    for i, raw in enumerate(make_nodes(nodes)):
        raw["metadata"]["uid"] = f"uid-node-{i}"
        scheduler.cluster.add_node(node_from_raw(raw))
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


def batched_ms(nodes: int, cpu: str, memory: str, pods: int, repeats: int) -> dict[str, float]:
    """Median per-pod cost of hinted cycles and of full passes for a burst of equal pods."""
    hinted, full = [], []
    for r in range(repeats):
        scheduler = _scheduler(nodes, BatchingMode.ALL, 0)
        for i in range(pods):
            scheduler.enqueue(_pod(f"r{r}-p{i}", cpu, memory))
        while group := scheduler.queue.try_pop_group():
            for info in group:
                scheduler.schedule_one(info)
        stats = scheduler.stats
        if stats.batched:
            hinted.append(stats.batched_seconds / stats.batched)
        if stats.full_passes:
            full.append((stats.decision_seconds - stats.batched_seconds) / stats.full_passes)
    return {
        "batched_ms": statistics.median(hinted) * 1000 if hinted else float("nan"),
        "full_pass_ms": statistics.median(full) * 1000 if full else float("nan"),
    }


def main(argv: list[str] | None = None) -> dict[str, Any]:
    configure_logging(fmt="console", level="warning", stream=sys.stderr)
    parser = argparse.ArgumentParser(prog="python -m bench.decision")
    parser.add_argument("--nodes", default="100,500,1000,5000")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args(argv)
    sizes = [int(n) for n in args.nodes.split(",")]
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
    RESULTS.mkdir(exist_ok=True)
    report = {"benchmark": "decision", "repeats": args.repeats, "rows": rows}
    (RESULTS / "decision.json").write_text(json.dumps(report, indent=2) + "\n")
    return report


if __name__ == "__main__":
    main()
