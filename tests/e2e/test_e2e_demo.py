"""``batch-scheduler demo`` end to end: emulator process, workload, the run path, a report."""

from __future__ import annotations

import subprocess
import sys

import pytest

pytestmark = pytest.mark.e2e


def _demo(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "scheduler", "demo", "--nodes", "6", "--pods", "20", *args],
        capture_output=True,
        text=True,
        timeout=90,
        check=False,
    )


HEADER = [
    "batch-scheduler demo: the real `run` path against the embedded API server",
    "  API server  the emulator (scheduler/sim), its own process, fresh for each run",
    "  cluster     6 nodes of 4 CPU and 32Gi",
    "  workload    6 job pods (3 CPU), 14 web pods (100m, 500Mi), all opted in",
]


def test_demo_compares_batching_off_and_on_by_default() -> None:
    """Without flags: what ran, one line per fact (none wrapped), both runs binding every
    pod, the table with a column per run, and both speedups; stderr stays empty."""
    result = _demo()
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    lines = result.stdout.splitlines()
    assert lines[:5] == [
        *HEADER,
        "  runs        batching off (a full pass per pod), then batching annotated",
    ]
    assert all(len(line) <= 80 for line in lines[:5])
    bars = [line for line in lines if line.startswith("batching ")]
    assert [bar.split()[1] for bar in bars] == ["off", "annotated"]
    assert all("20/20 pods bound" in bar for bar in bars)
    (columns,) = [line for line in lines if "batching off" in line and "┃" in line]
    assert "batching annotated" in columns
    (scheduled,) = [line for line in lines if "pods scheduled" in line]
    assert scheduled.count("20/20") == 2
    speedups = [line for line in lines if line.startswith("speedup")]
    assert [line.split(":")[0] for line in speedups] == [
        "speedup per decision",
        "speedup end to end",
    ]
    assert speedups[0].endswith("x (decision ms/pod, what batching changes)")
    assert speedups[1].endswith("x (pods/s, bind calls to the API server included)")


def test_no_compare_runs_one_mode_without_speedups() -> None:
    """--no-compare: one run in the --batching mode, and no speedup to claim."""
    result = _demo("--no-compare", "--batching", "all")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[:5] == [*HEADER, "  runs        batching all"]
    assert [line.split()[1] for line in lines if line.startswith("batching ")] == ["all"]
    assert not any(line.startswith("speedup") for line in lines)
    assert "Traceback" not in result.stderr


def test_compare_flag_is_still_accepted() -> None:
    """--compare, the flag of earlier versions, asks for what is now the default."""
    result = _demo("--compare")
    assert result.returncode == 0, result.stderr
    assert sum(line.startswith("speedup") for line in result.stdout.splitlines()) == 2
