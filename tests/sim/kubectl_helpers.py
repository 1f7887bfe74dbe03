"""The installed kubectl, run against an emulator's kubeconfig (shared by the sim tests)."""

from __future__ import annotations

import subprocess
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path


def kubectl(kc: Path, *args: str, stdin: str | None = None) -> str:
    """``kubectl --kubeconfig kc ARGS``; its stdout, asserting exit 0 (stderr in the message)."""
    proc = subprocess.run(
        ["kubectl", "--kubeconfig", str(kc), *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout
