"""Paged LIST (``limit`` and ``continue``) as kube-apiserver serves it from etcd.

Items come in key order (``namespace/name``, as etcd keys sort); a page of ``limit`` items
that leaves some out carries ``metadata.continue``, and ``remainingItemCount`` when no
selector filters the list (kube cannot count what a filter would keep). Every page of one
LIST is read at the first page's resourceVersion, so a paged LIST is one consistent
snapshot: the emulator keeps the sorted result of recent paged LISTs (:class:`Snapshots`),
rebuilds an evicted one from its change history, and answers ``410 Expired`` once that
history is compacted, as etcd does after its compaction. An unpaged LIST comes in store
(creation) order: sorting it would cost every poll of a big cluster, and no client relies
on the order.

The token is opaque to clients; like kube's it is base64 JSON ``{"v", "rv", "start"}``.
"""

from __future__ import annotations

import base64
import binascii
import bisect
import json
from collections import OrderedDict
from dataclasses import dataclass
from typing import TYPE_CHECKING

from scheduler.sim import errors

if TYPE_CHECKING:
    from collections.abc import Iterable

    from scheduler.sim.discovery import ResourceType
    from scheduler.sim.selectors import Predicate
    from scheduler.sim.store import Record, Store

TOO_OLD = (
    "The provided continue parameter is too old to display a consistent list result. You "
    "can start a new list without the continue parameter, or use the continue token in this "
    "response to retrieve the remainder of the results. Continuing with the provided token "
    "results in an inconsistent list - objects that were created, modified, or deleted "
    "between the time the first chunk was returned and now may show up in the list."
)


@dataclass(frozen=True, slots=True)
class Page:
    """One page of a LIST: its items, the LIST's version and what the metadata says."""

    records: list[Record]
    rv: int
    token: str | None = None
    remaining: int | None = None


def sort_key(record: Record) -> str:
    """Where etcd's key order puts ``record``: ``namespace/name``, or ``name``."""
    meta = record.obj["metadata"]
    ns = meta.get("namespace")
    return f"{ns}/{meta['name']}" if ns else str(meta["name"])


def encode(rv: int, start: str) -> str:
    raw = json.dumps({"v": "meta.k8s.io/v1", "rv": rv, "start": start + "\x00"})
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


def decode(token: str) -> tuple[int, str]:
    """(resourceVersion, key after which the page starts); 400 for a token not ours."""
    try:
        raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
        body = json.loads(raw)
        rv, start = int(body["rv"]), str(body["start"])
    except (binascii.Error, ValueError, KeyError, TypeError):
        raise errors.bad_request(
            "invalid continue token: continue key is not valid: cannot decode"
        ) from None
    if body.get("v") != "meta.k8s.io/v1" or rv <= 0:
        raise errors.bad_request(f"invalid continue token: unknown version {body.get('v')!r}")
    return rv, start.removesuffix("\x00")


Snapshot = tuple[list[str], list["Record"]]
"""A sorted LIST result: keys and records, index for index."""


class Snapshots:
    """The sorted results of recent paged LISTs, so that every later page is a bisect and a
    slice, not another copy and sort of the whole table (a LIST at a resourceVersion never
    changes, so an entry stays valid until it is evicted)."""

    def __init__(self, size: int = 16) -> None:
        self.size = size
        self._entries: OrderedDict[tuple[object, ...], Snapshot] = OrderedDict()

    def get(self, key: tuple[object, ...]) -> Snapshot | None:
        entry = self._entries.get(key)
        if entry is not None:
            self._entries.move_to_end(key)
        return entry

    def put(self, key: tuple[object, ...], entry: Snapshot) -> None:
        self._entries[key] = entry
        if len(self._entries) > self.size:
            self._entries.popitem(last=False)


def _sorted(records: Iterable[Record]) -> Snapshot:
    keyed = sorted((sort_key(r), r) for r in records)
    return [k for k, _ in keyed], [r for _, r in keyed]


def list_page(
    store: Store,
    rt: ResourceType,
    namespace: str | None,
    pred: Predicate | None,
    *,
    limit: int,
    token: str | None,
    snapshots: Snapshots,
    query: tuple[str, ...] = (),
) -> Page:
    """The page of ``limit`` items (0: all, in store order) after ``token`` (None: the first
    page); ``query`` names the selectors, for the snapshot cache."""
    if not token and limit <= 0:
        listed, current = store.list(rt, namespace, pred)
        return Page(listed, current)
    if token:
        rv, after = decode(token)
    else:
        rv, after = store.rv, ""
    cache_key = (rt.storage_key, namespace, rv, *query)
    entry = snapshots.get(cache_key)
    if entry is None:
        if token:
            table = store.snapshot(rt, rv)
            if table is None:
                raise errors.expired(TOO_OLD)
            records: Iterable[Record] = table.values()
            if namespace is not None and rt.namespaced:
                records = [r for r in records if r.obj["metadata"].get("namespace") == namespace]
            if pred is not None:
                records = [r for r in records if pred(r.obj)]
        else:
            records = store.list(rt, namespace, pred)[0]
        entry = _sorted(records)
        snapshots.put(cache_key, entry)
    keys, ordered = entry
    start = bisect.bisect_right(keys, after) if after else 0
    end = start + limit if limit > 0 else len(keys)
    if end >= len(keys):
        return Page(ordered[start:], rv)
    remaining = None if pred is not None else len(keys) - end
    return Page(ordered[start:end], rv, encode(rv, keys[end - 1]), remaining)
