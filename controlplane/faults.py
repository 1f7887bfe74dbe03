"""Faults on the control plane, for the chaos suite and the cluster tier: a component killed,
restarted, paused or resumed, and etcd compacted.

``restart`` starts a component again with the flags it had: the same ports, certificates
and data directory, so its clients reconnect to the same URL (etcd keeps its data; the API
server its serving certificate). ``pause`` is SIGSTOP: the process keeps its sockets and
answers nothing, as a stalled or overloaded server; ``resume`` is SIGCONT. ``compact``
compacts etcd at its current revision: etcd refuses reads at an older revision from then on.
kube-apiserver v1.37 serves watches and exact LISTs from its watch cache, which keeps the
recent history etcd compacted away; it answers 410 Gone at a compacted revision once that
history leaves its cache — after a restart at once (its cache then begins at the current
revision), or when started with ``--watch-cache=false`` (``apiserver_args``).

Mixed into :class:`controlplane.launcher.ControlPlane`, which provides the processes and
how to wait for each component to be ready.
"""

from __future__ import annotations

import base64
import json
import time
import urllib.request
from typing import TYPE_CHECKING

from controlplane.processes import spawn

if TYPE_CHECKING:
    from collections.abc import Callable

    from controlplane.processes import Process

__all__ = ["FaultControls"]


class FaultControls:
    """``kill``, ``restart``, ``pause``, ``resume`` and ``compact`` by component name
    (``etcd``, ``kube-apiserver``, ``kube-controller-manager``, ``kube-scheduler``)."""

    processes: list[Process]
    etcd_url: str
    readiness: dict[str, Callable[[], bool]]
    """Per component, how to tell it is serving (none: alive is enough)."""

    def process(self, name: str) -> Process:
        raise NotImplementedError  # ControlPlane's

    def kill(self, name: str) -> None:
        """SIGKILL ``name``: it ends as in a crash, without shutting down."""
        self.process(name).kill()

    def pause(self, name: str) -> None:
        self.process(name).pause()

    def resume(self, name: str) -> None:
        self.process(name).resume()

    def restart(self, name: str, *, timeout: float = 60.0) -> float:
        """Start ``name`` again with its flags (killed first if it still runs) and wait
        until it serves; the seconds that took."""
        old = self.process(name)
        if old.alive():
            old.kill()
        started = time.monotonic()
        new = spawn(name, old.args, old.log)
        self.processes[self.processes.index(old)] = new
        ready = self.readiness.get(name)
        deadline = started + timeout
        while ready is not None and not ready():
            if not new.alive():
                raise RuntimeError(f"{name} exited on restart:\n{new.tail()}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"{name} not ready {timeout:.0f}s after restart:\n{new.tail()}")
            time.sleep(0.1)
        return time.monotonic() - started

    def compact(self) -> int:
        """Compact etcd at its current revision (physically); returns the revision."""
        header = _etcd(self.etcd_url, "/v3/kv/range", {"key": _b64("\0"), "limit": 1})
        revision = int(header["header"]["revision"])
        _etcd(self.etcd_url, "/v3/kv/compaction", {"revision": revision, "physical": True})
        return revision


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def _etcd(url: str, path: str, body: dict[str, object]) -> dict[str, dict[str, str]]:
    """One call of etcd's JSON gateway (its v3 API over HTTP)."""
    request = urllib.request.Request(
        f"{url}{path}",
        data=json.dumps(body).encode(),
        method="POST",
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        decoded: dict[str, dict[str, str]] = json.loads(response.read())
        return decoded
