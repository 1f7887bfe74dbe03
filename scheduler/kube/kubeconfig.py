"""Where the API server is and how to authenticate to it: the official loader's credentials.

Credentials come from the official ``kubernetes.config`` loader, with kubectl's kubeconfig
semantics (contexts, exec plugins, client certificates) or a pod's service account
(:func:`load_configuration`), and are refused before any request when they could never work
or would leak a secret (:class:`KubeconfigError`, one line naming file and field).

:class:`ServerAccess` is a loaded configuration as a client uses it: the server's URL, the
TLS context, and the Authorization header, read from the configuration (whose refresh hook
re-runs the loader: exec plugins and in-cluster tokens rotate) once a minute, as client-go
re-reads a token file, and again at once after a 401. :class:`Credentials` is the same data
for kopf's login handler.

Neighbours: ``client`` (``ApiClient`` sends every request through one ``ServerAccess``;
``create_client`` loads it), ``controller.operator`` (kopf logs in with
:class:`Credentials`). Tokens never reach a log line or an exception.
"""

from __future__ import annotations

import os
import ssl
import time
import urllib.parse
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from kubernetes import client as k8s_client
from kubernetes import config as k8s_config

if TYPE_CHECKING:
    from collections.abc import Callable

    import kopf

__all__ = [
    "CREDENTIAL_REUSE_S",
    "Credentials",
    "KubeconfigError",
    "ServerAccess",
    "load_configuration",
]

CREDENTIAL_REUSE_S = 60.0
"""How long requests reuse the Authorization header read from the configuration, as
client-go reuses a token file's contents for a minute; a 401 reads it again at once.
(Read per request, the kubernetes client's refresh hook re-ran its kubeconfig loader each
time: 3 % of the scheduler's CPU in a burst on the real API server.)"""
SERVICE_ACCOUNT_NAMESPACE = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"


class KubeconfigError(ValueError):
    """A kubeconfig we cannot use: one line naming the file and, where known, the field.

    Never carries a credential: only names and what is wrong with them.
    """

    def __init__(self, file: str, field: str, message: str) -> None:
        super().__init__(f"{file}: {field}: {message}" if field else f"{file}: {message}")
        self.file = file
        self.field = field
        self.message = message


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


class ServerAccess:
    """One API server's address, TLS and Authorization, from a loaded configuration."""

    def __init__(
        self,
        configuration: k8s_client.Configuration,
        *,
        default_namespace: str | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.configuration = configuration
        self.default_namespace = default_namespace
        self.server = str(configuration.host).rstrip("/")
        """The API server's base URL."""
        self._clock = clock
        self._authorization: str | None = None
        self._authorization_until = 0.0  # clock time; 0: read it on the next request

    @property
    def tls_server_name(self) -> str | None:
        """The name to verify the server's certificate against, when not the host's."""
        return self.configuration.tls_server_name or None

    def authorization(self) -> str | None:
        """The Authorization header value (None: anonymous), reused ``CREDENTIAL_REUSE_S``."""
        now = self._clock()
        if now >= self._authorization_until:
            self._authorization = self._read_authorization()
            self._authorization_until = now + CREDENTIAL_REUSE_S
        return self._authorization

    def forget_authorization(self) -> None:
        """A 401: the credential may have rotated; the next request reads it again."""
        self._authorization_until = 0.0

    def _read_authorization(self) -> str | None:
        c = self.configuration
        auth = c.get_api_key_with_prefix("BearerToken", alias="authorization")
        if auth:
            return str(auth)
        if c.username and c.password:
            return str(c.get_basic_auth_token())
        return None

    def ssl_context(self) -> ssl.SSLContext | bool:
        """The TLS context for ``https`` servers (client certificate included); False for
        plain HTTP."""
        if not self.server.startswith("https"):
            return False
        c = self.configuration
        ctx = ssl.create_default_context(cafile=c.ssl_ca_cert or None)
        if c.cert_file:
            ctx.load_cert_chain(c.cert_file, keyfile=c.key_file or None)
        if not c.verify_ssl:
            ctx.check_hostname = False
            ctx.verify_mode = ssl.CERT_NONE
        return ctx

    def credentials(self) -> Credentials:
        """Current credentials (re-read each call: exec plugins and in-cluster tokens rotate)."""
        c = self.configuration
        return Credentials(
            server=self.server,
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
        value = self.configuration.get_api_key_with_prefix("BearerToken", alias="authorization")
        if not value:
            return None
        text = str(value)
        return text.split(" ", 1)[1] if text.lower().startswith("bearer ") else text


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
        with open(SERVICE_ACCOUNT_NAMESPACE) as f:
            return f.read().strip() or None
    except OSError:
        return None
