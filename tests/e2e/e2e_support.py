"""Helpers for the end-to-end tests: bounded waits, free ports, the scheduler subprocess.

The scheduler runs as ``python -m scheduler run --kubeconfig ...`` exactly as a user starts
it (kopf and the official client unchanged, no monkeypatching); tests read its ``/metrics``.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from typing import TYPE_CHECKING, Any

from prometheus_client.parser import text_string_to_metric_families

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

SCHEDULER = "batch-scheduler"
BATCHING = {"batch-scheduler.io/batching": "true"}


def wait_for(cond: Callable[[], Any], timeout: float = 15.0, interval: float = 0.1) -> Any:
    """Poll ``cond`` until truthy (returned) or ``timeout`` seconds (then its last value)."""
    deadline = time.monotonic() + timeout
    while True:
        value = cond()
        if value or time.monotonic() >= deadline:
            return value
        time.sleep(interval)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class SchedulerProcess:
    """``python -m scheduler run`` against a kubeconfig, with its metrics on a free port."""

    def __init__(self, kubeconfig: Path, log_path: Path, *args: str) -> None:
        self.port = free_port()
        self.log_path = log_path
        self._log = log_path.open("w")
        cmd = [
            sys.executable,
            "-m",
            "scheduler",
            "run",
            "--kubeconfig",
            str(kubeconfig),
            "--metrics-addr",
            f"127.0.0.1:{self.port}",
            "--log-format",
            "json",
            "--resync-interval",
            "2",
            *args,
        ]
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        self.proc = subprocess.Popen(
            cmd, stdout=subprocess.DEVNULL, stderr=self._log, env=env, text=True
        )

    def get(self, path: str) -> tuple[int, str]:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.port}{path}", timeout=2) as r:
                return r.status, r.read().decode()
        except urllib.error.HTTPError as e:
            return e.code, e.read().decode()
        except OSError:
            return 0, ""

    def wait_ready(self, timeout: float = 20.0) -> None:
        ready = wait_for(
            lambda: self.get("/readyz")[0] == 200 or self.proc.poll() is not None, timeout
        )
        assert self.proc.poll() is None, f"scheduler exited:\n{self.stderr()}"
        assert ready, f"scheduler not ready:\n{self.stderr()}"

    def metric(self, name: str, **labels: str) -> float:
        """The sum of ``name``'s samples whose labels include ``labels`` (0 when absent)."""
        status, text = self.get("/metrics")
        assert status == 200, f"/metrics answered {status}"
        total = 0.0
        for family in text_string_to_metric_families(text):
            for sample in family.samples:
                if sample.name == name and labels.items() <= sample.labels.items():
                    total += sample.value
        return total

    def stderr(self) -> str:
        if not self._log.closed:
            self._log.flush()
        return self.log_path.read_text()

    def log_events(self) -> list[str]:
        events = []
        for line in self.stderr().splitlines():
            with contextlib.suppress(ValueError):
                events.append(json.loads(line).get("event", ""))
        return events

    def terminate(self, timeout: float = 20.0) -> int:
        """SIGTERM and wait; SIGKILL if it does not exit in ``timeout``. Returns the code."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._log.close()
        return self.proc.returncode
