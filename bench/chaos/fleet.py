"""The scheduler under test as one or two processes: started, killed, restarted, and which
one leads.

Each process is :mod:`bench.scheduler_perf.schedulers`' (kube-scheduler v1.37.2 with its
bootstrap identity, or ours as its ServiceAccount under RBAC with our manifests). ours logs
at info here: its ``leadership_acquired`` and ``watch_expired`` lines are read. A restart
is a new process with the same command and a log of its own, so that nothing the killed
one wrote is lost. Two replicas elect a leader with kube's default timings (Lease 15 s,
renew 10 s, retry 2 s), on the Lease each one's RBAC allows.

Neighbours: :mod:`bench.chaos.run` (owns the fleet), :mod:`bench.chaos.scenarios`.
"""

from __future__ import annotations

import asyncio
import dataclasses
from typing import TYPE_CHECKING

from bench.scheduler_perf import runner, schedulers
from bench.scheduler_perf.capability import OURS

if TYPE_CHECKING:
    from pathlib import Path

    from bench.scheduler_perf.suite import Selected
    from controlplane.launcher import ControlPlane

LEASE_TIMINGS = {"leaseDuration": "15s", "renewDeadline": "10s", "retryPeriod": "2s"}
LEADER_MARKS = ("successfully acquired lease", '"leadership_acquired"')
"""How each scheduler's log says it took the Lease (kube's klog line, ours' event), in
lower case."""


class Fleet:
    """``replicas`` processes of ``scheduler``; with two, leader election."""

    def __init__(
        self,
        scheduler: str,
        cp: ControlPlane,
        selected: Selected,
        workdir: Path,
        *,
        replicas: int = 1,
    ) -> None:
        self.scheduler = scheduler
        self.cp = cp
        self.selected = selected
        self.workdir = workdir
        self.replicas = replicas
        plan = runner.plan(selected).plans[scheduler]
        if plan.skip is not None:
            raise RuntimeError(f"{scheduler} cannot run: {plan.skip}")
        if scheduler == OURS:
            plan = dataclasses.replace(plan, args=(*plan.args, "--log-level", "info"))
        self.plan = plan
        self.live: list[schedulers.SchedulerProcess] = []
        self.every: list[schedulers.SchedulerProcess] = []
        """Every process started, killed ones included (their logs count)."""
        self.starts = 0

    def _spawn(self) -> schedulers.SchedulerProcess:
        self.starts += 1
        election = LEASE_TIMINGS if self.replicas > 1 else None
        process = schedulers.start(
            self.scheduler,
            self.cp,
            self.selected,
            self.plan,
            self.workdir,
            leader_election=election,
            replica=f"-{self.starts}",
        )
        self.live.append(process)
        self.every.append(process)
        return process

    async def start(self) -> None:
        processes = [self._spawn() for _ in range(self.replicas)]
        await asyncio.gather(*(p.wait_ready() for p in processes))

    def kill(self, process: schedulers.SchedulerProcess) -> None:
        """SIGKILL: binds in flight are cut, nothing is released (no Lease hand-over)."""
        process.cpu_at_exit = process.cpu_seconds()
        process.proc.kill()
        process.proc.wait()
        self.live.remove(process)

    async def restart(self, process: schedulers.SchedulerProcess) -> None:
        """Kill ``process`` and start another with the same command; wait until it is ready."""
        self.kill(process)
        await self._spawn().wait_ready()

    async def leader(self, within: float = 60.0) -> schedulers.SchedulerProcess:
        """The live process that took the Lease (the only one, with one replica)."""
        if self.replicas == 1:
            return self.live[0]
        loop = asyncio.get_running_loop()
        deadline = loop.time() + within
        while loop.time() < deadline:
            for process in self.live:
                text = process.log.read_text(errors="replace").lower()
                if any(mark in text for mark in LEADER_MARKS):
                    return process
            await asyncio.sleep(0.2)
        raise RuntimeError(f"no {self.scheduler} replica took the Lease in {within:.0f} s")

    def logs(self) -> list[Path]:
        return [p.log for p in self.every]

    def stop(self) -> None:
        for process in self.live:
            process.stop()
        for process in self.every:
            if process not in self.live:
                process.stop()  # closes its log
        self.live.clear()
