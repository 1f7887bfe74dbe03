"""``batch-scheduler run`` refuses bad input before touching the cluster: exit 2, field named."""

from __future__ import annotations

import subprocess
import sys
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from pathlib import Path

pytestmark = pytest.mark.e2e

BAD_CONFIG = """\
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: batch-scheduler
  plugins:
    score:
      enabled:
      - name: NodeResourcesFit
        weight: 1000
"""


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "scheduler", "run", *args],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )


def test_bad_config_exits_2_naming_the_field(tmp_path: Path) -> None:
    """An out-of-range weight in the config file is reported with its path, exit code 2."""
    config = tmp_path / "config.yaml"
    config.write_text(BAD_CONFIG)
    result = _run("--config", str(config))
    assert result.returncode == 2, result.stderr
    assert "profiles[0].plugins.score.enabled[0].weight" in result.stderr
    assert "Traceback" not in result.stderr


def test_bad_metrics_address_exits_2() -> None:
    """A malformed --metrics-addr is refused with the setting named."""
    result = _run("--metrics-addr", "localhost")
    assert result.returncode == 2, result.stderr
    assert "metrics_addr" in result.stderr


def test_missing_kubeconfig_exits_2(tmp_path: Path) -> None:
    """A --kubeconfig that does not exist is refused before anything starts."""
    result = _run("--kubeconfig", str(tmp_path / "absent"))
    assert result.returncode == 2, result.stderr
    assert "--kubeconfig" in result.stderr
