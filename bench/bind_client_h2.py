"""The ``h2`` candidate of :mod:`bench.bind_client`: binds as streams of one HTTP/2
connection (the ``h2`` package's state machine over an asyncio TLS transport), as client-go
binds. A measurement prototype, not a client: no reconnect, no GOAWAY handling.
"""

from __future__ import annotations

import asyncio
import ssl
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

import h2.config
import h2.connection
import h2.events

from bench.real import NAMESPACE, PODS_PATH

if TYPE_CHECKING:
    from bench.real import Cluster
    from scheduler.model.pod import Pod


class _Protocol(asyncio.Protocol):
    def __init__(self, authority: str) -> None:
        config = h2.config.H2Configuration(client_side=True, header_encoding=None)
        self.conn = h2.connection.H2Connection(config=config)
        self.authority = authority.encode()
        self.transport: asyncio.Transport | None = None
        self.streams: dict[int, tuple[asyncio.Future[int], list[int]]] = {}
        self.ready = asyncio.get_running_loop().create_future()

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        stream: asyncio.Transport = transport  # type: ignore[assignment]  # uvloop's: no subclass
        self.transport = stream
        self.conn.initiate_connection()
        self.conn.increment_flow_control_window(1 << 24)
        stream.write(self.conn.data_to_send())
        self.ready.set_result(None)

    def data_received(self, data: bytes) -> None:
        for event in self.conn.receive_data(data):
            if isinstance(event, h2.events.ResponseReceived):
                entry = self.streams.get(event.stream_id)
                if entry is not None:
                    for name, value in event.headers:
                        if name == b":status":
                            entry[1].append(int(value))
            elif isinstance(event, h2.events.DataReceived):
                self.conn.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
            elif isinstance(event, h2.events.StreamEnded):
                entry = self.streams.pop(event.stream_id, None)
                if entry is not None and not entry[0].done():
                    entry[0].set_result(entry[1][0] if entry[1] else 0)
            elif isinstance(event, h2.events.StreamReset):
                entry = self.streams.pop(event.stream_id, None)
                if entry is not None and not entry[0].done():
                    entry[0].set_exception(ConnectionError("stream reset"))
        out = self.conn.data_to_send()
        if out and self.transport is not None:
            self.transport.write(out)

    async def post(self, path: str, body: bytes) -> int:
        sid = self.conn.get_next_available_stream_id()
        self.conn.send_headers(
            sid,
            [
                (b":method", b"POST"),
                (b":path", path.encode()),
                (b":scheme", b"https"),
                (b":authority", self.authority),
                (b"content-type", b"application/json"),
                (b"accept", b"application/json"),
                (b"content-length", str(len(body)).encode()),
            ],
        )
        self.conn.send_data(sid, body, end_stream=True)
        future: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        self.streams[sid] = (future, [])
        assert self.transport is not None
        self.transport.write(self.conn.data_to_send())
        return await future


async def run_h2(cluster: Cluster, pods: list[Pod], concurrency: int) -> int:
    url = urlsplit(cluster.cp.api_url)
    cert, key = cluster.cp.pki.client("admin")
    context = ssl.create_default_context(cafile=str(cluster.cp.pki.ca_cert))
    context.load_cert_chain(str(cert), str(key))
    context.set_alpn_protocols(["h2"])
    loop = asyncio.get_running_loop()
    assert url.hostname is not None
    assert url.port is not None
    transport, protocol = await loop.create_connection(
        lambda: _Protocol(url.netloc), url.hostname, url.port, ssl=context
    )
    ssl_object = transport.get_extra_info("ssl_object")
    assert ssl_object.selected_alpn_protocol() == "h2"
    sem = asyncio.Semaphore(concurrency)
    bound = 0

    async def bind(i: int, pod: Pod) -> None:
        nonlocal bound
        body = (
            b'{"apiVersion":"v1","kind":"Binding","metadata":{"name":"%s","namespace":"%s",'
            b'"uid":"%s"},"target":{"apiVersion":"v1","kind":"Node","name":"node-%d"}}'
            % (pod.name.encode(), NAMESPACE.encode(), str(pod.uid).encode(), i % cluster.nodes)
        )
        async with sem:
            status = await protocol.post(f"{PODS_PATH}/{pod.name}/binding", body)
        bound += 200 <= status < 300

    await asyncio.gather(*(bind(i, p) for i, p in enumerate(pods)))
    transport.close()
    return bound
