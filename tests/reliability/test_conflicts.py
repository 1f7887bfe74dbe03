"""A rogue binder takes 5 % of our pending pods first: our binds of those end in 409.

The emulator's rogue binds a target pod the moment our bind request for it arrives (or after
``rogue_delay``), choosing a node it fits on. Our scheduler must drop such a pod (no retry),
forget its assumption (the node's resources are free again in the cache), and never leave a
node over-committed. The proof that no assumption lingers: after the first wave, a second
wave sized to the exact free capacity of the general pool must bind completely, and the one
pod more per node (overflow) must not.
"""

from __future__ import annotations

import time
from fractions import Fraction
from typing import TYPE_CHECKING, Any

import pytest

from scheduler.sim import workload as simwork
from scheduler.sim.faults import FaultConfig
from tests.reliability import invariants
from tests.reliability.support import (
    Figures,
    MakeSim,
    Workload,
    create_paced,
    mixed_workload,
    settle,
    verify,
)
from tests.scheduler_process import BATCHING, SCHEDULER, SchedulerProc, wait_for

if TYPE_CHECKING:
    from pathlib import Path

pytestmark = [pytest.mark.reliability, pytest.mark.timeout(150)]

FILL_CPU = Fraction(1, 4)  # 250m: 16 per 4-CPU node


def _free_general_slots(nodes: list[dict[str, Any]], pods: list[dict[str, Any]]) -> int:
    """How many more 250m pods the general pool holds, from the API's own state."""
    used: dict[str, Fraction] = {}
    count: dict[str, int] = {}
    for p in pods:
        node = (p.get("spec") or {}).get("nodeName")
        if node:
            used[node] = used.get(node, Fraction(0)) + invariants.pod_requests(p).get(
                "cpu", Fraction(0)
            )
            count[node] = count.get(node, 0) + 1
    free = 0
    for n in nodes:
        if (n["metadata"].get("labels") or {}).get("pool") != "general":
            continue
        name = n["metadata"]["name"]
        cpu = invariants.quantity(n["status"]["allocatable"]["cpu"]) - used.get(name, 0)
        slots = int(n["status"]["allocatable"]["pods"]) - count.get(name, 0)
        free += max(0, min(int(cpu / FILL_CPU), slots))
    return free


def test_rogue_binder_conflicts_are_dropped_and_forgotten(
    make_sim: MakeSim, tmp_path: Path, figures: Figures
) -> None:
    faults = FaultConfig(
        rogue_bind_fraction=0.05, rogue_scheduler_name=SCHEDULER, rogue_delay=5.0, seed=3
    )
    sim, api, kubeconfig = make_sim(faults)
    # Wave 1: half the general pool's capacity plus every other kind of pod.
    work = mixed_workload(
        "c-", general=20, per_node=16, overflow=0, zone_pods=60, dedicated_pods=40
    )
    fill = [p for p in work.pods if invariants.pod_key(p) in work.fill]
    later = {invariants.pod_key(p) for p in fill[160:]}
    wave1 = [p for p in work.pods if invariants.pod_key(p) not in later]
    work.pods, work.fill, work.fill_capacity = wave1, set(), 0
    work.must_bind |= {invariants.pod_key(p) for p in fill[:160]}
    create_paced(api, work.nodes)
    proc = SchedulerProc(kubeconfig, tmp_path / "scheduler.log")
    try:
        proc.wait_ready()
        started = time.monotonic()
        create_paced(api, wave1)
        ok, _, pods = settle(api, work, [proc], timeout=60)
        assert ok, "wave 1 did not settle"
        rogue_binds = api.stats().get("rogue_binds", 0)
        conflicts = proc.metric("batch_scheduler_binds_total", result="conflict")
        dropped = {r["pod"] for r in proc.events("bind_dropped")}
        assert conflicts >= 5, f"rogue binds {rogue_binds}, conflicts {conflicts}"
        assert len(dropped) == conflicts  # each conflicted pod dropped once
        bound_by_us = {r["pod"] for r in proc.events("pod_bound")}
        assert not dropped & bound_by_us, "a conflicted pod was bound by us after all"

        # The rogue rests; wave 2 fills the general pool exactly, plus one pod too many per
        # two nodes. Any assumption of a conflicted pod still held would leave a slot short.
        sim.run_sync(lambda: setattr(sim.faults.config, "rogue_bind_fraction", 0.0))
        free = _free_general_slots(api.nodes(), pods)
        assert free > 100
        wave2 = simwork.make_pods(
            free + 10,
            prefix="c-fill2-",
            scheduler_name=SCHEDULER,
            cpu="250m",
            memory="256Mi",
            node_selector={"pool": "general"},
            annotations=BATCHING,
            labels={"kind": "fill2"},
        )
        second = Workload(
            pods=wave1 + wave2,
            must_bind=work.must_bind,
            must_fail=work.must_fail,
            fill={invariants.pod_key(p) for p in wave2},
            fill_capacity=free,
            foreign=work.foreign,
        )
        create_paced(api, wave2)
        ok, _, pods = settle(api, second, [proc], timeout=60)
        seconds = round(time.monotonic() - started, 1)
        bound_by_us = {r["pod"] for r in proc.events("pod_bound")}
        report = verify(api, second, pods, bound_by_us=bound_by_us)
        assert ok, "wave 2 did not settle"

        stats = api.stats()
        ua = next(a for a in stats["binders"] if proc.identity in a)
        ours = stats["binders"][ua]
        attempts = proc.metric("scheduler_schedule_attempts_total", result="scheduled")
        # Not retried: one bind request per placement. Each request bound, was a conflict,
        # or found the rogue had picked the very node we chose (kube's "already assigned to
        # node X" with X ours counts as bound, as kube-scheduler would after a lost reply).
        same_node = ours["requests"] - ours["bound"] - conflicts
        assert 0 <= same_node <= stats.get("rogue_binds", 0) - conflicts, (ours, conflicts)
        assert attempts == ours["requests"]
        assert proc.metric("batch_scheduler_binds_total", result="conflict") == conflicts
        assigned = sum(1 for p in pods if (p.get("spec") or {}).get("nodeName"))
        assert wait_for(lambda: proc.metric("batch_scheduler_cache_pods") == assigned, 5)
        figures.record(
            **report.figures(),
            rogue_binds=stats.get("rogue_binds", 0),
            conflicts_409=int(conflicts),
            retried_after_409=0,
            rogue_chose_our_node=int(same_node),
            wave2_exact_fill=free,
            settle_s=seconds,
        )
    finally:
        code = proc.terminate()
    proc.assert_clean_exit(code)
