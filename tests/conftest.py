"""Shared test setup: quiet, structured logs (warnings and up) for every tier, and the count
of ``cluster``-tier tests that passed (``.ci/run`` requires some: see tests/cluster)."""

from __future__ import annotations

import os
import sys

import pytest

from scheduler.logs.setup import configure_logging

REQUIRE_CLUSTER = "BATCH_SCHEDULER_REQUIRE_CLUSTER"
_cluster_passed: list[str] = []


@pytest.fixture(autouse=True, scope="session")
def _quiet_logs() -> None:
    """Per-pod info lines would drown test output; warnings still show on failure."""
    configure_logging(fmt="console", level="warning", stream=sys.stderr)


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if report.when == "call" and report.passed and "cluster" in report.keywords:
        _cluster_passed.append(report.nodeid)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    terminalreporter.write_line(f"cluster tier: {len(_cluster_passed)} tests passed")


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if os.environ.get(REQUIRE_CLUSTER) and not _cluster_passed and exitstatus == 0:
        print(f"\n{REQUIRE_CLUSTER} is set but no cluster-tier test passed", file=sys.stderr)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
