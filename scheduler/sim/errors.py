"""API errors as kube-apiserver reports them: a v1 ``Status`` with code, reason and message.

Handlers raise :class:`ApiError`; the server turns it into the JSON body. The
constructors below copy kube-apiserver's wording (``k8s.io/apimachinery/pkg/api/errors``)
because clients and people match on it.
"""

from __future__ import annotations

from typing import Any


class ApiError(Exception):
    """A failed request, rendered as a v1 Status by the server."""

    def __init__(
        self,
        code: int,
        reason: str,
        message: str,
        *,
        details: dict[str, Any] | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.reason = reason
        self.message = message
        self.details = details
        self.headers = headers or {}

    def status(self) -> dict[str, Any]:
        """The v1 Status body for this error."""
        return failure_status(self.code, self.reason, self.message, self.details)


def failure_status(
    code: int, reason: str, message: str, details: dict[str, Any] | None = None
) -> dict[str, Any]:
    """A v1 Status with ``status: Failure``."""
    body: dict[str, Any] = {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": reason,
        "code": code,
    }
    if not reason:
        del body["reason"]  # as kube's bare 500s (an error that is no StatusError) have it
    if details is not None:
        body["details"] = details
    return body


def success_status(code: int = 200, details: dict[str, Any] | None = None) -> dict[str, Any]:
    """A v1 Status with ``status: Success`` (returned by bindings and some deletes)."""
    body: dict[str, Any] = {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Success",
        "code": code,
    }
    if details is not None:
        body["details"] = details
    return body


def _details(qualified: str, name: str) -> dict[str, Any]:
    # kube puts the group in details.group and the bare plural in details.kind.
    plural, _, group = qualified.partition(".")
    d: dict[str, Any] = {"name": name, "kind": plural}
    if group:
        d["group"] = group
    return d


def not_found(qualified: str, name: str) -> ApiError:
    """``pods "x" not found`` (qualified is ``plural`` or ``plural.group``)."""
    return ApiError(
        404, "NotFound", f'{qualified} "{name}" not found', details=_details(qualified, name)
    )


def already_exists(qualified: str, name: str) -> ApiError:
    """``pods "x" already exists``."""
    return ApiError(
        409,
        "AlreadyExists",
        f'{qualified} "{name}" already exists',
        details=_details(qualified, name),
    )


def conflict(qualified: str, name: str, why: str) -> ApiError:
    """``Operation cannot be fulfilled on pods "x": <why>``."""
    return ApiError(
        409,
        "Conflict",
        f'Operation cannot be fulfilled on {qualified} "{name}": {why}',
        details=_details(qualified, name),
    )


STALE = (
    "the object has been modified; please apply your changes to the latest version and try again"
)


_CAUSE_REASONS = (
    ("Required value", "FieldValueRequired"),
    ("Invalid value", "FieldValueInvalid"),
    ("Unsupported value", "FieldValueNotSupported"),
    ("Forbidden", "FieldValueForbidden"),
    ("Duplicate value", "FieldValueDuplicate"),
    ("Too long", "FieldValueTooLong"),
)


def invalid(kind: str, name: str, field_error: str, *, group: str = "") -> ApiError:
    """``Pod "x" is invalid: metadata.name: Required value`` (422), with the field named in
    ``details.causes`` as kube's ``field.ErrorList`` puts it there (``kind`` is the Kind, or
    the plural when the registry reports it, with ``group`` beside it)."""
    path, _, body = field_error.partition(": ")
    reason = next(
        (r for prefix, r in _CAUSE_REASONS if body.startswith(prefix)), "FieldValueInvalid"
    )
    details: dict[str, Any] = {k: v for k, v in (("name", name), ("kind", kind)) if v}
    if group:
        details["group"] = group
    details["causes"] = [{"reason": reason, "message": body, "field": path}]
    shown = f"{kind}.{group}" if group else kind
    return ApiError(422, "Invalid", f'{shown} "{name}" is invalid: {field_error}', details=details)


def forbidden(qualified: str, name: str, why: str) -> ApiError:
    """``pods "x" is forbidden: <why>`` (403), as admission refuses."""
    return ApiError(
        403,
        "Forbidden",
        f'{qualified} "{name}" is forbidden: {why}',
        details=_details(qualified, name),
    )


def bad_request(message: str) -> ApiError:
    """400 BadRequest."""
    return ApiError(400, "BadRequest", message)


def method_not_allowed(message: str = "the server does not allow this method") -> ApiError:
    """405 MethodNotAllowed."""
    return ApiError(405, "MethodNotAllowed", message)


def expired(message: str) -> ApiError:
    """410 Expired: the watch asked for history that was compacted away."""
    return ApiError(410, "Expired", message)
