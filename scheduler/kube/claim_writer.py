"""DynamicResources' claim writes against the API: PreBind's allocation and reservation,
Unreserve's and PostFilter's clean-ups, as kube-scheduler v1.37.2 writes them.

kube's ``bindClaim`` (PreBind), for each claim not yet reserved for the pod: refuse a claim
being deleted, or one allocated meanwhile when the scheduler allocated it; add the
``resource.kubernetes.io/delete-protection`` finalizer in a normal update when it is missing;
then one status update with ``status.allocation`` (Reserve's, with ``allocationTimestamp``
now: kube sets it, on an allocation it did not make too, with DRADeviceBindingConditions and
DRAResourceClaimDeviceStatus on, as by default) and the pod appended to
``status.reservedFor``; on a conflict it reads the claim
again and retries (``retry.DefaultRetry``: 5 tries, 10 ms apart). The claim the API returns
goes to the cache's assume layer, and once every claim of the pod is written its allocations
leave the in-flight set.

Here the writes are patches carrying the claim's ``resourceVersion`` (a 409 when it changed,
as kube's update): a strategic-merge patch of ``metadata.finalizers`` (merged: the other
finalizers stay) and one of ``status`` (``reservedFor`` merges by ``uid``, as the API
declares it). The status patch needs, besides ``resourceclaims/status``, the synthetic
``resourceclaims/binding`` permission that kube-apiserver checks with
DRAResourceClaimGranularStatusAuthorization (beta, on).

Unreserve removes the pod from ``reservedFor`` with kube's strategic-merge ``$patch: delete``;
PostFilter's deallocation clears ``allocation``, ``reservedFor`` and ``devices`` (kube's
UpdateStatus with them nil). Both are fire-and-forget, off the cycle, in one worker.

Neighbours: ``plugins.dynamic_resources.claim_binding`` (the port), ``cache.dra_objects``
(assume layer, in-flight set), ``client``/``errors`` for I/O, ``workers`` for the clean-ups.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from scheduler import logs
from scheduler.framework import status as st
from scheduler.kube import errors, workers
from scheduler.kube.client import STRATEGIC_MERGE_PATCH
from scheduler.kube.timestamps import rfc3339
from scheduler.model.errors import ModelError
from scheduler.model.parse_dra_claims import resource_claim_from_raw
from scheduler.plugins.dynamic_resources.claim_binding import FINALIZER
from scheduler.plugins.dynamic_resources.result_api import allocation_to_api

if TYPE_CHECKING:
    from collections.abc import Sequence

    from scheduler.cache.dra_objects import DraObjects
    from scheduler.kube.client import ApiClient
    from scheduler.model.dra_claims import AllocationResult, ConsumerReference, ResourceClaim
    from scheduler.model.pod import Pod
    from scheduler.plugins.dynamic_resources.claim_binding import ClaimBinding

__all__ = ["ClaimWriteError", "ClaimWriter"]

log = logs.get_logger(__name__)

CLAIM_PATH = "/apis/resource.k8s.io/v1/namespaces/{}/resourceclaims/{}"
STATUS_PATH = "/apis/resource.k8s.io/v1/namespaces/{}/resourceclaims/{}/status"
ATTEMPTS = 5
"""kube's retry.DefaultRetry: five tries."""
RETRY_SECONDS = 0.01


class ClaimWriteError(Exception):
    """PreBind could not write a claim; the text is kube's."""


@dataclass(frozen=True, slots=True)
class _Cleanup:
    claim: ResourceClaim
    pod_uid: str | None
    """The pod to take out of ``reservedFor``; None: deallocate the claim."""


def _claim(reply: dict[str, Any]) -> ResourceClaim:
    try:
        return resource_claim_from_raw(reply)
    except ModelError as exc:
        raise ClaimWriteError(f"the API server returned a claim we cannot read: {exc}") from None


def _consumer(ref: ConsumerReference) -> dict[str, str]:
    out = {"resource": ref.resource, "name": ref.name, "uid": ref.uid}
    return {"apiGroup": ref.api_group, **out} if ref.api_group else out


class ClaimWriter:
    """``ClaimWriterPort`` against the API; see the module docstring."""

    def __init__(self, api: ApiClient, objects: DraObjects) -> None:
        self.api = api
        self.objects = objects
        self._pool: workers.WorkerPool[_Cleanup] = workers.WorkerPool(
            "claim-cleanup", self._cleanup, limit=1
        )
        self.written = 0

    # -- PreBind ----------------------------------------------------------------------------

    async def bind_claims(
        self, pod: Pod, node_name: str, bindings: Sequence[ClaimBinding]
    ) -> st.Status:
        """The port's call: every binding written, in order; an Error status on failure
        (the allocations stay in flight until Unreserve, as in kube)."""
        try:
            for binding in bindings:
                written = await self._bind(pod, binding.claim, binding.allocation)
                if self.objects.assume(written) is None:
                    log.debug("claim_not_assumed", claim=written.key)
        except (ClaimWriteError, errors.ApiError) as exc:
            log.info("claim_binding_failed", pod=pod.key, node=node_name, error=str(exc))
            return st.error(str(exc))
        for binding in bindings:
            if binding.allocation is not None:
                self.objects.remove_pending_allocation(binding.claim.uid, force=True)
        return st.SUCCESS

    async def _bind(
        self, pod: Pod, claim: ResourceClaim, allocation: AllocationResult | None
    ) -> ResourceClaim:
        """kube's bindClaim for one claim: the claim as the API returned it."""
        for attempt in range(ATTEMPTS):
            if attempt:
                await asyncio.sleep(RETRY_SECONDS)
                try:
                    claim = _claim(
                        await self.api.request(
                            "GET", CLAIM_PATH.format(claim.namespace, claim.name)
                        )
                    )
                except errors.ApiError as exc:
                    raise ClaimWriteError(
                        f"get updated claim {claim.key} after conflict: {exc}"
                    ) from None
            try:
                return await self._try_bind(pod, claim, allocation)
            except errors.Conflict:
                if attempt == ATTEMPTS - 1:
                    raise
        raise AssertionError("unreachable")  # pragma: no cover

    async def _try_bind(
        self, pod: Pod, claim: ResourceClaim, allocation: AllocationResult | None
    ) -> ResourceClaim:
        if claim.deleting:
            raise ClaimWriteError(f"claim {claim.key} got deleted in the meantime")
        status: dict[str, Any] = {}
        if allocation is not None:
            if claim.allocation is not None:
                raise ClaimWriteError(f"claim {claim.key} got allocated elsewhere in the meantime")
            if FINALIZER not in claim.finalizers:
                body = {
                    "metadata": {
                        "resourceVersion": claim.resource_version,
                        "finalizers": [FINALIZER],
                    }
                }
                try:
                    reply = await self.api.request(
                        "PATCH",
                        CLAIM_PATH.format(claim.namespace, claim.name),
                        body=body,
                        content_type=STRATEGIC_MERGE_PATCH,
                    )
                except errors.Conflict:
                    raise
                except errors.ApiError as exc:
                    raise ClaimWriteError(f"add finalizer to claim {claim.key}: {exc}") from None
                claim = _claim(reply)
            status["allocation"] = {
                **allocation_to_api(allocation),
                "allocationTimestamp": rfc3339(),
            }
        elif claim.allocation is None:
            raise ClaimWriteError(f"claim {claim.key} got deallocated elsewhere in the meantime")
        elif claim.allocation.allocation_timestamp is None:
            status["allocation"] = {"allocationTimestamp": rfc3339()}  # merged into it
        # The whole list, the pod last: a strategic-merge patch puts the patch's entries
        # first (kube appends the pod to the list it read; the resourceVersion guards it).
        status["reservedFor"] = [
            *(_consumer(ref) for ref in claim.reserved_for),
            {"resource": "pods", "name": pod.name, "uid": pod.uid},
        ]
        body = {"metadata": {"resourceVersion": claim.resource_version}, "status": status}
        try:
            reply = await self.api.request(
                "PATCH",
                STATUS_PATH.format(claim.namespace, claim.name),
                body=body,
                content_type=STRATEGIC_MERGE_PATCH,
            )
        except errors.Conflict:
            raise
        except errors.ApiError as exc:
            what = "allocation and reservation" if allocation is not None else "reservation"
            raise ClaimWriteError(f"add {what} to claim {claim.key}: {exc}") from None
        self.written += 1
        return _claim(reply)

    # -- Unreserve, PostFilter --------------------------------------------------------------

    def unreserve(self, claim: ResourceClaim, pod: Pod) -> None:
        self._pool.submit(_Cleanup(claim, pod.uid))

    def deallocate(self, claim: ResourceClaim) -> None:
        self._pool.submit(_Cleanup(claim, None))

    async def drain(self, timeout: float) -> bool:  # noqa: ASYNC109 - the writers' API
        return await self._pool.drain(timeout)

    async def stop(self) -> None:
        await self._pool.stop()

    async def _cleanup(self, item: _Cleanup) -> None:
        claim = item.claim
        if item.pod_uid is not None:
            what = "unreserve"
            body: dict[str, Any] = {
                "metadata": {"uid": claim.uid},
                "status": {"reservedFor": [{"$patch": "delete", "uid": item.pod_uid}]},
            }
            content_type = STRATEGIC_MERGE_PATCH
        else:
            what = "deallocate"
            body = {
                "metadata": {"resourceVersion": claim.resource_version},
                "status": {"allocation": None, "reservedFor": None, "devices": None},
            }
            content_type = None  # merge patch: null removes
        try:
            await self.api.request(
                "PATCH",
                STATUS_PATH.format(claim.namespace, claim.name),
                body=body,
                content_type=content_type,
            )
        except errors.NotFound:
            return
        except errors.ApiError as exc:
            # The pod's next attempt decides again from what the watch shows.
            log.warning("claim_cleanup_failed", action=what, claim=claim.key, error=str(exc))
