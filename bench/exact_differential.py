"""The exact batch's differential (issue 28): batching off and on, same seed, pod by pod.

``python -m bench.exact_differential [--seeds 200] [--first 0] [--max-nodes 150]`` runs one
seeded random burst per seed twice, through a scheduler with batching off and one with
batching on (mode all), and compares every scheduling attempt: the pod, the node it went to
(or None), the unschedulable message, and after the attempt the profile's
``selector.rng`` state and ``selector.next_start``. It prints the pods compared, how many
the batched run placed on path ``exact`` (and on any batched path), and the differences;
it exits 1 on any difference, or when no pod took path ``exact``.
``tests/property/test_exact_batching_equivalence.py`` runs a small sample of the same
bursts in ``make test``.

The bursts come from :mod:`bench.exact_bursts`; this module replays one through a fresh
scheduler (:func:`run`), compares the two runs (:func:`compare_burst`) and is the command.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING

from bench.exact_bursts import burst_steps
from scheduler.app.core import build_scheduler
from scheduler.app.local_binder import LocalBinder, attempt_queued
from scheduler.batching.signature import BatchingMode
from scheduler.clock import FakeClock
from scheduler.cycle.eventhandlers import EventHandlers
from scheduler.cycle.schedule_one import BatchingSettings, Scheduler
from scheduler.framework.config import DEFAULT_SCHEDULER_NAME, default_config
from scheduler.logs.setup import configure_logging
from scheduler.model.parse import node_from_raw, pod_from_raw
from scheduler.model.parse_workloads import controller_from_raw, service_from_raw
from scheduler.model.workloads import ControllerKind

if TYPE_CHECKING:
    from bench.exact_bursts import Burst, Raw
    from scheduler.model.pod import Pod


class _Messages:
    """A Reporter that keeps each pod's last unschedulable message."""

    def __init__(self) -> None:
        self.last: dict[str, str] = {}

    def scheduled(self, pod: Pod, node: str) -> None:
        self.last.pop(pod.key, None)

    def unschedulable(self, pod: Pod, message: str) -> None:
        self.last[pod.key] = message

    def failed(self, pod: Pod, message: str) -> None:
        self.last[pod.key] = f"failed: {message}"


Attempt = tuple[str, str | None, str | None, int, int]
"""pod key, node (None: not placed), unschedulable message, hash of the rng state after,
next_start after."""


@dataclass
class RunResult:
    attempts: list[Attempt]
    exact: int
    batched: int


def _put_object(handlers: EventHandlers, raw: Raw) -> None:
    if raw["kind"] == "Service":
        handlers.on_object(service_from_raw(raw), None)
    else:
        handlers.on_object(controller_from_raw(raw, ControllerKind.REPLICA_SET), None)


def run(burst: Burst, mode: BatchingMode) -> RunResult:
    """Replay ``burst`` through a fresh scheduler (batching ``mode``), seeded by the burst."""
    reporter = _Messages()
    binder = LocalBinder()
    scheduler: Scheduler = build_scheduler(
        default_config(),
        clock=FakeClock(),
        binder=binder,
        reporter=reporter,
        batching=BatchingSettings(mode=mode),
        seed=burst.seed,
    )
    binder.scheduler = scheduler
    profile = scheduler.profiles[DEFAULT_SCHEDULER_NAME]
    profile.percentage_of_nodes_to_score = burst.percentage
    handlers = EventHandlers(scheduler)  # the watch's way in
    for raw in burst.objects:
        _put_object(handlers, raw)
    for raw in burst.nodes:
        handlers.on_node(node_from_raw(raw))
    for raw in burst.running:
        handlers.on_pod(pod_from_raw(raw))
    attempts: list[Attempt] = []
    for kind, arg in burst.steps:
        if kind == "pods":
            for raw in arg:
                handlers.on_pod(pod_from_raw(raw))
            for pod, node in attempt_queued(scheduler):
                message = None if node is not None else reporter.last.get(pod.key)
                state = hash(profile.selector.rng.getstate())
                attempts.append((pod.key, node, message, state, profile.selector.next_start))
        elif kind == "node":
            handlers.on_node(node_from_raw(arg))
        elif kind == "delete-node":
            handlers.on_node_deleted(arg)
        elif kind == "running":
            handlers.on_pod(pod_from_raw(arg))
        else:
            handlers.on_pod_deleted(arg)
    counts = scheduler.counts()
    return RunResult(attempts, counts.exact, counts.batched)


@dataclass
class Comparison:
    seed: int
    pods: int
    exact: int
    batched: int
    differences: list[str]


def compare(seed: int, *, max_nodes: int = 150, max_pods: int = 80) -> Comparison:
    """One seed through batching off and on; every differing attempt described."""
    return compare_burst(burst_steps(seed, max_nodes=max_nodes, max_pods=max_pods))


def compare_burst(burst: Burst) -> Comparison:
    """``burst`` through batching off and on; every differing attempt described."""
    seed = burst.seed
    off = run(burst, BatchingMode.OFF)
    try:
        on = run(burst, BatchingMode.ALL)
    except Exception as err:  # a crash of the batched run is a difference, reported as one
        return Comparison(
            seed, len(off.attempts), 0, 0, [f"seed {seed}: batching on raised {err!r}"]
        )
    differences = []
    fields = ("pod", "node", "message", "rng state", "next_start")
    for i, (a, b) in enumerate(zip(off.attempts, on.attempts, strict=False)):
        for name, x, y in zip(fields, a, b, strict=True):
            if x != y:
                differences.append(f"seed {seed} attempt {i} ({a[0]}): {name} off={x!r} on={y!r}")
                break
    if len(off.attempts) != len(on.attempts):
        differences.append(f"seed {seed}: {len(off.attempts)} attempts off, {len(on.attempts)} on")
    return Comparison(seed, len(off.attempts), on.exact, on.batched, differences)


def main(argv: list[str] | None = None) -> int:
    configure_logging(fmt="console", level="warning", stream=sys.stderr)
    parser = argparse.ArgumentParser(prog="python -m bench.exact_differential")
    parser.add_argument("--seeds", type=int, default=200)
    parser.add_argument("--first", type=int, default=0, help="first seed")
    parser.add_argument("--max-nodes", type=int, default=150)
    parser.add_argument("--max-pods", type=int, default=80, help="pods per burst, at most")
    a = parser.parse_args(argv)
    pods = exact = batched = 0
    differences: list[str] = []
    for seed in range(a.first, a.first + a.seeds):
        result = compare(seed, max_nodes=a.max_nodes, max_pods=a.max_pods)
        pods += result.pods
        exact += result.exact
        batched += result.batched
        differences.extend(result.differences)
        for line in result.differences[:3]:
            print(line)
    print(
        f"seeds {a.seeds}, pods compared {pods}, on path exact {exact}, "
        f"batched (any path) {batched}, differences {len(differences)}"
    )
    if not exact:
        print("no pod took path exact: the exact batch did not engage")
    return 1 if differences or not exact else 0


if __name__ == "__main__":
    raise SystemExit(main())
