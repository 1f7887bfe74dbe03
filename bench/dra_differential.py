"""Batching DRA pods changes nothing (issue 40 item 4): seeded random cases, off vs on.

Each case (:mod:`bench.dra_cases`: random slices, DeviceClasses, CEL selectors, templates,
claims and steps) is replayed through a fresh scheduler with batching off and with
``--batching all``, attempt by attempt: the pod, its node, the devices allocated to each of
its claims, the unschedulable message, the profile's rng state and ``next_start`` after it.
Each bind is confirmed (the watch's echo) only after the next pod's attempt, as in ``run``,
where the next pod is decided while the last one's bind is in flight.
Any difference is printed; the exit status is 1 on a difference, or when no DRA pod took
the exact path (the batching did not engage).

    python -m bench.dra_differential --seeds 100 --max-nodes 150 --max-pods 120

``tests/unit/batching/test_dra_batching.py`` runs a small sample of the same comparison.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING

from bench.dra_cases import NAMESPACE, Case, case
from scheduler.app.core import build_scheduler
from scheduler.app.local_binder import LocalBinder, attempt_queued
from scheduler.batching.signature import BatchingMode
from scheduler.clock import FakeClock
from scheduler.cycle.eventhandlers import EventHandlers
from scheduler.cycle.ports import BindResult
from scheduler.cycle.schedule_one import BatchingSettings, Scheduler
from scheduler.framework.config import DEFAULT_SCHEDULER_NAME, default_config
from scheduler.logs.setup import configure_logging
from scheduler.model.keys import Uid
from scheduler.model.parse import node_from_raw, pod_from_raw
from scheduler.model.parse_dra_claims import device_class_from_raw, resource_claim_from_raw
from scheduler.model.parse_dra_slices import resource_slice_from_raw

if TYPE_CHECKING:
    from scheduler.model.pod import Pod

Devices = tuple[tuple[str, ...], ...]
Attempt = tuple[str, str | None, Devices, str | None, int, int]
"""pod key, node (None: not placed), per claim the allocated (request, driver, pool,
device), the unschedulable message, hash of the rng state after, next_start after."""
FIELDS = ("pod", "node", "devices", "message", "rng state", "next_start")


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


@dataclass
class RunResult:
    attempts: list[Attempt]
    exact: int
    batched: int


def _devices(scheduler: Scheduler, names: list[str]) -> Devices:
    found = []
    for name in names:
        claim = scheduler.cluster.dra.claim(NAMESPACE, name)
        allocation = None if claim is None else claim.allocation
        found.append(
            ()
            if allocation is None
            else tuple(f"{r.request} {r.driver} {r.pool} {r.device}" for r in allocation.results)
        )
    return tuple(found)


def run(dra_case: Case, mode: BatchingMode) -> RunResult:
    """Replay ``dra_case`` through a fresh scheduler (batching ``mode``), seeded by it."""
    reporter = _Messages()
    binder = LocalBinder(auto=False)
    scheduler: Scheduler = build_scheduler(
        default_config(),
        clock=FakeClock(),
        binder=binder,
        reporter=reporter,
        batching=BatchingSettings(mode=mode),
        seed=dra_case.seed,
    )
    binder.scheduler = scheduler
    profile = scheduler.profiles[DEFAULT_SCHEDULER_NAME]
    profile.percentage_of_nodes_to_score = dra_case.percentage
    handlers = EventHandlers(scheduler)  # the watch's way in
    for raw in dra_case.classes:
        handlers.on_object(device_class_from_raw(raw), None)
    for raw in dra_case.slices:
        handlers.on_object(resource_slice_from_raw(raw), None)
    for raw in dra_case.nodes:
        handlers.on_node(node_from_raw(raw))
    claims_of: dict[str, list[str]] = {}
    placed: list[str] = []
    attempts: list[Attempt] = []
    for kind, arg in dra_case.steps:
        if kind == "allocate":
            handlers.on_object(resource_claim_from_raw(arg), None)
        elif kind == "slice":
            handlers.on_object(resource_slice_from_raw(arg), None)
        elif kind == "free":
            if placed:
                _free(scheduler, handlers, placed.pop(arg % len(placed)), claims_of)
        else:
            for pod_raw, claim_raws in arg:
                for raw in claim_raws:
                    handlers.on_object(resource_claim_from_raw(raw), None)
                claims_of[pod_raw["metadata"]["uid"]] = [c["metadata"]["name"] for c in claim_raws]
                handlers.on_pod(pod_from_raw(pod_raw))
            for pod, node in attempt_queued(scheduler):
                _confirm(binder, keep=1)
                message = None if node is not None else reporter.last.get(pod.key)
                if node is not None:
                    placed.append(pod.uid)
                state = hash(profile.selector.rng.getstate())
                devices = _devices(scheduler, claims_of.get(pod.uid, []))
                attempts.append(
                    (pod.key, node, devices, message, state, profile.selector.next_start)
                )
            _confirm(binder, keep=0)
    counts = scheduler.counts()
    return RunResult(attempts, counts.exact, counts.batched)


def _confirm(binder: LocalBinder, *, keep: int) -> None:
    """The watch confirms the binds but the newest ``keep``: the next pod is decided while
    the last one's bind is in flight (its devices taken by Reserve and PreBind, its
    confirmation not seen yet), as in ``run``."""
    while len(binder.pending) > keep:
        request, done = binder.pending.pop(0)
        binder.finish(request, done, BindResult.BOUND)


def _free(
    scheduler: Scheduler, handlers: EventHandlers, uid: str, claims_of: dict[str, list[str]]
) -> None:
    """The pod is deleted, and its claims with it (the resource-claim controller's job)."""
    handlers.on_pod_deleted(Uid(uid))
    for name in claims_of.pop(uid, []):
        claim = scheduler.cluster.dra.claim(NAMESPACE, name)
        if claim is not None:
            handlers.on_object_deleted(claim)


@dataclass
class Comparison:
    seed: int
    pods: int
    exact: int
    batched: int
    differences: list[str]
    unschedulable: int = 0
    """Attempts that placed no pod (their messages compared too)."""


def compare(seed: int, *, max_nodes: int = 40, max_pods: int = 60) -> Comparison:
    """One seed through batching off and on; every differing attempt described."""
    return compare_case(case(seed, max_nodes=max_nodes, max_pods=max_pods))


def compare_case(dra_case: Case) -> Comparison:
    """``dra_case`` through batching off and on; every differing attempt described."""
    seed = dra_case.seed
    off = run(dra_case, BatchingMode.OFF)
    try:
        on = run(dra_case, BatchingMode.ALL)
    except Exception as err:  # a crash of the batched run is a difference, reported as one
        return Comparison(
            seed, len(off.attempts), 0, 0, [f"seed {seed}: batching on raised {err!r}"]
        )
    differences = []
    for i, (a, b) in enumerate(zip(off.attempts, on.attempts, strict=False)):
        for name, x, y in zip(FIELDS, a, b, strict=True):
            if x != y:
                differences.append(f"seed {seed} attempt {i} ({a[0]}): {name} off={x!r} on={y!r}")
                break
    if len(off.attempts) != len(on.attempts):
        differences.append(f"seed {seed}: {len(off.attempts)} attempts off, {len(on.attempts)} on")
    unschedulable = sum(1 for attempt in off.attempts if attempt[1] is None)
    return Comparison(seed, len(off.attempts), on.exact, on.batched, differences, unschedulable)


def main(argv: list[str] | None = None) -> int:
    configure_logging(fmt="console", level="warning", stream=sys.stderr)
    parser = argparse.ArgumentParser(prog="python -m bench.dra_differential")
    parser.add_argument("--seeds", type=int, default=100)
    parser.add_argument("--first", type=int, default=0, help="first seed")
    parser.add_argument("--max-nodes", type=int, default=150)
    parser.add_argument("--max-pods", type=int, default=120, help="pods per case, at most")
    a = parser.parse_args(argv)
    pods = exact = batched = unschedulable = 0
    differences: list[str] = []
    for seed in range(a.first, a.first + a.seeds):
        result = compare(seed, max_nodes=a.max_nodes, max_pods=a.max_pods)
        pods += result.pods
        exact += result.exact
        batched += result.batched
        unschedulable += result.unschedulable
        differences.extend(result.differences)
        for line in result.differences[:3]:
            print(line)
    print(
        f"seeds {a.seeds}, attempts compared {pods} ({unschedulable} unschedulable), "
        f"on path exact {exact}, batched (any path) {batched}, differences {len(differences)}"
    )
    if not exact:
        print("no pod took path exact: the batching of DRA pods did not engage")
    return 1 if differences or not exact else 0


if __name__ == "__main__":
    raise SystemExit(main())
