"""Leader failover under load: the leader is SIGKILLed mid-burst; the follower takes over once
the Lease expires, and there are never two binders.

SIGKILL means no Lease release: the follower must wait out ``leaseDuration`` from when it
last saw the Lease change, then acquire. The emulator's ``/sim/stats`` ``binders`` map gives,
per User-Agent (which carries each replica's identity), the sequence numbers of its first and
last bind request among all bind requests: the old leader's last must come before the new
leader's first. A third replica started after the failover stays a follower and never binds.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

import pytest

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

LEASE_DURATION, RENEW_DEADLINE, RETRY_PERIOD = 3.0, 2.0, 0.5
CONFIG = f"""\
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
leaderElection:
  leaderElect: true
  leaseDuration: {LEASE_DURATION}s
  renewDeadline: {RENEW_DEADLINE}s
  retryPeriod: {RETRY_PERIOD}s
  resourceNamespace: kube-system
  resourceName: batch-scheduler
"""
TAKEOVER_BOUND = LEASE_DURATION + 2 * 2.2 * RETRY_PERIOD + 1.0
"""Kill → new holder, at the latest: the follower sees the last renewal up to one jittered
retry (2.2 x retryPeriod) late, waits leaseDuration, and retries up to one more jittered
retry later; plus a second for a loaded machine."""
TAKEOVER_FLOOR = LEASE_DURATION - RETRY_PERIOD - 0.5
"""Kill → new holder, at the earliest: the last renewal came at most one retryPeriod before
the kill, and the follower must wait leaseDuration after seeing it (0.5 s for clocks)."""


def test_leader_sigkilled_mid_burst_follower_takes_over_never_two_binders(
    make_sim: MakeSim, tmp_path: Path, figures: Figures
) -> None:
    _, api, kubeconfig = make_sim()
    config = tmp_path / "config.yaml"
    config.write_text(CONFIG)
    args = ("--config", str(config), "--leader-elect")
    work = mixed_workload("l-", general=25, per_node=16, overflow=20, zone_pods=60)
    create_paced(api, work.nodes)
    ours = work.keys - work.foreign
    procs = [SchedulerProc(kubeconfig, tmp_path / f"replica-{i}.log", *args) for i in range(2)]
    leader: SchedulerProc | None = None
    try:
        for p in procs:
            p.wait_ready()
        by_id = {p.identity: p for p in procs}
        holder = wait_for(lambda: api.lease_holder() if api.lease_holder() in by_id else "", 15)
        assert holder, "nobody took the Lease"
        leader = by_id[holder]
        follower = next(p for p in procs if p is not leader)
        assert wait_for(lambda: leader.metric("batch_scheduler_is_leader") == 1, 10)
        assert follower.metric("batch_scheduler_is_leader") == 0

        started = time.monotonic()
        burst = Burst(api, work.pods, per_second=80, threads=4)
        assert wait_for(lambda: bound_count(api, ours) >= 120, 30), "the leader made no progress"
        leader.kill()
        killed_at = time.monotonic()
        bound_at_kill = bound_count(api, ours)
        assert burst.running, "the burst ended before the kill: not under load"
        taken = wait_for(lambda: api.lease_holder() == follower.identity, 15, 0.05)
        takeover = round(time.monotonic() - killed_at, 2)
        assert taken, f"no takeover; holder {api.lease_holder()!r}"
        assert TAKEOVER_FLOOR <= takeover <= TAKEOVER_BOUND, takeover
        assert wait_for(lambda: follower.metric("batch_scheduler_is_leader") == 1, 5)

        late = SchedulerProc(kubeconfig, tmp_path / "replica-late.log", *args)
        procs.append(late)
        late.wait_ready()
        burst.join()
        # (A follower's queue holds every pending pod, never tried: only the leader idles.)
        ok, _, pods = settle(api, work, [follower], timeout=60)
        seconds = round(time.monotonic() - started, 1)
        report = verify(api, work, pods)
        assert ok, "did not settle"

        binders = api.stats()["binders"]
        old = next(v for ua, v in binders.items() if leader.identity in ua)
        new = next(v for ua, v in binders.items() if follower.identity in ua)
        assert not [ua for ua in binders if late.identity in ua], "a follower sent a bind"
        assert old["last"] < new["first"], (old, new)  # never two binders at once
        assert old["bound"] + new["bound"] == report.bound
        assert old["bound"] >= 100
        assert new["bound"] >= 100
        assert late.metric("batch_scheduler_binds_total") == 0
        assert late.metric("batch_scheduler_is_leader") == 0
        figures.record(
            **report.figures(),
            bound_at_kill=bound_at_kill,
            takeover_s=takeover,
            lease_duration_s=LEASE_DURATION,
            old_leader_binds=old["bound"],
            new_leader_binds=new["bound"],
            old_last_seq=old["last"],
            new_first_seq=new["first"],
            late_follower_binds=0,
            settle_s=seconds,
        )
    finally:
        codes = [p.terminate() for p in procs]
    for p, code in zip(procs, codes, strict=True):
        if p is not leader:
            p.assert_clean_exit(code)
