"""Fixtures for the kube edge: an emulator on loopback and a client for it.

The emulator runs on its own loop in a thread (``run_in_thread``), so the code under test
owns the test's loop alone, as it would talk to a separate API server. Helpers (pod
creation, fault injection) are in ``kube_helpers``.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

import pytest
import structlog

from scheduler.kube.client import ApiClient, create_client
from scheduler.sim.server import SimServer, run_in_thread
from tests.kube.kube_helpers import TOKEN

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Iterator
    from pathlib import Path


@pytest.fixture
def sim() -> Iterator[SimServer]:
    """A fresh emulator (3 nodes, bearer token required) in a thread."""
    server = SimServer(nodes=3, token=TOKEN)
    with run_in_thread(server):
        yield server


@pytest.fixture
def kubeconfig(sim: SimServer, tmp_path: Path) -> Path:
    """A kubeconfig for ``sim`` with its token."""
    return sim.write_kubeconfig(tmp_path / "kubeconfig")


@pytest.fixture
async def api(kubeconfig: Path) -> AsyncIterator[ApiClient]:
    """Our client for ``sim`` (2 s timeout)."""
    client = await create_client(str(kubeconfig), timeout=2.0)
    yield client
    await client.close()


@pytest.fixture
def debug_logs() -> Iterator[None]:
    """capture_logs keeps the configured level's filter: this opens it to debug."""
    saved = structlog.get_config()
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.DEBUG))
    try:
        yield
    finally:
        structlog.configure(**saved)
