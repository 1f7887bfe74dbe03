"""The scheduler as a subprocess, and bounded waits: shared by the end-to-end and reliability
tests.

The scheduler runs as ``python -m scheduler run --kubeconfig ...`` exactly as a user starts
it (kopf and the official client unchanged, no monkeypatching), with JSON logs and its
metrics on a free port; tests read its ``/metrics`` and its log records. Every wait has a
deadline; every process is stopped in ``finally`` by the tests.
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
"""Our default profile's schedulerName."""
BATCHING = {"batch-scheduler.io/batching": "true"}
"""The opt-in annotation."""


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


class SchedulerProc:
    """``python -m scheduler run`` against a kubeconfig, metrics on a free port, JSON logs."""

    def __init__(self, kubeconfig: Path, log_path: Path, *args: str, level: str = "info") -> None:
        self.port = free_port()
        self.log_path = log_path
        self._log = log_path.open("w")
        self.cmd = [
            sys.executable,
            "-m",
            "scheduler",
            "run",
            "--kubeconfig",
            str(kubeconfig),
            "--metrics-addr",
            f"127.0.0.1:{self.port}",
            "--secure-port",  # plain HTTP above; a test that wants HTTPS passes its own
            "0",
            "--log-format",
            "json",
            "--log-level",
            level,
            "--resync-interval",
            "2",
            *args,
        ]
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        self.proc = subprocess.Popen(
            self.cmd, stdout=subprocess.DEVNULL, stderr=self._log, env=env, text=True
        )
        self._identity = ""

    def get(self, path: str, method: str = "GET") -> tuple[int, str]:
        req = urllib.request.Request(f"http://127.0.0.1:{self.port}{path}", method=method)
        try:
            with urllib.request.urlopen(req, timeout=5) as r:
                return r.status, r.read().decode()
        except urllib.error.HTTPError as e:
            return e.code, e.read().decode()
        except OSError:
            return 0, ""

    def alive(self) -> bool:
        return self.proc.poll() is None

    def wait_ready(self, timeout: float = 30.0) -> None:
        ready = wait_for(lambda: self.get("/readyz")[0] == 200 or not self.alive(), timeout, 0.1)
        assert self.alive(), f"scheduler exited {self.proc.returncode}:\n{self.stderr()[-3000:]}"
        assert ready, f"scheduler not ready in {timeout}s:\n{self.stderr()[-3000:]}"

    def metrics(self) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
        status, text = self.get("/metrics")
        if status != 200:
            return {}
        out = {}
        for family in text_string_to_metric_families(text):
            for s in family.samples:
                out[(s.name, tuple(sorted(s.labels.items())))] = s.value
        return out

    def metric(self, name: str, **labels: str) -> float:
        """The sum of ``name``'s samples whose labels include ``labels`` (0 when absent)."""
        want = labels.items()
        return sum(
            v for (n, lab), v in self.metrics().items() if n == name and want <= dict(lab).items()
        )

    def stderr(self) -> str:
        if not self._log.closed:
            self._log.flush()
        return self.log_path.read_text()

    def records(self) -> list[dict[str, Any]]:
        out = []
        for line in self.stderr().splitlines():
            with contextlib.suppress(ValueError):
                record = json.loads(line)
                if isinstance(record, dict):
                    out.append(record)
        return out

    def events(self, name: str) -> list[dict[str, Any]]:
        """The JSON log records whose ``event`` is ``name``."""
        return [r for r in self.records() if r.get("event") == name]

    def log_events(self) -> list[str]:
        """Every log record's ``event``, in order."""
        return [str(r.get("event", "")) for r in self.records()]

    @property
    def identity(self) -> str:
        if not self._identity:
            found = wait_for(lambda: self.events("scheduler_starting"), 10, 0.1)
            assert found, f"no scheduler_starting line:\n{self.stderr()[-2000:]}"
            self._identity = str(found[0]["identity"])
        return self._identity

    def kill(self) -> None:
        """SIGKILL: no drain, no lease release, binds in flight cut off."""
        if self.alive():
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(timeout=10)

    def terminate(self, timeout: float = 20.0) -> int:
        """SIGTERM and wait; SIGKILL if it does not exit in ``timeout``. Returns the code."""
        if self.alive():
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if not self._log.closed:
            self._log.close()
        return int(self.proc.returncode)

    def assert_clean_exit(self, code: int) -> None:
        assert code == 0, self.stderr()[-3000:]
        assert "Traceback" not in self.stderr(), self.stderr()[-3000:]
