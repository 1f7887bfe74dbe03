"""SimProcess: the emulator in its own process, for benchmarks and the demo.

A separate process keeps the emulator's CPU off the measured scheduler's event loop
(this machine has two cores). The child prints one line with its URL when ready;
the parent waits for that line, then for ``/version``.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from types import TracebackType


class SimProcess:
    """``with SimProcess(["--nodes", "100"]) as sim: sim.url, sim.kubeconfig``."""

    def __init__(
        self,
        args: list[str] | None = None,
        *,
        token: str | None = None,
        ready_timeout: float = 20.0,
        python: str | None = None,
    ) -> None:
        self.args = list(args or [])
        self.token = token
        self.ready_timeout = ready_timeout
        self.python = python or sys.executable
        self.url = ""
        self._dir = tempfile.TemporaryDirectory(prefix="sim-")
        self.kubeconfig = Path(self._dir.name) / "kubeconfig"
        self.proc: subprocess.Popen[str] | None = None

    def start(self) -> str:
        """Spawn the child and wait until it serves; returns its URL."""
        cmd = [
            self.python,
            "-m",
            "scheduler.sim",
            "serve",
            "--port",
            "0",
            "--kubeconfig-out",
            str(self.kubeconfig),
            *self.args,
        ]
        if self.token:
            cmd += ["--token", self.token]
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True, env=env)
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()  # blocks until ready, or "" when the child dies
        if " at http" not in line:
            self.stop()
            raise RuntimeError(f"sim did not start: {line!r} (exit {self.proc.returncode})")
        self.url = line.rsplit(" at ", 1)[1].strip()
        self._wait_ready()
        return self.url

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + self.ready_timeout
        request = urllib.request.Request(self.url + "/version")
        if self.token:
            request.add_header("Authorization", f"Bearer {self.token}")
        while True:
            try:
                with urllib.request.urlopen(request, timeout=2):
                    return
            except OSError:
                if time.monotonic() > deadline:
                    self.stop()
                    raise
                time.sleep(0.05)

    def stop(self) -> None:
        """SIGTERM the child, SIGKILL after 5 s; idempotent."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self.proc is not None and self.proc.stdout is not None:
            self.proc.stdout.close()
        self._dir.cleanup()

    def __enter__(self) -> SimProcess:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
