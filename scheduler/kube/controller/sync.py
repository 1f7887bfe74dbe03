"""Cache sync: the initial LIST (kube's ``WaitForCacheSync``) and the periodic reconcile.

**Initial sync.** Before kopf starts, nodes and then pods are LISTed through the API client
and applied as events, so the cache is full before kopf has delivered anything. kopf then
lists again and watches; applying an object twice is idempotent (an object listed again
at a version already applied is skipped unparsed), and kopf's own LIST covers anything
that changed between ours and its watch. The :class:`Synced` gate opens once kopf has
delivered its own listing too (:meth:`CacheSync.wait_for_watch_listing`), as kube's
``WaitForCacheSync`` waits for the informers' initial lists to be handled: the scheduling
loop (which waits on the gate) never decides on a half-filled cache, and does not compete
for the CPU with a watch engine still working through thousands of listed objects.
``/readyz`` turns 200 at the same moment.

**Reconcile.** After a watch expires with 410 Gone, kopf re-lists but does not emit
DELETED for objects that vanished in between, so the cache would keep ghost pods holding
resources and ghost nodes attracting pods. Every ``interval`` seconds a LIST compares uids
and names with what we hold and removes the missing ones, except

* objects whose resourceVersion is newer than the LIST's (they arrived by watch after the
  LIST's snapshot; resourceVersions are compared as integers, as every real API server
  issues them; anything non-numeric is never removed).

Pods we assumed are no exception: they exist in the API (pending or bound) until deleted,
so one missing from a LIST newer than its version was deleted during a gap; without this
it would hold its node's resources for ever (assumptions never expire, as in kube).

The first reconcile runs soon after start: an object deleted between our initial LIST and
kopf's own never gets a DELETED event either.

Neighbours: ``pods``/``nodes`` (where listed objects are applied and removed), ``operator``
(runs :meth:`CacheSync.initial` before kopf and :meth:`CacheSync.reconcile_forever` beside
it), ``kube.client`` (the LISTs).
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from scheduler import logs
from scheduler.kube import errors
from scheduler.kube.client import backoff_delay

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Callable

    from scheduler.kube.client import ApiClient
    from scheduler.kube.controller.nodes import NodeEvents
    from scheduler.kube.controller.pods import PodEvents

log = logs.get_logger(__name__)

PODS = "/api/v1/pods"
NODES = "/api/v1/nodes"
PAGE = 500
"""Objects per LIST page (``limit``): bounds one response's size on big clusters."""
FIRST_RECONCILE = 10.0
"""Seconds after start of the first reconcile (then every ``interval``)."""
LISTING_QUIET = 2.0
"""Seconds without a listed object from kopf after which its listing counts as delivered
(objects deleted between our LIST and kopf's never come; a failing LIST is retried)."""
LISTING_POLL = 0.05
"""Seconds between checks of kopf's listing progress."""


class Synced:
    """A Gate (``cycle.loop.Gate``) that opens once, when the initial LIST is applied."""

    def __init__(self) -> None:
        self._event = asyncio.Event()

    def is_open(self) -> bool:
        return self._event.is_set()

    async def wait_open(self) -> None:
        await self._event.wait()

    def open(self) -> None:
        self._event.set()


def newer_or_unknown(version: str, listed: str) -> bool:
    """Whether ``version`` may postdate a LIST at ``listed`` (so the object must stay)."""
    if not (version.isdigit() and listed.isdigit()):
        return True
    return int(version) > int(listed)


async def list_pages(
    client: ApiClient, path: str
) -> AsyncIterator[tuple[list[dict[str, Any]], str]]:
    """Every object at ``path``, one page (``PAGE`` objects) at a time, each with the LIST's
    resourceVersion: a caller that uses a page before asking for the next never holds a
    whole big cluster's JSON at once (that peak stays in the process's RSS)."""
    params: dict[str, str | int | bool] = {"limit": PAGE}
    version = ""
    while True:
        body = await client.request("GET", path, params=params)
        page = [item for item in body.get("items") or [] if isinstance(item, dict)]
        meta = body.get("metadata")
        meta = meta if isinstance(meta, Mapping) else {}
        # With continue tokens every page is served from the first page's snapshot.
        version = version or str(meta.get("resourceVersion") or "")
        del body
        yield page, version
        token = meta.get("continue")
        if not token:
            return
        params = {"limit": PAGE, "continue": str(token)}


class CacheSync:
    """Initial LIST and periodic reconcile for one scheduler's cache."""

    def __init__(
        self,
        client: ApiClient,
        *,
        pods: PodEvents,
        nodes: NodeEvents,
        synced: Synced,
        interval: float,
    ) -> None:
        self.client = client
        self.pods = pods
        self.nodes = nodes
        self.synced = synced
        self.interval = interval
        self.expected: dict[str, int] = {"nodes": 0, "pods": 0}
        """Objects in our initial LIST, per kind: what kopf's own listing should deliver."""
        self.listed: dict[str, int] = {"nodes": 0, "pods": 0}
        """Listed objects kopf has delivered so far, per kind (:meth:`watch_listed`)."""

    async def initial(self) -> None:
        """LIST nodes then pods (retrying API errors with backoff) and apply them."""
        attempt = 0
        while True:
            try:
                # Nodes first: pods then land on known nodes instead of creating ghosts.
                # Each page is applied as it comes; after a failure the LIST starts over,
                # and what was applied already is skipped (same resourceVersion).
                nodes = await self._apply_pages(NODES, self.nodes.apply)
                pods = await self._apply_pages(PODS, self.pods.apply)
                break
            except errors.ApiError as exc:
                delay = backoff_delay(attempt, base=0.2, cap=5.0)
                attempt += 1
                log.warning("initial_list_failed", error=str(exc), retry_in=round(delay, 2))
                await asyncio.sleep(delay)
        self.expected = {"nodes": nodes, "pods": pods}
        log.info("caches_listed", nodes=nodes, pods=pods)

    async def _apply_pages(
        self, path: str, apply: Callable[[str | None, Mapping[str, object]], None]
    ) -> int:
        count = 0
        async for page, _ in list_pages(self.client, path):
            for raw in page:
                apply(None, raw)
            count += len(page)
        return count

    def watch_listed(self, kind: str) -> None:
        """kopf delivered one object of its initial listing (or of a re-list) of ``kind``."""
        self.listed[kind] += 1

    async def wait_for_watch_listing(self, clock: Callable[[], float]) -> None:
        """Open the gate once kopf delivered as many listed objects as our LIST held, or
        once its listing has been quiet for ``LISTING_QUIET`` seconds."""
        last_progress, last_seen = clock(), -1
        while True:
            seen = sum(self.listed.values())
            if all(self.listed[kind] >= count for kind, count in self.expected.items()):
                break
            now = clock()
            if seen != last_seen:
                last_progress, last_seen = now, seen
            elif now - last_progress >= LISTING_QUIET:
                log.info("watch_listing_quiet", expected=self.expected, listed=self.listed)
                break
            await asyncio.sleep(LISTING_POLL)
        self.synced.open()
        log.info("caches_synced", **self.expected)

    async def reconcile_forever(self) -> None:
        """Reconcile every ``interval`` seconds until cancelled (``interval`` 0: never)."""
        if self.interval <= 0:
            return
        # The first one comes early: an object deleted between our initial LIST and kopf's
        # own is in the cache but will never get a DELETED event.
        delay = min(self.interval, FIRST_RECONCILE)
        while True:
            await asyncio.sleep(delay)
            delay = self.interval
            try:
                await self.reconcile()
            except errors.ApiError as exc:
                log.warning("reconcile_failed", error=str(exc))

    async def reconcile(self) -> tuple[int, int]:
        """One LIST-and-compare; returns (nodes removed, pods removed)."""
        listed_nodes, node_version = await self._listed(NODES, "name")
        listed_pods, pod_version = await self._listed(PODS, "uid")
        # From here on await-free: no event can interleave with the comparison. (Events
        # between the pages only bring objects newer than the LIST, which stay.)
        gone_nodes = [
            name
            for name, node in self.nodes.nodes.items()
            if name not in listed_nodes
            and not newer_or_unknown(node.resource_version, node_version)
        ]
        for name in gone_nodes:
            self.nodes.delete(name)
        gone_pods = [
            uid
            for uid, version in self.pods.versions.items()
            if uid not in listed_pods and not newer_or_unknown(version, pod_version)
        ]
        for uid in gone_pods:
            self.pods.delete(uid)
        if gone_nodes or gone_pods:
            log.info("reconcile_removed", nodes=gone_nodes, pods=len(gone_pods))
        return len(gone_nodes), len(gone_pods)

    async def _listed(self, path: str, key: str) -> tuple[set[str], str]:
        """The ``metadata.<key>`` of every object at ``path``, and the LIST's version."""
        keys: set[str] = set()
        version = ""
        async for page, page_version in list_pages(self.client, path):
            keys.update(_meta(raw, key) for raw in page)
            version = page_version
        return keys, version


def _meta(raw: Mapping[str, object], key: str) -> str:
    meta = raw.get("metadata")
    value = meta.get(key) if isinstance(meta, Mapping) else None
    return value if isinstance(value, str) else ""
