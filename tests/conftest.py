"""Shared test setup: quiet, structured logs (warnings and up) for every tier."""

from __future__ import annotations

import sys

import pytest

from scheduler.logs.setup import configure_logging


@pytest.fixture(autouse=True, scope="session")
def _quiet_logs() -> None:
    """Per-pod info lines would drown test output; warnings still show on failure."""
    configure_logging(fmt="console", level="warning", stream=sys.stderr)
