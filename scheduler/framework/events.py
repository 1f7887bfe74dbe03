"""Cluster events that may make an unschedulable pod schedulable, and the wake table.

kube-scheduler lets each plugin name the events that may undo its own rejection
(``EnqueueExtensions.EventsToRegister``); the queue then moves an unschedulable pod only on
an event that one of the plugins that rejected it registered. Our events are coarser than
kube's (one ``NODE_UPDATE`` for every kind of node change; no events for the pending pod
itself, the TargetPod events: a queued pod that changes re-enters the active pool anyway), so
each plugin declares the ``ClusterEvent`` covering any kube event it registers. Of an
assigned pod's updates only the two that an in-tree plugin registers are raised, label
changes and request scale-downs (kube's ``PodSchedulingPropertiesChange``); kube's generic
AssignedPod/Update and UpdatePodScaleUp, which no in-tree plugin registers with kube v1.37's
default feature gates, are not. Queueing hints are not modelled: an event wakes every pod a
registering plugin rejected, where kube's hint may still skip it (more retries, never
fewer).

:func:`wake_table` builds the table from a profile's plugins; ``queueing.scheduling_queue``
reads it. Plugins import this module (it sits below them); the queue sits above both.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING

from scheduler.framework.interfaces import EnqueueExtensions

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Set


class ClusterEvent(StrEnum):
    """Cluster changes that can make an unschedulable pod schedulable."""

    NODE_ADD = "NodeAdd"
    NODE_UPDATE = "NodeUpdate"
    """Anything a plugin reads changed on a node: labels, taints, allocatable, unschedulable."""
    NODE_DELETE = "NodeDelete"
    """A node left: a topology domain may have gone with it (PodTopologySpread's minimum)."""
    ASSIGNED_POD_ADD = "AssignedPodAdd"
    ASSIGNED_POD_LABEL_UPDATE = "AssignedPodUpdatePodLabel"
    """An assigned pod's labels changed: it may match, or stop matching, affinity terms and
    spreading selectors."""
    ASSIGNED_POD_SCALE_DOWN = "AssignedPodUpdatePodScaleDown"
    """An assigned pod's requests shrank (in-place resize) or lost a resource: it freed some."""
    ASSIGNED_POD_DELETE = "AssignedPodDelete"
    """An assigned pod was deleted or finished (Succeeded/Failed): it freed resources."""
    STORAGE_CHANGE = "StorageChange"
    """A PersistentVolume, claim, StorageClass or CSINode was added, changed or deleted."""


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
