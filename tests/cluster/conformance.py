"""Two API servers behind one interface, for the conformance scripts: the emulator and the
session's kube-apiserver (``test_conformance*.py``). The fixtures ``backends`` and ``ns`` are
registered in ``conftest.py``.
"""

from __future__ import annotations

import base64
import http.client
import json
import ssl
import threading
import time
import urllib.parse
import urllib.request
import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pytest

from scheduler.sim.server import SimServer, run_in_thread

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    import kubernetes

    from controlplane.launcher import ControlPlane

Reply = tuple[int, Any]


@dataclass
class Backend:
    """One API server: plain JSON requests and line-by-line watches."""

    name: str
    url: str
    context: ssl.SSLContext | None
    compact: Callable[[], None]

    def _connection(self, timeout: float) -> http.client.HTTPConnection:
        parts = urllib.parse.urlsplit(self.url)
        if self.context is not None:
            return http.client.HTTPSConnection(
                parts.hostname or "", parts.port, timeout=timeout, context=self.context
            )
        return http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=timeout)

    def request(
        self,
        method: str,
        path: str,
        body: Any = None,
        params: dict[str, str] | None = None,
        content_type: str = "application/json",
    ) -> Reply:
        """(status, decoded JSON body)."""
        if params:
            path += "?" + urllib.parse.urlencode(params)
        conn = self._connection(30)
        try:
            headers = {"Accept": "application/json"}
            data = None if body is None else json.dumps(body).encode()
            if data is not None:
                headers["Content-Type"] = content_type
            conn.request(method, path, body=data, headers=headers)
            resp = conn.getresponse()
            raw = resp.read()
            return resp.status, json.loads(raw) if raw else None
        finally:
            conn.close()

    def watch(
        self,
        path: str,
        params: dict[str, str],
        *,
        seconds: float,
        until: Callable[[list[dict[str, Any]]], bool] | None = None,
        started: threading.Event | None = None,
    ) -> tuple[int, list[dict[str, Any]]]:
        """(status, events) of a watch read until it ends, ``until`` holds, or ``seconds``."""
        query = urllib.parse.urlencode({**params, "watch": "true"})
        conn = self._connection(seconds + 5)
        events: list[dict[str, Any]] = []
        try:
            conn.request("GET", f"{path}?{query}", headers={"Accept": "application/json"})
            resp = conn.getresponse()
            if started is not None:
                started.set()
            deadline = time.monotonic() + seconds
            while time.monotonic() < deadline:
                line = resp.readline()
                if not line:
                    break
                events.append(json.loads(line))
                if until is not None and until(events):
                    break
            return resp.status, events
        finally:
            conn.close()


def _etcd_compactor(etcd_url: str) -> Callable[[], None]:
    """Compact etcd to its current revision through its JSON gateway (what kube-apiserver's
    own compactor does every 5 minutes)."""

    def post(path: str, body: dict[str, Any]) -> dict[str, Any]:
        req = urllib.request.Request(etcd_url + path, data=json.dumps(body).encode())
        with urllib.request.urlopen(req, timeout=10) as resp:
            result: dict[str, Any] = json.loads(resp.read())
            return result

    def compact() -> None:
        key = base64.b64encode(b"/").decode()
        revision = post("/v3/kv/range", {"key": key})["header"]["revision"]
        post("/v3/kv/compaction", {"revision": revision, "physical": True})

    return compact


@pytest.fixture(scope="module")
def backends(control_plane: ControlPlane) -> Iterator[list[Backend]]:
    """[emulator, kube-apiserver]."""
    context = ssl.create_default_context(cafile=str(control_plane.pki.ca_cert))
    cert, key = control_plane.pki.client("admin")
    context.load_cert_chain(str(cert), str(key))
    real = Backend(
        "kube-apiserver", control_plane.api_url, context, _etcd_compactor(control_plane.etcd_url)
    )
    server = SimServer(bookmark_interval=1.0)
    with run_in_thread(server) as url:
        sim = Backend("emulator", url, None, lambda: server.run_sync(server.store.compact))
        yield [sim, real]


@pytest.fixture
def ns(backends: list[Backend], core: kubernetes.client.CoreV1Api) -> Iterator[str]:
    """A fresh namespace of the same name on both backends."""
    from tests.cluster.conftest import wait_for_default_account  # conftest imports this module

    name = f"conf-{uuid.uuid4().hex[:8]}"
    for b in backends:
        status, _ = b.request("POST", "/api/v1/namespaces", {"metadata": {"name": name}})
        assert status == 201, b.name
    wait_for_default_account(core, name)  # pods need it on the real one
    yield name
    for b in backends:
        b.request("DELETE", f"/api/v1/namespaces/{name}")


def both(backends: list[Backend], script: Callable[[Backend], Any]) -> Any:
    """Run ``script`` on each backend; assert the digests are equal; the real one's back."""
    sim, real = (script(b) for b in backends)
    assert sim == real, f"emulator:\n{sim!r}\nkube-apiserver:\n{real!r}"
    return real


def status_of(reply: Reply) -> dict[str, Any]:
    """What our client and kopf read of a Status: code, kind, status, reason, details."""
    code, body = reply
    body = body or {}
    digest = {"http": code, **{k: body.get(k) for k in ("kind", "status", "reason", "code")}}
    if "details" in body:
        digest["details"] = body["details"]
    return digest
