"""``batch-scheduler demo`` end to end: emulator process, workload, the run path, a report."""

from __future__ import annotations

import subprocess
import sys

import pytest

pytestmark = pytest.mark.e2e


def test_small_demo_compare_binds_everything_and_reports() -> None:
    """A tiny --compare run binds every pod twice and prints the table and the speedup."""
    result = subprocess.run(
        [sys.executable, "-m", "scheduler", "demo", "--nodes", "6", "--pods", "20", "--compare"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert out.count("20/20") >= 2, out  # the progress bars and the table, per mode
    assert "batching off" in out
    assert "batching annotated" in out
    assert "speedup" in out
    assert "Traceback" not in result.stderr
