"""Pods from pod templates: what every workload controller of the emulator shares.

kube-controller-manager's ``controller.GetPodFromTemplate``: a pod carries its template's
labels, annotations and spec and one ownerReference to its controller
(``controller: true``, ``blockOwnerDeletion: true``); plus the order in which a
ReplicaSet picks pods to delete, the ``pod-template-hash`` and the pod predicates the
status fields count. Neighbours: the controllers in :mod:`scheduler.sim.replicasets`,
:mod:`scheduler.sim.deployments`, :mod:`scheduler.sim.statefulsets`,
:mod:`scheduler.sim.jobs`.
"""

from __future__ import annotations

import copy
import json
from typing import TYPE_CHECKING, Any

from scheduler.sim import defaults, errors
from scheduler.sim.discovery import PODS

if TYPE_CHECKING:
    from collections.abc import Iterable

    from scheduler.sim.discovery import ResourceType
    from scheduler.sim.store import Record, Store

_SAFE = "bcdfghjklmnpqrstvwxz2456789"  # k8s.io/apimachinery rand.SafeEncodeString alphabet
_TERMINAL = ("Succeeded", "Failed")


def template_hash(template: dict[str, Any]) -> str:
    """A pod template's ``pod-template-hash``: FNV-32a of its canonical JSON, kube-encoded.

    kube hashes a deep print of the Go struct instead, so the values differ from a real
    cluster's; they are stable, distinct per template and of the same alphabet.
    """
    h = 0x811C9DC5
    for byte in json.dumps(template, sort_keys=True, separators=(",", ":")).encode():
        h = ((h ^ byte) * 0x01000193) & 0xFFFFFFFF
    return "".join(_SAFE[b % len(_SAFE)] for b in str(h).encode())


def controller_ref(rt: ResourceType, owner: dict[str, Any]) -> dict[str, Any]:
    """``metav1.NewControllerRef`` for ``owner`` of kind ``rt``."""
    meta = owner["metadata"]
    return {
        "apiVersion": rt.api_version,
        "kind": rt.kind,
        "name": meta["name"],
        "uid": meta["uid"],
        "controller": True,
        "blockOwnerDeletion": True,
    }


def create_pods(
    store: Store,
    rt: ResourceType,
    owner: dict[str, Any],
    names: Iterable[tuple[str, str]],
    labels: dict[str, str] | None = None,
    volumes: list[dict[str, Any]] | None = None,
) -> None:
    """Create one pod of ``owner``'s template per ``(name, generateName)`` (an empty name:
    generated; an empty prefix: ``<owner>-``) with extra ``labels`` and ``volumes`` (which
    replace the template's volumes of the same name); defaulted as the API would (not
    admitted: see architecture.md)."""
    meta = owner["metadata"]
    template = (owner.get("spec") or {}).get("template") or {}
    tmeta = template.get("metadata") or {}
    for name, prefix in names:
        pod_meta: dict[str, Any] = {
            "namespace": meta["namespace"],
            "labels": {**(tmeta.get("labels") or {}), **(labels or {})},
            "ownerReferences": [controller_ref(rt, owner)],
        }
        pod_meta["generateName"] = prefix or f"{meta['name']}-"  # as GetPodFromTemplate
        if name:
            pod_meta["name"] = name
        if tmeta.get("annotations"):
            pod_meta["annotations"] = dict(tmeta["annotations"])
        pod = {"metadata": pod_meta, "spec": copy.deepcopy(template.get("spec") or {})}
        if volumes:
            names_given = {v["name"] for v in volumes}
            kept = [v for v in pod["spec"].get("volumes") or [] if v.get("name") not in names_given]
            pod["spec"]["volumes"] = [*kept, *copy.deepcopy(volumes)]
        if name and rt.kind == "StatefulSet":  # initIdentity: stable network identity
            pod["spec"]["hostname"] = name
            if (owner.get("spec") or {}).get("serviceName"):
                pod["spec"]["subdomain"] = owner["spec"]["serviceName"]
        defaults.on_create(PODS, pod)
        try:
            store.create(PODS, pod)
        except errors.ApiError as e:
            if e.code != 409:  # a pod of that name is still there: the next sync retries
                raise


def delete_pods(store: Store, pods: Iterable[Record]) -> None:
    """Delete each pod (the version seen), ignoring pods already gone or replaced."""
    for rec in pods:
        meta = rec.obj["metadata"]
        try:
            store.delete(PODS, meta["namespace"], meta["name"], uid=meta["uid"])
        except errors.ApiError:
            continue


def set_status(store: Store, rt: ResourceType, rec: Record, status: dict[str, Any]) -> None:
    """Write ``status`` if it differs (no write, no event otherwise)."""
    if status != rec.obj.get("status"):
        obj = {**rec.obj, "metadata": dict(rec.obj["metadata"]), "status": status}
        store.update(rt, obj, expect_rv=None)


def labels_of(rec: Record) -> dict[str, str]:
    """The object's labels (empty if none)."""
    labels: dict[str, str] = rec.obj["metadata"].get("labels") or {}
    return labels


def terminal(rec: Record) -> bool:
    """Pod phase Succeeded or Failed: no longer counted as a replica."""
    return (rec.obj.get("status") or {}).get("phase") in _TERMINAL


def running(rec: Record) -> bool:
    """Pod phase Running (the emulator's kubelet also marks such pods Ready)."""
    return (rec.obj.get("status") or {}).get("phase") == "Running"


def deletion_order(pods: list[Record]) -> list[Record]:
    """Pods in the order a ReplicaSet deletes them: unbound, not Running, newest first."""
    newest = sorted(
        pods,
        key=lambda p: (p.obj["metadata"].get("creationTimestamp", ""), p.obj["metadata"]["name"]),
        reverse=True,
    )
    return sorted(
        newest, key=lambda p: (bool((p.obj.get("spec") or {}).get("nodeName")), running(p))
    )
