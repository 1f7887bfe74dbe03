"""The runner's own API client: kubernetes-admin over TLS, JSON in and out.

The workload ops need creates, updates, patches, deletes and lists of any kind, and
``createAny``/``updateAny``/``churn`` need kube's REST mapping (apiVersion + kind → the
resource's plural and whether it is namespaced), which :meth:`Api.resource` reads from
discovery, once per group version. Many requests run at once (pods are created 30 at a
time, as kube's ``CreatePod`` does), so one pooled aiohttp session serves them all.

Neighbours: :mod:`bench.scheduler_perf.podwatch` watches pods with the same credentials;
:mod:`bench.scheduler_perf.executor` issues the requests.
"""

from __future__ import annotations

import asyncio
import ssl
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import aiohttp
import orjson

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable
    from types import TracebackType

    from controlplane.launcher import ControlPlane

Obj = dict[str, Any]
CONNECTIONS = 64
CREATE_WORKERS = 30
"""kube's ``CreatePod``: ``ParallelizeUntil(ctx, 30, ...)``."""


class ApiError(RuntimeError):
    """A request the API server refused; ``status`` is its HTTP code."""

    def __init__(self, method: str, path: str, status: int, text: str) -> None:
        super().__init__(f"{method} {path}: {status} {text[:500]}")
        self.status = status


@dataclass(frozen=True)
class Resource:
    """Where objects of one kind live: ``/api/v1`` or ``/apis/<group>/<version>``, the
    plural, and whether it is namespaced."""

    prefix: str
    plural: str
    namespaced: bool

    def collection(self, namespace: str = "") -> str:
        if self.namespaced:
            if not namespace:
                raise ValueError(f"{self.plural} is namespaced: a namespace is needed")
            return f"{self.prefix}/namespaces/{namespace}/{self.plural}"
        if namespace:
            raise ValueError(f"{self.plural} is cluster-scoped: no namespace allowed")
        return f"{self.prefix}/{self.plural}"


def tls_for(cp: ControlPlane) -> ssl.SSLContext:
    """TLS as kubernetes-admin: the cluster's CA, the admin's client certificate."""
    context = ssl.create_default_context(cafile=str(cp.pki.ca_cert))
    cert, key = cp.pki.client("admin")
    context.load_cert_chain(str(cert), str(key))
    return context


class Api:
    """kubernetes-admin on ``url``; use as ``async with Api(url, tls) as api``."""

    def __init__(self, url: str, tls: ssl.SSLContext) -> None:
        self.url = url
        self.tls = tls
        self._session: aiohttp.ClientSession | None = None
        self._resources: dict[str, dict[str, Resource]] = {}
        self._discovery = asyncio.Lock()

    async def __aenter__(self) -> Api:
        connector = aiohttp.TCPConnector(ssl=self.tls, limit=CONNECTIONS)
        self._session = aiohttp.ClientSession(
            self.url, connector=connector, json_serialize=lambda o: orjson.dumps(o).decode()
        )
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._session is not None:
            await self._session.close()

    @property
    def session(self) -> aiohttp.ClientSession:
        assert self._session is not None, "use Api in `async with`"
        return self._session

    async def request(
        self,
        method: str,
        path: str,
        body: object = None,
        *,
        params: dict[str, str] | None = None,
        content_type: str = "application/json",
        ok: tuple[int, ...] = (),
    ) -> Obj:
        """The decoded answer; :class:`ApiError` on a status >= 300 not listed in ``ok``
        (those answer ``{}``)."""
        data = None if body is None else orjson.dumps(body)
        headers = {"Content-Type": content_type, "Accept": "application/json"}
        async with self.session.request(
            method, path, data=data, params=params, headers=headers
        ) as resp:
            raw = await resp.read()
            if resp.status >= 300:
                if resp.status in ok:
                    return {}
                raise ApiError(method, path, resp.status, raw.decode(errors="replace"))
        decoded = orjson.loads(raw) if raw else {}
        return decoded if isinstance(decoded, dict) else {}

    async def create(self, path: str, body: Obj, *, ok: tuple[int, ...] = ()) -> Obj:
        return await self.request("POST", path, body, ok=ok)

    async def list_all(self, path: str, *, params: dict[str, str] | None = None) -> list[Obj]:
        """Every item of a collection, 500 per page."""
        items: list[Obj] = []
        query = {**(params or {}), "limit": "500"}
        while True:
            page = await self.request("GET", path, params=query)
            items.extend(page.get("items") or [])
            token = (page.get("metadata") or {}).get("continue")
            if not token:
                return items
            query = {**query, "continue": token}

    async def resource(self, api_version: str, kind: str) -> Resource:
        """kube's REST mapping for ``kind`` in ``api_version`` (discovery, cached)."""
        prefix = "/api/v1" if api_version == "v1" else f"/apis/{api_version}"
        if api_version not in self._resources:
            async with self._discovery:
                if api_version not in self._resources:
                    found = await self.request("GET", prefix, ok=(404,))
                    self._resources[api_version] = {
                        r["kind"]: Resource(prefix, r["name"], bool(r.get("namespaced")))
                        for r in found.get("resources") or []
                        if "/" not in r["name"]
                    }
        try:
            return self._resources[api_version][kind]
        except KeyError:
            self._resources.pop(api_version, None)  # maybe not served yet: ask again next time
            raise ApiError("GET", prefix, 404, f"no resource for kind {kind}") from None


async def parallel(count: int, workers: int, work: Callable[[int], Awaitable[object]]) -> None:
    """``work(i)`` for i in 0..count-1, ``workers`` at a time, in index order (kube's
    ``ParallelizeUntil``); the first failure stops the rest and is raised."""
    next_index = 0

    async def worker() -> None:
        nonlocal next_index
        while next_index < count:
            i = next_index
            next_index += 1
            await work(i)

    try:
        async with asyncio.TaskGroup() as group:
            for _ in range(min(workers, count)):
                group.create_task(worker())
    except ExceptionGroup as failed:
        raise failed.exceptions[0] from None
