"""RFC 3339 timestamps as the API server writes them (UTC, ``Z``): seconds for Events'
and conditions' times, microseconds for ``MicroTime`` fields (Lease renewals, Events'
``eventTime``)."""

from __future__ import annotations

import datetime
import time


def rfc3339(epoch: float | None = None, *, micro: bool = False) -> str:
    """``epoch`` (now when None) as Go's ``time.RFC3339`` or, with ``micro``, as
    ``metav1.MicroTime`` (``2006-01-02T15:04:05.000000Z``)."""
    t = datetime.datetime.fromtimestamp(time.time() if epoch is None else epoch, datetime.UTC)
    return t.strftime("%Y-%m-%dT%H:%M:%S.%fZ" if micro else "%Y-%m-%dT%H:%M:%SZ")
