"""Fixtures for the emulator's tests: a server in a thread and official-client handles."""

from __future__ import annotations

from typing import TYPE_CHECKING

import kubernetes
import pytest

from scheduler.sim.server import SimServer, run_in_thread

if TYPE_CHECKING:
    from collections.abc import Iterator


@pytest.fixture
def sim() -> Iterator[SimServer]:
    """A fresh emulator with 3 nodes on its own loop in a thread; ``sim.url`` is set."""
    server = SimServer(nodes=3, bookmark_interval=0.2)
    with run_in_thread(server):
        yield server


@pytest.fixture
def core(sim: SimServer) -> Iterator[kubernetes.client.CoreV1Api]:
    """The official client's CoreV1Api against ``sim``."""
    config = kubernetes.client.Configuration(host=sim.url)
    with kubernetes.client.ApiClient(config) as api:
        yield kubernetes.client.CoreV1Api(api)
