"""Cache sync: the initial LIST (kube's ``WaitForCacheSync``), the Replace after a re-list, and
the periodic safety net.

**Initial sync.** Before kopf starts, every kind of ``kinds.Kind`` is LISTed through the API
client, in its order (nodes, the namespaces and workloads, pods), and applied as events, so
the cache is full before kopf has delivered anything. Pods and nodes are LISTed by their
informers (``kube.intake.reflector``), which then watch from that LIST's version: they are
synced when it is applied. kopf lists its kinds again and watches;
applying an object twice is idempotent (an object listed again at a version already
applied is skipped unparsed), and kopf's own LIST covers anything that changed between
ours and its watch. The :class:`Synced` gate opens once kopf has
delivered its own listing of its kinds too (:meth:`CacheSync.wait_for_watch_listing`), as kube's
``WaitForCacheSync`` waits for every informer's initial list to be handled: the scheduling
loop (which waits on the gate) never decides on a half-filled cache, and does not compete
for the CPU with a watch engine still working through thousands of listed objects.
``/readyz`` turns 200 at the same moment.

**Replace.** kube's informers replace their store with every LIST, so a re-list leaves no
ghosts; ours do so through :meth:`CacheSync.replace_listed`. kopf re-lists after a 410 Gone
without emitting DELETED for what vanished in the gap; :meth:`CacheSync.replace` does the
Replace for one kind: a LIST of ours, issued after kopf's (``relist`` says when), and every
cached object it lacks is removed, except

* objects whose resourceVersion is newer than the LIST's (they arrived by watch after the
  LIST's snapshot; resourceVersions are compared as integers, as every real API server
  issues them; anything non-numeric is never removed).

Pods we assumed are no exception: they exist in the API (pending or bound) until deleted,
so one missing from a LIST newer than its version was deleted during a gap; without this
it would hold its node's resources for ever (assumptions never expire, as in kube).

**Safety net.** Every ``interval`` seconds :meth:`CacheSync.repair` LISTs every kind and
removes what the watch and the re-list handling both missed. A LIST can run ahead of a
watch that is merely late (held off, reconnecting), so an object it lacks is removed only
if it is still cached, unchanged, ``REPAIR_GRACE`` seconds later; each one counts in
``batch_scheduler_cache_repairs_total{kind}``, which should stay 0.

Neighbours: ``kube.kinds`` (what is listed, and where), ``kube.listing`` (page size, the
causes), the appliers ``pods``/``nodes``/``objects`` (where listed objects are applied and
removed; :class:`Applier` is what they share), ``relist`` (decides when to
:meth:`CacheSync.replace`), ``operator`` (runs :meth:`CacheSync.initial` before kopf and
:meth:`CacheSync.repair_forever` beside it), ``kube.client`` (the LISTs).
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol

from scheduler import logs
from scheduler.kube import errors
from scheduler.kube.client import backoff_delay
from scheduler.kube.kinds import Kind, key_of
from scheduler.kube.listing import LIST_CHUNK, Cause

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Awaitable, Callable, Iterable

    from scheduler.kube.client import ApiClient
    from scheduler.kube.controller.nodes import NodeEvents
    from scheduler.kube.controller.objects import ObjectEvents
    from scheduler.kube.controller.pods import PodEvents
    from scheduler.metrics.registry import Metrics

__all__ = ["Applier", "CacheSync", "Synced", "list_pages", "newer_or_unknown"]

log = logs.get_logger(__name__)

REPAIR_GRACE = 5.0
"""Seconds the safety net leaves the watch (and the re-list handling) to remove an object
its LIST lacks before removing it itself, as a repair: longer than a watch takes to resume
after a drop or a 410 (kopf's 0.1 s backoff, a LIST, our Replace), so a merely late
watch is not counted as a miss."""
LISTING_QUIET = 2.0
"""Seconds without a listed object from kopf after which its listing counts as delivered
(objects deleted between our LIST and kopf's never come; a failing LIST is retried)."""
LISTING_POLL = 0.05
"""Seconds between checks of kopf's listing progress."""


class Applier(Protocol):
    """What ``pods``, ``nodes`` and ``objects`` offer the sync, keyed by ``kinds.key_of``."""

    def apply(self, event_type: str | None, raw: Mapping[str, object]) -> object:
        """One event; ``None``: a listed object (what it returns is not read)."""

    def remove(self, key: str) -> None:
        """The object is gone from the API."""

    def held(self) -> dict[str, str]:
        """key → resourceVersion of everything cached."""

    def version(self, key: str) -> str | None:
        """The resourceVersion cached for ``key`` (None: not cached)."""


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
    """Every object at ``path``, one page (``LIST_CHUNK`` objects, as kopf's LIST) at a
    time, each with the LIST's resourceVersion: a caller that uses a page before asking for
    the next never holds a whole big cluster's JSON at once (that peak stays in the
    process's RSS)."""
    params: dict[str, str | int | bool] = {"limit": LIST_CHUNK}
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
        params = {"limit": LIST_CHUNK, "continue": str(token)}


class CacheSync:
    """Initial LIST, Replace after re-lists and the periodic safety net for one cache."""

    def __init__(
        self,
        client: ApiClient,
        *,
        pods: PodEvents,
        nodes: NodeEvents,
        synced: Synced,
        interval: float,
        metrics: Metrics,
        objects: Iterable[ObjectEvents] = (),
        informed: Mapping[Kind, tuple[Applier, Callable[[], Awaitable[int]]]] | None = None,
    ) -> None:
        self.client = client
        self.metrics = metrics
        self.pods = pods
        self.nodes = nodes
        by_kind: dict[Kind, Applier] = {Kind.NODES: nodes, Kind.PODS: pods}
        by_kind.update((applier.kind, applier) for applier in objects)
        self.listers: dict[Kind, Callable[[], Awaitable[int]]] = {}
        """Kinds an informer keeps (``kube.intake``): its applier stands for the controller's,
        and its own LIST (which it watches from) is the initial one."""
        for kind, (applier, lister) in (informed or {}).items():
            by_kind[kind] = applier
            self.listers[kind] = lister
        self.appliers: dict[Kind, Applier] = {k: by_kind[k] for k in Kind if k in by_kind}
        """The kinds this sync keeps, in ``Kind`` order (nodes first, pods last)."""
        self.synced = synced
        self.interval = interval
        self.expected: dict[str, int] = dict.fromkeys(self.appliers, 0)
        """Objects in our initial LIST, per kind: what kopf's own listing should deliver."""
        self.listed: dict[str, int] = dict.fromkeys(self.appliers, 0)
        """Listed objects kopf has delivered so far, per kind (:meth:`watch_listed`)."""

    async def initial(self) -> None:
        """LIST every kind in order (retrying API errors with backoff) and apply them."""
        attempt = 0
        counts: dict[str, int] = {}
        while True:
            try:
                # In Kind order (see ``kinds``). Each page is applied as it comes; after a
                # failure the LISTs start over, and what was applied already is skipped
                # (same resourceVersion).
                for kind, applier in self.appliers.items():
                    lister = self.listers.get(kind)
                    if lister is not None:
                        counts[kind] = await lister()
                    else:
                        counts[kind] = await self._apply_pages(kind.path, applier.apply)
                break
            except errors.ApiError as exc:
                delay = backoff_delay(attempt, base=0.2, cap=5.0)
                attempt += 1
                self.client.retry_log.retrying(
                    "initial_list_failed",
                    source=str(kind),
                    logger=log,
                    kind=kind,
                    error=str(exc),
                    retry_in=round(delay, 2),
                )
                await asyncio.sleep(delay)
        # kopf's own listing is awaited for the kinds it watches only.
        self.expected = {kind: n for kind, n in counts.items() if kind not in self.listers}
        log.info("caches_listed", **counts)

    async def _apply_pages(
        self, path: str, apply: Callable[[str | None, Mapping[str, object]], object]
    ) -> int:
        count = 0
        async for page, _ in list_pages(self.client, path):
            for raw in page:
                apply(None, raw)
            count += len(page)
        return count

    def watch_listed(self, kind: str) -> None:
        """kopf delivered one object of its initial listing (or of a re-list) of ``kind``."""
        self.listed[kind] = self.listed.get(kind, 0) + 1

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

    async def replace(self, kind: Kind, *, cause: Cause, since: float | None = None) -> int:
        """kube's Replace for ``kind``: LIST it and remove every cached object the LIST lacks,
        unless newer than the LIST (see the module docstring); returns how many went.

        Must be called after kopf's own LIST was answered, so that ours is at least as new:
        what vanished before kopf's LIST gets no DELETED event, what vanished after it does.
        ``since`` (loop time of the signal that asked for it) only feeds the log line."""
        listed, version = await self._listed(kind)
        # From here on await-free: no event can interleave with the comparison. (Events
        # between the pages only bring objects newer than the LIST, which stay.)
        return self.replace_listed(kind, listed, version, cause=cause, since=since)

    def replace_listed(
        self, kind: Kind, listed: set[str], version: str, *, cause: Cause, since: float | None
    ) -> int:
        """The Replace after a LIST at ``version`` whose keys are ``listed`` (an informer's
        re-list); await-free, see :meth:`replace`."""
        gone = self._gone(kind, listed, version)
        self._remove(kind, gone)
        if gone:
            now = asyncio.get_running_loop().time()
            log.info(
                "reconcile_removed",
                cause=cause,
                version=version,
                after_s=None if since is None else round(now - since, 3),
                **_removed(kind, gone),
            )
        return len(gone)

    async def repair_forever(self) -> None:
        """The safety net: :meth:`repair` every ``interval`` seconds (0: never)."""
        if self.interval <= 0:
            return
        while True:
            await asyncio.sleep(self.interval)
            try:
                await self.repair()
            except errors.ApiError as exc:
                self.client.retry_log.retrying("reconcile_failed", logger=log, error=str(exc))

    async def repair(self, *, grace: float = REPAIR_GRACE) -> dict[Kind, int]:
        """LIST every kind; remove what they lack and is still cached, unchanged,
        ``grace`` seconds later (the watch was not merely late); count those as repairs."""
        suspects = await self.suspects()
        if any(suspects.values()):
            await asyncio.sleep(grace)
        return self.remove_stale(suspects)

    async def suspects(self) -> dict[Kind, dict[str, str]]:
        """Per kind, key → cached resourceVersion of what a LIST shows deleted (nodes first)."""
        suspects: dict[Kind, dict[str, str]] = {}
        for kind in self.appliers:
            listed, version = await self._listed(kind)
            suspects[kind] = self._gone(kind, listed, version)
        return suspects

    def remove_stale(self, suspects: Mapping[Kind, Mapping[str, str]]) -> dict[Kind, int]:
        """Remove the ``suspects`` still cached at the same version; they are repairs."""
        repaired: dict[Kind, int] = {}
        fields: dict[str, object] = {}
        for kind, gone in suspects.items():
            version = self.appliers[kind].version
            stale = [key for key, held in gone.items() if version(key) == held]
            self._remove(kind, stale)
            repaired[kind] = len(stale)
            fields.update(_removed(kind, stale))
            if stale:
                self.metrics.cache_repairs.labels(kind=kind.label).inc(len(stale))
        if any(repaired.values()):
            # Something both the watch and the re-list handling missed: worth a warning.
            log.warning("reconcile_removed", cause=Cause.PERIODIC, **fields)
        return repaired

    def _gone(self, kind: Kind, listed: set[str], version: str) -> dict[str, str]:
        """key → cached resourceVersion of the objects a LIST at ``version`` shows deleted."""
        applier = self.appliers.get(kind)
        held = {} if applier is None else applier.held()
        return {
            key: cached
            for key, cached in held.items()
            if key not in listed and not newer_or_unknown(cached, version)
        }

    def _remove(self, kind: Kind, keys: Iterable[str]) -> None:
        applier = self.appliers.get(kind)
        if applier is None:
            return
        for key in keys:
            applier.remove(key)

    async def _listed(self, kind: Kind) -> tuple[set[str], str]:
        """The keys (``kinds.key_of``) of every object of ``kind``, and the LIST's version."""
        keys: set[str] = set()
        version = ""
        if kind not in self.appliers:
            return keys, version  # not kept by this sync: nothing to compare
        async for page, page_version in list_pages(self.client, kind.path):
            keys.update(key_of(kind, raw) for raw in page)
            version = page_version
        return keys, version


def _removed(kind: Kind, keys: Iterable[str]) -> dict[str, object]:
    """The ``reconcile_removed`` field for ``kind``: names (few, worth reading), or the
    number of pods (uids say nothing to a reader)."""
    if kind is Kind.PODS:
        return {"pods": len(list(keys))}
    return {str(kind): sorted(keys)}
