"""ResourceClaims made from templates in the emulator: the part of kube-controller-manager's
resource-claim controller a scheduler depends on.

For every pod whose ``spec.resourceClaims`` entry names a ``resourceClaimTemplateName`` and
whose ``status.resourceClaimStatuses`` has no entry for it, :func:`sync_pod` does what kube's
controller does (``handleClaim``): it takes the claim the pod already owns for that entry
(annotation ``resource.kubernetes.io/pod-claim-name``), or creates one from the template —
``generateName`` ``<pod>-<claim>-`` (both parts cut in proportion past 57 characters, as
kube), the template's labels and annotations plus that annotation, the pod as controlling
owner, the template's spec — and then records ``{name, resourceClaimName}`` in the pod's
status. A missing template leaves the pod as it is (kube retries; the scheduler waits).
A finished or deleted pod's entries leave its claims' ``reservedFor``
(:func:`release`); a deleted pod's claims go with it (the garbage collector, ``ownership``).

Not emulated: deallocating a claim nobody reserves any more, PodGroup claims, the
controller's Events and metrics.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from scheduler.sim import errors
from scheduler.sim.discovery import PODS, RESOURCE_CLAIM_TEMPLATES, RESOURCE_CLAIMS

if TYPE_CHECKING:
    from scheduler.sim.store import Key, Record, Store

POD_CLAIM_ANNOTATION = "resource.kubernetes.io/pod-claim-name"
_MAX_BASE = 57


def wants_claims(pod: dict[str, Any]) -> bool:
    """Whether the pod names a claim template (the controller has work for it)."""
    return any(
        isinstance(c, dict) and c.get("resourceClaimTemplateName")
        for c in (pod.get("spec") or {}).get("resourceClaims") or []
    )


def _generate_name(pod: str, claim: str) -> str:
    base = f"{pod}-{claim}-"
    if len(base) > _MAX_BASE:
        pod = pod[: len(pod) * _MAX_BASE // len(base)]
        claim = claim[: len(claim) * _MAX_BASE // len(base)]
        base = f"{pod}-{claim}"
    return base


def _owned(store: Store, namespace: str, pod_uid: str, pod_claim: str) -> str | None:
    for (ns, name), rec in store.table(RESOURCE_CLAIMS).items():
        if ns != namespace:
            continue
        meta = rec.obj["metadata"]
        if (meta.get("annotations") or {}).get(POD_CLAIM_ANNOTATION) != pod_claim:
            continue
        for ref in meta.get("ownerReferences") or []:
            if ref.get("controller") and ref.get("kind") == "Pod" and ref.get("uid") == pod_uid:
                return str(name)
    return None


def _create(store: Store, pod: dict[str, Any], pod_claim: str, template: Record) -> str:
    meta = pod["metadata"]
    spec = template.obj.get("spec") or {}
    claim_meta = dict(spec.get("metadata") or {})
    annotations = dict(claim_meta.get("annotations") or {})
    annotations[POD_CLAIM_ANNOTATION] = pod_claim
    obj: dict[str, Any] = {
        "metadata": {
            "generateName": _generate_name(meta["name"], pod_claim),
            "namespace": meta["namespace"],
            "annotations": annotations,
            "ownerReferences": [
                {
                    "apiVersion": "v1",
                    "kind": "Pod",
                    "name": meta["name"],
                    "uid": meta["uid"],
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
        },
        "spec": spec.get("spec") or {},
    }
    if claim_meta.get("labels"):
        obj["metadata"]["labels"] = dict(claim_meta["labels"])
    return str(store.create(RESOURCE_CLAIMS, obj).obj["metadata"]["name"])


def sync_pod(store: Store, key: Key) -> None:
    """Generate the pod's missing claims and name them in its status."""
    rec = store.try_get(PODS, *key)
    if rec is None:
        return
    pod = rec.obj
    if (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
        return
    status = pod.get("status") or {}
    known = {s.get("name") for s in status.get("resourceClaimStatuses") or []}
    added: list[dict[str, Any]] = []
    for pod_claim in (pod.get("spec") or {}).get("resourceClaims") or []:
        name = pod_claim.get("name")
        template_name = pod_claim.get("resourceClaimTemplateName")
        if not template_name or name in known:
            continue
        found = _owned(store, key[0], pod["metadata"]["uid"], name)
        if found is None:
            template = store.try_get(RESOURCE_CLAIM_TEMPLATES, key[0], template_name)
            if template is None:
                continue  # kube: an error, retried; the pod waits for its claim
            try:
                found = _create(store, pod, name, template)
            except errors.ApiError:
                continue  # e.g. the namespace is being deleted
        added.append({"name": name, "resourceClaimName": found})
    if not added:
        return
    entries = [dict(s) for s in status.get("resourceClaimStatuses") or [] if isinstance(s, dict)]
    new = {**pod, "status": {**status, "resourceClaimStatuses": [*entries, *added]}}
    store.update(PODS, new, expect_rv=None)


def release(store: Store, pod_uid: str) -> None:
    """The pod is gone or finished: out of every claim's ``reservedFor``."""
    for rec in list(store.table(RESOURCE_CLAIMS).values()):
        status = rec.obj.get("status") or {}
        reserved = status.get("reservedFor") or []
        kept = [r for r in reserved if r.get("uid") != pod_uid]
        if len(kept) == len(reserved):
            continue
        new_status = (
            {**status, "reservedFor": kept}
            if kept
            else {k: v for k, v in status.items() if k != "reservedFor"}
        )
        store.update(RESOURCE_CLAIMS, {**rec.obj, "status": new_status}, expect_rv=None)
