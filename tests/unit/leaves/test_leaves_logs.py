"""Logs: JSON/console output, the stdlib bridge, level filtering, redaction, the debug check."""

from __future__ import annotations

import io
import json
import logging
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal

import pytest
import structlog

from scheduler import logs
from scheduler.logs import setup

if TYPE_CHECKING:
    pass

SECRET = "s3cr3t-VALUE-9f8e"


def _ours(handler: logging.Handler) -> bool:
    return isinstance(handler.formatter, structlog.stdlib.ProcessorFormatter)


def _configure(fmt: Literal["json", "console"] = "json", level: str = "debug") -> io.StringIO:
    stream = io.StringIO()
    setup.configure_logging(fmt=fmt, level=level, stream=stream)
    return stream


def _records(stream: io.StringIO) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stream.getvalue().splitlines()]


def test_json_lines_carry_event_fields_and_metadata() -> None:
    """A structlog event comes out as one JSON object with level, logger, UTC timestamp."""
    stream = _configure()
    logs.get_logger("scheduler.cycle").info("pod_bound", node="n1", attempt=2)
    [record] = _records(stream)
    assert record["event"] == "pod_bound"
    assert record["node"] == "n1"
    assert record["attempt"] == 2
    assert record["level"] == "info"
    assert record["logger"] == "scheduler.cycle"
    stamp = datetime.fromisoformat(record["timestamp"].replace("Z", "+00:00"))
    assert stamp.utcoffset() is not None
    assert stamp.utcoffset().total_seconds() == 0  # type: ignore[union-attr]


def test_stdlib_loggers_come_out_as_the_same_json() -> None:
    """kopf-/aiohttp-style stdlib records are rendered as JSON, kopf's object reference
    included."""
    stream = _configure()
    logging.getLogger("kopf.objects").warning(
        "Handler %r failed temporarily", "pods", extra={"k8s_ref": {"name": "web-1"}}
    )
    logging.getLogger("aiohttp.access").info("GET /healthz 200")
    kopf_line, aiohttp_line = _records(stream)
    assert kopf_line["event"] == "Handler 'pods' failed temporarily"
    assert kopf_line["logger"] == "kopf.objects"
    assert kopf_line["level"] == "warning"
    assert kopf_line["k8s_ref"] == {"name": "web-1"}
    assert aiohttp_line["logger"] == "aiohttp.access"
    assert "timestamp" in aiohttp_line


def test_exceptions_are_rendered_into_the_json_line() -> None:
    """log.exception puts the formatted traceback into the same JSON object."""
    stream = _configure()
    try:
        raise RuntimeError("boom")
    except RuntimeError:
        logs.get_logger("x").exception("cycle_crashed")
    [record] = _records(stream)
    assert record["level"] == "error"
    assert "RuntimeError: boom" in record["exception"]


@pytest.mark.parametrize(
    ("level", "method", "emitted"),
    [
        pytest.param("info", "debug", False, id="info-drops-debug"),
        pytest.param("info", "info", True, id="info-keeps-info"),
        pytest.param("WARNING", "info", False, id="warning-drops-info-case-insensitive"),
        pytest.param("warning", "error", True, id="warning-keeps-error"),
        pytest.param("error", "warning", False, id="error-drops-warning"),
        pytest.param("debug", "debug", True, id="debug-keeps-debug"),
    ],
)
def test_level_filters_structlog_and_stdlib_alike(level: str, method: str, emitted: bool) -> None:
    """The configured level applies to structlog and stdlib loggers alike (the emulator's
    are stdlib; other libraries' info lines count as debug: test_logs_foreign)."""
    stream = _configure(level=level)
    getattr(logs.get_logger("ours"), method)("ours_event")
    getattr(logging.getLogger("scheduler.sim.server"), method)("stdlib event")
    events = [r["event"] for r in _records(stream)]
    assert events == (["ours_event", "stdlib event"] if emitted else [])


@pytest.mark.parametrize(
    ("fmt", "level"),
    [
        pytest.param("yaml", "info", id="unknown-format"),
        pytest.param("json", "verbose", id="unknown-level"),
    ],
)
def test_bad_settings_are_refused_by_name(fmt: str, level: str) -> None:
    """An unknown format or level raises ValueError naming the bad value."""
    with pytest.raises(ValueError, match=fmt if fmt == "yaml" else level):
        setup.configure_logging(fmt=fmt, level=level, stream=io.StringIO())  # type: ignore[arg-type]


def test_configuring_twice_replaces_the_handler() -> None:
    """A second call leaves one handler of ours, writing to the newest stream only."""
    first = _configure()
    second = _configure()
    assert sum(_ours(h) for h in logging.getLogger().handlers) == 1
    logs.get_logger("x").info("once")
    assert first.getvalue() == ""
    assert [r["event"] for r in _records(second)] == ["once"]


def test_a_logger_made_before_configuration_follows_it() -> None:
    """Loggers are not cached, so one created early writes where the latest call says."""
    early = logs.get_logger("early")
    early.info("warm_up")  # used under the previous configuration
    stream = _configure()
    early.info("after_configure")
    assert [r["event"] for r in _records(stream)] == ["after_configure"]


def test_console_format_is_readable_text_with_fields() -> None:
    """The console renderer writes the event and key=value fields, not JSON."""
    stream = _configure(fmt="console")
    logs.get_logger("x").warning("batch_flushed", reason="expired", password=SECRET)
    text = stream.getvalue()
    assert "batch_flushed" in text
    assert "reason=expired" in text
    assert SECRET not in text
    with pytest.raises(json.JSONDecodeError):
        json.loads(text)


class _Opaque:
    """An object whose repr leaks a header, as some client errors do."""

    def __repr__(self) -> str:
        return f"Request(headers={{'X': 'Bearer {SECRET}'}})"


class _Harmless:
    def __repr__(self) -> str:
        return "Harmless()"


_HARMLESS = _Harmless()


@pytest.mark.parametrize(
    ("field", "value", "expected"),
    [
        pytest.param("token", SECRET, "[REDACTED]", id="key-token"),
        pytest.param("Authorization", "Bearer x", "[REDACTED]", id="key-authorization-any-case"),
        pytest.param("db_password", 1234, "[REDACTED]", id="key-substring-non-string-value"),
        pytest.param("client_secret", {"a": 1}, "[REDACTED]", id="key-secret-whole-dict"),
        pytest.param("BEARER", SECRET, "[REDACTED]", id="key-bearer"),
        pytest.param(
            "headers",
            {"Accept": "json", "authorization": SECRET, "inner": {"x-auth-token": SECRET}},
            {
                "Accept": "json",
                "authorization": "[REDACTED]",
                "inner": {"x-auth-token": "[REDACTED]"},
            },
            id="nested-dict-keys",
        ),
        pytest.param(
            "items",
            [{"token": SECRET}, "ok", ("Bearer " + SECRET,)],
            [{"token": "[REDACTED]"}, "ok", ("[REDACTED]",)],
            id="lists-and-tuples",
        ),
        pytest.param(
            "error",
            f"401 for header Authorization: Bearer {SECRET}",
            "401 for header Authorization: [REDACTED]",
            id="bearer-inside-string",
        ),
        pytest.param(
            "url",
            f"https://api/x?watch=1&access_token={SECRET}&limit=5",
            "https://api/x?watch=1&access_token=[REDACTED]&limit=5",
            id="token-query-parameter",
        ),
        pytest.param(
            "repr",
            f"{{'Authorization': 'Basic {SECRET}'}}",
            "{'Authorization': '[REDACTED]'}",
            id="basic-auth-in-dict-repr",
        ),
        pytest.param(
            "request", _Opaque(), "Request(headers={'X': '[REDACTED]'})", id="object-repr"
        ),
        pytest.param("node", "node-1", "node-1", id="plain-string-untouched"),
        pytest.param("count", 3, 3, id="number-untouched"),
        pytest.param("obj", _HARMLESS, _HARMLESS, id="harmless-object-kept-as-is"),
    ],
)
def test_redact_secrets_processor(field: str, value: object, expected: object) -> None:
    """Credential-named fields and credential-looking text become [REDACTED]."""
    out = setup.redact_secrets(None, "info", {"event": "e", field: value})
    assert out[field] == expected
    assert out["event"] == "e"


def test_no_secret_reaches_the_output_from_any_path() -> None:
    """Fields, messages, stdlib args and tracebacks are all scrubbed in the rendered JSON."""
    stream = _configure()
    log = logs.get_logger("scheduler.kube.client")
    log.info("request_sent", token=SECRET, headers={"Authorization": f"Bearer {SECRET}"})
    log.warning(f"failed with Bearer {SECRET}")
    logging.getLogger("kubernetes.client.rest").error("response: %s", f"api_key={SECRET}")
    try:
        raise PermissionError(f"Authorization: Bearer {SECRET}")
    except PermissionError:
        log.exception("bind_failed")
        logging.getLogger("aiohttp.client").exception("request failed")
    text = stream.getvalue()
    assert len(_records(stream)) == 5
    assert SECRET not in text
    assert text.count("[REDACTED]") >= 6
