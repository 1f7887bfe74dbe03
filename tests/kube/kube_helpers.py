"""Helpers for the kube tests: pod creation in the emulator and deterministic faults.

Faults are injected by changing ``sim.faults`` from the test thread (plain attribute
writes, seen by the emulator's thread on its next request).
"""

from __future__ import annotations

import asyncio
import itertools
import threading
from typing import TYPE_CHECKING, Any

from scheduler.cycle.ports import BindRequest, BindResult
from scheduler.model.parse_pod import pod_from_raw
from scheduler.queueing.queued_pod import QueuedPodInfo
from scheduler.sim.errors import ApiError as SimApiError
from tests.builders import make_pod

if TYPE_CHECKING:
    from collections.abc import Callable

    from scheduler.kube.client import ApiClient
    from scheduler.model.pod import Pod
    from scheduler.sim.server import SimServer

TOKEN = "test-token-do-not-log"


async def create_pod(api: ApiClient, name: str, **kw: Any) -> Pod:
    """Create a pending pod in ``sim`` and return its record (with the server's UID)."""
    raw = make_pod(name, **kw)
    for key in ("uid", "resourceVersion", "creationTimestamp"):
        raw["metadata"].pop(key, None)
    created = await api.request("POST", "/api/v1/namespaces/default/pods", body=raw)
    return pod_from_raw(created)


class FailFirst:
    """Replaces ``Faults.maybe_fail``: the first ``n`` requests of ``verb`` get ``code``."""

    def __init__(self, sim: SimServer, verb: str, n: int, code: int = 500) -> None:
        self.verb, self.left, self.code = verb, n, code
        self.injected = 0
        self._lock = threading.Lock()
        self._inner: Callable[[str], None] = sim.faults.maybe_fail
        sim.faults.maybe_fail = self  # type: ignore[method-assign]

    def __call__(self, verb: str) -> None:
        if verb == self.verb:
            with self._lock:
                fire = self.left > 0
                if fire:
                    self.left -= 1
                    self.injected += 1
            if fire:
                headers = {"Retry-After": "0"} if self.code == 429 else None
                raise SimApiError(self.code, "Injected", "injected fault", headers=headers)
        self._inner(verb)


_names = itertools.count()


def unique(prefix: str) -> str:
    """A fresh object name."""
    return f"{prefix}-{next(_names)}"


def bind_request(pod: Pod, node: str) -> BindRequest:
    """A BindRequest as the cycle builds it (assumed pod bound for ``node``)."""
    return BindRequest(
        info=QueuedPodInfo(pod=pod, signature=None),
        pod=pod,
        node=node,
        profile="batch-scheduler",
        cycle=1,
        started=0.0,
    )


class Outcomes:
    """A ``BindDone`` that records every call and wakes waiters."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, BindResult, str]] = []
        self.changed = asyncio.Event()

    def __call__(self, request: BindRequest, result: BindResult, message: str) -> None:
        self.calls.append((request.pod.name, result, message))
        self.changed.set()

    async def wait(self, n: int) -> None:
        """Until ``n`` calls were recorded (10 s at most)."""
        async with asyncio.timeout(10.0):
            while len(self.calls) < n:
                self.changed.clear()
                await self.changed.wait()

    def by_pod(self) -> dict[str, BindResult]:
        """Pod name → result."""
        return {name: result for name, result, _ in self.calls}
