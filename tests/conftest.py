"""Shared test setup: quiet, structured logs (warnings and up) for every tier, restored after
each test that configures its own (the CLI's commands do), and the count of ``cluster``-tier
tests that passed (``.ci/run`` requires some: see tests/cluster)."""

from __future__ import annotations

import logging
import os
import sys
from typing import TYPE_CHECKING

import pytest
import structlog

from scheduler.logs.setup import configure_logging

if TYPE_CHECKING:
    from collections.abc import Iterator

REQUIRE_CLUSTER = "BATCH_SCHEDULER_REQUIRE_CLUSTER"
_cluster_passed: list[str] = []


@pytest.fixture(autouse=True, scope="session")
def _quiet_logs() -> None:
    """Per-pod info lines would drown test output; warnings still show on failure."""
    configure_logging(fmt="console", level="warning", stream=sys.stderr)


def _ours(handler: logging.Handler) -> bool:
    return isinstance(handler.formatter, structlog.stdlib.ProcessorFormatter)


@pytest.fixture(autouse=True)
def _restore_logging() -> Iterator[None]:
    """Undo a test's configure_logging (an in-process CLI call sets level and handler for
    the whole process): the next test logs as the session set up."""
    root = logging.getLogger()
    saved_ours = [h for h in root.handlers if _ours(h)]
    saved_level = root.level
    saved_config = dict(structlog.get_config())
    yield
    for handler in [h for h in root.handlers if _ours(h)]:
        if handler not in saved_ours:
            root.removeHandler(handler)
    for handler in saved_ours:
        if handler not in root.handlers:
            root.addHandler(handler)
    root.setLevel(saved_level)
    structlog.configure(**saved_config)


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if report.when == "call" and report.passed and "cluster" in report.keywords:
        _cluster_passed.append(report.nodeid)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    terminalreporter.write_line(f"cluster tier: {len(_cluster_passed)} tests passed")


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if os.environ.get(REQUIRE_CLUSTER) and not _cluster_passed and exitstatus == 0:
        print(f"\n{REQUIRE_CLUSTER} is set but no cluster-tier test passed", file=sys.stderr)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
