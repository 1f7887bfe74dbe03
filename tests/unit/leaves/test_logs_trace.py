"""The trace level, klog's -v mapping, and kopf's per-handler lines only at trace."""

from __future__ import annotations

import io
import json
import logging

import pytest

from scheduler import logs
from scheduler.logs import setup


def _lines(level: str) -> list[dict[str, object]]:
    stream = io.StringIO()
    setup.configure_logging(fmt="json", level=level, stream=stream)
    kopf = logging.getLogger(setup.PER_HANDLER_LOGGER)
    kopf.debug("Handler 'pods-event' is invoked.")
    kopf.info("Handler 'pods-event' succeeded.")
    kopf.warning("Handler 'pods-event' failed temporarily")
    logs.get_logger("scheduler.cycle").debug("pod_decided")
    logs.get_logger("scheduler.cycle").info("pod_bound")
    logging.getLogger("aiohttp.client").log(logs.TRACE, "frame")
    return [json.loads(line) for line in stream.getvalue().splitlines()]


def _events(level: str) -> list[object]:
    return [line["event"] for line in _lines(level)]


def test_debug_leaves_out_kopfs_per_handler_lines_but_not_its_warnings() -> None:
    assert _events("debug") == [
        "Handler 'pods-event' failed temporarily",
        "pod_decided",
        "pod_bound",
    ]


def test_info_shows_ours_and_kopfs_warnings() -> None:
    assert _events("info") == ["Handler 'pods-event' failed temporarily", "pod_bound"]


def test_trace_shows_everything_named_trace() -> None:
    lines = _lines("trace")
    assert [line["event"] for line in lines] == [
        "Handler 'pods-event' is invoked.",
        "Handler 'pods-event' succeeded.",
        "Handler 'pods-event' failed temporarily",
        "pod_decided",
        "pod_bound",
        "frame",
    ]
    assert lines[-1]["level"] == "trace"


def test_leaving_trace_hides_the_handler_lines_again() -> None:
    _lines("trace")
    assert "Handler 'pods-event' is invoked." not in _events("debug")


@pytest.mark.parametrize(
    ("verbosity", "level"),
    [
        *((v, "info") for v in (0, 1, 2, 3)),
        *((v, "debug") for v in (4, 9)),
        *((v, "trace") for v in (10, 12)),
    ],
)
def test_klog_verbosity_maps_onto_our_levels(verbosity: int, level: str) -> None:
    assert setup.verbosity_level(verbosity) == level


def test_negative_verbosity_is_refused() -> None:
    with pytest.raises(ValueError, match=">= 0"):
        setup.verbosity_level(-1)
