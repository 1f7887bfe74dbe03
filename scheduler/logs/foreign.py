"""Other libraries' log records: their chatter at debug, their warnings and errors as they are.

kopf, aiohttp, the kubernetes client and asyncio log through stdlib ``logging``; the one
handler that ``setup`` installs writes them in our format. What they say at info is about
their own machinery (kopf's ``Stop-flag is set``, aiohttp's access lines): :class:`ForeignRecords`
writes it as debug, so it shows only when the scheduler runs at debug (``-v=4``) or trace.
Their warnings and errors keep their level: a real problem stays visible.

A layer of ours may read some records better than their library says them: :func:`taking`
lets it take a foreign record before it is written (kube turns kopf's ``Request attempt #3/6
failed; will retry`` errors into its own rate-limited retry lines, ``kube.retry_log``).

A record is ours when it came through structlog (``logs.get_logger``) or from a stdlib
logger under ``scheduler`` (the emulator's); everything else is foreign.

A leaf module: stdlib only. Neighbours: ``setup`` (installs :class:`ForeignRecords` on its
handler), ``kube.controller.operator`` (takes kopf's request retries while kopf runs).
"""

from __future__ import annotations

import contextlib
import logging
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

__all__ = ["ForeignRecords", "is_ours", "taking"]


_routes: list[Callable[[logging.LogRecord], bool]] = []


def is_ours(record: logging.LogRecord) -> bool:
    """Whether ``record`` comes from the scheduler (structlog, or a ``scheduler.*`` logger)."""
    return hasattr(record, "_logger") or record.name.split(".", 1)[0] == "scheduler"


@contextlib.contextmanager
def taking(route: Callable[[logging.LogRecord], bool]) -> Iterator[None]:
    """While inside, ``route`` sees every foreign record before it is written and returns
    True to take it (then it is not written: ``route`` logs what it means itself)."""
    _routes.append(route)
    try:
        yield
    finally:
        _routes.remove(route)


def _taken(record: logging.LogRecord) -> bool:
    return any(route(record) for route in tuple(_routes))


class ForeignRecords(logging.Filter):
    """A handler's filter: foreign records routed or re-levelled (see the module docstring);
    ``level`` is the configured one, against which a record moved to debug is checked."""

    def __init__(self, level: int) -> None:
        super().__init__()
        self.level = level

    def filter(self, record: logging.LogRecord) -> bool:
        if is_ours(record):
            return True
        if _routes and _taken(record):
            return False
        if logging.DEBUG < record.levelno < logging.WARNING:
            # Shared with any other handler (the record is one object): they see debug too.
            record.levelno, record.levelname = logging.DEBUG, "DEBUG"
            return self.level <= logging.DEBUG
        return True
