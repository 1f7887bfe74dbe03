"""The reflector through an API server outage: its watch resumes as soon as the server is
back, even when the restarted server first refuses it (a 403 before its authorizer syncs)
(issue 37: kube-apiserver SIGKILL mid-burst)."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import TYPE_CHECKING

import pytest

from scheduler.kube.controller.settings import ControllerOptions
from scheduler.kube.errors import ApiError, TransportError, Unauthorized
from scheduler.kube.intake.reflector import BACKOFF_BASE, Reflector
from scheduler.kube.kinds import Kind
from scheduler.kube.retry_log import RetryLog

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Mapping

REFUSED = TransportError("Cannot connect to host", reason="ClientConnectorError")
FORBIDDEN = Unauthorized("pods is forbidden", status=403)


class ScriptedWatches:
    """A client whose watches fail with ``failures`` in turn, then stay open; the server's
    answers (or their absence) reach its ``retry_log`` as the real client's do."""

    def __init__(self, failures: list[ApiError], *, back_at: float) -> None:
        self.failures = failures
        self.back_at = back_at
        self.retry_log = RetryLog()
        self.attempts: list[float] = []

    async def watch_lines(
        self,
        path: str,
        params: Mapping[str, str | int | bool],
        *,
        timeout: float,  # noqa: ASYNC109 - the client's signature
        connect_timeout: float,
    ) -> AsyncIterator[bytes]:
        now = asyncio.get_running_loop().time()
        self.attempts.append(now)
        if now < self.back_at:
            self.retry_log.failed(REFUSED)
            raise REFUSED
        self.retry_log.answered()
        if self.failures:
            raise self.failures.pop(0)
        await asyncio.Event().wait()  # a watch that stays open
        yield b""


@pytest.mark.looptime
@pytest.mark.parametrize(
    "after_outage",
    [[], [FORBIDDEN]],
    ids=["the server back", "the server back but refusing at first"],
)
async def test_the_watch_resumes_within_a_base_backoff_of_the_servers_return(
    after_outage: list[ApiError],
) -> None:
    """20 s of refused connections (the backoff grown to its 8 s cap), then the server
    again: the watch is open again within two base backoffs of its return."""
    back_at = 20.0
    client = ScriptedWatches(list(after_outage), back_at=back_at)
    options = ControllerOptions()
    applier = SimpleNamespace(decode_line=None, apply_event=None)  # no event arrives
    reflector = Reflector(client, Kind.PODS, applier, sync=None, options=options)  # type: ignore[arg-type]
    reflector.version = "1"
    loop = asyncio.get_running_loop()
    began = loop.time()
    client.back_at = began + back_at

    async def flip() -> None:  # the server's return wakes the retries waiting on it
        await asyncio.sleep(back_at)
        client.retry_log.answered()

    task = asyncio.create_task(reflector.run())
    flipper = asyncio.create_task(flip())
    await asyncio.sleep(back_at + 10)
    task.cancel()
    await asyncio.gather(task, flipper, return_exceptions=True)
    resumed = client.attempts[-1] - (began + back_at)
    assert 0 <= resumed <= 2 * BACKOFF_BASE * 1.5, client.attempts
    assert len(client.attempts) >= 5
