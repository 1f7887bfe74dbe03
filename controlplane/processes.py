"""The control plane's processes: the pinned binaries (their versions, whether they are
built), one running component (started in its own session, stopped with SIGTERM, then
SIGKILL; killed, paused and resumed for fault tests), free loopback ports, and the
kubeconfigs its clients use.

controlplane/launcher.py starts and wires the components with these.
"""

from __future__ import annotations

import base64
import contextlib
import os
import re
import signal
import socket
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import yaml

if TYPE_CHECKING:
    from collections.abc import Sequence

HERE = Path(__file__).resolve().parent
BIN = HERE / "bin"


def pinned_versions() -> dict[str, str]:
    """The versions go.mod pins: ``{"kubernetes": "v1.37.2", "etcd": "v3.7.0"}``."""
    text = (HERE / "go.mod").read_text()
    found = {
        "kubernetes": re.search(r"^\s*k8s\.io/kubernetes (v\S+)", text, re.M),
        "etcd": re.search(r"^\s*go\.etcd\.io/etcd/server/v3 (v\S+)", text, re.M),
    }
    return {name: match.group(1) for name, match in found.items() if match}


def missing_binaries() -> str | None:
    """Why the pinned binaries are not ready to run (``None`` when they are)."""
    versions = pinned_versions()
    want = {
        "etcd": versions["etcd"].lstrip("v"),
        "kube-apiserver": versions["kubernetes"],
        "kube-controller-manager": versions["kubernetes"],
        "kube-scheduler": versions["kubernetes"],
    }
    for name, version in want.items():
        path = BIN / name
        if not path.exists():
            return f"{path} is missing: run `make controlplane`"
        try:
            out = subprocess.run(
                [str(path), "--version"], capture_output=True, text=True, timeout=30, check=False
            ).stdout
        except OSError as exc:
            return f"{path} cannot run: {exc}"
        if version not in out:
            return f"{path} is not {version} ({out.strip()!r}): run `make controlplane`"
    return None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Process:
    name: str
    proc: subprocess.Popen[bytes]
    log: Path
    args: list[str]
    """The flags it was started with (a restart starts it again with the same ones)."""

    def alive(self) -> bool:
        return self.proc.poll() is None

    def tail(self, lines: int = 30) -> str:
        try:
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""

    def stop(self, timeout: float = 10.0) -> None:
        if not self.alive():
            return
        self.resume()  # a stopped process would not act on SIGTERM
        self._signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.kill(timeout)

    def kill(self, timeout: float = 10.0) -> None:
        """SIGKILL, as a crash or an OOM kill ends it: no shutdown of its own."""
        self._signal(signal.SIGKILL)
        self.proc.wait(timeout=timeout)

    def pause(self) -> None:
        """SIGSTOP: alive, its sockets open, answering nothing (a stalled process)."""
        self._signal(signal.SIGSTOP)

    def resume(self) -> None:
        self._signal(signal.SIGCONT)

    def _signal(self, sig: signal.Signals) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, sig)


def spawn(name: str, args: Sequence[str], log: Path) -> Process:
    """Start ``bin/name`` with ``args`` in a session of its own, output appended to ``log``."""
    with log.open("ab") as out:
        proc = subprocess.Popen(
            [str(BIN / name), *args],
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
    return Process(name, proc, log, list(args))


def b64(path: Path) -> str:
    return base64.b64encode(path.read_bytes()).decode()


def write_kubeconfig(
    path: Path, server: str, ca: Path, user: str, credentials: dict[str, str]
) -> Path:
    """A one-context kubeconfig (credentials inline, so the file travels alone)."""
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [
            {
                "name": "batch-scheduler-test",
                "cluster": {"server": server, "certificate-authority-data": b64(ca)},
            }
        ],
        "users": [{"name": user, "user": credentials}],
        "contexts": [{"name": user, "context": {"cluster": "batch-scheduler-test", "user": user}}],
        "current-context": user,
    }
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    path.chmod(0o600)
    return path
