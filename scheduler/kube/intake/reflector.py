"""One list-then-watch loop per hot kind, with client-go's reflector semantics.

:meth:`Reflector.list` is the initial LIST (``sync.CacheSync.initial`` calls it in the
kinds' order, nodes first and pods last): pages of ``LIST_CHUNK`` objects, each object
applied as it comes, and the LIST's resourceVersion kept. :meth:`Reflector.run` then
watches from that version with ``allowWatchBookmarks`` (a BOOKMARK only moves the version
on), applying each event in order, and

* when the server ends a watch (``timeoutSeconds``), watches again from the last version;
* on ``410 Expired`` (an ERROR event, or the status of the request) re-lists at once with
  **Replace** semantics: every listed object is applied, then every object we hold that the
  LIST lacks and that is not newer than it is removed (``ports.Replacer``, the controller's
  ``sync.CacheSync.replace_listed``:
  DELETED synthesized, assumed pods included: they exist in the API until deleted), logged
  as ``reconcile_removed`` with ``cause=relist``;
* on any other error (connection lost, 5xx, 429, a bad line) backs off (jittered, 0.5 s
  doubling up to 8 s, as kopf's ``ERROR_BACKOFFS`` in ``controller.settings``) and
  watches again from the last version, re-listing only if that one has expired — the wait
  ends when the server answers again after an outage (``retry_log.pause``), and the first
  answer after one (a 403 of a restarted server whose authorizer has not synced) starts
  the backoff over; each retry goes to the client's ``retry_log`` (``watch_failed``: a
  warning per kind at most every 30 s while the API server is away, the rest at debug);
* resyncs nothing: kube's scheduler informers run without resync, and the periodic safety
  net (``sync.CacheSync.repair``) is a separate, counted check.

Decoding is left to the appliers (``appliers``): each decodes a watch line once, into its
kind's typed event (``peek.decode_pod_event``); the reflector reads only the event's type
and the version to resume from.

Neighbours: ``appliers``, ``ports`` (the Replace and the timeouts it is handed),
``kube.client`` (``request_bytes``, ``watch_lines``), ``kube.controller.operator`` (runs one
per hot kind beside kopf; this package never imports it).
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any, Protocol

import msgspec

from scheduler import logs
from scheduler.kube import errors
from scheduler.kube.client import backoff_delay
from scheduler.kube.intake.peek import Buffer, PeekError, WatchEvent, decode_event
from scheduler.kube.listing import LIST_CHUNK, Cause

if TYPE_CHECKING:
    from scheduler.kube.client import ApiClient
    from scheduler.kube.intake.ports import Replacer, WatchTimeouts
    from scheduler.kube.kinds import Kind

__all__ = ["Expired", "RawApplier", "Reflector"]

log = logs.get_logger(__name__)

BACKOFF_BASE = 0.5
BACKOFF_CAP = 8.0
_EVENT_TYPES = frozenset({"ADDED", "MODIFIED", "DELETED"})


class RawApplier(Protocol):
    """What ``appliers`` offer a reflector."""

    def apply_raw(self, event_type: str | None, raw: Buffer) -> tuple[str, str]:
        """One event with its object encoded; returns the object's (key, resourceVersion)."""

    def decode_line(self, line: Buffer) -> Any:
        """A watch line as an event with a ``type`` (:class:`PeekError`: not an event)."""

    def apply_event(self, event: Any, line: Buffer) -> tuple[str, str]:
        """An ADDED, MODIFIED or DELETED event :meth:`decode_line` gave for ``line``."""


class Expired(Exception):
    """The watch's resourceVersion is too old (410): re-list."""


class _ListMeta(msgspec.Struct):
    resourceVersion: str = ""
    # ``continue`` is a keyword: renamed.
    token: str = msgspec.field(default="", name="continue")


class _ListBody(msgspec.Struct):
    metadata: _ListMeta = msgspec.field(default_factory=_ListMeta)
    items: list[msgspec.Raw] | None = None


class _Status(msgspec.Struct):
    code: int = 0
    reason: str = ""
    message: str = ""


_lists = msgspec.json.Decoder(_ListBody)
_statuses = msgspec.json.Decoder(_Status)


class Reflector:
    """List-then-watch for one kind into one applier; see the module docstring."""

    def __init__(
        self,
        client: ApiClient,
        kind: Kind,
        applier: RawApplier,
        *,
        sync: Replacer,
        options: WatchTimeouts,
    ) -> None:
        self.client = client
        self.kind = kind
        self.applier = applier
        self.sync = sync
        self.options = options
        self.version = ""
        """The resourceVersion to watch from: the last LIST's, then each event's."""
        self.relists = 0
        self.watches = 0

    async def list(self) -> int:
        """The initial LIST: apply every object, keep the version; returns the count."""
        keys, self.version = await self._list_pages()
        return len(keys)

    async def run(self) -> None:
        """Watch (and re-list when needed) until cancelled; :meth:`list` must have run."""
        attempt = 0
        unanswered = False
        while True:
            try:
                if not self.version:
                    await self._relist()
                await self._watch()
                attempt = 0
            except Expired as exc:
                log.info("watch_expired", kind=str(self.kind), version=self.version, error=str(exc))
                self.version = ""  # re-list at once, as the reflector does on 410
            except (errors.ApiError, PeekError) as exc:
                if isinstance(exc, errors.ApiError) and exc.status == 410:
                    self.version = ""
                    continue
                answered = not isinstance(exc, errors.TransportError)
                if answered and unanswered:
                    # The server is back, its first answers maybe refusals (a 403 until its
                    # authorizer syncs): back off from the start, not from the outage's.
                    attempt = 0
                unanswered = not answered
                delay = backoff_delay(attempt, base=BACKOFF_BASE, cap=BACKOFF_CAP)
                attempt += 1
                self.client.retry_log.retrying(
                    "watch_failed",
                    source=str(self.kind),
                    logger=log,
                    kind=str(self.kind),
                    error=str(exc),
                    retry_in=round(delay, 2),
                )
                await self.client.retry_log.pause(delay)

    async def _relist(self) -> None:
        since = asyncio.get_running_loop().time()
        keys, version = await self._list_pages()
        # Await-free from here: the Replace compares with exactly what was listed.
        self.version = version
        self.relists += 1
        self.sync.replace_listed(self.kind, keys, version, cause=Cause.RELIST, since=since)

    async def _list_pages(self) -> tuple[set[str], str]:
        """Every object of the kind, applied page by page; their keys and the version."""
        params: dict[str, str | int | bool] = {"limit": LIST_CHUNK}
        keys: set[str] = set()
        version = ""
        apply = self.applier.apply_raw
        while True:
            raw = await self.client.request_bytes("GET", self.kind.path, params=params)
            try:
                body = _lists.decode(raw)
            except (msgspec.DecodeError, msgspec.ValidationError) as exc:
                raise errors.TransportError(
                    f"unreadable LIST: {exc}", reason="BadList", method="GET", path=self.kind.path
                ) from None
            del raw
            # With continue tokens every page is served from the first page's snapshot.
            version = version or body.metadata.resourceVersion
            for item in body.items or ():
                try:
                    key, _ = apply(None, item)
                except Exception as exc:  # as in the watch: one object must not end the LIST
                    log.exception("list_item_failed", kind=str(self.kind), error=str(exc))
                    continue
                keys.add(key)
            token = body.metadata.token
            del body
            if not token:
                return keys, version
            params = {"limit": LIST_CHUNK, "continue": token}

    async def _watch(self) -> None:
        """One watch from :attr:`version` until the server ends it."""
        options = self.options
        params: dict[str, str | int | bool] = {
            "watch": True,
            "resourceVersion": self.version,
            "allowWatchBookmarks": True,
            "timeoutSeconds": options.watch_server_timeout,
        }
        self.watches += 1
        decode, apply = self.applier.decode_line, self.applier.apply_event
        async for line in self.client.watch_lines(
            self.kind.path,
            params,
            timeout=options.watch_client_timeout,
            connect_timeout=options.connect_timeout,
        ):
            event = decode(line)
            kind = event.type
            if kind in _EVENT_TYPES:
                try:
                    _, version = apply(event, line)
                except Exception as exc:
                    # One object must not end the watch. The appliers report bad objects
                    # themselves: this is a fault of ours, logged with its traceback.
                    log.exception("watch_event_failed", kind=str(self.kind), error=str(exc))
                    continue
                if version:
                    self.version = version
            elif kind == "BOOKMARK":
                self.version = _bookmark_version(event) or self.version
            elif kind == "ERROR":
                self._raise_status(decode_event(line).object)
            else:
                log.warning("watch_event_unknown", kind=str(self.kind), type=kind)

    def _raise_status(self, raw: msgspec.Raw) -> None:
        try:
            status = _statuses.decode(raw)
        except (msgspec.DecodeError, msgspec.ValidationError):
            status = _Status(message=bytes(raw)[:200].decode(errors="replace"))
        if status.code == 410 or status.reason in ("Expired", "Gone"):
            raise Expired(status.message)
        raise errors.from_status(
            status.code or 500,
            {"message": status.message, "reason": status.reason},
            method="WATCH",
            path=self.kind.path,
        )


def _bookmark_version(event: Any) -> str:
    """A BOOKMARK's resourceVersion ("" if unreadable: it then moves nothing on)."""
    if not isinstance(event, WatchEvent):
        version = event.object.metadata.resourceVersion
        return version if isinstance(version, str) else ""
    try:
        return _lists.decode(event.object).metadata.resourceVersion
    except (msgspec.DecodeError, msgspec.ValidationError):
        return ""
