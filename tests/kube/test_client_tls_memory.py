"""What a TLS connection of ApiClient's pool holds: asyncio's read buffer at the client's
cap, not its 256 KiB default (the soak's RSS grew with the pool)."""

from __future__ import annotations

import asyncio
import ssl
import tracemalloc
from typing import TYPE_CHECKING

from aiohttp import web
from kubernetes import client as k8s_client

from scheduler.app.serving_cert import self_signed
from scheduler.kube.client import TLS_READ_BUFFER, ApiClient

if TYPE_CHECKING:
    from pathlib import Path

CONNECTIONS = 24


async def _tls_server(tmp_path: Path, peers: set[tuple[str, int]]) -> web.AppRunner:
    """A loopback HTTPS server whose one route answers after 50 ms (so that requests sent
    together need a connection each) and records the client's address of each."""
    cert, key = self_signed()
    (tmp_path / "tls.crt").write_bytes(cert)
    (tmp_path / "tls.key").write_bytes(key)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(tmp_path / "tls.crt", tmp_path / "tls.key")

    async def slow(request: web.Request) -> web.Response:
        peername = request.transport.get_extra_info("peername") if request.transport else None
        if peername is not None:
            peers.add((peername[0], peername[1]))
        await asyncio.sleep(0.05)
        return web.json_response({"kind": "Status"})

    app = web.Application()
    app.router.add_get("/api", slow)
    runner = web.AppRunner(app)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0, ssl_context=context).start()
    return runner


def _client_side(snapshot: tracemalloc.Snapshot) -> int:
    """Bytes allocated under aiohttp's connector (the client's connections), the server's
    own (accepted) connections left out."""
    connector = tracemalloc.Filter(True, "*aiohttp/connector.py", all_frames=True)
    return sum(stat.size for stat in snapshot.filter_traces([connector]).statistics("filename"))


async def test_a_pooled_tls_connection_holds_the_capped_read_buffer(tmp_path: Path) -> None:
    peers: set[tuple[str, int]] = set()
    runner = await _tls_server(tmp_path, peers)
    port = runner.addresses[0][1]
    configuration = k8s_client.Configuration()
    configuration.host = f"https://127.0.0.1:{port}"
    configuration.ssl_ca_cert = str(tmp_path / "tls.crt")
    client = ApiClient(configuration, retries=0, pool_size=CONNECTIONS + 1)
    tracemalloc.start(64)
    try:
        await client.request("GET", "/api")  # the session and its first connection
        before = _client_side(tracemalloc.take_snapshot())
        await asyncio.gather(*(client.request("GET", "/api") for _ in range(CONNECTIONS)))
        after = _client_side(tracemalloc.take_snapshot())
    finally:
        tracemalloc.stop()
        await client.close()
        await runner.cleanup()
    opened = len(peers) - 1
    assert opened >= CONNECTIONS - 1, peers  # the first one may be reused once
    per_connection = (after - before) / opened
    # The buffer and the connection's own objects (about 10 KiB); 256 KiB each without the cap.
    assert TLS_READ_BUFFER <= per_connection < TLS_READ_BUFFER + 48 * 1024, per_connection
