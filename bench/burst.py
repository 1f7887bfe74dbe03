"""The two sides of a benchmark burst, shared by :mod:`bench.e2e` and :mod:`bench.real`:
creating the pods with many creates in flight, each stamped when its create returned, and
a pod watch stamping each bind as it arrives; then the figures the two make together."""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import aiohttp

from scheduler.kube.binder import BinderOptions
from scheduler.sim import workload

if TYPE_CHECKING:
    import ssl

PODS_PATH = "/api/v1/pods"
CREATE_CONCURRENCY = 32
"""Creates in flight during the burst."""
BIND_CONCURRENCY = BinderOptions().concurrency
"""Binds in flight, for the scheduler (``--bind-concurrency``) and the ceiling alike."""
STALL_SECONDS = 30.0
"""A run in which no pod gets bound for this long after ready is abandoned (incomplete)."""


async def create_timed(
    session: aiohttp.ClientSession, objects: list[dict[str, Any]], *, concurrency: int
) -> dict[str, float]:
    """POST every pod (to its namespace), ``concurrency`` in flight, in order; pod name →
    when its create returned. Raises RuntimeError with the server's message on the first
    failure."""
    todo = list(reversed(objects))
    created: dict[str, float] = {}

    async def worker() -> None:
        while todo:
            obj = todo.pop()
            async with session.post(workload.collection_path(obj), json=obj) as resp:
                if resp.status >= 300:
                    raise RuntimeError(f"create: {resp.status} {await resp.text()}")
                await resp.read()
            created[obj["metadata"]["name"]] = time.perf_counter()

    async with asyncio.TaskGroup() as tg:
        for _ in range(concurrency):
            tg.create_task(worker())
    return created


class BindWatch:
    """A pod watch that stamps each pod's first event carrying a ``nodeName`` with its
    arrival time: all pods at ``url`` or those ``path`` lists, over ``tls`` when given (an
    API server)."""

    def __init__(
        self, url: str, expect: int, *, path: str = PODS_PATH, tls: ssl.SSLContext | None = None
    ) -> None:
        self.url = url
        self.expect = expect
        self.path = path
        self.tls = tls
        self._first_bind: dict[str, float] = {}
        self.done = asyncio.Event()
        self.ready = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    async def start(self, resource_version: str) -> None:
        self._task = asyncio.create_task(self._run(resource_version))
        await self.ready.wait()

    async def _run(self, rv: str) -> None:
        timeout = aiohttp.ClientTimeout(total=None, sock_read=None)
        connector = None if self.tls is None else aiohttp.TCPConnector(ssl=self.tls)
        async with aiohttp.ClientSession(self.url, timeout=timeout, connector=connector) as s:
            # The API server ends a watch whose reader falls behind a fast burst; resume it
            # from the last resource version seen, as an informer would.
            while True:
                params = {"watch": "true", "resourceVersion": rv}
                async with s.get(self.path, params=params) as resp:
                    resp.raise_for_status()
                    self.ready.set()
                    while line := await resp.content.readline():
                        arrived = time.perf_counter()
                        event = json.loads(line)
                        obj = event["object"]
                        if event["type"] == "ERROR":
                            raise RuntimeError(f"pod watch failed: {obj}")
                        rv = obj["metadata"]["resourceVersion"]
                        if obj.get("spec", {}).get("nodeName"):
                            # The first only: a bound pod's later events carry its node too.
                            self._first_bind.setdefault(obj["metadata"]["name"], arrived)
                            if len(self._first_bind) >= self.expect:
                                self.done.set()

    async def wait(self, deadline: float, stall: float) -> None:
        """Until every pod is bound, the deadline, or ``stall`` s without a new bind."""
        last_count, last_change = -1, time.perf_counter()
        while not self.done.is_set():
            now = time.perf_counter()
            if len(self._first_bind) != last_count:
                last_count, last_change = len(self._first_bind), now
            if now >= deadline or now - last_change >= stall:
                return
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.done.wait(), 0.5)

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError, aiohttp.ClientError):
                await self._task

    def bind_times(self) -> dict[str, float]:
        """Pod name → arrival time of its first event with a node."""
        return dict(self._first_bind)


@dataclass(frozen=True)
class BurstBinds:
    """The binds a burst's watch saw, against the creates they answer: the figures every
    end-to-end record starts with."""

    binds: dict[str, float]
    """Pod name → when its first event with a node arrived (:meth:`BindWatch.bind_times`)."""
    created: dict[str, float]
    """Pod name → when its create returned (:func:`create_timed`)."""
    t_create: float
    """When the first create was sent."""
    t_end: float
    """When the run ended: stands in for the last bind when none was seen."""

    @property
    def last(self) -> float:
        return max(self.binds.values(), default=self.t_end)

    @property
    def span(self) -> float:
        """First create → last bind, seconds."""
        return max(self.last - self.t_create, 1e-9)

    @property
    def latencies(self) -> list[float]:
        """Each bound pod's create → bind, seconds."""
        return [t - self.created[name] for name, t in self.binds.items() if name in self.created]

    def counts(self, pods: int) -> dict[str, Any]:
        """``bound``, ``complete`` (all ``pods`` bound) and ``pods_per_s`` over the span."""
        bound = len(self.binds)
        return {
            "bound": bound,
            "complete": bound >= pods,
            "pods_per_s": round(bound / self.span, 1),
        }
