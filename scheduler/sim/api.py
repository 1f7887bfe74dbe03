"""The REST and watch endpoints under ``/api`` and ``/apis``: routing and verbs.

One catch-all handler parses kube's URL shapes
(``/api/v1[/namespaces/NS]/PLURAL[/NAME[/SUB]]``, ``/apis/GROUP/VERSION/...``), maps the
method to a verb (get, list, watch, create, update, patch, delete, bind), lets fault
injection act on that verb, and calls the store. Bodies and replies are JSON; list
replies are assembled from each object's cached JSON bytes.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from typing import TYPE_CHECKING, Any

from aiohttp import web

from scheduler.sim import (
    admission,
    binding,
    decoding,
    defaults,
    errors,
    ownership,
    paging,
    patching,
    scale,
    services,
    tables,
)
from scheduler.sim.discovery import (
    EVENTS_V1,
    LEASES,
    NAMESPACES,
    NODES,
    PERSISTENT_VOLUME_CLAIMS,
    PERSISTENT_VOLUMES,
    POD_DISRUPTION_BUDGETS,
    PODS,
    RESOURCE_CLAIMS,
    SERVICES,
    WORKLOADS,
    ResourceType,
)
from scheduler.sim.events import FIELD_ALIASES, to_core
from scheduler.sim.paths import Target, parse_path
from scheduler.sim.selectors import (
    combine,
    field_labels,
    parse_field_selector,
    parse_label_selector,
)
from scheduler.sim.store import Record, Store, Transform, dumps, render

if TYPE_CHECKING:
    from scheduler.sim.actors import RogueBinder
    from scheduler.sim.faults import Faults

JSON = "application/json"
_BOUND = dumps(errors.success_status(201))  # every successful bind answers the same Status
# main resource ignores status; /status only status
_STATUS_SPLIT = (
    PODS,
    NODES,
    NAMESPACES,
    SERVICES,
    PERSISTENT_VOLUMES,
    PERSISTENT_VOLUME_CLAIMS,
    POD_DISRUPTION_BUDGETS,
    RESOURCE_CLAIMS,
    *WORKLOADS,
)
_CREATE_ON_UPDATE = ("events", LEASES.storage_key)
"""Storages whose PUT of a missing object creates it (kube's AllowCreateOnUpdate)."""
_CONDITIONAL_UPDATE_ONLY = (LEASES,)
"""Resources whose PUT must carry a resourceVersion (AllowUnconditionalUpdate false)."""


def reply(body: Any, status: int = 200) -> web.Response:
    """A JSON response from a dict or pre-serialized bytes."""
    return web.Response(
        body=body if isinstance(body, bytes) else dumps(body), status=status, content_type=JSON
    )


def _truthy(value: str | None) -> bool:
    return (value or "").lower() in ("true", "1")


async def _json_body(request: web.Request) -> Any:
    raw = await request.read()
    try:
        return json.loads(raw) if raw else {}
    except ValueError as e:
        raise errors.bad_request(f"the body of the request could not be decoded: {e}") from None


def _incoming(t: Target, body: Any) -> dict[str, Any]:
    """A client's object as stored: no kind/apiVersion, core form for events, namespace set."""
    if not isinstance(body, dict):
        raise errors.bad_request("the body of the request must be a JSON object")
    obj = {k: v for k, v in body.items() if k not in ("kind", "apiVersion")}
    if t.rt is EVENTS_V1:
        obj = to_core(obj)
    meta = obj.setdefault("metadata", {})
    if not isinstance(meta, dict):
        raise errors.bad_request("metadata must be an object")
    if t.rt.namespaced:
        ns = meta.get("namespace") or t.namespace or "default"
        if t.namespace is not None and ns != t.namespace:
            raise errors.bad_request(
                "the namespace of the provided object does not match the "
                "namespace sent on the request"
            )
        meta["namespace"] = ns
    else:
        meta.pop("namespace", None)
    return obj


def _table_lines(rt: ResourceType) -> Transform:
    """Watch lines carrying one-row Tables; column definitions only in the first, as kube."""
    first = True

    def transform(type_: str, record: Record) -> bytes:
        nonlocal first
        obj = record.obj
        tab = tables.table(rt, [obj], obj["metadata"]["resourceVersion"])
        if not first:
            tab["columnDefinitions"] = []
        first = False
        return dumps({"type": type_, "object": tab}) + b"\n"

    return transform


class Api:
    """Request handlers bound to one store and fault injector."""

    def __init__(
        self, store: Store, faults: Faults, rogue: RogueBinder, *, bookmark_interval: float = 5.0
    ) -> None:
        self.store = store
        self.faults = faults
        self.rogue = rogue
        self.bookmark_interval = bookmark_interval
        self.binders: dict[str, dict[str, int]] = {}
        """Who sends bind requests, by User-Agent: ``requests``, ``bound`` (201s), and the
        sequence numbers of its ``first`` and ``last`` request among all bind requests, so
        a test can tell whether two clients ever bound in the same period."""
        self.watches_held_until = 0.0
        """Loop time when the current partition ends (set by the server's fault clock)."""
        self.watches_resume = asyncio.Event()
        """Set while watches may start; the fault clock clears it for a partition and sets
        it only after the compaction, so a held watch can never start before it (a timer
        for the partition's end would race the compaction's timer)."""
        self.watches_resume.set()
        self._bind_seq = 0
        self.snapshots = paging.Snapshots()

    async def handle(self, request: web.Request) -> web.StreamResponse:
        """Entry point for every ``/api`` and ``/apis`` request."""
        target = parse_path(request.path)
        if isinstance(target, dict):
            return reply(target)
        verb = self._verb(request, target)
        if "dryRun" in request.query:  # refuse rather than silently write for real
            raise errors.bad_request("dryRun is not supported by the emulator")
        if verb == "bind":
            self._bind_requested(request.headers.get("User-Agent", ""))
        if self.faults.config.latency > 0:
            await asyncio.sleep(self.faults.config.latency)
        self.faults.maybe_fail(verb)
        method = getattr(self, f"_{verb}")
        result: web.StreamResponse = await method(request, target)
        return result

    @staticmethod
    def _verb(request: web.Request, t: Target) -> str:
        m = request.method
        if m == "GET":
            if t.name is None:
                return "watch" if _truthy(request.query.get("watch")) else "list"
            return "get"
        if m == "POST":
            if t.sub == "binding":
                return "bind"
            if t.name is None:
                return "create"
        elif m == "PUT" and t.name is not None:
            return "update"
        elif m == "PATCH" and t.name is not None:
            return "patch"
        elif m == "DELETE":
            return "delete" if t.name is not None else "deletecollection"
        raise errors.method_not_allowed()

    def _selector(self, request: web.Request, t: Target) -> Any:
        aliases = FIELD_ALIASES if t.rt is EVENTS_V1 else None
        return combine(
            parse_label_selector(request.query.get("labelSelector")),
            parse_field_selector(
                request.query.get("fieldSelector"),
                aliases,
                field_labels(t.rt.plural, t.rt.namespaced),
            ),
        )

    # -- reads -------------------------------------------------------------------------------

    async def _get(self, request: web.Request, t: Target) -> web.StreamResponse:
        assert t.name is not None
        rec = self.store.get(t.rt, t.namespace or "", t.name)
        if t.sub == "scale":
            return reply(scale.to_scale(rec.obj))
        if tables.wants_table(request.headers.get("Accept", "")):
            return reply(tables.table(t.rt, [rec.obj], rec.obj["metadata"]["resourceVersion"]))
        return reply(rec.rendered(t.rt))

    def _list_body(
        self, t: Target, records: list[Record], rv: int, page: paging.Page | None = None
    ) -> bytes:
        if t.rt is EVENTS_V1:
            items = b",".join(dumps(render(t.rt, r.obj)) for r in records)
        else:
            items = b",".join(r.raw for r in records)  # kube omits kind/apiVersion in items
        meta: dict[str, Any] = {"resourceVersion": str(rv)}
        if page is not None and page.token:
            meta["continue"] = page.token
            if page.remaining is not None:
                meta["remainingItemCount"] = page.remaining
        head = dumps({"kind": t.rt.kind + "List", "apiVersion": t.rt.api_version, "metadata": meta})
        return head[:-1] + b',"items":[' + items + b"]}"

    async def _list(self, request: web.Request, t: Target) -> web.StreamResponse:
        try:
            limit = int(request.query.get("limit") or 0)
        except ValueError:
            raise errors.bad_request("limit must be an integer") from None
        page = paging.list_page(
            self.store,
            t.rt,
            t.namespace,
            self._selector(request, t),
            limit=limit,
            token=request.query.get("continue"),
            snapshots=self.snapshots,
            query=tuple(request.query.get(k, "") for k in ("labelSelector", "fieldSelector")),
        )
        if tables.wants_table(request.headers.get("Accept", "")):
            tab = tables.table(t.rt, [r.obj for r in page.records], str(page.rv))
            if page.token:
                tab["metadata"]["continue"] = page.token
            return reply(tab)
        return reply(self._list_body(t, page.records, page.rv, page))

    async def _watch(self, request: web.Request, t: Target) -> web.StreamResponse:
        pred = self._selector(request, t)
        await self.watches_resume.wait()  # a partition before a compaction (fault clock)
        bookmarks = _truthy(request.query.get("allowWatchBookmarks"))
        initial = _truthy(request.query.get("sendInitialEvents"))
        if initial and request.query.get("resourceVersionMatch") != "NotOlderThan":
            raise errors.invalid(
                "ListOptions",
                "",
                "resourceVersionMatch: Forbidden: sendInitialEvents requires setting "
                "resourceVersionMatch to NotOlderThan",
                group="meta.k8s.io",
            )
        try:
            timeout = float(request.query.get("timeoutSeconds") or 0)
        except ValueError:
            raise errors.bad_request("timeoutSeconds must be a number") from None
        deadline = time.monotonic() + timeout if timeout > 0 else None
        resp = web.StreamResponse(headers={"Content-Type": JSON})
        resp.enable_chunked_encoding()
        try:
            watcher = self.store.watch(
                t.rt,
                t.namespace,
                pred,
                "0" if initial else request.query.get("resourceVersion"),
                transform=_table_lines(t.rt)
                if tables.wants_table(request.headers.get("Accept", ""))
                else None,
            )
        except errors.ApiError as e:
            if e.code != 410:
                raise
            self.faults.count("watches_expired")
            # kube answers an expired watch with 200 and one ERROR event carrying the Status;
            # a client that hung up while its watch was held gets nothing.
            with contextlib.suppress(ConnectionResetError):
                await resp.prepare(request)
                await resp.write(dumps({"type": "ERROR", "object": e.status()}) + b"\n")
                await resp.write_eof()
            return resp
        if initial:
            watcher.bookmark(self.store.rv, initial_events_end=True)
        try:
            await resp.prepare(request)
            next_bookmark = time.monotonic() + self.bookmark_interval
            while True:
                now = time.monotonic()
                if deadline is not None and now >= deadline:
                    break
                if bookmarks and now >= next_bookmark:
                    watcher.bookmark(self.store.rv)
                    next_bookmark = now + self.bookmark_interval
                if watcher.buffer:
                    chunk = b"".join(watcher.buffer)
                    watcher.buffer.clear()
                    await resp.write(chunk)
                    continue
                if watcher.closed:
                    break
                transport = request.transport
                if transport is None or transport.is_closing():
                    break
                watcher.wake.clear()
                wait = 1.0  # re-check the connection at least this often
                if deadline is not None:
                    wait = min(wait, deadline - now)
                if bookmarks:
                    wait = min(wait, next_bookmark - now)
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(watcher.wake.wait(), max(wait, 0.0))
            await resp.write_eof()
        except (ConnectionResetError, ConnectionError):
            pass
        finally:
            self.store.unwatch(watcher)
        return resp

    # -- writes ------------------------------------------------------------------------------

    def _decodable(
        self, t: Target, obj: dict[str, Any], patch: object = None, *, write: bool = False
    ) -> None:
        """Refuse what kube's decoder refuses (unless the accept_invalid fault is on). An
        update or patch is checked in the part it writes (a pod's status write does not
        trip over a spec stored while that fault was on)."""
        if self.faults.config.accept_invalid or t.sub == "scale":
            return
        if write and t.rt in _STATUS_SPLIT:
            status = t.sub == "status"
            obj = {k: v for k, v in obj.items() if (k == "status") is status}
        try:
            decoding.check(t.rt, obj)
        except decoding.Undecodable as e:
            raise decoding.refused(t.rt, e, patch) from None

    async def _create(self, request: web.Request, t: Target) -> web.StreamResponse:
        obj = _incoming(t, await _json_body(request))
        self._decodable(t, obj)
        if not self.faults.config.accept_invalid:
            defaults.nonnegative_resources(t.rt, obj)
            if t.rt is PODS:
                admission.admit_pod(self.store, obj)
        defaults.on_create(t.rt, obj)
        if t.rt is SERVICES and not self.faults.config.accept_invalid:
            services.allocate(self.store, obj)
        record = self.store.create(t.rt, obj, prepare=defaults.on_uid)
        return reply(record.rendered(t.rt), 201)

    def _bind_requested(self, agent: str) -> None:
        """Count a bind request (failed ones too) for its client, in arrival order."""
        self._bind_seq += 1
        seen = self.binders.setdefault(
            agent, {"requests": 0, "bound": 0, "first": self._bind_seq, "last": 0}
        )
        seen["requests"] += 1
        seen["last"] = self._bind_seq

    async def _bind(self, request: web.Request, t: Target) -> web.StreamResponse:
        assert t.name is not None
        body = await _json_body(request)
        if not isinstance(body, dict):
            raise errors.bad_request("the body of the request must be a v1 Binding object")
        ns = t.namespace or "default"
        target = (body.get("target") or {}).get("name", "")
        meta = body.get("metadata") or {}
        if meta.get("name") != t.name:
            raise errors.bad_request("name in URL does not match name in Binding object")
        uid = meta.get("uid")
        self.rogue.intercept(ns, t.name)
        binding.bind(self.store, ns, t.name, target, uid=uid)
        seen = self.binders.get(request.headers.get("User-Agent", ""))
        if seen is not None:
            seen["bound"] += 1
        return reply(_BOUND, 201)

    def _split_status(self, t: Target, old: dict[str, Any], new: dict[str, Any]) -> Any:
        if t.rt not in _STATUS_SPLIT:
            return new
        if t.sub == "status":
            return {
                **old,
                "metadata": {
                    **old["metadata"],
                    "resourceVersion": new["metadata"].get("resourceVersion"),
                },
                "status": new.get("status", {}),
            }
        return {**new, "status": old.get("status", {})}

    async def _update(self, request: web.Request, t: Target) -> web.StreamResponse:
        assert t.name is not None
        obj = _incoming(t, await _json_body(request))
        if obj["metadata"].get("name", t.name) != t.name:
            raise errors.bad_request(
                f"the name of the object ({obj['metadata']['name']}) does "
                f"not match the name on the URL ({t.name})"
            )
        obj["metadata"]["name"] = t.name
        self._decodable(t, obj, write=True)
        old = self.store.try_get(t.rt, t.namespace or "", t.name)
        if old is not None and t.sub == "scale":
            return self._write_scale(t, old, obj)
        if old is None and t.rt.storage_key in _CREATE_ON_UPDATE and t.sub is None:
            obj["metadata"].pop("resourceVersion", None)
            defaults.on_create(t.rt, obj)
            return reply(self.store.create(t.rt, obj).rendered(t.rt), 201)
        if old is None:
            raise errors.not_found(t.rt.qualified, t.name)
        new = self._split_status(t, old.obj, obj)
        if not self.faults.config.accept_invalid:
            defaults.on_update(t.rt, old.obj, new)
        expect = new["metadata"].get("resourceVersion")
        if not expect and t.rt in _CONDITIONAL_UPDATE_ONLY:
            raise errors.invalid(
                t.rt.plural,
                t.name,
                "metadata.resourceVersion: Invalid value: 0: must be specified for an update",
                group=t.rt.group,
            )
        return reply(self.store.update(t.rt, new, expect_rv=expect).rendered(t.rt))

    async def _patch(self, request: web.Request, t: Target) -> web.StreamResponse:
        assert t.name is not None
        if request.content_type not in patching.CONTENT_TYPES:
            raise errors.ApiError(
                415,
                "UnsupportedMediaType",
                f"the body of the request was in an unknown format: {request.content_type}",
            )
        patch = await _json_body(request)
        old = self.store.get(t.rt, t.namespace or "", t.name)
        if t.sub == "scale":
            return self._write_scale(
                t, old, patching.apply_patch(request.content_type, scale.to_scale(old.obj), patch)
            )
        patched = patching.apply_patch(request.content_type, render(t.rt, old.obj), patch)
        if not isinstance(patched, dict):
            raise errors.bad_request("the patch produced a non-object")
        patched = json.loads(dumps(patched))  # own every nested value before storing it
        meta = patched.setdefault("metadata", {})
        meta["name"], meta["namespace"] = t.name, old.obj["metadata"].get("namespace")
        obj = _incoming(t, patched)
        self._decodable(t, obj, patch, write=True)
        new = self._split_status(t, old.obj, obj)
        if not self.faults.config.accept_invalid:
            defaults.on_update(t.rt, old.obj, new)
        expect = new["metadata"].get("resourceVersion")
        return reply(self.store.update(t.rt, new, expect_rv=expect).rendered(t.rt))

    def _write_scale(self, t: Target, old: Record, body: Any) -> web.Response:
        new, expect = scale.from_scale(old.obj, body)
        return reply(scale.to_scale(self.store.update(t.rt, new, expect_rv=expect).obj))

    async def _delete(self, request: web.Request, t: Target) -> web.StreamResponse:
        assert t.name is not None
        body = await _json_body(request) if request.can_read_body else {}
        pre = (body or {}).get("preconditions") or {}
        rec = self.store.delete(
            t.rt, t.namespace or "", t.name, uid=pre.get("uid"), rv=pre.get("resourceVersion")
        )
        policy = (body or {}).get("propagationPolicy") or request.query.get("propagationPolicy")
        if policy == "Orphan" or (body or {}).get("orphanDependents") is True:
            ownership.orphan(self.store, rec.obj["metadata"]["uid"])  # before GC runs
        return reply(rec.rendered(t.rt))

    async def _deletecollection(self, request: web.Request, t: Target) -> web.StreamResponse:
        records, _ = self.store.list(t.rt, t.namespace, self._selector(request, t))
        gone = [
            self.store.delete(
                t.rt, r.obj["metadata"].get("namespace", ""), r.obj["metadata"]["name"]
            )
            for r in records
        ]
        return reply(self._list_body(t, gone, self.store.rv))
