"""Delegated authentication (TokenReview) and authorization (SubjectAccessReview).

What kube-scheduler's secure port does (k8s.io/apiserver ``DelegatingAuthenticationOptions``
and ``DelegatingAuthorizationOptions``, as kube-scheduler sets them):

* a bearer token is reviewed by the API server (``authentication.k8s.io/v1`` TokenReview);
  a token it does not accept is a 401, never anonymous; results, accepted or not, are
  cached for 10 s (``--authentication-token-webhook-cache-ttl``);
* a request without a token is ``system:anonymous`` (group ``system:unauthenticated``):
  anonymous authentication is on, so it is then authorized like any user (403 unless RBAC
  grants it);
* ``/healthz``, ``/readyz`` and ``/livez`` are always allowed, and so is the group
  ``system:masters``; anything else is a SubjectAccessReview (non-resource path, the
  request's verb), allowed results cached 10 s and denied ones 10 s;
* without an authentication client (no kubeconfig and not in a pod) tokens are not
  reviewed and every request is anonymous; without an authorization client only the
  always-allowed paths and groups pass.

Neighbours: ``app.endpoints`` asks :meth:`DelegatedAuth.authenticate` and
:meth:`DelegatedAuth.authorize` per request; ``app.runtime`` builds the clients.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from scheduler import logs
from scheduler.kube import errors
from scheduler.kube.client import create_client

if TYPE_CHECKING:
    from collections.abc import Callable

    from scheduler.kube.client import ApiClient

__all__ = ["ALWAYS_ALLOW_PATHS", "Decision", "DelegatedAuth", "User"]

log = logs.get_logger(__name__)

TOKEN_REVIEWS = "/apis/authentication.k8s.io/v1/tokenreviews"
SUBJECT_ACCESS_REVIEWS = "/apis/authorization.k8s.io/v1/subjectaccessreviews"
ALWAYS_ALLOW_PATHS = frozenset({"/healthz", "/readyz", "/livez"})
ALWAYS_ALLOW_GROUPS = frozenset({"system:masters"})
TOKEN_CACHE_TTL = 10.0
ALLOW_CACHE_TTL = 10.0
DENY_CACHE_TTL = 10.0
REQUEST_TIMEOUT = 10.0
# kube's DefaultAuthWebhookRetryBackoff: 500 ms, factor 1.5, 5 steps (jitter left out).
RETRY_DELAYS = (0.5, 0.75, 1.125, 1.6875)
_CACHE_LIMIT = 4096


@dataclass(frozen=True, slots=True)
class User:
    """Who a request is, as the TokenReview said (or the anonymous user)."""

    name: str
    uid: str = ""
    groups: tuple[str, ...] = ()
    extra: tuple[tuple[str, tuple[str, ...]], ...] = ()


ANONYMOUS = User("system:anonymous", groups=("system:unauthenticated",))


@dataclass(frozen=True, slots=True)
class Decision:
    """An authorization answer; ``reason`` is the reviewer's, for the 403 text."""

    allowed: bool
    reason: str = ""


class AuthError(Exception):
    """The API server could not be asked (500 in kube's handler)."""


@dataclass(slots=True)
class _Cache:
    """Entries with their own expiry; the oldest go first past the limit."""

    entries: dict[Any, tuple[float, Any]] = field(default_factory=dict)

    def get(self, key: object, now: float) -> Any:
        hit = self.entries.get(key)
        if hit is None or hit[0] <= now:
            return None
        return hit[1]

    def put(self, key: object, value: object, expires: float) -> None:
        if len(self.entries) >= _CACHE_LIMIT:
            self.entries.pop(next(iter(self.entries)))
        self.entries[key] = (expires, value)


class DelegatedAuth:
    """TokenReview and SubjectAccessReview through ``authn``/``authz`` (None: not asked)."""

    def __init__(
        self,
        authn: ApiClient | None,
        authz: ApiClient | None,
        *,
        now: Callable[[], float] = time.monotonic,
    ) -> None:
        self.authn = authn
        self.authz = authz
        self._now = now
        self._tokens = _Cache()
        self._reviews = _Cache()

    async def authenticate(self, token: str | None) -> User | None:
        """The user of ``token`` (no token: anonymous); None: the token is not accepted."""
        if not token or self.authn is None:
            return ANONYMOUS
        # Keyed by a digest: the cache holds no token.
        key = hashlib.sha256(token.encode()).digest()
        now = self._now()
        cached = self._tokens.get(key, now)
        if cached is not None:
            return cached if isinstance(cached, User) else None
        body = {
            "apiVersion": "authentication.k8s.io/v1",
            "kind": "TokenReview",
            "spec": {"token": token},
        }
        status = (await self._post(self.authn, TOKEN_REVIEWS, body)).get("status") or {}
        user: User | None = None
        if status.get("authenticated") is True:
            info = status.get("user") or {}
            user = User(
                name=str(info.get("username", "")),
                uid=str(info.get("uid", "")),
                groups=tuple(str(g) for g in info.get("groups") or ()),
                extra=tuple(
                    sorted(
                        (str(k), tuple(str(x) for x in v or ()))
                        for k, v in (info.get("extra") or {}).items()
                    )
                ),
            )
        self._tokens.put(key, user if user is not None else False, now + TOKEN_CACHE_TTL)
        return user

    async def authorize(self, user: User, path: str, verb: str) -> Decision:
        """Whether ``user`` may ``verb`` the non-resource ``path``."""
        if path in ALWAYS_ALLOW_PATHS or ALWAYS_ALLOW_GROUPS.intersection(user.groups):
            return Decision(True)
        if self.authz is None:
            return Decision(False, "no authorization-kubeconfig: only health paths are served")
        key = (user, path, verb)
        now = self._now()
        cached = self._reviews.get(key, now)
        if isinstance(cached, Decision):
            return cached
        spec: dict[str, Any] = {
            "user": user.name,
            "groups": list(user.groups),
            "nonResourceAttributes": {"path": path, "verb": verb},
        }
        if user.uid:
            spec["uid"] = user.uid
        if user.extra:
            spec["extra"] = {k: list(v) for k, v in user.extra}
        body = {
            "apiVersion": "authorization.k8s.io/v1",
            "kind": "SubjectAccessReview",
            "spec": spec,
        }
        status = (await self._post(self.authz, SUBJECT_ACCESS_REVIEWS, body)).get("status") or {}
        decision = Decision(status.get("allowed") is True, str(status.get("reason", "")))
        ttl = ALLOW_CACHE_TTL if decision.allowed else DENY_CACHE_TTL
        self._reviews.put(key, decision, now + ttl)
        return decision

    async def _post(self, client: ApiClient, path: str, body: object) -> dict[str, Any]:
        """POST a review, retried on 429, 5xx and lost connections as kube's webhook is
        (a review creates nothing, so a repeat is harmless)."""
        for delay in (*RETRY_DELAYS, None):
            try:
                return await client.request(
                    "POST", path, body=body, timeout=REQUEST_TIMEOUT, retries=0
                )
            except (errors.ServerError, errors.TooManyRequests, errors.TransportError) as exc:
                if delay is None:
                    raise AuthError(str(exc)) from None
                await asyncio.sleep(delay)
            except errors.ApiError as exc:
                raise AuthError(str(exc)) from None
        raise AssertionError("unreachable")

    async def close(self) -> None:
        """Close both clients (one, when the two kubeconfigs are the same client)."""
        for client in {id(c): c for c in (self.authn, self.authz) if c is not None}.values():
            await client.close()


async def connect(
    authentication_kubeconfig: str | None, authorization_kubeconfig: str | None
) -> DelegatedAuth:
    """Clients for the reviews: each kubeconfig given, else the pod's service account, else
    none (kube-scheduler's RemoteKubeConfigFileOptional: warned about, not an error)."""
    in_cluster = bool(os.environ.get("KUBERNETES_SERVICE_HOST"))
    clients: dict[str | None, ApiClient] = {}

    async def client_for(path: str | None, what: str) -> ApiClient | None:
        if path is None and not in_cluster:
            log.warning(
                f"no_{what}_kubeconfig",
                note=f"no --{what}-kubeconfig and not in a pod: "
                + (
                    "tokens are not reviewed, every request is anonymous"
                    if what == "authentication"
                    else "only /healthz, /readyz and /livez are served on the secure port"
                ),
            )
            return None
        if path not in clients:
            clients[path] = await create_client(path, retries=0)
        return clients[path]

    authn = await client_for(authentication_kubeconfig, "authentication")
    authz = await client_for(authorization_kubeconfig, "authorization")
    return DelegatedAuth(authn, authz)
