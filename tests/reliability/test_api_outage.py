"""The API server goes away for 20 s and comes back: a few lines say so, and scheduling goes on.

The emulator's listener is closed (connections refused, watches cut) and opened again on the
same port with the same store, as an API server restarts. Before kube's retry log, the 30 s
version of this wrote about 110 error lines (kopf's ``Request attempt #N/6 failed; will
retry``, per kind, per attempt) beside a warning per informer retry; now each retrying part
warns once per 30 s (the rest at debug), one error says the API server stays away (after
15 s), and one info line says it is back.
"""

from __future__ import annotations

import asyncio
import collections
import threading
import time
from typing import TYPE_CHECKING, Any

import pytest

from scheduler.kube.retry_log import UNAVAILABLE_AFTER, WARN_EVERY
from scheduler.sim.server import SimServer
from tests.builders import make_pod
from tests.reliability.support import Api, Figures
from tests.scheduler_process import SchedulerProc, free_port, wait_for

if TYPE_CHECKING:
    from collections.abc import Coroutine, Iterator
    from pathlib import Path

pytestmark = [pytest.mark.reliability, pytest.mark.timeout(150)]

OUTAGE = 20.0
"""Longer than UNAVAILABLE_AFTER (one error), shorter than WARN_EVERY (one warning each)."""
LEADER_FLAGS = (
    "--leader-elect",
    "--leader-elect-lease-duration=4s",
    "--leader-elect-renew-deadline=3s",
    "--leader-elect-retry-period=1s",
)


class _Emulator:
    """A SimServer on its own loop thread that can be stopped and started on one port."""

    def __init__(self) -> None:
        self.server = SimServer(nodes=3)
        self.port = free_port()
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._thread.start()

    def _call(self, coro: Coroutine[Any, Any, Any]) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result(timeout=30)

    def start(self) -> str:
        return str(self._call(self.server.start("127.0.0.1", self.port)))

    def stop(self) -> None:
        self._call(self.server.stop())

    def close(self) -> None:
        self.stop()
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)


@pytest.fixture
def emulator() -> Iterator[_Emulator]:
    sim = _Emulator()
    try:
        yield sim
    finally:
        sim.close()


def _bound(api: Api, name: str) -> bool:
    pod = api.request("GET", f"/api/v1/namespaces/default/pods/{name}")
    return bool(pod["spec"].get("nodeName"))


def test_an_outage_is_a_few_lines_and_scheduling_resumes(
    emulator: _Emulator, tmp_path: Path, figures: Figures
) -> None:
    """Per retrying part one warning, one api_unavailable, one api_available, no error from
    kopf; a pod created after the outage is bound."""
    assert UNAVAILABLE_AFTER < OUTAGE < WARN_EVERY
    api = Api(emulator.start())
    kubeconfig = emulator.server.write_kubeconfig(tmp_path / "kubeconfig")
    proc = SchedulerProc(kubeconfig, tmp_path / "scheduler.log", *LEADER_FLAGS)
    try:
        proc.wait_ready()
        api.request("POST", "/api/v1/namespaces/default/pods", make_pod("before", cpu="10m"))
        assert wait_for(lambda: _bound(api, "before"), 15), "not scheduling before the outage"
        mark = len(proc.records())
        emulator.stop()
        time.sleep(OUTAGE)
        emulator.start()
        assert wait_for(lambda: proc.events("api_available"), 20), proc.stderr()[-3000:]
        api.request("POST", "/api/v1/namespaces/default/pods", make_pod("after", cpu="10m"))
        assert wait_for(lambda: _bound(api, "after"), 30), "not scheduling after the outage"
        lines = proc.records()[mark:]
    finally:
        code = proc.terminate()
    levels = collections.Counter(str(r["level"]) for r in lines)
    warned = collections.Counter(  # per retrying part: the informers' and relists' per kind
        (str(r["logger"]), str(r["event"]), str(r.get("kind", "")))
        for r in lines
        if r["level"] == "warning"
    )
    errors = [r["event"] for r in lines if r["level"] in ("error", "critical")]
    figures.record(
        outage_s=OUTAGE, lines=len(lines), **{f"{k}_lines": v for k, v in levels.items()}
    )
    assert errors == ["api_unavailable"], errors
    assert not [r for r in lines if str(r["logger"]).startswith("kopf")], "kopf's own lines"
    repeated = {key: n for key, n in warned.items() if n > 1}
    assert not repeated, f"warned more than once per part within {WARN_EVERY} s: {repeated}"
    assert [r["event"] for r in lines if r["event"] == "api_available"] == ["api_available"]
    # The parts that retried while it was away (kopf's ten watches as one).
    assert {"watch_failed", "kopf_request_retry"} <= {event for _, event, _ in warned}
    proc.assert_clean_exit(code)
