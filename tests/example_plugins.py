"""The example plugin package (examples/plugins): installed into the test interpreter's
environment once, so that its ``batch_scheduler.plugins`` entry points are real ones."""

from __future__ import annotations

import importlib
import subprocess
import sys
from importlib import metadata
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "plugins"
DISTRIBUTION = "batch-scheduler-example-plugins"
_QUIET_LOCAL = ("-q", "--no-deps", "--no-build-isolation")

# A profile with both example plugins (the e2e and cluster tests run with it).
CONFIG = {
    "apiVersion": "kubescheduler.config.k8s.io/v1",
    "kind": "KubeSchedulerConfiguration",
    "profiles": [
        {
            "schedulerName": "batch-scheduler",
            "plugins": {
                "multiPoint": {
                    "enabled": [{"name": "DrainGuard"}, {"name": "PreferLabeled", "weight": 10}]
                }
            },
        }
    ],
}


def ensure_installed() -> None:
    """pip-install examples/plugins unless it is installed (a fresh clone's ``make test``);
    no build isolation, so no index is needed: the venv's setuptools builds it."""
    try:
        metadata.distribution(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        subprocess.run(
            [sys.executable, "-m", "pip", "install", *_QUIET_LOCAL, str(EXAMPLE)],
            check=True,
            capture_output=True,
            timeout=300,
        )
        importlib.invalidate_caches()
