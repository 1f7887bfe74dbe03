"""API errors: 10 % of every write (binds, events, status patches, creates) fail with 500/503/429.

Binds are retried with backoff by the binder (429s honour Retry-After); a bind that still
fails is forgotten and the pod retried from the queue. Nothing may be lost or over-committed.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

import pytest

from scheduler.sim.faults import FaultConfig
from tests.reliability.support import Figures, MakeSim, create_paced, mixed_workload, settle, verify
from tests.scheduler_process import SchedulerProc

if TYPE_CHECKING:
    from pathlib import Path

pytestmark = [pytest.mark.reliability, pytest.mark.timeout(150)]

WRITES = ("create", "update", "patch", "delete", "bind")


def test_ten_percent_of_writes_fail_and_nothing_is_lost(
    make_sim: MakeSim, tmp_path: Path, figures: Figures
) -> None:
    _, api, kubeconfig = make_sim(FaultConfig(fail_rates=dict.fromkeys(WRITES, 0.1), seed=8))
    work = mixed_workload("e-", general=30, per_node=16, overflow=20, zone_pods=60)
    create_paced(api, work.nodes)
    # At debug: the binder's retries beyond one warning per 30 s are debug lines (retry_log).
    proc = SchedulerProc(kubeconfig, tmp_path / "scheduler.log", level="debug")
    try:
        proc.wait_ready()
        started = time.monotonic()
        create_paced(api, work.pods)  # one burst, as fast as the test can create
        ok, _, pods = settle(api, work, [proc], timeout=90)
        seconds = round(time.monotonic() - started, 1)
        stats = api.stats()
        report = verify(api, work, pods)
        assert ok, "did not settle"

        ua = next(a for a in stats["binders"] if proc.identity in a)
        ours = stats["binders"][ua]
        bind_faults = sum(v for k, v in stats.items() if k.startswith("error.bind."))
        assert bind_faults >= 25, stats  # ~10 % of about 550 binds
        assert stats.get("error.bind.429", 0) > 0, stats
        # Every injected bind fault was seen by our binder: retried, or (all retries spent)
        # handed back to the queue. No bind request of ours went unexplained.
        retries = proc.events("bind_retry")
        exhausted = [r for r in proc.events("bind_failed") if "attempts" in r]
        assert len(retries) + len(exhausted) == bind_faults
        assert ours["requests"] - ours["bound"] == bind_faults
        assert ours["bound"] == report.bound
        assert {r["status"] for r in retries} >= {429, 500, 503}
        write_faults = sum(stats.get(f"error.{v}.{c}", 0) for v in WRITES for c in (500, 503, 429))
        figures.record(
            **report.figures(),
            faults_injected=stats.get("errors", 0),
            bind_faults=bind_faults,
            bind_retries=len(retries),
            binds_requeued=len(exhausted),
            patch_faults=sum(stats.get(f"error.patch.{c}", 0) for c in (500, 503, 429)),
            event_create_faults=sum(stats.get(f"error.create.{c}", 0) for c in (500, 503, 429)),
            test_writes_retried=api.retried,
            settle_s=seconds,
        )
        assert write_faults == stats["errors"]  # only writes failed
    finally:
        code = proc.terminate()
    proc.assert_clean_exit(code)
