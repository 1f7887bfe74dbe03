"""SimServer: the emulator's aiohttp application, its lifecycle and its background loops.

Owns the store, the fault injector and the actors (kubelet, rogue binder, workload
controllers), serves discovery, OpenAPI, the
resource API (:mod:`scheduler.sim.api`) and ``GET /sim/stats``. It can run on the
caller's event loop (``await start()``) or on a private loop in a thread
(:func:`run_in_thread`), which suits synchronous clients such as kubectl and the
official ``kubernetes`` package in tests.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
from collections.abc import Awaitable, Callable, Iterator
from typing import TYPE_CHECKING, Any, TypeVar

from aiohttp import web

from scheduler.sim import admission, discovery, errors, openapi, services, workload
from scheduler.sim.actors import Kubelet, RogueBinder
from scheduler.sim.api import Api, reply
from scheduler.sim.controllers import Controllers
from scheduler.sim.discovery import NAMESPACES, NODES, PRIORITY_CLASSES, SERVICES
from scheduler.sim.faults import FaultConfig, Faults
from scheduler.sim.kubeconfig import write_kubeconfig
from scheduler.sim.store import Store

if TYPE_CHECKING:
    from pathlib import Path

T = TypeVar("T")
log = logging.getLogger(__name__)
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
BOOT_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")


class SimServer:
    """A Kubernetes API emulator on loopback HTTP."""

    def __init__(
        self,
        *,
        token: str | None = None,
        faults: FaultConfig | None = None,
        nodes: int = 0,
        kubelet: bool = False,
        kubelet_delay: float = 0.1,
        controllers: bool = True,
        history_limit: int = 20_000,
        bookmark_interval: float = 5.0,
    ) -> None:
        self.token = token
        self.faults = Faults(faults)
        self.store = Store(history_limit=history_limit, seed=self.faults.config.seed)
        self.rogue = RogueBinder(self.store, self.faults)
        self.kubelet = Kubelet(self.store, delay=kubelet_delay) if kubelet else None
        self.controllers = Controllers(self.store) if controllers else None
        self.api = Api(self.store, self.faults, self.rogue, bookmark_interval=bookmark_interval)
        self.url = ""
        self._runner: web.AppRunner | None = None
        self._tasks: list[asyncio.Task[None]] = []
        self._loop: asyncio.AbstractEventLoop | None = None
        for ns in BOOT_NAMESPACES:
            self.store.create(NAMESPACES, _namespace(ns))
        self.store.create(SERVICES, services.kubernetes_service())
        for priority_class in admission.system_priority_classes():
            self.store.create(PRIORITY_CLASSES, priority_class)
        for node in workload.make_nodes(nodes):
            self.store.create(
                NODES, {k: v for k, v in node.items() if k not in ("kind", "apiVersion")}
            )

    def app(self) -> web.Application:
        """The aiohttp application (also usable with aiohttp's test client)."""
        app = web.Application(middlewares=[self._middleware], client_max_size=16 * 2**20)
        app.router.add_get("/version", _static(discovery.VERSION_INFO))
        app.router.add_get("/api", _static(discovery.api_versions()))
        app.router.add_get("/apis", _static(discovery.api_group_list()))
        app.router.add_get("/openapi/v2", _openapi_v2)
        app.router.add_get("/openapi/v3", _static(openapi.v3_index()))
        app.router.add_get("/sim/stats", self._stats)
        for probe in ("/healthz", "/livez", "/readyz"):
            app.router.add_get(probe, _text_ok)
        app.router.add_route("*", "/api/{tail:.*}", self.api.handle)
        app.router.add_route("*", "/apis/{tail:.*}", self.api.handle)
        app.router.add_route("*", "/apis", self.api.handle)
        return app

    @web.middleware
    async def _middleware(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        try:
            if self.token is not None and request.headers.get("Authorization") != (
                f"Bearer {self.token}"
            ):
                raise errors.ApiError(401, "Unauthorized", "Unauthorized")
            return await handler(request)
        except errors.ApiError as e:
            resp = reply(e.status(), e.code)
            resp.headers.update(e.headers)
            return resp
        except web.HTTPException as e:
            if e.status == 404:
                return reply(
                    errors.failure_status(
                        404, "NotFound", "the server could not find the requested resource"
                    ),
                    404,
                )
            raise
        except (ConnectionError, asyncio.CancelledError):
            raise
        except Exception as e:  # a bug here must still answer like kube-apiserver: a 500 Status
            log.exception("internal error on %s %s", request.method, request.path)
            return reply(errors.failure_status(500, "InternalError", f"Internal error: {e!r}"), 500)

    async def _stats(self, _: web.Request) -> web.Response:
        watchers = sum(len(ws) for ws in self.store.watchers.values())
        return reply(
            {
                **self.faults.stats(),
                "resourceVersion": self.store.rv,
                "watchers": watchers,
                "objects": {k: len(v) for k, v in self.store.tables.items()},
                "binders": self.api.binders,
            }
        )

    async def start(self, host: str = "127.0.0.1", port: int = 0) -> str:
        """Listen and start the fault loops; returns the base URL (``http://host:port``)."""
        self._loop = asyncio.get_running_loop()
        self._runner = web.AppRunner(self.app(), access_log=None, handle_signals=False)
        await self._runner.setup()
        site = web.TCPSite(self._runner, host, port)
        await site.start()
        server = site._server
        sockets = getattr(server, "sockets", None) or []
        bound = sockets[0].getsockname()[1] if sockets else port
        self.url = f"http://{host}:{bound}"
        self._tasks.append(asyncio.create_task(self._fault_clock()))
        return self.url

    async def stop(self) -> None:
        """Close every watch, stop the loops and the listener."""
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self._tasks.clear()
        self.store.close_watchers()
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    def write_kubeconfig(self, path: str | Path, *, name: str = "sim") -> Path:
        """Write a kubeconfig for this server (after :meth:`start`)."""
        return write_kubeconfig(path, self.url, token=self.token, name=name)

    def run_sync(self, fn: Callable[[], T]) -> T:
        """Run ``fn`` on the server's loop from another thread and return its result."""
        assert self._loop is not None, "server not started"

        async def call() -> T:
            return fn()

        return asyncio.run_coroutine_threadsafe(call(), self._loop).result()

    async def _fault_clock(self, tick: float = 0.05) -> None:
        """Drop watches and compact on schedule; reads the config every tick, so tests can
        switch these faults on and off while the server runs."""
        loop = asyncio.get_running_loop()
        last_drop = last_compact = loop.time()
        while True:
            await asyncio.sleep(tick)
            now, cfg = loop.time(), self.faults.config
            if cfg.drop_watches_every <= 0:
                last_drop = now
            elif now - last_drop >= cfg.drop_watches_every:
                last_drop = now
                self._drop_watches()
            if cfg.compact_every <= 0:
                last_compact = now
            elif now - last_compact >= cfg.compact_every:
                last_compact = now
                self._partition_then_compact(cfg.compact_gap)

    def _drop_watches(self) -> None:
        self.faults.count("watch_drops", self.store.close_watchers())

    def _partition_then_compact(self, gap: float) -> None:
        """Cut the watches off for ``gap`` seconds, then compact: watchers that resume only
        after the compaction, from a version before it, get 410 Gone, as after a real
        partition. (Compacting under live watches alone would never expire anyone: a
        connected watcher's version is always current.)"""
        loop = asyncio.get_running_loop()
        self.api.watches_held_until = loop.time() + gap
        self.api.watches_resume.clear()
        self._drop_watches()
        loop.call_later(gap, self._compact)

    def _compact(self) -> None:
        self.store.compact()
        self.faults.count("compactions")
        self.api.watches_resume.set()


def _namespace(name: str) -> dict[str, Any]:
    return {
        "metadata": {"name": name},
        "spec": {"finalizers": ["kubernetes"]},
        "status": {"phase": "Active"},
    }


def _static(body: dict[str, Any]) -> Handler:
    raw = reply(body).body

    async def handler(_: web.Request) -> web.StreamResponse:
        return reply(raw)

    return handler


async def _openapi_v2(_: web.Request) -> web.Response:
    return web.Response(body=openapi.v2_protobuf(), content_type=openapi.V2_PROTOBUF)


async def _text_ok(_: web.Request) -> web.Response:
    return web.Response(text="ok")


@contextlib.contextmanager
def run_in_thread(
    server: SimServer | None = None, *, host: str = "127.0.0.1", port: int = 0
) -> Iterator[str]:
    """Run ``server`` (default: a plain one) on its own loop in a thread; yields the URL."""
    srv = server or SimServer()
    loop = asyncio.new_event_loop()
    started = threading.Event()
    failure: list[BaseException] = []

    def target() -> None:
        try:
            loop.run_until_complete(srv.start(host, port))
        except BaseException as e:  # reported to the caller below
            failure.append(e)
            started.set()
            return
        started.set()
        loop.run_forever()
        loop.run_until_complete(srv.stop())
        loop.run_until_complete(loop.shutdown_asyncgens())

    thread = threading.Thread(target=target, name="sim-server", daemon=True)
    thread.start()
    started.wait()
    if failure:
        thread.join()
        loop.close()
        raise failure[0]
    try:
        yield srv.url
    finally:
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=10)
        loop.close()
