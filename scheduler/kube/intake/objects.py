"""Raw events of a kind without a peek (PodGroups) → the controller's ``ObjectEvents``.

A PodGroup changes rarely and is small: every event is decoded in full and handed on; what
the typed informer adds over kopf is its own LIST+WATCH, the bookmarks and the Replace after
a re-list (``reflector``), and no kopf bookkeeping per event. Synchronous and await-free.

Neighbours: ``reflector`` (feeds :meth:`ObjectIntake.apply_event`), ``ports`` (the applier
this wraps, as a protocol), ``appliers`` (the pods' and nodes' intakes, which skip).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scheduler.kube.intake.appliers import decoded
from scheduler.kube.intake.peek import WatchEvent, decode_event
from scheduler.kube.kinds import key_of, resource_version

if TYPE_CHECKING:
    from scheduler.kube.intake.peek import Buffer
    from scheduler.kube.intake.ports import ObjectApplier
    from scheduler.metrics.registry import Metrics

__all__ = ["ObjectIntake"]


class ObjectIntake:
    """Raw events of ``events.kind`` into an :class:`~scheduler.kube.intake.ports.ObjectApplier`."""

    def __init__(self, events: ObjectApplier, *, metrics: Metrics) -> None:
        self.events = events
        self.metrics = metrics

    decode_line = staticmethod(decode_event)

    def apply_event(self, event: WatchEvent, line: Buffer) -> tuple[str, str]:
        """One watch event as :meth:`decode_line` decoded it; returns the object's key and
        resourceVersion (``""`` where unreadable)."""
        del line  # the event holds its object
        return self.apply_raw(event.type, event.object)

    def apply_raw(self, event_type: str | None, raw: Buffer) -> tuple[str, str]:
        """One event (``None``: a listed object) with its object still encoded."""
        obj = decoded(raw, self.events.kind.kind_name, self.metrics)
        if obj is None:
            return "", ""
        self.events.apply(event_type, obj)
        return key_of(self.events.kind, obj), resource_version(obj)
