"""What DynamicResources asks of the API, as a port: PreBind's claim writes, Unreserve's and
PostFilter's (kube's ``bindClaim``, the unreserve patch, the deallocation).

The plugin does no I/O: the composition root lends it a :class:`ClaimWriterPort` through the
Handle (:data:`CLAIM_WRITER`): ``kube.claim_writer`` against the API server, an in-memory one
offline (``app.local_binder``). PreBind hands it one :class:`ClaimBinding` per claim not yet
reserved for the pod; the writer then does what kube's ``bindClaim`` does for each — the
``resource.kubernetes.io/delete-protection`` finalizer first, then ``status.allocation``
(when Reserve allocated the claim, with kube's ``allocationTimestamp``) and the pod in
``status.reservedFor`` — and, once every claim is written, records the written claims in the
cache's assume layer and takes their allocations out of the in-flight set (kube's
``AssumeClaimAfterAPICall`` and PreBind's success clean-up).

Neighbours: ``plugin`` (calls the port), ``kube.claim_writer`` and ``app.local_binder`` (the
two writers), ``cache.dra_objects`` (the assume layer and the in-flight set).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, Protocol

from scheduler.framework.interfaces import ServiceKey

if TYPE_CHECKING:
    from collections.abc import Awaitable, Sequence

    from scheduler.framework import status as st
    from scheduler.model.dra_claims import AllocationResult, ResourceClaim
    from scheduler.model.pod import Pod

FINALIZER: Final = "resource.kubernetes.io/delete-protection"
"""kube's ``resourceapi.Finalizer``: an allocated claim is not deleted under its pod."""


@dataclass(frozen=True, slots=True)
class ClaimBinding:
    """One claim PreBind must reserve for the pod: ``allocation`` is what Reserve allocated
    for it (None: the claim was allocated already, only ``reservedFor`` is written)."""

    claim: ResourceClaim
    allocation: AllocationResult | None


class ClaimWriterPort(Protocol):
    """The API side of DynamicResources; see the module docstring."""

    def bind_claims(
        self, pod: Pod, node_name: str, bindings: Sequence[ClaimBinding]
    ) -> st.Status | Awaitable[st.Status]:
        """kube's ``bindClaim`` for each of ``bindings``, in order (PreBind): SUCCESS, or an
        Error status with kube's text (the pod is unreserved and retried)."""
        ...

    def unreserve(self, claim: ResourceClaim, pod: Pod) -> None:
        """Remove ``pod`` from the claim's ``reservedFor`` (kube's strategic-merge patch);
        fire-and-forget: a failure is logged, the pod's next attempt decides again."""
        ...

    def deallocate(self, claim: ResourceClaim) -> None:
        """Clear the claim's allocation, ``reservedFor`` and device status (PostFilter);
        fire-and-forget, as :meth:`unreserve`."""
        ...


CLAIM_WRITER: Final[ServiceKey[ClaimWriterPort]] = ServiceKey("ClaimWriter")
"""The Handle's service the composition root provides for DynamicResources."""


def reserved_for_pod(claim: ResourceClaim, pod: Pod) -> bool:
    """kube's ``IsReservedForPod`` (PodGroup reservations are off: DRAWorkloadResourceClaims)."""
    return any(ref.uid == pod.uid for ref in claim.reserved_for)
