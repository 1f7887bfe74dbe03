"""Reliability fixtures: a fresh emulator per test, and the figures each test measured.

Each test records what it checked and what was injected with ``figures.record(...)``; the
table is printed at the end of the run (``-p no:terminal`` aside), and written as JSON to
``$RELIABILITY_FIGURES`` when set (how docs/reliability.md gets its numbers).
"""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING, Any

import pytest

from scheduler.sim.server import SimServer, run_in_thread
from tests.reliability.support import FIGURES, Api, Figures, MakeSim

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from scheduler.sim.faults import FaultConfig


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "reliability: faults, restarts, bad input, load (sim)")


@pytest.fixture
def figures(request: pytest.FixtureRequest) -> Figures:
    return Figures(request.node.name)


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if not FIGURES:
        return
    terminalreporter.section("reliability figures")
    for row in FIGURES:
        terminalreporter.write_line(json.dumps(row))
    target = os.environ.get("RELIABILITY_FIGURES")
    if target:
        with open(target, "w") as f:
            json.dump(FIGURES, f, indent=1)


@pytest.fixture
def make_sim(tmp_path: Path) -> Iterator[MakeSim]:
    """``make_sim(faults=FaultConfig(...), token=None)`` → (server, api, kubeconfig); the
    emulator runs in a thread of the test process and stops at teardown."""
    stack: list[Any] = []

    def make(
        faults: FaultConfig | None = None, token: str | None = None, nodes: int = 0
    ) -> tuple[SimServer, Api, Path]:
        server = SimServer(faults=faults, token=token, nodes=nodes, bookmark_interval=0.5)
        ctx = run_in_thread(server)
        url = ctx.__enter__()
        stack.append(ctx)
        kubeconfig = server.write_kubeconfig(tmp_path / f"kubeconfig-{len(stack)}")
        return server, Api(url, token), kubeconfig

    try:
        yield make
    finally:
        for ctx in reversed(stack):
            ctx.__exit__(None, None, None)
