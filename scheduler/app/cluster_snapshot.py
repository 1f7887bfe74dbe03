"""A snapshot file's cluster in a scheduler's cache, as the watch would have delivered it.

Shared by the offline commands, ``simulate`` (which then places the pending pods) and
``explain`` (which diagnoses one of them), so that both see the cluster a decision in
``run`` would see: the objects a signature reads first, then nodes, bound pods, and the
pending pods queued (signed, their nominations recorded).

Neighbours: ``app.snapshot_file`` (the file to records), ``app.core`` (the Scheduler).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scheduler.cycle.eventhandlers import ClusterObject, EventHandlers
from scheduler.model.pod_groups import GroupApi

if TYPE_CHECKING:
    from scheduler.app.snapshot_file import Snapshot
    from scheduler.cycle.schedule_one import Scheduler


def load(scheduler: Scheduler, snapshot: Snapshot) -> None:
    """The snapshot into the cache through the event handlers (the watch's way in),
    everything a signature reads first, then the pods."""
    handlers = EventHandlers(scheduler)
    # Coscheduling's label makes pods members only where its CRD is served (``run`` asks
    # discovery); a snapshot holding its PodGroups came from such a cluster.
    scheduler.cluster.pod_groups.coscheduling = any(
        group.api is GroupApi.COSCHEDULING for group in snapshot.pod_groups
    )
    records: tuple[ClusterObject, ...] = (
        *snapshot.namespaces,
        *snapshot.services,
        *snapshot.controllers,
        *snapshot.storage_classes,
        *snapshot.pvs,
        *snapshot.pvcs,
        *snapshot.csi_nodes,
        *snapshot.disruption_budgets,
        *snapshot.pod_groups,
        *snapshot.device_classes,
        *snapshot.resource_slices,
        *snapshot.resource_claims,
    )
    for record in records:
        handlers.on_object(record, None)
    for node in snapshot.nodes:
        handlers.on_node(node)
    for pod in (*snapshot.running, *snapshot.pending):
        handlers.on_pod(pod)
