"""The two schedulers as processes against the workload's control plane.

* **kube**: ``controlplane/bin/kube-scheduler`` (the pinned v1.37.2) with the workload's
  scheduler configuration (kube's ``schedulerConfigPath``, else an empty one: all
  defaults), plus what a process needs that kube's in-process scheduler has implicitly:
  no leader election, and the client rate of kube's test (``mustSetupCluster``: QPS and
  burst 5000). It runs as ``system:kube-scheduler`` (bootstrap RBAC); ``/metrics`` on its
  secure port.
* **ours**: ``python -m scheduler run`` as its ServiceAccount with the same configuration,
  whose profile is renamed to ours (:data:`OURS_NAME`), warning-level logs, ``/metrics``
  over plain HTTP on loopback.

Pods the runner creates name the scheduler of the run (``spec.schedulerName``), so each
run measures one scheduler. CPU time and peak RSS (``VmHWM``) are read from ``/proc``.

Neighbours: :mod:`bench.scheduler_perf.capability` (the flags),
:mod:`bench.scheduler_perf.runner` (starts and stops them).
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import aiohttp
import yaml

from bench.measure import cpu_seconds, vm_hwm_mb
from bench.scheduler_perf.capability import KUBE, OURS
from controlplane.processes import free_port
from scheduler.framework.config import ConfigError, load_config

if TYPE_CHECKING:
    from collections.abc import Mapping

    from bench.scheduler_perf.capability import Plan
    from bench.scheduler_perf.suite import Selected
    from controlplane.launcher import ControlPlane

ROOT = Path(__file__).resolve().parents[2]
OURS_NAME = "batch-scheduler"
KUBE_NAME = "default-scheduler"
CLIENT_QPS = 5000
"""kube's test gives its scheduler's client QPS and burst 5000 (util.go)."""
EMPTY_CONFIG: dict[str, Any] = {
    "apiVersion": "kubescheduler.config.k8s.io/v1",
    "kind": "KubeSchedulerConfiguration",
}


def base_config(selected: Selected) -> dict[str, Any]:
    """The test case's scheduler configuration (``schedulerConfigPath``), else kube's
    defaults (an empty configuration)."""
    path = selected.case.scheduler_config
    if path is None:
        return copy.deepcopy(EMPTY_CONFIG)
    doc = yaml.safe_load(path.read_text())
    if not isinstance(doc, dict):
        raise ValueError(f"{path}: not a KubeSchedulerConfiguration")
    return doc


def ours_config(selected: Selected) -> dict[str, Any]:
    """The configuration with its (first) profile named ours, or one such profile."""
    doc = base_config(selected)
    profiles = doc.get("profiles") or [{}]
    profiles[0] = {**profiles[0], "schedulerName": OURS_NAME}
    doc["profiles"] = profiles
    return doc


def ours_config_error(selected: Selected) -> str | None:
    """What ours' configuration loader says about the configuration (None: accepted)."""
    try:
        load_config(ours_config(selected), default_scheduler_name=OURS_NAME)
    except ConfigError as exc:
        return str(exc)
    return None


def kube_config(selected: Selected, kubeconfig: Path) -> dict[str, Any]:
    doc = base_config(selected)
    doc["leaderElection"] = {"leaderElect": False}
    doc["clientConnection"] = {
        "kubeconfig": str(kubeconfig),
        "qps": CLIENT_QPS,
        "burst": CLIENT_QPS,
    }
    return doc


def pod_scheduler_name(scheduler: str, selected: Selected) -> str:
    """The ``schedulerName`` the run's pods carry: the profile of the scheduler under test."""
    if scheduler == OURS:
        return OURS_NAME
    profiles = base_config(selected).get("profiles") or [{}]
    return str(profiles[0].get("schedulerName") or KUBE_NAME)


class SchedulerProcess:
    """A running scheduler: readiness, /metrics, CPU and peak memory, stop."""

    def __init__(self, name: str, cmd: list[str], url: str, log: Path) -> None:
        self.name = name
        self.cmd = cmd
        self.url = url
        self.log = log
        self._out = log.open("wb")
        self.proc = subprocess.Popen(
            cmd, stdin=subprocess.DEVNULL, stdout=self._out, stderr=subprocess.STDOUT, cwd=ROOT
        )
        self.cpu_at_exit: float | None = None
        self.rss_mb: float = 0.0

    def tail(self, chars: int = 2000) -> str:
        return self.log.read_text(errors="replace")[-chars:]

    async def wait_ready(self, within: float = 120.0) -> None:
        deadline = time.monotonic() + within
        async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(ssl=False)) as s:
            while time.monotonic() < deadline:
                if self.proc.poll() is not None:
                    raise RuntimeError(f"{self.name} exited: {self.tail()}")
                with contextlib.suppress(aiohttp.ClientError, OSError):
                    async with s.get(f"{self.url}/readyz") as resp:
                        if resp.status == 200:
                            return
                await asyncio.sleep(0.05)
        raise RuntimeError(f"{self.name} not ready in {within:.0f} s: {self.tail()}")

    async def scrape(self) -> str:
        if self.proc.poll() is not None:
            raise RuntimeError(f"{self.name} exited: {self.tail()}")
        timeout = aiohttp.ClientTimeout(total=60)
        async with (
            aiohttp.ClientSession(connector=aiohttp.TCPConnector(ssl=False)) as s,
            s.get(f"{self.url}/metrics", timeout=timeout) as resp,
        ):
            return await resp.text()

    def cpu_seconds(self) -> float:
        return cpu_seconds(self.proc.pid)

    def stop(self) -> None:
        """Read CPU and peak RSS, then SIGTERM (SIGKILL after 60 s)."""
        if self.proc.poll() is None:
            self.cpu_at_exit = cpu_seconds(self.proc.pid)
            self.rss_mb = vm_hwm_mb(self.proc.pid)
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._out.close()


OURS_LEASE = {"resourceNamespace": "batch-scheduler", "resourceName": "batch-scheduler"}
"""The Lease ours' Role (manifests/04-role.yaml) lets it hold."""


def start(
    scheduler: str,
    cp: ControlPlane,
    selected: Selected,
    plan: Plan,
    workdir: Path,
    *,
    leader_election: Mapping[str, Any] | None = None,
    replica: str = "",
) -> SchedulerProcess:
    """Start ``scheduler`` (kube or ours) for ``selected`` with ``plan``'s flags.
    ``leader_election``: the configuration's ``leaderElection`` timings, with election on
    (ours on the Lease its Role allows); ``replica`` names a second process's files."""
    port = free_port()
    election = None if leader_election is None else {**leader_election, "leaderElect": True}
    if scheduler == KUBE:
        kubeconfig = cp.client_kubeconfig("scheduler", "system:kube-scheduler")
        path = workdir / f"kube-scheduler{replica}.yaml"
        doc = kube_config(selected, kubeconfig)
        if election is not None:
            doc["leaderElection"] = election
        path.write_text(yaml.safe_dump(doc))
        cmd = [str(cp.bin / "kube-scheduler"), f"--config={path}", *cp.kube_scheduler_flags(port)]
        cmd += plan.args
        log = workdir / f"kube{replica}.log"
        return SchedulerProcess(KUBE, cmd, f"https://127.0.0.1:{port}", log)
    path = workdir / f"ours{replica}.yaml"
    doc = ours_config(selected)
    if election is not None:
        doc["leaderElection"] = {**OURS_LEASE, **election}
    path.write_text(yaml.safe_dump(doc))
    cmd = [sys.executable, "-m", "scheduler", "run", "--kubeconfig", str(cp.scheduler_kubeconfig)]
    cmd += ["--config", str(path), "--log-level", "warning", "--secure-port", "0"]
    cmd += ["--metrics-addr", f"127.0.0.1:{port}", *plan.args]
    if election is not None:
        cmd.append("--leader-elect")
    return SchedulerProcess(OURS, cmd, f"http://127.0.0.1:{port}", workdir / f"ours{replica}.log")
