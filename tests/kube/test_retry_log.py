"""RetryLog: a warning per source at most every WARN_EVERY s, one error when the API server
stays away, one info line when it is back; kopf's retry records go the same way."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest
import structlog

from scheduler.kube import errors
from scheduler.kube.controller.kopf_retries import KopfRetries
from scheduler.kube.retry_log import UNAVAILABLE_AFTER, WARN_EVERY, RetryLog

pytestmark = pytest.mark.usefixtures("debug_logs")

NO_ANSWER = errors.TransportError("connection refused", reason="ClientConnectorError")


class _Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def _lines(
    steps: list[tuple[float, str]], *, source: str = "nodes"
) -> list[tuple[str, str, dict[str, Any]]]:
    """(level, event, other fields) written by a RetryLog driven through ``steps``: (seconds
    later, what): ``retry`` (a failed request, then its site's retry), ``retry-429`` (an
    answer that is retried), ``answer``."""
    clock = _Clock()
    retries = RetryLog(server="https://api", clock=clock)
    with structlog.testing.capture_logs() as captured:
        for later, what in steps:
            clock.now += later
            if what == "retry":
                retries.failed(NO_ANSWER)
                retries.retrying("watch_failed", source=source, kind=source)
            elif what == "retry-429":
                retries.answered()
                retries.retrying("watch_failed", source=source, kind=source)
            else:
                retries.answered()
    keep = ("log_level", "event")
    return [
        (c["log_level"], c["event"], {k: v for k, v in c.items() if k not in keep})
        for c in captured
    ]


def _warnings(lines: list[tuple[str, str, dict[str, Any]]]) -> list[tuple[str, str]]:
    return [(level, event) for level, event, _ in lines if level != "debug"]


@pytest.mark.parametrize(
    ("steps", "expected"),
    [
        pytest.param(
            [(0, "retry"), (1, "retry"), (2, "retry")],
            [("warning", "watch_failed")],
            id="the-first-retry-warns-the-next-within-the-interval-do-not",
        ),
        pytest.param(
            [(0, "retry"), (1, "retry"), (1, "answer")],
            [("warning", "watch_failed"), ("info", "api_available")],
            id="back-after-a-warned-outage-says-so-once",
        ),
        pytest.param(
            [(0, "answer"), (1, "answer")],
            [],
            id="answers-without-an-outage-say-nothing",
        ),
        pytest.param(
            [(0, "retry-429"), (1, "retry-429"), (1, "answer")],
            [("warning", "watch_failed")],
            id="throttling-is-retried-but-no-outage",
        ),
        pytest.param(
            [(0, "retry"), (UNAVAILABLE_AFTER - 1, "retry"), (2, "retry"), (5, "retry")],
            [("warning", "watch_failed"), ("error", "api_unavailable")],
            id="one-error-once-failures-last-unavailable-after",
        ),
        pytest.param(
            [(0, "retry"), (UNAVAILABLE_AFTER, "retry"), (1, "answer"), (1, "retry")],
            [
                ("warning", "watch_failed"),
                ("error", "api_unavailable"),
                ("info", "api_available"),
            ],
            id="a-new-outage-within-the-interval-stays-quiet-until-it-lasts",
        ),
    ],
)
def test_what_an_outage_writes(steps: list[tuple[float, str]], expected: list[object]) -> None:
    """Warnings and errors as the module docstring says; every other retry at debug."""
    lines = _lines(steps)
    assert _warnings(lines) == expected
    retries = sum(1 for _, what in steps if what.startswith("retry"))
    assert sum(1 for _, event, _ in lines if event == "watch_failed") == retries


def test_a_source_warns_again_after_the_interval_with_what_it_suppressed() -> None:
    """After WARN_EVERY s the next retry of the source warns again, counting the quiet ones."""
    lines = _lines([(0, "retry"), (1, "retry"), (1, "retry"), (WARN_EVERY, "retry")])
    warned = [fields for level, event, fields in lines if level == "warning"]
    assert warned == [{"kind": "nodes"}, {"kind": "nodes", "suppressed": 2}]


def test_sources_are_rate_limited_apart() -> None:
    """Two kinds failing together: one warning each, not one for both."""
    clock = _Clock()
    retries = RetryLog(clock=clock)
    with structlog.testing.capture_logs() as captured:
        for _ in range(3):
            for kind in ("nodes", "pods"):
                retries.retrying("watch_failed", source=kind, kind=kind)
            clock.now += 1
    warned = [c["kind"] for c in captured if c["log_level"] == "warning"]
    assert warned == ["nodes", "pods"]


def test_the_outage_lines_say_how_long_and_how_many() -> None:
    """api_unavailable and api_available carry the server, the seconds and the failures."""
    clock = _Clock()
    retries = RetryLog(server="https://api", clock=clock)
    with structlog.testing.capture_logs() as captured:
        for _ in range(4):
            retries.failed(NO_ANSWER)
            retries.retrying("reconcile_failed")
            clock.now += UNAVAILABLE_AFTER / 3
        retries.answered()
    error = next(c for c in captured if c["event"] == "api_unavailable")
    back = next(c for c in captured if c["event"] == "api_available")
    assert (error["server"], error["seconds"], error["failures"]) == ("https://api", 15.0, 4)
    assert error["error"] == str(NO_ANSWER)
    assert (back["seconds"], back["failures"]) == (20.0, 4)


def _kopf_record(message: str, level: int = logging.ERROR) -> logging.LogRecord:
    return logging.LogRecord("kopf._cogs.clients.watching", level, __file__, 1, message, (), None)


REFUSED = (
    "ClientConnectorError(ConnectionKey(host='127.0.0.1', port=1), ConnectionRefusedError(111))"
)


@pytest.mark.parametrize(
    ("message", "taken", "outage", "fields"),
    [
        pytest.param(
            "Request attempt #3/6 failed; will retry: GET http://127.0.0.1:1/api/v1/services"
            f"?watch=true&resourceVersion=10 -> {REFUSED}",
            True,
            True,
            {"request": "GET /api/v1/services", "attempt": "#3/6", "escalated": False},
            id="a-retry-without-answer",
        ),
        pytest.param(
            "Request attempt #6/6 failed; escalating: GET http://127.0.0.1:1/apis/apps/v1"
            f"/replicasets?watch=true -> {REFUSED}",
            True,
            True,
            {"request": "GET /apis/apps/v1/replicasets", "attempt": "#6/6", "escalated": True},
            id="the-last-attempt-escalates",
        ),
        pytest.param(
            "Request attempt #1/6 failed; will retry: GET http://127.0.0.1:1/api/v1/pods -> "
            "APITooManyRequestsError('throttled')",
            True,
            False,
            {"request": "GET /api/v1/pods", "attempt": "#1/6", "escalated": False},
            id="a-429-is-a-retry-not-an-outage",
        ),
        pytest.param(
            "Request attempt #1/6 failed; TCP closed; will re-authenticate: GET http://x/api",
            False,
            False,
            None,
            id="a-closed-session-stays-kopfs-error",
        ),
        pytest.param("Stop-flag is set to True.", False, False, None, id="other-records-stay"),
    ],
)
def test_kopf_request_retries_become_rate_limited_lines(
    message: str, taken: bool, outage: bool, fields: dict[str, object] | None
) -> None:
    """kopf's retry errors are taken and written as kopf_request_retry; the rest left."""
    retries = RetryLog(clock=_Clock())
    route = KopfRetries(retries)
    with structlog.testing.capture_logs() as captured:
        assert route(_kopf_record(message)) is taken
    assert (retries.down_since is not None) is outage
    if fields is None:
        assert captured == []
        return
    [line] = captured
    assert line["event"] == "kopf_request_retry"
    assert line["log_level"] == "warning"
    assert {k: line[k] for k in fields} == fields


def test_kopf_retries_warn_once_for_every_kind() -> None:
    """Ten kinds failing together: one warning for kopf, the rest at debug."""
    retries = RetryLog(clock=_Clock())
    route = KopfRetries(retries)
    with structlog.testing.capture_logs() as captured:
        for kind in ("services", "namespaces", "replicasets", "csinodes"):
            message = (
                f"Request attempt #1/6 failed; will retry: GET http://h/api/v1/{kind} -> {REFUSED}"
            )
            route(_kopf_record(message))
    assert [c["log_level"] for c in captured] == ["warning", "debug", "debug", "debug"]


@pytest.mark.looptime
async def test_a_pause_during_an_outage_ends_when_the_server_answers() -> None:
    """A retry waiting out its backoff while the server is away goes the moment it is back;
    with the server there, a pause is the plain wait."""
    retry_log = RetryLog()
    loop = asyncio.get_running_loop()
    retry_log.failed(NO_ANSWER)
    began = loop.time()
    paused = asyncio.create_task(retry_log.pause(8.0))
    await asyncio.sleep(1.0)
    retry_log.answered()
    await paused
    assert loop.time() - began == pytest.approx(1.0)
    began = loop.time()
    await retry_log.pause(2.0)
    assert loop.time() - began == pytest.approx(2.0)
