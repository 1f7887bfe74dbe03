"""Process-wide logging configuration: structlog chain, stdlib bridge, redaction.

Called once by the composition root (``app``); no other layer imports this
module (an import-linter contract). One chain of processors serves two kinds
of records:

- structlog loggers (`scheduler.logs.get_logger`) run the chain and hand the
  event dict to stdlib logging (`ProcessorFormatter.wrap_for_formatter`);
- stdlib loggers — kopf, aiohttp, the kubernetes client — reach the same root
  handler, whose `ProcessorFormatter` runs the same chain as
  ``foreign_pre_chain``. So every line has one format (JSON or console) and one
  timestamp style. Their info lines are written as debug, their warnings and
  errors as they are (`scheduler.logs.foreign`).

Security requirement: no credential may ever reach the log output. The last
processor before rendering, `redact_secrets`, replaces the value of any field
whose name looks like a credential (token, authorization, password, bearer,
secret, ...; at any depth of nested dicts and lists) and any ``Bearer <token>``
or ``token=<value>`` inside strings — messages, reprs of objects and formatted
tracebacks included — with ``[REDACTED]``. It runs after exception formatting
so tracebacks are scanned too; exceptions are always rendered as plain text
(never rich tracebacks with local variables, which could hold a token).
"""

from __future__ import annotations

import logging
import re
import sys
from typing import TYPE_CHECKING, Literal, TextIO

import structlog

from scheduler.logs import TRACE
from scheduler.logs.foreign import ForeignRecords

if TYPE_CHECKING:
    from collections.abc import Mapping

    from structlog.typing import EventDict, Processor, WrappedLogger

__all__ = ["REDACTED", "configure_logging", "redact_secrets", "verbosity_level"]

REDACTED = "[REDACTED]"

# Field names treated as credentials; substring match, case-insensitive, so
# ``access_token``, ``Authorization``, ``client_secret`` are all caught.
# Over-redaction (say ``secretName``) is the safe failure.
_SENSITIVE_KEY = re.compile(
    r"token|authorization|password|passwd|bearer|secret|api[-_]?key|credential|cookie",
    re.IGNORECASE,
)
# ``Bearer <token>`` anywhere in a string (HTTP headers quoted in errors).
_BEARER = re.compile(r"\bbearer\s+[^\s'\",;)}\]]+", re.IGNORECASE)
# ``key=value`` / ``key: value`` / ``'key': 'value'`` inside strings, where the
# key looks like a credential (query strings, reprs of header dicts). The key
# and separator are kept so the line still says what was removed.
_ASSIGNMENT = re.compile(
    r"(?P<key>\b\w*(?:token|authorization|password|passwd|secret|api[-_]?key)\w*)"
    r"(?P<sep>['\"]?\s*[:=]\s*['\"]?)"
    r"(?!\[REDACTED\])(?P<value>(?:(?:basic|bearer|token)\s+)?[^\s'\",;&)}\]]+)",
    re.IGNORECASE,
)
# Keys ProcessorFormatter puts into the event dict for its own use.
_META_KEYS = frozenset({"_record", "_from_structlog"})
_MAX_DEPTH = 16
_PLAIN_TYPES = (int, float, bool, type(None))

_HANDLER_MARK = "_batch_scheduler_handler"

PER_HANDLER_LOGGER = "kopf.objects"
"""kopf's per-object logger: a line per handler call (``Handler 'pods-event' is invoked`` at
debug, ``... succeeded`` at info), most of the output at debug. Its warnings and errors are
always written, the rest only at trace."""


def _redact_str(text: str) -> str:
    text = _BEARER.sub(REDACTED, text)
    return _ASSIGNMENT.sub(lambda m: f"{m['key']}{m['sep']}{REDACTED}", text)


def _redact_value(value: object, depth: int) -> object:
    if isinstance(value, str):
        return _redact_str(value)
    if isinstance(value, _PLAIN_TYPES):
        return value
    if depth >= _MAX_DEPTH:
        # Too deep to walk safely: keep nothing we have not looked at.
        return REDACTED
    if isinstance(value, dict):
        return _redact_mapping(value, depth + 1)
    if isinstance(value, (list, tuple, set, frozenset)):
        items = [_redact_value(v, depth + 1) for v in value]
        return tuple(items) if type(value) is tuple else items
    # Any other object is rendered through repr() (JSONRenderer's fallback and
    # ConsoleRenderer both do), so scan that text and replace the object only
    # when it would leak.
    text = repr(value)
    cleaned = _redact_str(text)
    return value if cleaned == text else cleaned


def _redact_mapping(mapping: Mapping[object, object], depth: int) -> dict[object, object]:
    return {
        key: REDACTED if _SENSITIVE_KEY.search(str(key)) else _redact_value(value, depth)
        for key, value in mapping.items()
    }


def redact_secrets(logger: WrappedLogger, method_name: str, event_dict: EventDict) -> EventDict:
    """structlog processor: replace credentials in ``event_dict`` with ``[REDACTED]``."""
    return {
        key: value
        if key in _META_KEYS
        else REDACTED
        if _SENSITIVE_KEY.search(key)
        else _redact_value(value, 0)
        for key, value in event_dict.items()
    }


def _parse_level(level: str) -> int:
    names = logging.getLevelNamesMapping()
    numeric = names.get(level.upper())
    if numeric is None:
        choices = ", ".join(sorted(n.lower() for n in names if n != "NOTSET"))
        raise ValueError(f"unknown log level {level!r}; expected one of: {choices}")
    return numeric


def verbosity_level(verbosity: int) -> str:
    """The level for klog's ``-v=N``: 0-3 info (our info lines already carry what klog adds
    at V(2)-V(3): one line per decision), 4-9 debug, 10 and above trace."""
    if verbosity < 0:
        raise ValueError(f"must be >= 0, got {verbosity}")
    if verbosity >= 10:
        return "trace"
    return "debug" if verbosity >= 4 else "info"


def configure_logging(
    *,
    fmt: Literal["json", "console"] = "json",
    level: str = "info",
    stream: TextIO | None = None,
) -> None:
    """Configure structlog and the root stdlib logger for the whole process.

    ``fmt`` picks one JSON object per line (for collectors) or the console
    renderer (for people); ``level`` is a stdlib level name (``debug``,
    ``info``, ``warning``, ``error``, ``critical``) or ``trace``, and applies to
    our loggers and foreign ones alike; a foreign library's info line counts as
    debug (:class:`~scheduler.logs.foreign.ForeignRecords`), and kopf's
    per-handler lines below warning only trace writes (:data:`PER_HANDLER_LOGGER`);
    ``stream`` defaults to ``sys.stderr``.

    Idempotent: a second call replaces the handler installed by the first
    instead of adding another. Handlers installed by others (pytest's capture)
    are left alone.
    """
    if fmt not in ("json", "console"):
        raise ValueError(f"unknown log format {fmt!r}; expected 'json' or 'console'")
    numeric_level = _parse_level(level)
    out = sys.stderr if stream is None else stream

    shared: list[Processor] = [
        structlog.stdlib.add_logger_name,
        structlog.stdlib.add_log_level,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
        structlog.processors.StackInfoRenderer(),
        structlog.processors.format_exc_info,
        # Last before rendering: everything above may add text (tracebacks).
        redact_secrets,
    ]
    renderer: Processor
    if fmt == "json":
        renderer = structlog.processors.JSONRenderer()
    else:
        renderer = structlog.dev.ConsoleRenderer(
            colors=_isatty(out),
            exception_formatter=structlog.dev.plain_traceback,
        )

    structlog.configure(
        processors=[
            # Drop below-level calls before any other work.
            structlog.stdlib.filter_by_level,
            *shared,
            structlog.stdlib.ProcessorFormatter.wrap_for_formatter,
        ],
        logger_factory=structlog.stdlib.LoggerFactory(),
        # Below-level calls return at once: per-pod debug/info lines on the hot path cost
        # nothing when the level is higher. Not cached, so a logger made before this call
        # (module-level ones) follows the configuration in force when it logs.
        # (structlog loggers have no trace method: at trace they write what debug writes.)
        wrapper_class=structlog.make_filtering_bound_logger(max(numeric_level, logging.DEBUG)),
        cache_logger_on_first_use=False,
    )

    formatter = structlog.stdlib.ProcessorFormatter(
        # kopf's per-object loggers pass the object reference as ``extra``.
        foreign_pre_chain=[structlog.stdlib.ExtraAdder(allow=("k8s_ref",)), *shared],
        processors=[structlog.stdlib.ProcessorFormatter.remove_processors_meta, renderer],
    )
    handler = logging.StreamHandler(out)
    handler.setFormatter(formatter)
    handler.addFilter(ForeignRecords(numeric_level))
    setattr(handler, _HANDLER_MARK, True)

    root = logging.getLogger()
    for old in list(root.handlers):
        if getattr(old, _HANDLER_MARK, False):
            root.removeHandler(old)
            old.close()
    root.addHandler(handler)
    root.setLevel(numeric_level)
    per_handler = logging.WARNING if numeric_level > TRACE else logging.NOTSET
    logging.getLogger(PER_HANDLER_LOGGER).setLevel(per_handler)


def _isatty(stream: TextIO) -> bool:
    isatty = getattr(stream, "isatty", None)
    return bool(isatty()) if callable(isatty) else False
