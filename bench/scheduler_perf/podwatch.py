"""A pod informer for the runner: every pod of the cluster, as kube's test sees them.

kube's scheduler_perf shares the scheduler's pod informer: the throughput collector and
the steady-state mode count a pod as scheduled when an add or update event shows
``spec.nodeName`` set where the old object (if any) had none, and barriers poll the
lister once a second for scheduled (``nodeName`` set), attempted (a ``PodScheduled``
condition) and unattempted pods. Here the scheduler is another process, so the runner keeps
its own list-then-watch of ``/api/v1/pods`` and calls the same handlers on the same
transitions. Each event decodes only the fields read (msgspec), so the watch stays cheap
beside the measured scheduler.

Neighbours: :mod:`bench.scheduler_perf.collector` (throughput), :mod:`bench.scheduler_perf.executor`
(barriers, steady state).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

import aiohttp
import msgspec

if TYPE_CHECKING:
    from bench.scheduler_perf.api import Api

PODS = "/api/v1/pods"


class _Meta(msgspec.Struct):
    name: str = ""
    namespace: str = ""
    labels: dict[str, str] = {}
    resourceVersion: str = ""


class _Condition(msgspec.Struct):
    type: str = ""


class _Status(msgspec.Struct):
    conditions: list[_Condition] = []


class _Spec(msgspec.Struct):
    nodeName: str = ""


class _Pod(msgspec.Struct):
    metadata: _Meta = msgspec.field(default_factory=_Meta)
    spec: _Spec = msgspec.field(default_factory=_Spec)
    status: _Status = msgspec.field(default_factory=_Status)


class _Event(msgspec.Struct):
    type: str
    object: msgspec.Raw


class _List(msgspec.Struct):
    items: list[_Pod] = []
    metadata: _Meta = msgspec.field(default_factory=_Meta)


_EVENT = msgspec.json.Decoder(_Event)
_POD = msgspec.json.Decoder(_Pod)
_LIST = msgspec.json.Decoder(_List)


@dataclass(frozen=True, slots=True)
class PodInfo:
    """What the runner reads of a pod."""

    namespace: str
    name: str
    labels: Mapping[str, str]
    node_name: str
    attempted: bool

    def matches(self, selector: Mapping[str, str]) -> bool:
        """kube's ``labelsMatch``: every required label has the required value."""
        return all(self.labels.get(k) == v for k, v in selector.items())


Handler = Callable[[PodInfo | None, PodInfo], None]
"""Called with (old or None, new) for every add and update, in event order."""


def _info(pod: _Pod) -> PodInfo:
    return PodInfo(
        pod.metadata.namespace,
        pod.metadata.name,
        pod.metadata.labels,
        pod.spec.nodeName,
        any(c.type == "PodScheduled" for c in pod.status.conditions),
    )


def became_scheduled(old: PodInfo | None, new: PodInfo) -> bool:
    """The transition kube's collectors count: ``nodeName`` set now, not before."""
    return (old is None or not old.node_name) and bool(new.node_name)


class PodWatch:
    """List, then watch every pod; call the handlers; answer barrier counts."""

    def __init__(self, api: Api) -> None:
        self.api = api
        self.pods: dict[tuple[str, str], PodInfo] = {}
        self.events = 0
        self._handlers: list[Handler] = []
        self._version = ""
        self._task: asyncio.Task[None] | None = None

    def add_handler(self, handler: Handler) -> Callable[[], None]:
        """Register ``handler``; the returned function removes it."""
        self._handlers.append(handler)
        return lambda: self._handlers.remove(handler)

    async def start(self) -> None:
        await self._relist()
        self._task = asyncio.create_task(self._watch(), name="pod watch")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    def select(self, namespaces: set[str] | None, selector: Mapping[str, str]) -> Iterator[PodInfo]:
        """Pods of ``namespaces`` (None: all) whose labels match ``selector``."""
        for pod in self.pods.values():
            if (namespaces is None or pod.namespace in namespaces) and pod.matches(selector):
                yield pod

    def counts(self, namespace: str, selector: Mapping[str, str]) -> tuple[int, int, int]:
        """kube's ``getScheduledPods`` for one namespace: (scheduled, attempted but not
        scheduled, unattempted)."""
        scheduled = attempted = unattempted = 0
        for pod in self.select({namespace}, selector):
            if pod.node_name:
                scheduled += 1
            elif pod.attempted:
                attempted += 1
            else:
                unattempted += 1
        return scheduled, attempted, unattempted

    def _apply(self, new: PodInfo) -> None:
        key = (new.namespace, new.name)
        old = self.pods.get(key)
        self.pods[key] = new
        for handler in tuple(self._handlers):
            handler(old, new)

    async def _relist(self) -> None:
        raw = await self.api.session.get(PODS, params={"resourceVersion": "0"})
        async with raw as resp:
            body = await resp.read()
            if resp.status >= 300:
                raise RuntimeError(f"list pods: {resp.status} {body[:300]!r}")
        listed = _LIST.decode(body)
        seen = set()
        for pod in listed.items:
            info = _info(pod)
            seen.add((info.namespace, info.name))
            if self.pods.get((info.namespace, info.name)) != info:
                self._apply(info)
        for key in set(self.pods) - seen:
            del self.pods[key]
        self._version = listed.metadata.resourceVersion

    async def _watch(self) -> None:
        while True:
            params = {
                "watch": "true",
                "resourceVersion": self._version,
                "allowWatchBookmarks": "true",
                "timeoutSeconds": "3600",
            }
            gone = False
            try:
                timeout = aiohttp.ClientTimeout(total=None, sock_read=None)
                async with self.api.session.get(PODS, params=params, timeout=timeout) as resp:
                    if resp.status == 410:
                        gone = True
                    else:
                        resp.raise_for_status()
                        gone = await self._read(resp)
            except (TimeoutError, aiohttp.ClientError, OSError):
                await asyncio.sleep(0.2)
            if gone:
                await self._relist()

    async def _read(self, resp: aiohttp.ClientResponse) -> bool:
        """Apply the stream's events; True when the server says the version is gone."""
        async for line in resp.content:
            if not line.strip():
                continue
            event = _EVENT.decode(line)
            if event.type == "ERROR":
                return b'"code":410' in bytes(event.object)
            pod = _POD.decode(event.object)
            self._version = pod.metadata.resourceVersion or self._version
            if event.type == "BOOKMARK":
                continue
            self.events += 1
            info = _info(pod)
            if event.type == "DELETED":
                self.pods.pop((info.namespace, info.name), None)
            else:
                self._apply(info)
        return False
