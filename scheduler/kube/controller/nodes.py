"""Node watch events → parsed records for the event handlers (``cycle/eventhandlers.py``).

* added or changed → :meth:`EventHandlers.on_node` (which drops heartbeats that change
  nothing the scheduler reads);
* deleted → :meth:`EventHandlers.on_node_deleted`, and a ``node_deleted`` line with the
  binds to it still on the wire (they may land on the deleted node);
* listed again at a resourceVersion already applied (a re-list after 410) → nothing, not
  even a parse.

A node that cannot be parsed is skipped, with one log line naming the node and the field per
problem and ``batch_scheduler_bad_objects_total{kind="Node"}``. A version we held before
leaves the cache too: the change we cannot read may be the taint or the smaller
allocatable that should keep pods away, so the node gets no new pods until it is readable.

Synchronous and await-free, like ``pods``. Neighbours: ``kube.intake.appliers`` (the
informer, which skips unchanged heartbeats before they get here), ``sync``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from scheduler import logs
from scheduler.kube.kinds import resource_version
from scheduler.model.errors import ModelError
from scheduler.model.parse import node_from_raw

if TYPE_CHECKING:
    from scheduler.cycle.eventhandlers import EventHandlers
    from scheduler.metrics.registry import Metrics

log = logs.get_logger(__name__)

DELETED = "DELETED"


def _name_of(raw: Mapping[str, object]) -> str:
    meta = raw.get("metadata")
    name = meta.get("name") if isinstance(meta, Mapping) else None
    return name if isinstance(name, str) else ""


class NodeEvents:
    """Feeds node events to the event handlers; see the module docstring."""

    def __init__(self, handlers: EventHandlers, *, metrics: Metrics) -> None:
        self.handlers = handlers
        self.metrics = metrics
        self.versions: dict[str, str] = {}
        """resourceVersion of each node in the cache (it guards the reconcile)."""
        self._bad: dict[str, str] = {}
        self.binds_on_wire: Callable[[str], list[str]] | None = None
        """The pods whose binds to a node are on the wire, from the binder (None: none)."""

    def apply(self, event_type: str | None, raw: Mapping[str, object]) -> None:
        """One watch event (``None``: a listed object)."""
        if event_type == DELETED:
            self.delete(_name_of(raw))
            return
        if event_type is None:
            held = self.versions.get(_name_of(raw))
            if held is not None and held == resource_version(raw) != "":
                return  # listed again (a re-list after 410): already applied
        try:
            node = node_from_raw(raw)
        except ModelError as exc:
            self._unreadable(raw, exc)
            return
        self._bad.pop(node.name, None)
        self.versions[node.name] = node.resource_version
        self.handlers.on_node(node)

    def delete(self, name: str) -> None:
        """The node is gone from the API."""
        self._bad.pop(name, None)
        if self._drop(name):
            # After the cache dropped the node no bind to it starts; the ones named here were
            # unanswered and may still land (bench.chaos holds ours to that list).
            on_wire = self.binds_on_wire(name) if self.binds_on_wire is not None else []
            log.info("node_deleted", node=name, binds_on_wire=on_wire)

    def _drop(self, name: str) -> bool:
        """Out of the cache; True if it was there."""
        known = self.versions.pop(name, None) is not None
        self.handlers.on_node_deleted(name)
        return known

    def remove(self, key: str) -> None:
        """``sync``'s name for :meth:`delete` (its appliers share one protocol)."""
        self.delete(key)

    def held(self) -> dict[str, str]:
        """name → resourceVersion of every node in the cache (the Replace compares them)."""
        return dict(self.versions)

    def version(self, key: str) -> str | None:
        """The resourceVersion cached for node ``key`` (None: not cached)."""
        return self.versions.get(key)

    def _unreadable(self, raw: Mapping[str, object], exc: ModelError) -> None:
        name = _name_of(raw)
        if name in self.versions:
            self._drop(name)  # stale now (see the module docstring), not deleted: no line
        message = str(exc)
        if self._bad.get(name) == message:
            return
        self._bad[name] = message
        self.metrics.bad_objects.labels(kind="Node").inc()
        log.warning("bad_node_skipped", node=name, field=exc.field, error=exc.message)
