"""The example plugin package (examples/plugins): installed into the test interpreter's
environment once, so that its ``batch_scheduler.plugins`` entry points are real ones."""

from __future__ import annotations

import importlib
import subprocess
import sys
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

if TYPE_CHECKING:
    import pytest

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


ENTRY_POINTS = frozenset({"DrainGuard", "PreferLabeled", "Gang"})
"""The example package's plugins: an older install without one of them is reinstalled."""


def ensure_installed() -> None:
    """pip-install examples/plugins unless it is installed with every plugin (a fresh
    clone's ``make test``); no build isolation, so no index is needed: the venv's
    setuptools builds it."""
    try:
        registered = {ep.name for ep in metadata.distribution(DISTRIBUTION).entry_points}
    except metadata.PackageNotFoundError:
        registered = set()
    if ENTRY_POINTS - registered:
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "install",
                *_QUIET_LOCAL,
                "--force-reinstall",
                str(EXAMPLE),
            ],
            check=True,
            capture_output=True,
            timeout=300,
        )
        importlib.invalidate_caches()


def config_and_log(
    tmp_path_factory: pytest.TempPathFactory, config: dict[str, Any]
) -> tuple[Path, Path]:
    """The example package installed, ``config`` written to a file, and a log path: what a
    scheduler fixture running the example plugins starts from."""
    ensure_installed()
    path = tmp_path_factory.mktemp("config") / "config.yaml"
    path.write_text(yaml.safe_dump(config))
    return path, tmp_path_factory.mktemp("logs") / "scheduler.log"
