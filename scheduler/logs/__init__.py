"""Structured logging for every layer: `get_logger` and context-bound fields.

House rule (LAYOUT.md 7.4.8): the event is a constant name (``"pod_bound"``,
``"batch_flushed"``) and everything variable is a field, never interpolated
into the event, so logs can be grouped and queried. Fields that describe the
work in progress — ``pod``, ``node``, ``profile``, ``cycle``, ``signature``,
``batch_id``, ``group`` — are bound once with `bound` (or `bind`/`unbind`) and
then appear on every line logged inside, including lines from kopf and aiohttp,
because they live in `contextvars` and each asyncio task gets its own copy.

Output format, level and the stdlib bridge are set once by the composition root
with `scheduler.logs.setup.configure_logging`; this module does not import
`setup`, so the layers never configure logging themselves. Before configuration
structlog's defaults apply, which is enough for tests.

A leaf package: it imports nothing else from ``scheduler``.
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING

import structlog

if TYPE_CHECKING:
    from collections.abc import Iterator

__all__ = ["bind", "bound", "get_logger", "unbind"]


def get_logger(name: str | None = None) -> structlog.stdlib.BoundLogger:
    """A logger named ``name`` (conventionally the module's ``__name__``).

    The logger is a lazy proxy: it picks up `configure_logging`'s settings on
    use, so creating one before configuration (say in ``__init__``) is fine.
    """
    if name is None:
        return structlog.stdlib.get_logger()
    return structlog.stdlib.get_logger(name)


def bind(**fields: object) -> None:
    """Bind ``fields`` to the current context until `unbind` (or the task ends)."""
    structlog.contextvars.bind_contextvars(**fields)


def unbind(*keys: str) -> None:
    """Remove ``keys`` from the current context; unknown keys are ignored."""
    structlog.contextvars.unbind_contextvars(*keys)


@contextlib.contextmanager
def bound(**fields: object) -> Iterator[None]:
    """Bind ``fields`` for the ``with`` block, then restore what was there before.

    Restoring (not just unbinding) matters when blocks nest: an inner
    ``bound(pod=b)`` inside ``bound(pod=a)`` gives ``pod=a`` back on exit. It
    also restores on exceptions.
    """
    with structlog.contextvars.bound_contextvars(**fields):
        yield
