"""The StatefulSet controller of the emulator: pods with stable names ``<set>-<ordinal>``.

As kube-controller-manager's, it keeps one pod per ordinal in
``[ordinals.start, ordinals.start + replicas)`` (``spec.ordinals.start`` defaults to 0),
named ``<set>-<ordinal>``, with the template's labels plus
``statefulset.kubernetes.io/pod-name``, ``apps.kubernetes.io/pod-index`` and
``controller-revision-hash`` (``<set>-<template hash>``), ``hostname`` = the pod name,
``subdomain`` = ``serviceName``, and a controller ownerReference to the StatefulSet.
Failed or Succeeded pods are deleted and made again; pods beyond the range go.

Each ``volumeClaimTemplates`` entry gives every pod a claim ``<template>-<set>-<ordinal>``,
created (with the template's spec and the set's ``matchLabels``) before the pod when it is
missing and never deleted (kube's default ``persistentVolumeClaimRetentionPolicy``,
Retain); the pod's volume of the template's name uses it.

What it does not emulate: ordered, one-at-a-time creation and deletion
(``podManagementPolicy: OrderedReady`` acts like ``Parallel`` here: every missing pod is
created in one pass), the rolling update (a template change deletes and recreates every
pod of an older revision at once; ``partition`` is ignored), ControllerRevision objects,
claim retention policies other than Retain, ``minReadySeconds``.
Status: ``observedGeneration``, ``replicas``, ``readyReplicas``, ``currentReplicas``,
``updatedReplicas``, ``availableReplicas``, ``currentRevision``, ``updateRevision``,
``collisionCount``.
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any

from scheduler.sim import defaults, errors, podtemplates
from scheduler.sim.discovery import PERSISTENT_VOLUME_CLAIMS, PODS, STATEFUL_SETS

if TYPE_CHECKING:
    from scheduler.sim.ownership import Ownership
    from scheduler.sim.store import Key, Record, Store

POD_NAME = "statefulset.kubernetes.io/pod-name"
POD_INDEX = "apps.kubernetes.io/pod-index"
REVISION = "controller-revision-hash"


def _ordinal(name: str, pod: Record) -> int | None:
    """The ordinal in ``<name>-<ordinal>``, or None for a pod not named so."""
    prefix, _, tail = pod.obj["metadata"]["name"].rpartition("-")
    if prefix != name or not tail.isdigit():
        return None
    return int(tail)


def _claims(store: Store, obj: dict[str, Any], ordinal: int) -> list[dict[str, Any]]:
    """The pod's claim volumes, creating the claims that do not exist yet."""
    meta, spec = obj["metadata"], obj.get("spec") or {}
    match_labels = (spec.get("selector") or {}).get("matchLabels") or {}
    volumes: list[dict[str, Any]] = []
    for template in spec.get("volumeClaimTemplates") or []:
        tmeta = template.get("metadata") or {}
        claim_name = f"{tmeta.get('name', '')}-{meta['name']}-{ordinal}"
        volumes.append(
            {"name": tmeta.get("name", ""), "persistentVolumeClaim": {"claimName": claim_name}}
        )
        if store.try_get(PERSISTENT_VOLUME_CLAIMS, meta["namespace"], claim_name) is not None:
            continue
        claim: dict[str, Any] = {
            "apiVersion": "v1",
            "kind": "PersistentVolumeClaim",
            "metadata": {
                "name": claim_name,
                "namespace": meta["namespace"],
                "labels": {**(tmeta.get("labels") or {}), **match_labels},
            },
            "spec": copy.deepcopy(template.get("spec") or {}),
        }
        defaults.on_create(PERSISTENT_VOLUME_CLAIMS, claim)
        try:
            store.create(PERSISTENT_VOLUME_CLAIMS, claim)
        except errors.ApiError as e:
            if e.code != 409:
                raise
    return volumes


def sync(store: Store, ownership: Ownership, key: Key) -> None:
    """Reconcile one StatefulSet: one current pod per ordinal, then its status."""
    rec = store.try_get(STATEFUL_SETS, *key)
    if rec is None:
        return  # its pods go with the garbage collector
    obj = rec.obj
    meta, spec = obj["metadata"], obj.get("spec") or {}
    name = meta["name"]
    start = int((spec.get("ordinals") or {}).get("start", 0))
    wanted = range(start, start + int(spec.get("replicas", 1)))
    revision = f"{name}-{podtemplates.template_hash(spec.get('template') or {})}"
    stale, present = [], set()
    for pod in ownership.owned(meta["uid"], PODS):
        ordinal = _ordinal(name, pod)
        if (
            ordinal not in wanted
            or ordinal in present
            or podtemplates.terminal(pod)
            or podtemplates.labels_of(pod).get(REVISION) != revision
        ):
            stale.append(pod)
        else:
            present.add(ordinal)
    podtemplates.delete_pods(store, stale)
    for ordinal in wanted:
        if ordinal in present:
            continue
        pod_name = f"{name}-{ordinal}"
        labels = {REVISION: revision, POD_NAME: pod_name, POD_INDEX: str(ordinal)}
        volumes = _claims(store, obj, ordinal)
        podtemplates.create_pods(store, STATEFUL_SETS, obj, [(pod_name, "")], labels, volumes)
    rec = store.get(STATEFUL_SETS, *key)
    pods = [p for p in ownership.owned(meta["uid"], PODS) if not podtemplates.terminal(p)]
    ready = sum(1 for p in pods if podtemplates.running(p))
    current = sum(1 for p in pods if podtemplates.labels_of(p).get(REVISION) == revision)
    counted: dict[str, Any] = {
        "observedGeneration": rec.obj["metadata"].get("generation", 1),
        "replicas": len(pods),
        "readyReplicas": ready,
        "currentReplicas": current,
        "updatedReplicas": current,
        "availableReplicas": ready,
        "currentRevision": revision,
        "updateRevision": revision,
        "collisionCount": 0,
    }
    kept = ("replicas", "availableReplicas", "collisionCount")  # not omitempty in apps/v1
    status = {k: v for k, v in (rec.obj.get("status") or {}).items() if k not in counted}
    status.update({k: v for k, v in counted.items() if v or k in kept})
    podtemplates.set_status(store, STATEFUL_SETS, rec, status)
