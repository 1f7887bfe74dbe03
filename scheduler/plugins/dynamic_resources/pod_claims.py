"""A pod's ResourceClaims as DynamicResources finds them, with kube's messages.

:func:`pod_resource_claims` is kube's ``foreachPodResourceClaim``: each ``spec.resourceClaims``
entry names its claim directly or through ``status.resourceClaimStatuses`` (a claim generated
from a template; an entry without a name needs no claim), the claim must be in the cache, not
being deleted, and a generated one must be the pod's own. :func:`prefilter_claim_status`
is PreFilter's check of a claim still to allocate: not in flight for another pod, its
requests' DeviceClasses present.

Neighbours: ``plugin`` (PreEnqueue and PreFilter call these), ``cache.dra_objects`` (the
claims, kube's ``resourceclaim.Name``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scheduler.cache.dra_objects import ClaimNameError, claim_name
from scheduler.framework import status as st

if TYPE_CHECKING:
    from scheduler.cache.dra_objects import DraObjects
    from scheduler.model.dra_claims import ResourceClaim
    from scheduler.model.pod import Pod
    from scheduler.plugins.dynamic_resources.requests import Features


class ClaimUnavailable(Exception):
    """The pod cannot be scheduled now; the message is kube's."""


def pod_resource_claims(objects: DraObjects, pod: Pod) -> list[ResourceClaim]:
    """The pod's claims in ``spec.resourceClaims`` order (those without a generated name
    skipped); raises :class:`ClaimUnavailable` with kube's text for the first that is not
    usable."""
    claims: list[ResourceClaim] = []
    for index, pod_claim in enumerate(pod.resource_claims):
        try:
            name = claim_name(pod, index)
        except ClaimNameError as exc:
            raise ClaimUnavailable(str(exc)) from None
        if name is None:
            continue
        claim = objects.claim(pod.namespace, name)
        if claim is None:
            raise ClaimUnavailable(f'could not find ResourceClaim "{pod.namespace}/{name}"')
        if claim.deleting:
            raise ClaimUnavailable(f'resourceclaim "{claim.name}" is being deleted')
        if pod_claim.resource_claim_template_name is not None and claim.owner_pod_uid != pod.uid:
            raise ClaimUnavailable(
                f"ResourceClaim {claim.namespace}/{claim.name} was not created for Pod "
                f"{pod.namespace}/{pod.name} (Pod is not owner)"
            )
        claims.append(claim)
    return claims


def _class_status(objects: DraObjects, class_name: str, request: str) -> st.Status:
    """kube's validateDeviceClass."""
    if not class_name:
        return st.error(f"request {request}: unsupported request type")
    if objects.device_class(class_name) is None:
        return st.unresolvable(f"request {request}: device class {class_name} does not exist")
    return st.SUCCESS


def prefilter_claim_status(
    objects: DraObjects, claim: ResourceClaim, features: Features
) -> st.Status:
    """PreFilter on a claim without an allocation: kube's in-flight wait and request checks."""
    if objects.pending_allocation(claim.uid) is not None:
        return st.unresolvable(f"resource claim {claim.key} is in the process of being allocated")
    for request in claim.spec.requests:
        if request.exactly is not None:
            status = _class_status(objects, request.exactly.device_class_name, request.name)
            if not status.is_success:
                return status
        elif request.first_available:
            if not features.prioritized_list:
                return st.unresolvable(
                    f"resource claim {claim.key}, request {request.name}: has subrequests, but "
                    "the DRAPrioritizedList feature is disabled"
                )
            for sub in request.first_available:
                status = _class_status(objects, sub.device_class_name, f"{request.name}/{sub.name}")
                if not status.is_success:
                    return status
        else:
            return st.unresolvable(
                f"resource claim {claim.key}, request {request.name}: unknown request type"
            )
    return st.SUCCESS
