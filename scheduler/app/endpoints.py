"""The process's HTTP surface: ``/metrics``, ``/healthz``, ``/readyz`` and nothing else.

* ``/metrics``: the Prometheus text of our one ``Metrics`` instance;
* ``/healthz``: 200 while the event loop answers (a liveness probe);
* ``/readyz``: 200 once the caches are synced (``kube.controller.sync.Synced``), else 503.
  Followers in leader election are ready too: they only wait for the lease, and a
  follower marked unready would be restarted or pulled from rotation for no reason.

Named ``endpoints`` rather than ``http`` (a stdlib module). The only module of ``app`` that
imports aiohttp. Neighbours: ``runtime`` starts and stops it; ``metrics`` renders.
"""

from __future__ import annotations

import asyncio
import os
from typing import TYPE_CHECKING

from aiohttp import web

from scheduler import logs
from scheduler.app.settings import SettingsError
from scheduler.metrics import CONTENT_TYPE

if TYPE_CHECKING:
    from scheduler.cycle.loop import Gate
    from scheduler.metrics import Metrics

log = logs.get_logger(__name__)


class Endpoints:
    """An aiohttp server on ``host:port`` (port 0: a free one, see :attr:`port`)."""

    def __init__(self, *, metrics: Metrics, synced: Gate, host: str, port: int) -> None:
        self.metrics = metrics
        self.synced = synced
        self.host = host
        self.port = port
        self._runner: web.AppRunner | None = None

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_get("/metrics", self._metrics)
        app.router.add_get("/healthz", self._healthz)
        app.router.add_get("/readyz", self._readyz)
        return app

    async def start(self) -> None:
        """Listen; :attr:`port` is the bound port afterwards."""
        runner = web.AppRunner(self.app(), access_log=None, handle_signals=False)
        await runner.setup()
        site = web.TCPSite(runner, self.host, self.port)
        try:
            await site.start()
        except OSError as exc:  # the port is taken, or the address is not ours to bind
            await runner.cleanup()
            reason = os.strerror(exc.errno).lower() if exc.errno else str(exc)
            raise SettingsError(
                "metrics_addr", f"cannot listen on {self.host}:{self.port}: {reason}"
            ) from None
        self._runner = runner
        for address in runner.addresses:
            if isinstance(address, tuple) and len(address) >= 2:
                self.port = int(address[1])
                break
        log.info("endpoints_serving", host=self.host, port=self.port)

    async def stop(self) -> None:
        """Stop listening; idempotent."""
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def _metrics(self, _: web.Request) -> web.Response:
        # Counted here rather than kept up to date: a leak shows as a count that grows
        # between scrapes of an idle scheduler (this handler's own task included).
        self.metrics.asyncio_tasks.set(len(asyncio.all_tasks()))
        return web.Response(body=self.metrics.render(), headers={"Content-Type": CONTENT_TYPE})

    async def _healthz(self, _: web.Request) -> web.Response:
        return web.Response(text="ok")

    async def _readyz(self, _: web.Request) -> web.Response:
        if self.synced.is_open():
            return web.Response(text="ok")
        return web.Response(status=503, text="caches not synced")
