"""DynamicResources' claim writer without an API server (``simulate``, the benchmarks, the
unit tests): what PreBind, Unreserve and PostFilter would write is applied at once and
delivered through the event handlers, as the watch would deliver the API's answer.

Each write bumps the claim's resourceVersion, so the cache takes it as newer, and PreBind's
allocations leave the in-flight set once every claim of the pod is written (kube's success
clean-up).

Neighbours: ``plugins.dynamic_resources.claim_binding`` (the port), ``app.local_binder``
(lends it), ``kube.claim_writer`` (the writer against the API).
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from scheduler.cycle.eventhandlers import EventHandlers
from scheduler.framework import status as st
from scheduler.model.dra_claims import ConsumerReference
from scheduler.plugins.dynamic_resources.claim_binding import FINALIZER

if TYPE_CHECKING:
    from collections.abc import Sequence

    from scheduler.cycle.schedule_one import Scheduler
    from scheduler.model.dra_claims import ResourceClaim
    from scheduler.model.pod import Pod
    from scheduler.plugins.dynamic_resources.claim_binding import ClaimBinding


def _next_version(claim: ResourceClaim) -> str:
    try:
        return str(int(claim.resource_version or "0") + 1)
    except ValueError:
        return "1"


class LocalClaimWriter:
    """``ClaimWriterPort`` in memory; see the module docstring."""

    def __init__(self, scheduler: Scheduler) -> None:
        self.scheduler = scheduler

    def _deliver(self, claim: ResourceClaim, old: ResourceClaim, **changes: object) -> None:
        written = dataclasses.replace(
            claim,
            resource_version=_next_version(old),
            **changes,  # type: ignore[arg-type]
        )
        EventHandlers(self.scheduler).on_object(written, old)

    def bind_claims(self, pod: Pod, node_name: str, bindings: Sequence[ClaimBinding]) -> st.Status:
        dra = self.scheduler.cluster.dra
        for binding in bindings:
            current = dra.api_claim(binding.claim.namespace, binding.claim.name)
            if current is None or current.uid != binding.claim.uid:
                return st.error(f"claim {binding.claim.key} got deleted in the meantime")
            allocation = current.allocation
            if binding.allocation is not None:
                if allocation is not None:
                    return st.error(
                        f"claim {binding.claim.key} got allocated elsewhere in the meantime"
                    )
                allocation = binding.allocation
            consumer = ConsumerReference("", "pods", pod.name, pod.uid)
            finalizers = current.finalizers
            if FINALIZER not in finalizers:
                finalizers = (*finalizers, FINALIZER)
            self._deliver(
                current,
                current,
                allocation=allocation,
                reserved_for=(*current.reserved_for, consumer),
                finalizers=finalizers,
            )
        for binding in bindings:
            if binding.allocation is not None:
                dra.remove_pending_allocation(binding.claim.uid, force=True)
        return st.SUCCESS

    def unreserve(self, claim: ResourceClaim, pod: Pod) -> None:
        current = self.scheduler.cluster.dra.api_claim(claim.namespace, claim.name)
        if current is None:
            return
        left = tuple(ref for ref in current.reserved_for if ref.uid != pod.uid)
        if left != current.reserved_for:
            self._deliver(current, current, reserved_for=left)

    def deallocate(self, claim: ResourceClaim) -> None:
        current = self.scheduler.cluster.dra.api_claim(claim.namespace, claim.name)
        if current is not None and current.allocation is not None:
            self._deliver(current, current, allocation=None, reserved_for=())
