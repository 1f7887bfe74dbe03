"""The wake table: which cluster events may help a pod that given plugins rejected (kube's
QueueingHintMap, without hints), built from the plugins' ``events_to_register``.

``queueing.scheduling_queue`` asks it, for every unschedulable pod, on every cluster event;
the Scheduler builds it from its profiles' plugins (framework/events.py has the events).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from scheduler.framework.events import ClusterEvent
from scheduler.framework.interfaces import EnqueueExtensions

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Set


@dataclass(frozen=True, slots=True)
class WakeTable:
    """Which rejecting plugins each event may satisfy (kube's QueueingHintMap, without hints).

    A plugin that did not declare its events (no ``events_to_register``) may be helped by
    any event, and so may a pod no named plugin rejected (kube's rule for both).
    """

    registered: Mapping[ClusterEvent, frozenset[str]]
    """Event → names of the plugins that registered it."""
    declared: frozenset[str]
    """Names of the plugins that declared their events (possibly none)."""

    def worth_requeuing(self, event: ClusterEvent, rejected_by: Set[str]) -> bool:
        """Whether ``event`` may help a pod that the plugins ``rejected_by`` rejected."""
        if not rejected_by or not rejected_by <= self.declared:
            return True
        return not self.registered.get(event, frozenset()).isdisjoint(rejected_by)


EVERY_EVENT = WakeTable({}, frozenset())
"""No plugin declared anything: every event wakes every unschedulable pod."""


def wake_table(plugins: Iterable[object]) -> WakeTable:
    """The table of ``plugins`` (of one profile or several: a name's events are its own)."""
    registered: dict[ClusterEvent, set[str]] = {event: set() for event in ClusterEvent}
    declared: set[str] = set()
    for plugin in plugins:
        if not isinstance(plugin, EnqueueExtensions):
            continue
        declared.add(plugin.name)
        for event in plugin.events_to_register():
            registered[event].add(plugin.name)
    return WakeTable(
        {event: frozenset(names) for event, names in registered.items()}, frozenset(declared)
    )
