"""Structured logging for every layer: `get_logger` and `debug_enabled`.

House rule (LAYOUT.md 7.4.8): the event is a constant name (``"pod_bound"``,
``"batch_ended"``) and everything variable is a field, never interpolated
into the event, so logs can be grouped and queried. Each line carries the
fields it is about (``pod``, ``node``, ``cycle``, ``batch``…) itself.

Output format, level and the stdlib bridge are set once by the composition root
with `scheduler.logs.setup.configure_logging`; this module does not import
`setup`, so the layers never configure logging themselves. Before configuration
structlog's defaults apply, which is enough for tests.

A leaf package: it imports nothing else from ``scheduler``.
"""

from __future__ import annotations

import logging

import structlog

__all__ = ["TRACE", "debug_enabled", "get_logger"]

TRACE = 5
"""Below debug: lines per watch event and handler call (kopf's ``Handler '...' is invoked``),
written only with ``--log-level trace`` or ``-v=10``."""
logging.addLevelName(TRACE, "TRACE")


def debug_enabled() -> bool:
    """Whether debug lines are written: a caller that would build costly fields for one
    (the decision log) asks first, so the hot path pays nothing at info level."""
    return logging.getLogger().isEnabledFor(logging.DEBUG)


def get_logger(name: str | None = None) -> structlog.stdlib.BoundLogger:
    """A logger named ``name`` (conventionally the module's ``__name__``).

    The logger is a lazy proxy: it picks up `configure_logging`'s settings on
    use, so creating one before configuration (say in ``__init__``) is fine.
    """
    if name is None:
        return structlog.stdlib.get_logger()
    return structlog.stdlib.get_logger(name)
