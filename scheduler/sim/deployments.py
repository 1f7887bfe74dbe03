"""The Deployment controller of the emulator: a Deployment runs its pods through ReplicaSets.

As kube-controller-manager's, the Deployment owns one ReplicaSet per pod template, named
``<deployment>-<pod-template-hash>``, with the template's labels plus
``pod-template-hash`` (in its labels, its selector and its template), the annotations
``deployment.kubernetes.io/revision``, ``desired-replicas`` and ``max-replicas``, and a
controller ownerReference; the ReplicaSet controller (:mod:`scheduler.sim.replicasets`)
owns the pods, which are therefore named ``<deployment>-<hash>-<5 chars>``.

A template change creates (or, for a template seen before, reuses) the ReplicaSet of the
new template with all ``spec.replicas`` and scales every older one to 0 at once: there is
**no rolling update** (``maxSurge``/``maxUnavailable`` only feed the ``max-replicas``
annotation), which is ``Recreate`` without waiting for the old pods to go. Old ReplicaSets
beyond ``revisionHistoryLimit`` are deleted once empty. Status: ``observedGeneration``,
``replicas``, ``updatedReplicas``, ``readyReplicas``, ``availableReplicas``,
``unavailableReplicas`` summed from the ReplicaSets' pods (zero counts omitted, as kube),
``terminatingReplicas`` 0.

Not emulated: ``paused``, ``minReadySeconds``, ``progressDeadlineSeconds`` and the
Available/Progressing conditions, rollbacks, adoption of matching orphan ReplicaSets,
hash collisions (a foreign ReplicaSet holding the name stops the rollout; kube would
bump ``collisionCount``).
"""

from __future__ import annotations

import copy
import logging
import math
from typing import TYPE_CHECKING, Any

from scheduler.sim import errors, podtemplates, replicasets
from scheduler.sim.discovery import DEPLOYMENTS, REPLICA_SETS

if TYPE_CHECKING:
    from scheduler.sim.ownership import Ownership
    from scheduler.sim.store import Key, Record, Store

log = logging.getLogger(__name__)

HASH_LABEL = "pod-template-hash"
REVISION = "deployment.kubernetes.io/revision"
DESIRED = "deployment.kubernetes.io/desired-replicas"
MAX = "deployment.kubernetes.io/max-replicas"


def _revision(rs: Record) -> int:
    try:
        return int((rs.obj["metadata"].get("annotations") or {}).get(REVISION, 0))
    except ValueError:
        return 0


def _surge(spec: dict[str, Any], replicas: int) -> int:
    """maxSurge in pods (percentages round up, as kube's ``ResolveFenceposts``)."""
    strategy = spec.get("strategy") or {}
    if strategy.get("type") != "RollingUpdate":
        return 0
    value = (strategy.get("rollingUpdate") or {}).get("maxSurge", "25%")
    if isinstance(value, str) and value.endswith("%"):
        try:
            return math.ceil(replicas * int(value[:-1]) / 100)
        except ValueError:
            return 0
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _new_replica_set(deploy: dict[str, Any], pod_hash: str, revision: int) -> dict[str, Any]:
    meta, spec = deploy["metadata"], deploy.get("spec") or {}
    template = copy.deepcopy(spec.get("template") or {})
    tmeta = template.setdefault("metadata", {})
    tmeta["labels"] = {**(tmeta.get("labels") or {}), HASH_LABEL: pod_hash}
    selector = copy.deepcopy(spec.get("selector") or {})
    selector["matchLabels"] = {**(selector.get("matchLabels") or {}), HASH_LABEL: pod_hash}
    replicas = int(spec.get("replicas", 1))
    return {
        "metadata": {
            "name": f"{meta['name']}-{pod_hash}",
            "namespace": meta["namespace"],
            "labels": dict(tmeta["labels"]),
            "annotations": {
                REVISION: str(revision),
                DESIRED: str(replicas),
                MAX: str(replicas + _surge(spec, replicas)),
            },
            "ownerReferences": [podtemplates.controller_ref(DEPLOYMENTS, deploy)],
        },
        "spec": {"replicas": replicas, "selector": selector, "template": template},
        "status": {"replicas": 0},
    }


def _scale(store: Store, rs: Record, replicas: int, annotations: dict[str, str]) -> None:
    """Set a ReplicaSet's replicas and annotations if they differ."""
    meta = rs.obj["metadata"]
    merged = {**(meta.get("annotations") or {}), **annotations}
    if (rs.obj.get("spec") or {}).get("replicas") == replicas and merged == meta.get("annotations"):
        return
    obj = {
        **rs.obj,
        "metadata": {**meta, "annotations": merged},
        "spec": {**(rs.obj.get("spec") or {}), "replicas": replicas},
    }
    store.update(REPLICA_SETS, obj, expect_rv=None)


def sync(store: Store, ownership: Ownership, key: Key) -> None:
    """Reconcile one Deployment: its ReplicaSets, then its status."""
    rec = store.try_get(DEPLOYMENTS, *key)
    if rec is None:
        return  # its ReplicaSets (and their pods) go with the garbage collector
    deploy = rec.obj
    uid, spec = deploy["metadata"]["uid"], deploy.get("spec") or {}
    want = int(spec.get("replicas", 1))
    pod_hash = podtemplates.template_hash(spec.get("template") or {})
    sets = ownership.owned(uid, REPLICA_SETS)
    current = next(
        (rs for rs in sets if podtemplates.labels_of(rs).get(HASH_LABEL) == pod_hash), None
    )
    top = max((_revision(rs) for rs in sets), default=0)
    annotations = {DESIRED: str(want), MAX: str(want + _surge(spec, want))}
    if current is None:
        try:
            store.create(REPLICA_SETS, _new_replica_set(deploy, pod_hash, top + 1))
        except errors.ApiError as e:
            log.warning("sim deployment %s/%s: new ReplicaSet: %s", *key, e)
            return
        revision = top + 1
    else:
        revision = _revision(current)
        if any(_revision(rs) > revision for rs in sets if rs is not current):
            revision = top + 1  # back to an older template: it becomes the newest revision
        _scale(store, current, want, {**annotations, REVISION: str(revision)})
    for rs in sets:
        if rs is not current:
            _scale(store, rs, 0, {})
    _prune(store, ownership, uid, pod_hash, int(spec.get("revisionHistoryLimit", 10)))
    _status(store, ownership, key, pod_hash, revision)


def _prune(store: Store, ownership: Ownership, uid: str, pod_hash: str, limit: int) -> None:
    """Delete the oldest empty old ReplicaSets beyond ``revisionHistoryLimit``."""
    old = [
        rs
        for rs in ownership.owned(uid, REPLICA_SETS)
        if podtemplates.labels_of(rs).get(HASH_LABEL) != pod_hash
    ]
    for rs in sorted(old, key=_revision)[: max(0, len(old) - limit)]:
        if (rs.obj.get("spec") or {}).get("replicas") or (rs.obj.get("status") or {}).get(
            "replicas"
        ):
            continue
        meta = rs.obj["metadata"]
        try:
            store.delete(REPLICA_SETS, meta["namespace"], meta["name"], uid=meta["uid"])
        except errors.ApiError:
            continue


def _status(store: Store, ownership: Ownership, key: Key, pod_hash: str, revision: int) -> None:
    """The Deployment's status from its ReplicaSets' pods, and its revision annotation."""
    rec = store.get(DEPLOYMENTS, *key)
    sets = ownership.owned(rec.obj["metadata"]["uid"], REPLICA_SETS)
    by_set = [(rs, replicasets.counts(ownership, REPLICA_SETS, rs.obj)) for rs in sets]
    total = sum(int((rs.obj.get("spec") or {}).get("replicas", 0)) for rs in sets)
    available = sum(c.get("availableReplicas", 0) for _, c in by_set)
    counted = {
        "observedGeneration": rec.obj["metadata"].get("generation", 1),
        "replicas": sum(c["replicas"] for _, c in by_set),
        "updatedReplicas": sum(
            c["replicas"]
            for rs, c in by_set
            if podtemplates.labels_of(rs).get(HASH_LABEL) == pod_hash
        ),
        "readyReplicas": sum(c.get("readyReplicas", 0) for _, c in by_set),
        "availableReplicas": available,
        "unavailableReplicas": max(0, total - available),
    }
    status = {k: v for k, v in (rec.obj.get("status") or {}).items() if k not in counted}
    status.update({k: v for k, v in counted.items() if v})
    status["terminatingReplicas"] = 0  # a pointer in apps/v1, so 0 shows
    meta = rec.obj["metadata"]
    annotations = {**(meta.get("annotations") or {}), REVISION: str(revision)}
    if status != rec.obj.get("status") or annotations != meta.get("annotations"):
        obj = {**rec.obj, "metadata": {**meta, "annotations": annotations}, "status": status}
        store.update(DEPLOYMENTS, obj, expect_rv=None)  # one write for both, as one sync
