"""kopf's request retries, as our rate-limited retry lines instead of its error records.

kopf (1.45) retries a failed API request itself (``settings.networking.error_backoffs``)
and logs every attempt as an *error*: ``Request attempt #3/6 failed; will retry: GET
https://…/api/v1/services?watch=true&… -> ClientConnectorError(…)``, and the last one as
``… failed; escalating: …`` (its watch-streams then start over). With the API server away
that was one error per watched kind every few seconds: 100 of the 110 error lines of a
30 s outage. :class:`KopfRetries` takes these records while kopf runs (``logs.foreign``'s
routes: the handler never writes them) and hands each to the client's ``RetryLog`` as
``kopf_request_retry`` (source ``kopf``: one warning at most every 30 s for all kinds, the
rest at debug); a failure that got no answer, or a 5xx, also counts towards the outage
(``api_unavailable``). kopf's other records are left alone.

Neighbours: ``operator`` (installs it around ``kopf.operator``), ``kube.retry_log``.
"""

from __future__ import annotations

import logging
import re
import urllib.parse
from typing import TYPE_CHECKING

from scheduler import logs
from scheduler.kube import errors

if TYPE_CHECKING:
    from scheduler.kube.retry_log import RetryLog

__all__ = ["KopfRetries"]

log = logs.get_logger(__name__)

_ATTEMPT = re.compile(
    r"^Request attempt (?P<attempt>#\d+(?:/\d+)?) failed; (?P<outcome>will retry|escalating): "
    r"(?P<method>[A-Z]+) (?P<url>\S+) -> (?P<error>.*)$",
    re.DOTALL,
)
_ANSWERED = ("APITooManyRequestsError", "APIForbiddenError")
"""kopf's retried errors that are answers (throttled, or a 403 during an upgrade): the
server is there, so they are retries but no sign of an outage."""


class KopfRetries:
    """A ``logs.foreign`` route: takes kopf's request-retry records (see the module
    docstring), leaves the rest."""

    def __init__(self, retry_log: RetryLog) -> None:
        self.retry_log = retry_log
        self.taken = 0
        """Records taken so far (for tests)."""

    def __call__(self, record: logging.LogRecord) -> bool:
        if not record.name.startswith("kopf") or record.levelno < logging.WARNING:
            return False
        match = _ATTEMPT.match(record.getMessage())
        if match is None:
            return False
        self.taken += 1
        error = errors.truncate(match["error"], 300)
        if not error.startswith(_ANSWERED):
            self.retry_log.failed(error)
        self.retry_log.retrying(
            "kopf_request_retry",
            source="kopf",
            logger=log,
            request=f"{match['method']} {urllib.parse.urlsplit(match['url']).path}",
            attempt=match["attempt"],
            escalated=match["outcome"] == "escalating",
            error=error,
        )
        return True
