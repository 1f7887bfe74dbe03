"""Other libraries' records: info written as debug, warnings and errors kept, routes."""

from __future__ import annotations

import io
import json
import logging

import pytest

from scheduler import logs
from scheduler.logs import foreign, setup

LIBRARIES = ("kopf._core.reactor.running", "aiohttp.access", "kubernetes.client.rest", "asyncio")


def _lines(level: str, emit: dict[str, str]) -> list[tuple[str, str, str]]:
    """(logger, level, event) of what ``emit`` (logger → method) writes at ``level``."""
    stream = io.StringIO()
    setup.configure_logging(fmt="json", level=level, stream=stream)
    for name, method in emit.items():
        getattr(logging.getLogger(name), method)(f"{name} {method}")
    records = [json.loads(line) for line in stream.getvalue().splitlines()]
    return [(r["logger"], r["level"], r["event"]) for r in records]


@pytest.mark.parametrize("library", LIBRARIES)
@pytest.mark.parametrize(
    ("level", "method", "written_as"),
    [
        pytest.param("info", "info", None, id="info-hides-their-info"),
        pytest.param("debug", "info", "debug", id="debug-shows-their-info-as-debug"),
        pytest.param("trace", "info", "debug", id="trace-shows-their-info-as-debug"),
        pytest.param("info", "warning", "warning", id="info-keeps-their-warnings"),
        pytest.param("info", "error", "error", id="info-keeps-their-errors"),
        pytest.param("warning", "error", "error", id="warning-keeps-their-errors"),
    ],
)
def test_other_libraries_info_is_debug_their_problems_stay(
    library: str, level: str, method: str, written_as: str | None
) -> None:
    """A foreign info line shows only where debug does, as debug; warnings and errors stay."""
    lines = _lines(level, {library: method})
    expected = [] if written_as is None else [(library, written_as, f"{library} {method}")]
    assert lines == expected


def test_our_own_info_lines_stay_info() -> None:
    """structlog lines and the emulator's stdlib lines are ours: their level is kept."""
    stream = io.StringIO()
    setup.configure_logging(fmt="json", level="info", stream=stream)
    logs.get_logger("anything").info("ours_event")
    logging.getLogger("scheduler.sim.server").info("sim event")
    records = [json.loads(line) for line in stream.getvalue().splitlines()]
    assert [(r["event"], r["level"]) for r in records] == [
        ("ours_event", "info"),
        ("sim event", "info"),
    ]


def test_a_route_takes_foreign_records_while_installed() -> None:
    """A taken record is not written; the route sees only foreign records; leaving the
    context removes it."""
    stream = io.StringIO()
    setup.configure_logging(fmt="json", level="info", stream=stream)
    seen: list[str] = []

    def route(record: logging.LogRecord) -> bool:
        seen.append(record.getMessage())
        return record.getMessage().startswith("Request attempt")

    with foreign.taking(route):
        logging.getLogger("kopf._cogs.clients.watching").error("Request attempt #1/6 failed")
        logging.getLogger("kopf._cogs.clients.watching").error("something else")
        logs.get_logger("scheduler.kube").warning("ours_event")
    logging.getLogger("kopf._cogs.clients.watching").error("Request attempt #2/6 failed")
    events = [json.loads(line)["event"] for line in stream.getvalue().splitlines()]
    assert seen == ["Request attempt #1/6 failed", "something else"]
    assert events == ["something else", "ours_event", "Request attempt #2/6 failed"]
