"""The process's HTTP surface: ``/metrics``, ``/configz``, ``/healthz``, ``/readyz``, ``/livez``.

* ``/metrics``: the Prometheus text of our one ``Metrics`` instance;
* ``/configz``: the effective configuration as JSON, under ``componentconfig`` as kube's;
* ``/healthz`` and ``/livez``: 200 while the event loop answers (liveness probes);
* ``/readyz``: 200 once the caches are synced (``kube.controller.sync.Synced``), else 503.
  Followers in leader election are ready too: they only wait for the lease, and a
  follower marked unready would be restarted or pulled from rotation for no reason.

Two ways to serve them, one :class:`Endpoints` each: the secure port (``tls`` and ``auth``
given: HTTPS, every request authenticated and authorized as kube-scheduler's, see
``kube.delegated_auth``), and the plain-HTTP ``--metrics-addr`` for local use (neither:
open to whoever reaches the address).

Named ``endpoints`` rather than ``http`` (a stdlib module). The only module of ``app`` that
imports aiohttp. Neighbours: ``runtime`` starts and stops it; ``metrics`` renders.
"""

from __future__ import annotations

import asyncio
import json
import os
from typing import TYPE_CHECKING, Any

from aiohttp import web

from scheduler import logs
from scheduler.app.settings import SettingsError
from scheduler.kube.delegated_auth import AuthError
from scheduler.metrics.registry import CONTENT_TYPE

if TYPE_CHECKING:
    import ssl
    from collections.abc import Awaitable, Callable, Mapping

    from scheduler.cycle.loop import Gate
    from scheduler.kube.delegated_auth import DelegatedAuth
    from scheduler.metrics.registry import Metrics

    Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]

log = logs.get_logger(__name__)


class Endpoints:
    """An aiohttp server on ``host:port`` (port 0: a free one, see :attr:`port`)."""

    def __init__(
        self,
        *,
        metrics: Metrics,
        synced: Gate,
        host: str,
        port: int,
        configz: Mapping[str, Any] | None = None,
        tls: ssl.SSLContext | None = None,
        auth: DelegatedAuth | None = None,
        field: str = "metrics_addr",
    ) -> None:
        self.metrics = metrics
        self.synced = synced
        self.host = host
        self.port = port
        self.configz = dict(configz or {})
        self.tls = tls
        self.auth = auth
        self.field = field
        """The setting named when the address cannot be bound."""
        self._runner: web.AppRunner | None = None

    def app(self) -> web.Application:
        middlewares = [self._guard] if self.auth is not None else []
        app = web.Application(middlewares=middlewares)
        app.router.add_get("/metrics", self._metrics)
        app.router.add_get("/configz", self._configz)
        app.router.add_get("/healthz", self._healthz)
        app.router.add_get("/livez", self._healthz)
        app.router.add_get("/readyz", self._readyz)
        return app

    async def start(self) -> None:
        """Listen; :attr:`port` is the bound port afterwards."""
        runner = web.AppRunner(self.app(), access_log=None, handle_signals=False)
        await runner.setup()
        site = web.TCPSite(runner, self.host, self.port, ssl_context=self.tls)
        try:
            await site.start()
        except OSError as exc:  # the port is taken, or the address is not ours to bind
            await runner.cleanup()
            reason = os.strerror(exc.errno).lower() if exc.errno else str(exc)
            raise SettingsError(
                self.field, f"cannot listen on {self.host}:{self.port}: {reason}"
            ) from None
        self._runner = runner
        for address in runner.addresses:
            if isinstance(address, tuple) and len(address) >= 2:
                self.port = int(address[1])
                break
        log.info(
            "endpoints_serving",
            host=self.host,
            port=self.port,
            scheme="https" if self.tls is not None else "http",
            authorized=self.auth is not None,
        )

    async def stop(self) -> None:
        """Stop listening; idempotent."""
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    @web.middleware
    async def _guard(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        """kube's WithAuthentication then WithAuthorization: a rejected token is 401 on
        every path (health ones too), a user without the right is 403."""
        assert self.auth is not None
        scheme, _, token = request.headers.get("Authorization", "").partition(" ")
        bearer = token.strip() if scheme.lower() == "bearer" else ""
        try:
            user = await self.auth.authenticate(bearer or None)
        except AuthError as exc:
            log.warning("authentication_failed", error=str(exc))
            user = None
        if user is None:
            return _status(401, "Unauthorized", "Unauthorized")
        verb = request.method.lower()
        try:
            decision = await self.auth.authorize(user, request.path, verb)
        except AuthError as exc:
            log.warning("authorization_failed", error=str(exc), path=request.path)
            return _status(500, "InternalError", "Internal error occurred: authorization failed")
        if not decision.allowed:
            message = f'forbidden: User "{user.name}" cannot {verb} path "{request.path}"'
            if decision.reason:
                message += f": {decision.reason}"
            return _status(403, "Forbidden", message)
        return await handler(request)

    async def _metrics(self, _: web.Request) -> web.Response:
        # Counted here rather than kept up to date: a leak shows as a count that grows
        # between scrapes of an idle scheduler (this handler's own task included).
        self.metrics.asyncio_tasks.set(len(asyncio.all_tasks()))
        return web.Response(body=self.metrics.render(), headers={"Content-Type": CONTENT_TYPE})

    async def _configz(self, _: web.Request) -> web.Response:
        body = json.dumps({"componentconfig": self.configz}, default=str)
        return web.Response(text=body, content_type="application/json")

    async def _healthz(self, _: web.Request) -> web.Response:
        return web.Response(text="ok")

    async def _readyz(self, _: web.Request) -> web.Response:
        if self.synced.is_open():
            return web.Response(text="ok")
        return web.Response(status=503, text="caches not synced")


def _status(code: int, reason: str, message: str) -> web.Response:
    """A ``metav1.Status`` body, as kube's handlers answer a refusal."""
    body = {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": reason,
        "details": {},
        "code": code,
    }
    return web.Response(status=code, text=json.dumps(body), content_type="application/json")
