"""API failures as exceptions, one class per status family.

Every call through :mod:`scheduler.kube.client` that does not succeed raises one of these,
so callers branch on the type (``except errors.NotFound``) rather than on numbers, the
way client-go's ``apierrors.IsNotFound`` is used. The transport's own exception (aiohttp's
``ClientError``, ``TimeoutError``) is chained with ``from`` so a traceback still shows the
cause, and the server's message is truncated: a Status body can echo a whole object.

Neighbours: ``client`` raises these; ``binder``, ``reporter`` and ``leader`` map them to
outcomes (BOUND/CONFLICT/GONE/ERROR, "pod gone, ignore", "someone else won the lease").
No credentials ever enter a message: only method, path, status, reason and message.
"""

from __future__ import annotations

from collections.abc import Mapping

MAX_MESSAGE = 512
"""Characters of the server's message kept in an exception (the rest is cut)."""

__all__ = [
    "TRANSIENT",
    "ApiError",
    "BadRequest",
    "Conflict",
    "Invalid",
    "NotFound",
    "ServerError",
    "TooManyRequests",
    "TransportError",
    "Unauthorized",
    "from_status",
]


def truncate(text: str, limit: int = MAX_MESSAGE) -> str:
    """``text`` cut to ``limit`` characters, marked with an ellipsis when cut."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


class ApiError(Exception):
    """A request that did not succeed: HTTP status (0 = no response), reason and message."""

    status: int
    reason: str
    message: str
    method: str
    path: str
    retry_after: float | None
    """Seconds the server asked us to wait (429, some 5xx); None when it did not say."""

    def __init__(
        self,
        message: str,
        *,
        status: int = 0,
        reason: str = "",
        method: str = "",
        path: str = "",
        retry_after: float | None = None,
    ) -> None:
        self.status = status
        self.retry_after = retry_after
        self.reason = reason
        self.message = truncate(message)
        self.method = method
        self.path = path
        where = f"{method} {path}: " if method else ""
        code = f"{status} {reason}: " if status else (f"{reason}: " if reason else "")
        super().__init__(f"{where}{code}{self.message}")


class TransportError(ApiError):
    """No HTTP answer: connection refused or reset, TLS failure, or the request timed out."""


class BadRequest(ApiError):
    """400 and other 4xx not covered below: the request itself is wrong; do not retry."""


class Unauthorized(ApiError):
    """401 or 403: missing or wrong credentials, or RBAC forbids the verb."""


class NotFound(ApiError):
    """404: the object (or its namespace) does not exist."""


class Conflict(ApiError):
    """409: a stale resourceVersion, an existing name, or a precondition (pod already bound)."""


class Invalid(ApiError):
    """422: the object failed validation."""


class TooManyRequests(ApiError):
    """429: the server asks us to slow down; ``retry_after`` seconds if it said so."""


class ServerError(ApiError):
    """5xx: the server failed; idempotent requests may be retried."""


TRANSIENT = (TooManyRequests, ServerError, TransportError)
"""The failures a retry may outlast (throttled, the server failing, no answer), for
``except errors.TRANSIENT``: idempotent requests and binds are retried on these alone."""


def retry_after_of(headers: Mapping[str, str], body: Mapping[str, object]) -> float | None:
    """Seconds from a ``Retry-After`` header or ``details.retryAfterSeconds``; None if absent."""
    raw: object = headers.get("Retry-After")
    if raw is None:
        details = body.get("details")
        raw = details.get("retryAfterSeconds") if isinstance(details, Mapping) else None
    try:
        seconds = float(raw)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None  # an HTTP-date or garbage: fall back to our own backoff
    return max(0.0, seconds)


def from_status(
    status: int,
    body: Mapping[str, object],
    *,
    method: str,
    path: str,
    headers: Mapping[str, str] | None = None,
) -> ApiError:
    """The exception for a failed response with status ``status`` and (Status) ``body``."""
    message = body.get("message")
    reason = body.get("reason")
    text = message if isinstance(message, str) else ""
    why = reason if isinstance(reason, str) else ""
    cls: type[ApiError]
    if status == 429:
        cls = TooManyRequests
    elif status >= 500:
        cls = ServerError
    else:
        cls = _BY_STATUS.get(status, BadRequest)
    return cls(
        text,
        status=status,
        reason=why,
        method=method,
        path=path,
        retry_after=retry_after_of(headers or {}, body),
    )


_BY_STATUS: dict[int, type[ApiError]] = {
    401: Unauthorized,
    403: Unauthorized,
    404: NotFound,
    409: Conflict,
    422: Invalid,
}
