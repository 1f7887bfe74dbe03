"""The one async Kubernetes API client: credentials from kubeconfig, requests over aiohttp.

Why a thin client: credentials come from the official ``kubernetes.config`` loader (the
same kubeconfig semantics as kubectl: contexts, exec plugins, client certs, in-cluster
service accounts), and requests go through one pooled ``aiohttp`` session with plain JSON
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
lost response may hide a success (the binder has its own rule for that).

Neighbours: ``binder``, ``reporter``, ``leader`` call :meth:`request`; the kopf controller
logs in with :meth:`ApiClient.credentials`. Tokens never reach a log line or an exception.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import ssl
import time
import urllib.parse
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NoReturn

import aiohttp
from kubernetes import client as k8s_client
from kubernetes import config as k8s_config

from scheduler import logs
from scheduler.kube import errors
from scheduler.kube.rate_limit import TokenBucket

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Mapping

    import kopf

__all__ = ["ApiClient", "Credentials", "KubeconfigError", "backoff_delay", "create_client"]

log = logs.get_logger(__name__)

IDEMPOTENT = frozenset({"GET", "PUT", "PATCH", "DELETE", "HEAD"})
JSON = "application/json"
MERGE_PATCH = "application/merge-patch+json"
STRATEGIC_MERGE_PATCH = "application/strategic-merge-patch+json"
USER_AGENT = "batch-scheduler/0.1"
CREDENTIAL_REUSE_S = 60.0
"""How long requests reuse the Authorization header read from the configuration, as
client-go reuses a token file's contents for a minute; a 401 reads it again at once.
(Read per request, the kubernetes client's refresh hook re-ran its kubeconfig loader each
time: 3 % of the scheduler's CPU in a burst on the real API server.)"""
_RNG = random.Random()


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


@dataclass(frozen=True, slots=True)
class Credentials:
    """Where the API server is and how to authenticate: what kopf's login handler needs."""

    server: str
    token: str | None = field(default=None, repr=False)
    ca_path: str | None = None
    insecure: bool = False
    cert_path: str | None = None
    key_path: str | None = field(default=None, repr=False)
    username: str | None = None
    password: str | None = field(default=None, repr=False)
    default_namespace: str | None = None

    def as_kopf(self) -> kopf.ConnectionInfo:
        """The same data as ``kopf.ConnectionInfo`` (return it from ``@kopf.on.login``)."""
        import kopf  # deferred: only the controller needs kopf loaded

        return kopf.ConnectionInfo(
            server=self.server,
            token=self.token,
            ca_path=self.ca_path,
            insecure=self.insecure,
            certificate_path=self.cert_path,
            private_key_path=self.key_path,
            username=self.username,
            password=self.password,
            default_namespace=self.default_namespace,
        )


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
        self._config = configuration
        self.rate_limit = rate_limit
        """``clientConnection.qps``/``burst``: taken once per attempt, retries included, as
        client-go does; None: no client-side limit."""
        self.user_agent = user_agent
        self._base = str(configuration.host).rstrip("/")
        self.timeout = timeout
        self.retries = retries
        self.default_namespace = default_namespace
        self._rng = random.Random()
        self._pool_size = pool_size
        self._session: aiohttp.ClientSession | None = None
        self._authorization: str | None = None
        self._authorization_until = 0.0  # monotonic; 0: read it on the next request

    @property
    def server(self) -> str:
        """The API server's base URL."""
        return self._base

    def credentials(self) -> Credentials:
        """Current credentials (re-read each call: exec plugins and in-cluster tokens rotate)."""
        c = self._config
        return Credentials(
            server=self._base,
            token=self._token(),
            ca_path=c.ssl_ca_cert or None,
            insecure=not c.verify_ssl,
            cert_path=c.cert_file or None,
            key_path=c.key_file or None,
            username=c.username or None,
            password=c.password or None,
            default_namespace=self.default_namespace,
        )

    def _token(self) -> str | None:
        # The loader stores "Bearer <token>" (prefix in api_key_prefix); the hook refreshes it.
        value = self._config.get_api_key_with_prefix("BearerToken", alias="authorization")
        if not value:
            return None
        text = str(value)
        return text.split(" ", 1)[1] if text.lower().startswith("bearer ") else text

    def _headers(self) -> dict[str, str]:
        headers = {"Accept": JSON, "User-Agent": self.user_agent}
        now = time.monotonic()
        if now >= self._authorization_until:
            self._authorization = self._read_authorization()
            self._authorization_until = now + CREDENTIAL_REUSE_S
        if self._authorization:
            headers["Authorization"] = self._authorization
        return headers

    def _read_authorization(self) -> str | None:
        auth = self._config.get_api_key_with_prefix("BearerToken", alias="authorization")
        if auth:
            return str(auth)
        if self._config.username and self._config.password:
            return str(self._config.get_basic_auth_token())
        return None

    def _ssl(self) -> ssl.SSLContext | bool:
        if not self._base.startswith("https"):
            return False
        c = self._config
        ctx = ssl.create_default_context(cafile=c.ssl_ca_cert or None)
        if c.cert_file:
            ctx.load_cert_chain(c.cert_file, keyfile=c.key_file or None)
        if not c.verify_ssl:
            ctx.check_hostname = False
            ctx.verify_mode = ssl.CERT_NONE
        return ctx

    def _get_session(self) -> aiohttp.ClientSession:
        # Created lazily so that it binds to the loop that uses it, not the one that built us.
        if self._session is None or self._session.closed:
            connector = aiohttp.TCPConnector(limit=self._pool_size, ssl=self._ssl())
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
    ) -> dict[str, Any]:
        """``method`` ``path`` with a JSON ``body``; the decoded JSON object on 2xx.

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
    ) -> bytes:
        """As :meth:`request`, but the 2xx body comes back undecoded (the informers' LISTs
        decode it with their own structs)."""
        method = method.upper()
        budget = (self.retries if retries is None else retries) if method in IDEMPOTENT else 0
        attempt = 0
        while True:
            try:
                return await self._once(method, path, body, params, content_type, timeout)
            except (errors.TooManyRequests, errors.ServerError, errors.TransportError) as e:
                if attempt >= budget:
                    raise
                delay = backoff_delay(attempt, retry_after=e.retry_after, rng=self._rng)
                attempt += 1
                log.info(
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
        body: object,
        params: Mapping[str, str | int | bool] | None,
        content_type: str | None,
        timeout: float | None,  # noqa: ASYNC109 - per-attempt HTTP timeout
    ) -> bytes:
        if self.rate_limit is not None:
            await self.rate_limit.acquire()
        headers = self._headers()
        data: bytes | None = None
        if body is not None:
            data = json.dumps(body, separators=(",", ":")).encode()
            headers["Content-Type"] = content_type or (MERGE_PATCH if method == "PATCH" else JSON)
        query = {k: _query_value(v) for k, v in (params or {}).items()}
        session = self._get_session()
        limit = aiohttp.ClientTimeout(total=self.timeout if timeout is None else timeout)
        extra: dict[str, Any] = {}
        if self._config.tls_server_name:
            extra["server_hostname"] = self._config.tls_server_name
        try:
            async with session.request(
                method,
                self._base + path,
                data=data,
                params=query or None,
                headers=headers,
                timeout=limit,
                **extra,
            ) as resp:
                raw = await resp.read()
                status = resp.status
                resp_headers = dict(resp.headers)
        except TimeoutError as e:
            raise errors.TransportError(
                "request timed out", reason="Timeout", method=method, path=path
            ) from e
        except aiohttp.ClientError as e:
            raise errors.TransportError(
                str(e) or type(e).__name__, reason=type(e).__name__, method=method, path=path
            ) from e
        if 200 <= status < 300:
            return raw
        self._raise_for(status, raw, method, path, resp_headers)

    def _raise_for(
        self, status: int, raw: bytes, method: str, path: str, resp_headers: Mapping[str, str]
    ) -> NoReturn:
        if status == 401:
            self._authorization_until = 0.0  # a rotated credential: read it again
        decoded = _decode(raw)
        if not decoded and raw:
            decoded = {"message": raw.decode(errors="replace")}
        raise errors.from_status(
            status, decoded, method=method, path=path, headers=dict(resp_headers)
        )

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
        extra: dict[str, Any] = {}
        if self._config.tls_server_name:
            extra["server_hostname"] = self._config.tls_server_name
        try:
            async with self._get_session().get(
                self._base + path, params=query, headers=headers, timeout=limit, **extra
            ) as resp:
                if not 200 <= resp.status < 300:
                    raw = await resp.read()
                    self._raise_for(resp.status, raw, "GET", path, resp.headers)
                pending = b""
                async for chunk in resp.content.iter_any():
                    lines = (pending + chunk).split(b"\n") if pending else chunk.split(b"\n")
                    pending = lines.pop()
                    for line in lines:
                        if line:
                            yield line
                if pending.strip():
                    yield pending
        except TimeoutError as e:
            raise errors.TransportError(
                "watch timed out", reason="Timeout", method="GET", path=path
            ) from e
        except aiohttp.ClientError as e:
            raise errors.TransportError(
                str(e) or type(e).__name__, reason=type(e).__name__, method="GET", path=path
            ) from e


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


class KubeconfigError(ValueError):
    """A kubeconfig we cannot use: one line naming the file and, where known, the field.

    Never carries a credential: only names and what is wrong with them.
    """

    def __init__(self, file: str, field: str, message: str) -> None:
        super().__init__(f"{file}: {field}: {message}" if field else f"{file}: {message}")
        self.file = file
        self.field = field
        self.message = message


def load_configuration(
    kubeconfig: str | None, *, context: str | None = None
) -> tuple[k8s_client.Configuration, str | None]:
    """Credentials as the official loader reads them, and the context's namespace.

    ``kubeconfig=None`` means in-cluster (service-account token, CA and
    ``KUBERNETES_SERVICE_HOST/PORT``); outside a pod it falls back to ``$KUBECONFIG`` or
    ``~/.kube/config``, as client-go's ``BuildConfigFromFlags("", "")`` does.
    """
    configuration = k8s_client.Configuration()
    if kubeconfig is None and os.environ.get("KUBERNETES_SERVICE_HOST"):
        k8s_config.load_incluster_config(client_configuration=configuration)  # type: ignore[no-untyped-call]
        return configuration, _incluster_namespace()
    path = kubeconfig or os.environ.get("KUBECONFIG", "").split(os.pathsep)[0] or None
    shown = path or "~/.kube/config"
    try:
        k8s_config.load_kube_config(  # type: ignore[no-untyped-call]
            config_file=path,
            context=context,
            client_configuration=configuration,
            persist_config=False,
        )
        contexts, active = k8s_config.list_kube_config_contexts(config_file=path)  # type: ignore[no-untyped-call]
    except Exception as exc:  # the loader raises whatever its YAML and dict walks raise
        raise KubeconfigError(shown, "", _loader_message(exc)) from None
    chosen = next((c for c in contexts if c.get("name") == context), active) if context else active
    ctx = (chosen or {}).get("context") or {}
    _check_configuration(configuration, shown, cluster=ctx.get("cluster"), user=ctx.get("user"))
    return configuration, ctx.get("namespace")


def _loader_message(exc: Exception) -> str:
    if isinstance(exc, OSError):
        return f"cannot read: {exc.strerror or exc}"
    if isinstance(exc, UnicodeDecodeError):
        return "not UTF-8 text"
    text = " ".join(str(exc).split()) or type(exc).__name__
    return f"cannot load: {text}"


def _check_configuration(
    configuration: k8s_client.Configuration, file: str, *, cluster: object, user: object
) -> None:
    """Refuse, before any request, what would fail on every request (or leak a secret).

    A token goes into an HTTP header: a newline or other control character in it would
    split the header (aiohttp refuses it with a traceback on the first request). A server
    URL with ``user:password@`` would put a password into every log line that names the
    server, and with a token aiohttp refuses to send both.
    """
    token = configuration.get_api_key_with_prefix("BearerToken", alias="authorization") or ""
    bad = next((ch for ch in str(token) if ord(ch) < 0x20 or ord(ch) == 0x7F), None)
    if bad is not None:
        what = "a line break" if bad in "\r\n" else f"the control character U+{ord(bad):04X}"
        raise KubeconfigError(
            file,
            f"users[name={user}].user.token",
            f"contains {what}; a token is sent in an HTTP header and must be one line",
        )
    if urllib.parse.urlsplit(str(configuration.host)).username is not None:
        raise KubeconfigError(
            file,
            f"clusters[name={cluster}].cluster.server",
            "must not contain credentials (user:password@); put them under users[].user",
        )


def _incluster_namespace() -> str | None:
    try:
        with open("/var/run/secrets/kubernetes.io/serviceaccount/namespace") as f:
            return f.read().strip() or None
    except OSError:
        return None


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
