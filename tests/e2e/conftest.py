"""End-to-end fixtures: the emulator on loopback and one shared scheduler subprocess.

Tests drive the cluster with the official client; every wait is bounded, and every process
is stopped (SIGTERM, then SIGKILL) even when a test fails.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import kubernetes
import pytest

from scheduler.sim.server import SimServer, run_in_thread
from tests.scheduler_process import SchedulerProc

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path


@pytest.fixture(scope="module")
def sim() -> Iterator[SimServer]:
    """An emulator with 3 default nodes (4 CPU, 32Gi), no token (kubectl over http)."""
    server = SimServer(nodes=3, bookmark_interval=0.5)
    with run_in_thread(server):
        yield server


@pytest.fixture(scope="module")
def kubeconfig(sim: SimServer, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return sim.write_kubeconfig(tmp_path_factory.mktemp("kube") / "kubeconfig")


@pytest.fixture(scope="module")
def core(sim: SimServer) -> Iterator[kubernetes.client.CoreV1Api]:
    """The official client's CoreV1Api against the emulator."""
    with kubernetes.client.ApiClient(kubernetes.client.Configuration(host=sim.url)) as api:
        yield kubernetes.client.CoreV1Api(api)


@pytest.fixture(scope="module")
def scheduler(
    kubeconfig: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[SchedulerProc]:
    """One scheduler (batching ``annotated``) shared by a module's tests; exits 0 on SIGTERM."""
    proc = SchedulerProc(kubeconfig, tmp_path_factory.mktemp("logs") / "scheduler.log")
    try:
        proc.wait_ready()
        yield proc
    finally:
        code = proc.terminate()
    assert code == 0, proc.stderr()
    assert "Traceback" not in proc.stderr()
