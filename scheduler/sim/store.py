"""The versioned object store: one resourceVersion counter, history, and watch fan-out.

Semantics follow kube-apiserver's watch cache:

* every write takes the next value of one global counter as its resourceVersion;
* stored objects are never mutated: a write stores a new dict, so watch events and
  list responses can share them, and each version's JSON is serialized once (lazily)
  and reused by every watcher and list;
* a bounded ring of changes serves watch resumes; a resume from a version older than
  the ring (or from before :meth:`Store.compact`) fails with 410 Expired;
* watchers with selectors see an object that stops matching as DELETED (with its
  previous content and the new version) and one that starts matching as ADDED.

Everything here runs on the server's event loop thread; no locks.
"""

from __future__ import annotations

import asyncio
import json
import random
import time
import uuid
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from scheduler.sim import errors
from scheduler.sim.discovery import EVENTS_V1, NAMESPACES, RESOURCES, ResourceType
from scheduler.sim.events import to_v1

if TYPE_CHECKING:
    from collections.abc import Iterable

    from scheduler.sim.selectors import Predicate

ADDED, MODIFIED, DELETED = "ADDED", "MODIFIED", "DELETED"
Key = tuple[str, str]  # (namespace or "", name)
Transform = Callable[[str, "Record"], bytes]  # (event type, record) -> watch line
_NAME_CHARS = "bcdfghjklmnpqrstvwxz2456789"  # kube's generateName alphabet


def now_rfc3339() -> str:
    """Current time as kube writes metav1.Time: seconds precision, UTC, "Z"."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def dumps(obj: Any) -> bytes:
    """Compact JSON bytes."""
    return json.dumps(obj, separators=(",", ":")).encode()


def render(rt: ResourceType, obj: dict[str, Any]) -> dict[str, Any]:
    """A stored (bare) object as clients see it: kind and apiVersion first."""
    if rt is EVENTS_V1:
        obj = to_v1(obj)
    return {"kind": rt.kind, "apiVersion": rt.api_version, **obj}


class Record:
    """One stored version of one object, with its JSON computed at most once."""

    __slots__ = ("_raw", "obj")

    def __init__(self, obj: dict[str, Any]) -> None:
        self.obj = obj
        self._raw: bytes | None = None

    @property
    def raw(self) -> bytes:
        """JSON of the bare object (no kind/apiVersion)."""
        if self._raw is None:
            self._raw = dumps(self.obj)
        return self._raw

    def rendered(self, rt: ResourceType) -> bytes:
        """JSON with kind and apiVersion, spliced into the cached bytes when possible."""
        if rt is EVENTS_V1:
            return dumps(render(rt, self.obj))
        head = b'{"kind":"%s","apiVersion":"%s"' % (rt.kind.encode(), rt.api_version.encode())
        raw = self.raw
        return head + b"}" if raw == b"{}" else head + b"," + raw[1:]


class Change:
    """One committed write: what a watcher is told about."""

    __slots__ = ("_lines", "key", "prev", "record", "rv", "storage", "type")

    def __init__(
        self, rv: int, type_: str, storage: str, key: Key, record: Record, prev: Record | None
    ) -> None:
        self.rv = rv
        self.type = type_
        self.storage = storage
        self.key = key
        self.record = record
        self.prev = prev
        self._lines: dict[tuple[str, ResourceType], bytes] = {}

    def line(self, type_: str, rt: ResourceType, record: Record | None = None) -> bytes:
        """The newline-terminated watch event, cached per (type, view) for the fan-out."""
        if record is not None:  # a one-off (stopped-matching DELETED): not cached
            return b'{"type":"%s","object":%s}\n' % (type_.encode(), record.rendered(rt))
        cache_key = (type_, rt)
        line = self._lines.get(cache_key)
        if line is None:
            line = b'{"type":"%s","object":%s}\n' % (type_.encode(), self.record.rendered(rt))
            self._lines[cache_key] = line
        return line


class Watcher:
    """A watch stream's queue; the HTTP handler drains ``buffer`` when ``wake`` is set."""

    MAX_BUFFERED = 500_000  # a watcher this far behind is dropped; the client re-watches

    def __init__(
        self,
        rt: ResourceType,
        namespace: str | None,
        pred: Predicate | None,
        transform: Transform | None = None,
    ) -> None:
        self.rt = rt
        self.transform = transform
        self.namespace = namespace
        self.pred = pred
        self.buffer: list[bytes] = []
        self.wake = asyncio.Event()
        self.closed = False
        self.sent_rv = 0

    def offer(self, ch: Change) -> None:
        """Queue the event this watcher should see for ``ch``, if any."""
        if self.namespace is not None and ch.key[0] != self.namespace:
            return
        pred = self.pred
        type_, record = ch.type, None  # None: the change's own record, with cached lines
        if pred is not None:
            cur = ch.type != DELETED and pred(ch.record.obj)
            old = ch.prev is not None and pred(ch.prev.obj)
            if cur:
                type_ = MODIFIED if old else ADDED
            elif not old:
                return
            else:
                type_ = DELETED
                if ch.type != DELETED:  # stopped matching: previous content, new version
                    assert ch.prev is not None
                    record = Record(_with_rv(ch.prev.obj, ch.rv))
        if self.transform is not None:
            self.push(self.transform(type_, record or ch.record))
        else:
            self.push(ch.line(type_, self.rt, record))

    def push(self, line: bytes) -> None:
        """Queue one line and wake the stream."""
        if self.closed:
            return
        self.buffer.append(line)
        if len(self.buffer) > self.MAX_BUFFERED:
            self.close()
        self.wake.set()

    def bookmark(self, rv: int, *, initial_events_end: bool = False) -> None:
        """Queue a BOOKMARK carrying only kind, apiVersion and the resourceVersion.

        ``initial_events_end`` marks the end of the initial state of a
        ``sendInitialEvents=true`` watch (client-go's WatchList), as kube annotates it.
        """
        meta: dict[str, Any] = {"resourceVersion": str(rv)}
        if initial_events_end:
            meta["annotations"] = {"k8s.io/initial-events-end": "true"}
        obj = {"kind": self.rt.kind, "apiVersion": self.rt.api_version, "metadata": meta}
        self.push(dumps({"type": "BOOKMARK", "object": obj}) + b"\n")

    def close(self) -> None:
        """End the stream after what is buffered."""
        self.closed = True
        self.wake.set()


def _with_rv(obj: dict[str, Any], rv: int) -> dict[str, Any]:
    return {**obj, "metadata": {**obj["metadata"], "resourceVersion": str(rv)}}


class Store:
    """Objects of every served resource, keyed by storage and (namespace, name)."""

    def __init__(self, *, history_limit: int = 20_000, seed: int | None = None) -> None:
        self.rv = 0
        self.compacted_rv = 0  # resumes need rv >= this; every change after it is retained
        self.history: deque[Change] = deque()
        self.history_limit = history_limit
        self.tables: dict[str, dict[Key, Record]] = {}
        self.watchers: dict[str, set[Watcher]] = {}
        self.listeners: list[Callable[[Change], None]] = []
        self._rng = random.Random(seed)

    # -- reads -------------------------------------------------------------------------------

    def table(self, rt: ResourceType) -> dict[Key, Record]:
        """The mutable index of one storage (callers must not mutate the records' objects)."""
        return self.tables.setdefault(rt.storage_key, {})

    def try_get(self, rt: ResourceType, namespace: str, name: str) -> Record | None:
        """The current record, or None."""
        return self.table(rt).get((namespace if rt.namespaced else "", name))

    def get(self, rt: ResourceType, namespace: str, name: str) -> Record:
        """The current record, or 404."""
        rec = self.try_get(rt, namespace, name)
        if rec is None:
            raise errors.not_found(rt.qualified, name)
        return rec

    def list(
        self, rt: ResourceType, namespace: str | None, pred: Predicate | None
    ) -> tuple[list[Record], int]:
        """Matching records and the collection's resourceVersion."""
        records: Iterable[Record] = self.table(rt).values()
        if namespace is not None and rt.namespaced:
            records = [r for r in records if r.obj["metadata"].get("namespace") == namespace]
        if pred is not None:
            records = [r for r in records if pred(r.obj)]
        return list(records), self.rv

    def snapshot(self, rt: ResourceType, rv: int) -> dict[Key, Record] | None:
        """The storage's objects as they were at ``rv`` (the current ones with every later
        change undone); None once history no longer reaches back that far (compacted)."""
        if rv < self.compacted_rv or rv > self.rv:
            return None
        table = dict(self.table(rt))
        for ch in reversed(self.history):
            if ch.rv <= rv:
                break
            if ch.storage != rt.storage_key:
                continue
            if ch.prev is None:
                table.pop(ch.key, None)
            else:
                table[ch.key] = ch.prev
        return table

    # -- writes ------------------------------------------------------------------------------

    def _commit(
        self, rt: ResourceType, type_: str, key: Key, obj: dict[str, Any], prev: Record | None
    ) -> Record:
        self.rv += 1
        obj["metadata"]["resourceVersion"] = str(self.rv)
        record = Record(obj)
        table = self.table(rt)
        if type_ == DELETED:
            table.pop(key, None)
        else:
            table[key] = record
        ch = Change(self.rv, type_, rt.storage_key, key, record, prev)
        if len(self.history) >= self.history_limit:
            self.compacted_rv = self.history.popleft().rv
        self.history.append(ch)
        for w in self.watchers.get(rt.storage_key, ()):
            w.offer(ch)
        for listener in self.listeners:
            listener(ch)
        return record

    def create(
        self,
        rt: ResourceType,
        obj: dict[str, Any],
        *,
        prepare: Callable[[ResourceType, dict[str, Any]], None] | None = None,
    ) -> Record:
        """Store a new object (the caller owns ``obj``); sets server metadata.

        ``prepare`` runs once name and uid are set, before the write (defaults that
        depend on them, such as a Job's generated selector).
        """
        meta = obj.setdefault("metadata", {})
        namespace = meta.get("namespace", "") if rt.namespaced else ""
        if rt.namespaced and (
            NAMESPACES.storage_key not in self.tables
            or ("", namespace) not in self.tables[NAMESPACES.storage_key]
        ):
            raise errors.not_found("namespaces", namespace)
        table = self.table(rt)
        if not meta.get("name") and meta.get("generateName"):
            while True:
                suffix = "".join(self._rng.choice(_NAME_CHARS) for _ in range(5))
                if (namespace, meta["generateName"] + suffix) not in table:
                    meta["name"] = meta["generateName"] + suffix
                    break
        key = (namespace, meta["name"])
        if key in table:
            raise errors.already_exists(rt.qualified, meta["name"])
        meta["uid"] = str(uuid.UUID(int=self._rng.getrandbits(128), version=4))
        meta["creationTimestamp"] = now_rfc3339()
        meta["generation"] = 1
        for k in ("deletionTimestamp", "deletionGracePeriodSeconds", "selfLink"):
            meta.pop(k, None)
        if prepare is not None:
            prepare(rt, obj)
        return self._commit(rt, ADDED, key, obj, None)

    def update(self, rt: ResourceType, obj: dict[str, Any], *, expect_rv: str | None) -> Record:
        """Replace an existing object (the caller owns ``obj``), with optimistic concurrency.

        ``expect_rv`` non-empty must equal the current version, else 409 Conflict.
        """
        meta = obj["metadata"] = dict(obj["metadata"])  # may be shared with a stored version
        key = (meta.get("namespace", "") if rt.namespaced else "", meta["name"])
        prev = self.table(rt).get(key)
        if prev is None:
            raise errors.not_found(rt.qualified, meta["name"])
        old_meta = prev.obj["metadata"]
        if expect_rv and expect_rv != old_meta["resourceVersion"]:
            raise errors.conflict(rt.qualified, meta["name"], errors.STALE)
        for k in ("uid", "creationTimestamp", "namespace", "deletionTimestamp"):
            if k in old_meta:
                meta[k] = old_meta[k]
        gen = old_meta.get("generation", 1)
        meta["generation"] = gen + 1 if obj.get("spec") != prev.obj.get("spec") else gen
        meta["resourceVersion"] = old_meta["resourceVersion"]
        if obj == prev.obj:
            return prev  # kube writes nothing for a no-op update: no new version, no event
        return self._commit(rt, MODIFIED, key, obj, prev)

    def delete(
        self,
        rt: ResourceType,
        namespace: str,
        name: str,
        *,
        uid: str | None = None,
        rv: str | None = None,
    ) -> Record:
        """Delete now (no graceful termination); preconditions as DeleteOptions has them."""
        prev = self.get(rt, namespace, name)
        meta = prev.obj["metadata"]
        if uid and uid != meta["uid"]:
            raise errors.conflict(
                rt.qualified,
                name,
                f"Precondition failed: UID in precondition: "
                f"{uid}, UID in object meta: {meta['uid']}",
            )
        if rv and rv != meta["resourceVersion"]:
            raise errors.conflict(
                rt.qualified,
                name,
                "Precondition failed: ResourceVersion in "
                f"precondition: {rv}, ResourceVersion in object meta: "
                f"{meta['resourceVersion']}",
            )
        if rt is NAMESPACES:
            for table_key, table in list(self.tables.items()):
                for key, rec in list(table.items()):
                    if key[0] == name and table_key != NAMESPACES.storage_key:
                        self._commit_delete(table_key, key, rec)
        key = (namespace if rt.namespaced else "", name)
        gone = {**prev.obj, "metadata": dict(meta)}
        return self._commit(rt, DELETED, key, gone, prev)

    def _commit_delete(self, storage: str, key: Key, rec: Record) -> None:
        rt = next(r for r in RESOURCES if r.storage_key == storage)
        self._commit(rt, DELETED, key, {**rec.obj, "metadata": dict(rec.obj["metadata"])}, rec)

    # -- watch -------------------------------------------------------------------------------

    def watch(
        self,
        rt: ResourceType,
        namespace: str | None,
        pred: Predicate | None,
        since: str | None,
        *,
        transform: Transform | None = None,
    ) -> Watcher:
        """Register a watcher; replay history after ``since``, or current state if empty/"0".

        ``transform`` renders lines itself (server-side printing); default: plain objects.
        """
        w = Watcher(rt, namespace if rt.namespaced else None, pred, transform)
        if not since or since == "0":
            for rec in self.list(rt, w.namespace, pred)[0]:
                if transform is not None:
                    w.push(transform(ADDED, rec))
                else:
                    w.push(b'{"type":"ADDED","object":%s}\n' % rec.rendered(rt))
        else:
            try:
                start = int(since)
            except ValueError:
                raise errors.bad_request(f'invalid resource version "{since}"') from None
            if start < self.compacted_rv:
                raise errors.expired(f"too old resource version: {start} ({self.compacted_rv})")
            replay: list[Change] = []
            for ch in reversed(self.history):
                if ch.rv <= start:
                    break
                if ch.storage == rt.storage_key:
                    replay.append(ch)
            for ch in reversed(replay):
                w.offer(ch)
        self.watchers.setdefault(rt.storage_key, set()).add(w)
        return w

    def unwatch(self, w: Watcher) -> None:
        """Forget a watcher (its stream ended)."""
        self.watchers.get(w.rt.storage_key, set()).discard(w)

    def close_watchers(self) -> int:
        """End every open watch stream; returns how many were closed."""
        count = 0
        for ws in self.watchers.values():
            for w in list(ws):
                w.close()
                count += 1
            ws.clear()
        return count

    def compact(self) -> None:
        """Drop all history: resuming from any version before now yields 410 Expired."""
        self.history.clear()
        self.compacted_rv = self.rv
