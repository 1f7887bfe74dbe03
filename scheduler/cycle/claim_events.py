"""ResourceClaim changes, and the pending pods they may let through (kube's DynamicResources
queueing hints for ResourceClaim events, and the wait of its PreEnqueue).

kube-scheduler's claim events come from its claim *assume cache*, so they follow the claim
as the scheduler sees it: the watch's versions, what PreBind wrote, what Unreserve restored.
Here too: ``cache.dra_objects`` calls :class:`ClaimEvents` on every change of a claim as seen
(the watch's through :meth:`ClaimEvents.set`, PreBind's writer's assumptions, the plugin's
restores), and what it means is decided on the claim as seen before and after:

* a claim that lost its allocation, or an allocated claim deleted, frees devices: every pod
  DynamicResources rejected may fit now (``RESOURCE_CLAIM_DEALLOCATED``; kube's
  preQueueingHint answers "all pods");
* a claim created, or whose status changed (allocated, reserved), concerns only the pods
  that use it (kube's hint queues them, skips the others): a pod held at PreEnqueue while
  its claim did not exist is offered to the queue again (PreEnqueue runs anew), one that
  DynamicResources left unschedulable is activated;
* any other change (the driver's finalizer, a label) wakes nobody.

Neighbours: ``cycle.eventhandlers`` (owns this and hands it its wake and its pod intake;
pods and the other kinds), ``cache.dra_objects`` (the claims, the pods by claim).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scheduler.framework.events import ClusterEvent
from scheduler.plugins import names

if TYPE_CHECKING:
    from collections.abc import Callable

    from scheduler.cache.dra_objects import DraObjects
    from scheduler.model.dra_claims import ResourceClaim
    from scheduler.model.pod import Pod
    from scheduler.queueing.scheduling_queue import SchedulingQueue


def _status(claim: ResourceClaim) -> object:
    """What kube's hint compares: the claim's status (allocation and reservations)."""
    return (claim.allocation, claim.reserved_for)


class ClaimEvents:
    """Feeds the watch's claims to the cache and re-checks the pods a change concerns."""

    def __init__(
        self,
        dra: DraObjects,
        queue: SchedulingQueue,
        wake: Callable[[ClusterEvent], None],
        offer: Callable[[Pod], object],
    ) -> None:
        self.dra = dra
        self.queue = queue
        self.wake = wake
        """Moves the unschedulable pods an event may help (the event handlers' wake)."""
        self.offer = offer
        """Offers a pod to the queue anew, PreEnqueue first (the event handlers' on_pod)."""
        self.dra.on_claim_changed = self._changed  # every view change: watch, PreBind, Unreserve

    def set(self, claim: ResourceClaim) -> None:
        """The watch delivered ``claim`` (added or updated)."""
        self.dra.set_claim(claim)

    def deleted(self, claim: ResourceClaim) -> None:
        """The watch says ``claim`` is gone."""
        self.dra.remove_claim(claim.key)

    def _changed(self, key: str, before: ResourceClaim | None, after: ResourceClaim | None) -> None:
        if (
            before is not None
            and before.allocation is not None
            and (after is None or after.allocation is None)
        ):
            self.wake(ClusterEvent.RESOURCE_CLAIM_DEALLOCATED)
        if after is None:
            return  # deleted: the pods using it go on waiting (kube: QueueSkip)
        if before is not None and _status(before) == _status(after):
            return
        for pod in self.dra.pods_using(key):
            queued = self.queue.get(pod.uid)
            if queued is None:
                self.offer(pod)  # held at PreEnqueue: offered to the queue again
            elif names.DYNAMIC_RESOURCES in queued.unschedulable_plugins:
                self.queue.activate(pod.uid)
