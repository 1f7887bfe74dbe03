"""A simulated kubelet for ``bench.real --kubelet-load``: each bound pod marked Running, then Ready.

The real-API benchmark runs without kubelets, so a scheduler sees two events per pod (ADDED
and its own bind's MODIFIED). A real cluster's kubelets then write each pod's status: one
update when its containers start (phase Running, startTime, container statuses, Ready
False) and one when they turn ready (Ready and ContainersReady True), as the kubelet's
status manager does in a sandbox-and-start that takes a moment. The scheduler must read and
skip those: they cost the intake without changing anything it reads but phase and
startTime. This kubelet watches the namespace's pods and, for each pod first seen with a
``nodeName``, sends those two ``PATCH .../status`` (merge patches, ``updates`` per pod: 2,
or 1 for Ready at once), ``concurrency`` at a time, as the node's kubelet would.

Neighbours: ``bench.real`` (runs one beside every measured scheduler when asked),
``bench.burst`` (the same watch resumption), ``bench.chaos`` (through API server restarts:
it reconnects, and re-lists after a 410).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from typing import TYPE_CHECKING, Any

import aiohttp

if TYPE_CHECKING:
    import ssl

__all__ = ["SimulatedKubelet"]

MERGE_PATCH = "application/merge-patch+json"


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def status_patch(pod: dict[str, Any], *, ready: bool) -> dict[str, Any]:
    """The status a kubelet writes for ``pod``: started (``ready`` False) or ready."""
    flag = "True" if ready else "False"
    now = _now()
    containers = (pod.get("spec") or {}).get("containers") or []
    conditions = [
        ("PodReadyToStartContainers", "True"),
        ("Initialized", "True"),
        ("Ready", flag),
        ("ContainersReady", flag),
        ("PodScheduled", "True"),
    ]
    return {
        "status": {
            "phase": "Running",
            "hostIP": "10.0.0.1",
            "podIP": "10.244.0.10",
            "startTime": now,
            "conditions": [
                {"type": t, "status": s, "lastProbeTime": None, "lastTransitionTime": now}
                for t, s in conditions
            ],
            "containerStatuses": [
                {
                    "name": c.get("name", "c"),
                    "image": c.get("image", ""),
                    "imageID": "",
                    "containerID": "containerd://0",
                    "ready": ready,
                    "started": True,
                    "restartCount": 0,
                    "state": {"running": {"startedAt": now}},
                }
                for c in containers
            ],
        }
    }


class SimulatedKubelet:
    """Marks each bound pod under ``path`` Running and Ready; see the module docstring."""

    def __init__(
        self,
        url: str,
        path: str,
        *,
        tls: ssl.SSLContext | None,
        updates: int = 2,
        concurrency: int = 16,
    ) -> None:
        if updates not in (1, 2):
            raise ValueError("a kubelet writes one or two status updates per pod")
        self.url = url
        self.path = path
        self.tls = tls
        self.updates = updates
        self.concurrency = concurrency
        self.sent = 0
        self.failed = 0
        self._seen: set[str] = set()
        self._task: asyncio.Task[None] | None = None
        self.ready = asyncio.Event()

    async def start(self, resource_version: str) -> None:
        self._task = asyncio.create_task(self._run(resource_version))
        await self.ready.wait()

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError, aiohttp.ClientError):
                await self._task

    async def _run(self, rv: str) -> None:
        timeout = aiohttp.ClientTimeout(total=None, sock_read=None)
        connector = aiohttp.TCPConnector(ssl=self.tls if self.tls is not None else False)
        queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        async with aiohttp.ClientSession(self.url, timeout=timeout, connector=connector) as s:
            workers = [asyncio.create_task(self._work(s, queue)) for _ in range(self.concurrency)]
            try:
                while True:
                    try:
                        rv = await self._watch(s, rv, queue)
                    except (aiohttp.ClientError, OSError, TimeoutError):
                        # The API server restarting or stalled: a kubelet keeps trying.
                        await asyncio.sleep(0.5)
                        continue
                    if not rv:
                        rv = await self._relist(s, queue)
            finally:
                for worker in workers:
                    worker.cancel()
                await asyncio.gather(*workers, return_exceptions=True)

    async def _watch(
        self, s: aiohttp.ClientSession, rv: str, queue: asyncio.Queue[dict[str, Any]]
    ) -> str:
        """One watch from ``rv``; the version to go on from ("" after a 410: re-list)."""
        params = {"watch": "true", "resourceVersion": rv}
        async with s.get(self.path, params=params) as resp:
            if resp.status == 410:
                return ""
            resp.raise_for_status()
            self.ready.set()
            while line := await resp.content.readline():
                event = json.loads(line)
                obj = event["object"]
                if event["type"] == "ERROR":
                    # 410: re-list; anything else (a 500 of the API server's etcd watch,
                    # say): watch again from where this one got to, as client-go does.
                    return "" if obj.get("code") == 410 else rv
                rv = obj["metadata"]["resourceVersion"]
                if event["type"] != "DELETED":
                    self._take(obj, queue)
        return rv

    async def _relist(self, s: aiohttp.ClientSession, queue: asyncio.Queue[dict[str, Any]]) -> str:
        """After a 410: every pod listed, the bound ones not seen yet queued; the version."""
        async with s.get(self.path) as resp:
            resp.raise_for_status()
            listed = await resp.json()
        for obj in listed.get("items") or []:
            self._take(obj, queue)
        return str(listed["metadata"]["resourceVersion"])

    def _take(self, obj: dict[str, Any], queue: asyncio.Queue[dict[str, Any]]) -> None:
        name = obj["metadata"]["name"]
        if name not in self._seen and (obj.get("spec") or {}).get("nodeName"):
            self._seen.add(name)
            queue.put_nowait(obj)

    async def _work(self, s: aiohttp.ClientSession, queue: asyncio.Queue[dict[str, Any]]) -> None:
        while True:
            pod = await queue.get()
            path = f"{self.path}/{pod['metadata']['name']}/status"
            steps = (False, True) if self.updates == 2 else (True,)
            for ready in steps:
                body = json.dumps(status_patch(pod, ready=ready))
                headers = {"Content-Type": MERGE_PATCH}
                try:
                    async with s.patch(path, data=body, headers=headers) as r:
                        await r.read()
                        ok = r.status < 300
                except (aiohttp.ClientError, OSError, TimeoutError):
                    ok = False  # the API server away: this update is lost, as a kubelet's
                if ok:
                    self.sent += 1
                else:
                    self.failed += 1
