"""The scheduler is SIGKILLed twice mid-burst and restarted: nothing lost, nothing bound twice.

SIGKILL skips every shutdown step: binds in flight are cut off (sent or not), assumptions and
queued Events vanish with the process. The emulator adds 50 ms to every request so that
binds really are in flight when the process dies. The restarted scheduler rebuilds its cache
from a LIST; pods its predecessor bound must count there, pods it only assumed must be
scheduled again. The general pool is filled exactly (plus overflow): an over-commit or a
lost slot would show.
"""

from __future__ import annotations

import time
from functools import partial
from typing import TYPE_CHECKING

import pytest

from scheduler.sim.faults import FaultConfig
from tests.reliability.support import (
    Burst,
    Figures,
    MakeSim,
    bound_count,
    create_paced,
    mixed_workload,
    settle,
    verify,
)
from tests.scheduler_process import SchedulerProc, wait_for

if TYPE_CHECKING:
    from pathlib import Path

pytestmark = [pytest.mark.reliability, pytest.mark.timeout(150)]


def _in_flight(proc: SchedulerProc) -> int:
    """Pods this process assumed whose bind had not finished (from one read of /metrics)."""
    samples = proc.metrics()
    placed = sum(
        v
        for (name, labels), v in samples.items()
        if name == "scheduler_schedule_attempts_total" and ("result", "scheduled") in labels
    )
    bound = sum(v for (name, _), v in samples.items() if name == "batch_scheduler_binds_total")
    return max(0, int(placed - bound))


def test_sigkill_twice_mid_burst_every_pod_bound_once_or_reported(
    make_sim: MakeSim, tmp_path: Path, figures: Figures
) -> None:
    _, api, kubeconfig = make_sim(FaultConfig(latency=0.05))
    work = mixed_workload("k-", general=25, per_node=16, overflow=20, zone_pods=60)
    create_paced(api, work.nodes)
    ours = work.keys - work.foreign
    procs: list[SchedulerProc] = []
    kills: list[dict[str, int]] = []

    def start() -> SchedulerProc:
        proc = SchedulerProc(kubeconfig, tmp_path / f"scheduler-{len(procs)}.log")
        procs.append(proc)
        proc.wait_ready()
        return proc

    try:
        proc = start()
        started = time.monotonic()
        burst = Burst(api, work.pods, per_second=80, threads=8)
        for _ in range(2):
            floor = bound_count(api, ours) + 60

            def progressed(floor: int = floor) -> bool:
                return bound_count(api, ours) >= floor

            assert wait_for(progressed, 30), "no progress"
            # Kill at a moment with binds in flight: between two waves the scheduler can
            # be idle, and a kill then would test nothing SIGKILL-specific.
            in_flight = wait_for(partial(_in_flight, proc), 5, interval=0.01)
            proc.kill()
            kills.append(
                {"created": burst.created, "bound": bound_count(api, ours), "in_flight": in_flight}
            )
            assert burst.running, "the burst ended before the kill: not mid-burst"
            proc = start()
        burst.join()
        ok, _, pods = settle(api, work, [proc], timeout=60)
        seconds = round(time.monotonic() - started, 1)
        report = verify(api, work, pods)
        assert ok, "did not settle"

        stats = api.stats()
        binders = {ua: v for ua, v in stats["binders"].items() if "batch-scheduler" in ua}
        # Three processes, three identities in the User-Agents; each pod got exactly one
        # successful binding (201) among all of them, and nothing else bound anything.
        assert len({p.identity for p in procs}) == 3
        assert all(any(p.identity in ua for ua in binders) for p in procs[:2])
        assert sum(v["bound"] for v in binders.values()) == report.bound
        assert sum(1 for p in pods if (p.get("spec") or {}).get("nodeName")) == report.bound
        for p in procs[:2]:
            assert p.proc.returncode == -9
        assert sum(k["in_flight"] for k in kills) > 0, kills
        figures.record(
            **report.figures(),
            kills=len(kills),
            created_at_kills=[k["created"] for k in kills],
            bound_at_kills=[k["bound"] for k in kills],
            binds_in_flight_at_kills=[k["in_flight"] for k in kills],
            bind_requests=sum(v["requests"] for v in binders.values()),
            settle_s=seconds,
        )
    finally:
        codes = [p.terminate() for p in procs]
    procs[-1].assert_clean_exit(codes[-1])
