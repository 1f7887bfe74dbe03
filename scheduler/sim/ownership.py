"""Owner references: who depends on whom, garbage collection and orphaning.

:class:`Ownership` indexes every stored object's ``ownerReferences`` by owner uid, as
kube-controller-manager's garbage collector builds its graph. When an owner is deleted,
each dependent whose references name no other existing owner is deleted too (background
cascade, what ``kubectl delete`` asks by default): a Deployment takes its ReplicaSets,
and they take their pods. :func:`orphan` serves ``propagationPolicy: Orphan`` from the
API itself, so it works with the controllers off. Not emulated: foreground deletion,
finalizers, ``deletionTimestamp``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from scheduler.sim import errors
from scheduler.sim.discovery import RESOURCES, ResourceType

if TYPE_CHECKING:
    from scheduler.sim.store import Change, Key, Record, Store

BY_STORAGE: dict[str, ResourceType] = {}
for _rt in RESOURCES:
    BY_STORAGE.setdefault(_rt.storage_key, _rt)
BY_KIND: dict[tuple[str, str], ResourceType] = {(r.api_version, r.kind): r for r in RESOURCES}


def refs(rec: Record | None) -> list[dict[str, Any]]:
    """The record's ownerReferences that carry a uid."""
    if rec is None:
        return []
    found = rec.obj["metadata"].get("ownerReferences") or []
    return [r for r in found if isinstance(r, dict) and r.get("uid")]


def orphan(store: Store, uid: str) -> int:
    """Remove ownerReferences to ``uid`` from every object (``propagationPolicy: Orphan``)."""
    changed = 0
    for storage, table in list(store.tables.items()):
        rt = BY_STORAGE.get(storage)
        if rt is None:
            continue
        for rec in list(table.values()):
            if not any(r["uid"] == uid for r in refs(rec)):
                continue
            meta = dict(rec.obj["metadata"])
            kept = [r for r in meta.get("ownerReferences") or [] if r.get("uid") != uid]
            if kept:
                meta["ownerReferences"] = kept
            else:
                meta.pop("ownerReferences", None)
            store.update(rt, {**rec.obj, "metadata": meta}, expect_rv=None)
            changed += 1
    return changed


class Ownership:
    """The dependents of every owner uid, kept current from store changes."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self._dependents: dict[str, set[tuple[str, Key]]] = {}

    def track(self, ch: Change) -> tuple[list[dict[str, Any]], bool]:
        """Index one change; returns the references it had or has (old ones if deleted) and
        whether the object was itself an owner that is now gone (its dependents to collect)."""
        old = refs(ch.prev)
        new = [] if ch.type == "DELETED" else refs(ch.record)
        if old or new:
            dep = (ch.storage, ch.key)
            new_uids = {r["uid"] for r in new}
            for r in old:
                if r["uid"] not in new_uids:
                    self._dependents.get(r["uid"], set()).discard(dep)
            for r in new:
                self._dependents.setdefault(r["uid"], set()).add(dep)
        gone = ch.type == "DELETED" and ch.record.obj["metadata"].get("uid") in self._dependents
        return old or new, gone

    def owned(self, uid: str, rt: ResourceType) -> list[Record]:
        """Current objects of ``rt`` whose controller (``controller: true``) is ``uid``."""
        table = self.store.table(rt)
        found = []
        for storage, key in self._dependents.get(uid, ()):
            rec = table.get(key) if storage == rt.storage_key else None
            if rec is not None and any(r["uid"] == uid and r.get("controller") for r in refs(rec)):
                found.append(rec)
        return found

    def _owner_exists(self, ref: dict[str, Any], namespace: str) -> bool:
        rt = BY_KIND.get((ref.get("apiVersion", ""), ref.get("kind", "")))
        if rt is None:
            return False
        rec = self.store.try_get(rt, namespace, ref.get("name", ""))
        return rec is not None and rec.obj["metadata"].get("uid") == ref["uid"]

    def collect(self, uid: str) -> None:
        """Delete the dependents of the deleted owner ``uid`` that have no other owner."""
        for storage, key in list(self._dependents.pop(uid, ())):
            rt = BY_STORAGE[storage]
            rec = self.store.table(rt).get(key)
            found = refs(rec)
            if rec is None or not any(r["uid"] == uid for r in found):
                continue
            if any(r["uid"] != uid and self._owner_exists(r, key[0]) for r in found):
                continue
            try:
                self.store.delete(rt, key[0], key[1], uid=rec.obj["metadata"]["uid"])
            except errors.ApiError:
                continue
