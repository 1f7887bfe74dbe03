"""A TCP relay between the scheduler and kube-apiserver that a test can cut: a network
partition on loopback without touching either process.

TLS passes through untouched (the serving certificate names 127.0.0.1, whatever the
port), so the scheduler still authenticates as its ServiceAccount. ``cut()`` closes every
relayed connection and refuses new ones (accepted, then closed at once) until ``heal()``.
The relay runs on a thread of its own with its own event loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path

CHUNK = 1 << 16


class Partition:
    def __init__(self, upstream_port: int) -> None:
        self.upstream_port = upstream_port
        self.port = 0
        self._cut = False
        self._writers: set[asyncio.StreamWriter] = set()
        self._loop = asyncio.new_event_loop()
        self._started = threading.Event()
        self._thread = threading.Thread(target=self._run, name="partition", daemon=True)

    def __enter__(self) -> Partition:
        self._thread.start()
        self._started.wait(10)
        return self

    def __exit__(self, *_: object) -> None:
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)

    def rewrite(self, kubeconfig: Path, out: Path) -> Path:
        """A copy of ``kubeconfig`` that talks to the relay instead of the server."""
        text = kubeconfig.read_text().replace(
            f"127.0.0.1:{self.upstream_port}", f"127.0.0.1:{self.port}"
        )
        out.write_text(text)
        out.chmod(0o600)
        return out

    def cut(self) -> None:
        """Drop every connection and refuse new ones."""
        self._cut = True
        self._loop.call_soon_threadsafe(self._close_all)

    def heal(self) -> None:
        self._cut = False

    def _close_all(self) -> None:
        for writer in list(self._writers):
            writer.close()
        self._writers.clear()

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        server = self._loop.run_until_complete(asyncio.start_server(self._accept, "127.0.0.1", 0))
        self.port = server.sockets[0].getsockname()[1]
        self._started.set()
        try:
            self._loop.run_forever()
        finally:
            server.close()
            self._close_all()
            self._loop.close()

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if self._cut:
            writer.close()
            return
        try:
            up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.upstream_port)
        except OSError:
            writer.close()
            return
        self._writers.update((writer, up_writer))
        await asyncio.gather(
            self._pipe(reader, up_writer), self._pipe(up_reader, writer), return_exceptions=True
        )
        self._writers.difference_update((writer, up_writer))

    async def _pipe(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while data := await reader.read(CHUNK):
                writer.write(data)
                await writer.drain()
        finally:
            with contextlib.suppress(Exception):
                writer.close()
