"""Assigning a pod to a node: the ``pods/binding`` subresource's semantics.

kube-apiserver's ``BindingREST`` sets ``spec.nodeName`` and a ``PodScheduled=True``
condition in one write, and refuses with 409 Conflict when the pod is already assigned
or its UID does not match the Binding's precondition (worded as the storage layer words
it). It does not look the node up: a Binding to a node that does not exist succeeds
(kube-controller-manager's pod GC deletes such pods later). The write here copies only
the dicts it changes: binds are the emulator's hot path.
"""

from __future__ import annotations

from typing import Any

from scheduler.sim import errors
from scheduler.sim.discovery import PODS
from scheduler.sim.store import Record, Store, now_rfc3339


def set_condition(conditions: list[dict[str, Any]] | None, cond: dict[str, Any]) -> list[Any]:
    """A new conditions list with ``cond`` replacing the one of the same type."""
    out = [c for c in conditions or [] if c.get("type") != cond["type"]]
    out.append(cond)
    return out


def bind(store: Store, namespace: str, name: str, node: str, *, uid: str | None = None) -> Record:
    """Bind pod ``namespace/name`` to ``node``; 404 if gone, 409 if assigned or UID differs."""
    if not node:  # kube answers this with a bare 500, not a 422
        raise errors.ApiError(500, "", "target.name: Required value")
    rec = store.try_get(PODS, namespace, name)
    if rec is None:
        raise errors.not_found("pods", name)
    pod = rec.obj
    meta, spec, status = pod["metadata"], pod.get("spec") or {}, pod.get("status") or {}
    if uid and uid != meta.get("uid"):
        raise errors.conflict(
            "pods",
            name,
            f"StorageError: invalid object, Code: 4, Key: /registry/pods/{namespace}/{name}, "
            "ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: UID in precondition: "
            f"{uid}, UID in object meta: {meta.get('uid')}",
        )
    if spec.get("nodeName"):
        raise errors.conflict(
            "pods/binding", name, f'pod {name} is already assigned to node "{spec["nodeName"]}"'
        )
    if meta.get("deletionTimestamp"):
        raise errors.conflict(
            "pods/binding", name, f"pod {name} is being deleted, cannot be assigned to a host"
        )
    cond = {
        "type": "PodScheduled",
        "status": "True",
        "lastProbeTime": None,
        "lastTransitionTime": now_rfc3339(),
    }
    new = {
        **pod,
        "metadata": dict(meta),
        "spec": {**spec, "nodeName": node},
        "status": {**status, "conditions": set_condition(status.get("conditions"), cond)},
    }
    return store.update(PODS, new, expect_rv=None)
