"""The one async Kubernetes API client: JSON requests and watches over one aiohttp pool.

Why a thin client: credentials come from the official ``kubernetes.config`` loader
(``kubeconfig``: the same kubeconfig semantics as kubectl, and in-cluster service
accounts), and requests go through one pooled ``aiohttp`` session with plain JSON
dicts. Measured against the emulator in its own process (2000 pending pods, 16 concurrent
binds, median of 5): this client 2145 binds/s, ``kubernetes.aio``'s typed
``create_namespaced_pod_binding`` 1146/s (its response model cannot even parse the Status a
bind returns, so it must run without preload), its raw ``call_api`` 1458/s. The generated
layers (pydantic validation, header/param sanitising) cost more than the HTTP itself;
``python -m bench.clients`` reproduces the figures. The same code path serves the emulator
(a kubeconfig it wrote) and a real cluster.

Contract of :meth:`ApiClient.request`: a JSON object back on 2xx, an exception from
:mod:`scheduler.kube.errors` otherwise. Every request has a timeout. Idempotent verbs
(GET, PUT, PATCH, DELETE) are retried on 429 (honouring ``Retry-After``), 5xx and lost
connections with jittered exponential backoff; POST is never retried here, because a
lost response may hide a success (the binder has its own rule for that). Each retry is a
debug line (the caller reports what the retries did not absorb); every request that gets no
answer or a 5xx, and every other answer, goes to :attr:`ApiClient.retry_log`, which says
when the API server stays away and when it is back (``retry_log``).

Neighbours: ``kubeconfig`` (where the server is, TLS, the Authorization header and its
refresh: :class:`~scheduler.kube.kubeconfig.ServerAccess`), ``binder``, ``reporter``,
``leader`` call :meth:`request`; the kopf controller logs in with
:meth:`ApiClient.credentials`. Tokens never reach a log line or an exception.
"""

from __future__ import annotations

import asyncio
import asyncio.sslproto
import json
import random
import re
from typing import TYPE_CHECKING, Any, NoReturn

import aiohttp
from yarl import URL

from scheduler import logs
from scheduler.kube import errors
from scheduler.kube.kubeconfig import (
    Credentials,
    KubeconfigError,
    ServerAccess,
    load_configuration,
)
from scheduler.kube.rate_limit import TokenBucket
from scheduler.kube.retry_log import RetryLog

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Mapping

    from kubernetes import client as k8s_client

__all__ = [
    "ApiClient",
    # The loader's names, for callers that only create a client (``kubeconfig`` owns them).
    "Credentials",
    "KubeconfigError",
    "backoff_delay",
    "create_client",
    "load_configuration",
]

log = logs.get_logger(__name__)

IDEMPOTENT = frozenset({"GET", "PUT", "PATCH", "DELETE", "HEAD"})
JSON = "application/json"
MERGE_PATCH = "application/merge-patch+json"
STRATEGIC_MERGE_PATCH = "application/strategic-merge-patch+json"
USER_AGENT = "batch-scheduler/0.1"
_RNG = random.Random()
_PLAIN_PATH = re.compile(r"[A-Za-z0-9/._~-]*")
"""A path with nothing to percent-encode (every path built from object names: DNS labels
and subdomains): its URL is built as is, without yarl's parse and encode."""
TLS_READ_BUFFER = 64 * 1024
"""Bytes asyncio reads from a TLS socket at once. Its default (256 KiB) is a zeroed buffer
held by every connection for its life: with a connection per bind in flight, most of the
pool's memory, kept after a burst has grown the pool (measured on loopback: 315 kB of RSS
per connection, 123 kB at 64 KiB; reading a 24 MiB body costs no more CPU at 64 KiB)."""


def backoff_delay(
    attempt: int,
    *,
    base: float = 0.05,
    cap: float = 2.0,
    retry_after: float | None = None,
    retry_after_cap: float = 10.0,
    rng: random.Random | None = None,
) -> float:
    """Seconds to wait before retry number ``attempt`` (0-based).

    ``Retry-After`` wins when the server sent one (capped, so a confused server cannot
    park us for minutes); otherwise ``base * 2**attempt`` up to ``cap``, jittered to
    50-150 % so that many clients failing together do not retry in lockstep.
    """
    if retry_after is not None:
        return min(max(retry_after, 0.0), retry_after_cap)
    jitter = (rng or _RNG).uniform(0.5, 1.5)
    return min(cap, base * float(2**attempt)) * jitter


class ApiClient:
    """Pooled JSON requests against one API server. Create with :func:`create_client`."""

    def __init__(
        self,
        configuration: k8s_client.Configuration,
        *,
        timeout: float = 10.0,
        retries: int = 3,
        pool_size: int = 64,
        default_namespace: str | None = None,
        user_agent: str = USER_AGENT,
        rate_limit: TokenBucket | None = None,
    ) -> None:
        self.access = ServerAccess(configuration, default_namespace=default_namespace)
        """Where the server is and how to authenticate (``kubeconfig``)."""
        self.rate_limit = rate_limit
        """``clientConnection.qps``/``burst``: taken once per attempt, retries included, as
        client-go does; None: no client-side limit."""
        self.user_agent = user_agent
        self._base = self.access.server
        self.timeout = timeout
        self.retries = retries
        self.default_namespace = default_namespace
        self._rng = random.Random()
        self._pool_size = pool_size
        self._session: aiohttp.ClientSession | None = None
        self._header_sets: dict[tuple[str | None, str | None], dict[str, str]] = {}
        """(Authorization, Content-Type) → the request headers: built once, not per request
        (aiohttp copies them into the request's own multidict)."""
        self._timeouts: dict[float, aiohttp.ClientTimeout] = {}
        self._plain_base = str(URL(self._base)) == self._base
        """Whether yarl leaves the server URL as it is (then a plain path's URL is built
        without the encoding pass)."""
        self.retry_log = RetryLog(server=self._base)
        """Whether the server answers, and the rate-limited lines of everything that retries
        through this client (``retry_log``)."""

    @property
    def server(self) -> str:
        """The API server's base URL."""
        return self._base

    def credentials(self) -> Credentials:
        """Current credentials for kopf (re-read each call: tokens rotate)."""
        return self.access.credentials()

    def _headers(self, content_type: str | None = None) -> dict[str, str]:
        """The request's headers (shared between requests: never mutate them)."""
        authorization = self.access.authorization()
        key = (authorization, content_type)
        headers = self._header_sets.get(key)
        if headers is None:
            if len(self._header_sets) >= 16:  # rotated credentials: drop the old sets
                self._header_sets.clear()
            headers = {"Accept": JSON, "User-Agent": self.user_agent}
            if authorization:
                headers["Authorization"] = authorization
            if content_type:
                headers["Content-Type"] = content_type
            self._header_sets[key] = headers
        return headers

    def _timeout(self, seconds: float) -> aiohttp.ClientTimeout:
        limit = self._timeouts.get(seconds)
        if limit is None:
            if len(self._timeouts) >= 64:  # computed ones (a lease's remaining time) vary
                self._timeouts.clear()
            limit = self._timeouts[seconds] = aiohttp.ClientTimeout(total=seconds)
        return limit

    def _url(self, path: str) -> URL | str:
        """The request URL; a plain path (``_PLAIN_PATH``) skips yarl's encoding pass."""
        if self._plain_base and _PLAIN_PATH.fullmatch(path):
            return URL(self._base + path, encoded=True)
        return self._base + path

    def _get_session(self) -> aiohttp.ClientSession:
        # Created lazily so that it binds to the loop that uses it, not the one that built us.
        if self._session is None or self._session.closed:
            _small_tls_reads()
            connector = aiohttp.TCPConnector(limit=self._pool_size, ssl=self.access.ssl_context())
            self._session = aiohttp.ClientSession(connector=connector)
        return self._session

    async def close(self) -> None:
        """Close the connection pool; idempotent."""
        if self._session is not None and not self._session.closed:
            await self._session.close()
        self._session = None

    async def request(
        self,
        method: str,
        path: str,
        *,
        body: object = None,
        params: Mapping[str, str | int | bool] | None = None,
        content_type: str | None = None,
        timeout: float | None = None,  # noqa: ASYNC109 - per-attempt HTTP timeout, not a deadline
        retries: int | None = None,
        decode: bool = True,
        data: bytes | None = None,
    ) -> dict[str, Any]:
        """``method`` ``path`` with a JSON ``body``; the decoded JSON object on 2xx.

        ``data``: the body already encoded as JSON (``body`` must then be None): a caller
        that sends many alike encodes once, outside the retries (the binder).
        ``content_type`` defaults to JSON, and to merge-patch for PATCH. ``timeout``
        (seconds, per attempt) and ``retries`` override the client's defaults; POST is
        never retried. ``decode=False`` returns ``{}`` for a 2xx without parsing the body
        (binds and Events: the caller only needs the status; error bodies are always read).
        Raises :class:`errors.ApiError` subclasses.
        """
        raw = await self.request_bytes(
            method,
            path,
            body=body,
            params=params,
            content_type=content_type,
            timeout=timeout,
            retries=retries,
            data=data,
        )
        return _decode(raw) if decode else {}

    async def request_bytes(
        self,
        method: str,
        path: str,
        *,
        body: object = None,
        params: Mapping[str, str | int | bool] | None = None,
        content_type: str | None = None,
        timeout: float | None = None,  # noqa: ASYNC109 - per-attempt HTTP timeout, not a deadline
        retries: int | None = None,
        data: bytes | None = None,
    ) -> bytes:
        """As :meth:`request`, but the 2xx body comes back undecoded (the informers' LISTs
        decode it with their own structs)."""
        method = method.upper()
        budget = (self.retries if retries is None else retries) if method in IDEMPOTENT else 0
        if data is None and body is not None:
            data = json.dumps(body, separators=(",", ":")).encode()
        attempt = 0
        while True:
            try:
                return await self._once(method, path, data, params, content_type, timeout)
            except errors.TRANSIENT as e:
                if attempt >= budget:
                    raise
                delay = backoff_delay(attempt, retry_after=e.retry_after, rng=self._rng)
                attempt += 1
                # Debug: the caller reports the failure if the retries do not absorb it.
                log.debug(
                    "api_request_retry",
                    method=method,
                    path=path,
                    status=e.status,
                    attempt=attempt,
                    delay=round(delay, 3),
                )
                await asyncio.sleep(delay)

    async def _once(
        self,
        method: str,
        path: str,
        data: bytes | None,
        params: Mapping[str, str | int | bool] | None,
        content_type: str | None,
        timeout: float | None,  # noqa: ASYNC109 - per-attempt HTTP timeout
    ) -> bytes:
        if self.rate_limit is not None:
            await self.rate_limit.acquire()
        if data is not None:
            headers = self._headers(content_type or (MERGE_PATCH if method == "PATCH" else JSON))
        else:
            headers = self._headers()
        query = {k: _query_value(v) for k, v in params.items()} if params else None
        session = self._get_session()
        limit = self._timeout(self.timeout if timeout is None else timeout)
        extra = self._server_hostname()
        try:
            async with session.request(
                method,
                self._url(path),
                data=data,
                params=query or None,
                headers=headers,
                timeout=limit,
                **extra,
            ) as resp:
                raw = await resp.read()
                status = resp.status
                # The headers are copied only for an error (Retry-After, the message).
                resp_headers = None if 200 <= status < 300 else dict(resp.headers)
        except (TimeoutError, aiohttp.ClientError) as e:
            raise self._unanswered(e, method, path, "request timed out") from e
        if resp_headers is None:
            self.retry_log.answered()
            return raw
        self._raise_for(status, raw, method, path, resp_headers)

    def _unanswered(
        self, exc: TimeoutError | aiohttp.ClientError, method: str, path: str, timed_out: str
    ) -> errors.TransportError:
        """The TransportError for a request that got no answer, counted as a failure."""
        if isinstance(exc, TimeoutError):
            error = errors.TransportError(timed_out, reason="Timeout", method=method, path=path)
        else:
            message = str(exc) or type(exc).__name__
            error = errors.TransportError(
                message, reason=type(exc).__name__, method=method, path=path
            )
        self.retry_log.failed(error)
        return error

    def _raise_for(
        self, status: int, raw: bytes, method: str, path: str, resp_headers: Mapping[str, str]
    ) -> NoReturn:
        if status == 401:
            self.access.forget_authorization()  # a rotated credential: read it again
        decoded = _decode(raw)
        if not decoded and raw:
            decoded = {"message": raw.decode(errors="replace")}
        error = errors.from_status(
            status, decoded, method=method, path=path, headers=dict(resp_headers)
        )
        if status >= 500:
            self.retry_log.failed(error)
        else:  # a 4xx, 429 included, is an answer: the server is there
            self.retry_log.answered()
        raise error

    def _server_hostname(self) -> dict[str, Any]:
        name = self.access.tls_server_name
        return {"server_hostname": name} if name else {}

    async def watch_lines(
        self,
        path: str,
        params: Mapping[str, str | int | bool],
        *,
        timeout: float,  # noqa: ASYNC109 - the whole watch's client-side limit
        connect_timeout: float,
    ) -> AsyncIterator[bytes]:
        """The lines of a streaming GET (a watch), as they arrive, until the server ends it.

        Not retried (the informer decides: re-watch or re-list); errors as :meth:`request`.
        Lines are split here rather than with aiohttp's ``readline``, whose 64 KiB limit a
        node with many images can pass."""
        headers = self._headers()
        query = {k: _query_value(v) for k, v in params.items()}
        limit = aiohttp.ClientTimeout(total=timeout, connect=connect_timeout)
        extra = self._server_hostname()
        try:
            async with self._get_session().get(
                self._base + path, params=query, headers=headers, timeout=limit, **extra
            ) as resp:
                if not 200 <= resp.status < 300:
                    raw = await resp.read()
                    self._raise_for(resp.status, raw, "GET", path, resp.headers)
                self.retry_log.answered()
                pending = b""
                async for chunk in resp.content.iter_any():
                    lines = (pending + chunk).split(b"\n") if pending else chunk.split(b"\n")
                    pending = lines.pop()
                    for line in lines:
                        if line:
                            yield line
                if pending.strip():
                    yield pending
        except (TimeoutError, aiohttp.ClientError) as e:
            raise self._unanswered(e, "GET", path, "watch timed out") from e


def _query_value(value: str | int | bool) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _decode(raw: bytes) -> dict[str, Any]:
    if not raw:
        return {}
    try:
        value = json.loads(raw)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {"items": value}


async def create_client(
    kubeconfig: str | None,
    *,
    context: str | None = None,
    timeout: float = 10.0,  # noqa: ASYNC109 - the client's default per-request timeout
    retries: int = 3,
    pool_size: int = 64,
    user_agent: str = USER_AGENT,
    qps: float | None = None,
    burst: int = 100,
) -> ApiClient:
    """An :class:`ApiClient` for ``kubeconfig`` (None: in-cluster); see `load_configuration`.
    ``qps`` (None: no limit) and ``burst``: the client-side token bucket.

    The loader may run exec plugins or read files, so it runs in a worker thread.
    """
    configuration, namespace = await asyncio.to_thread(
        load_configuration, kubeconfig, context=context
    )
    return ApiClient(
        configuration,
        timeout=timeout,
        retries=retries,
        pool_size=pool_size,
        default_namespace=namespace,
        user_agent=user_agent,
        rate_limit=TokenBucket(qps, burst) if qps is not None else None,
    )


def _small_tls_reads() -> None:
    """Cap asyncio's TLS read buffer at ``TLS_READ_BUFFER``: process-wide, since asyncio has
    no per-connection size (a class attribute of its SSLProtocol, read at each connect)."""
    protocol = asyncio.sslproto.SSLProtocol
    protocol.max_size = min(protocol.max_size, TLS_READ_BUFFER)
