"""Minimal workload controllers inside the emulator: Deployments and Jobs make pods.

So that ``kubectl apply -f manifests/examples/`` yields pods for a scheduler to place,
:class:`Controllers` (on by default; ``sim serve --no-controllers`` or
``SimServer(controllers=False)`` turns it off) plays three kube-controller-manager loops:

* **Deployment** (``apps/v1``): keeps ``spec.replicas`` (default 1) pods of the current
  template. There is **no ReplicaSet layer**: pods are owned by the Deployment itself
  (ownerReference ``kind: Deployment``, ``controller: true``), named
  ``<deployment>-<pod-template-hash>-<5 chars>`` and labelled ``pod-template-hash`` like
  a ReplicaSet's. Scaling (``spec.replicas`` by apply/patch/update or the ``/scale``
  subresource) creates or deletes pods; scale-down deletes unbound, then not-Running,
  then newest pods first. A template change replaces every old pod at once (no rolling
  update, maxSurge/maxUnavailable are ignored). Status: ``observedGeneration``,
  ``replicas``, ``updatedReplicas``, ``readyReplicas``/``availableReplicas`` (pods
  Running, e.g. with ``--kubelet``).
* **Job** (``batch/v1``): keeps ``min(parallelism, completions - succeeded)`` pods
  active (``parallelism`` defaults to 1; without ``completions`` until one pod succeeds),
  none while ``suspend`` is true or after more than ``backoffLimit`` pods failed. Pods
  are named ``<job>-<5 chars>``, carry the template's labels plus ``job-name``,
  ``batch.kubernetes.io/job-name``, ``controller-uid`` and
  ``batch.kubernetes.io/controller-uid``, and an ownerReference (``controller: true``).
  Status: ``startTime``, ``active``, ``ready``, ``succeeded``, ``failed``, and the
  ``Complete``/``Failed`` condition. Nothing makes pods finish: the emulator's kubelet
  only marks them Running, so a Job completes only if a client sets pod phases.
* **Garbage collection**: when an object is deleted, every object whose
  ownerReferences name its uid and no other existing owner is deleted too (background
  cascade, as ``kubectl delete`` asks by default). ``propagationPolicy: Orphan`` is
  served by the API (:func:`orphan`), not here, and works with the controllers off.

Not emulated: ReplicaSets, rollout history and strategies, ``minReadySeconds``,
``paused``, pod failure policies, indexed Jobs, ``ttlSecondsAfterFinished``,
``activeDeadlineSeconds``, finalizers and foreground deletion, pod ``deletionTimestamp``
(pods go at once), events from these controllers, and the Job template's immutability.

Like the other actors it listens to store changes and writes through the store on the
server's loop, deferred (``call_soon``) so that every listener sees a change before any
write it causes.
"""

from __future__ import annotations

import asyncio
import copy
import json
import logging
from typing import TYPE_CHECKING, Any

from scheduler.sim import defaults, errors
from scheduler.sim.discovery import DEPLOYMENTS, JOBS, PODS, RESOURCES, ResourceType
from scheduler.sim.store import DELETED, Change, Key, Record, Store, now_rfc3339

if TYPE_CHECKING:
    from collections.abc import Iterable

log = logging.getLogger(__name__)

_SAFE = "bcdfghjklmnpqrstvwxz2456789"  # k8s.io/apimachinery rand.SafeEncodeString alphabet
_BY_STORAGE: dict[str, ResourceType] = {}
for _rt in RESOURCES:
    _BY_STORAGE.setdefault(_rt.storage_key, _rt)
_BY_KIND: dict[tuple[str, str], ResourceType] = {(r.api_version, r.kind): r for r in RESOURCES}
_OWNERS = {("apps/v1", "Deployment"): DEPLOYMENTS, ("batch/v1", "Job"): JOBS}
_TERMINAL = ("Succeeded", "Failed")


def template_hash(template: dict[str, Any]) -> str:
    """A pod template's ``pod-template-hash``: FNV-32a of its canonical JSON, kube-encoded."""
    h = 0x811C9DC5
    for byte in json.dumps(template, sort_keys=True, separators=(",", ":")).encode():
        h = ((h ^ byte) * 0x01000193) & 0xFFFFFFFF
    return "".join(_SAFE[b % len(_SAFE)] for b in str(h).encode())


def _refs(rec: Record | None) -> list[dict[str, Any]]:
    if rec is None:
        return []
    refs = rec.obj["metadata"].get("ownerReferences") or []
    return [r for r in refs if isinstance(r, dict) and r.get("uid")]


def orphan(store: Store, uid: str) -> int:
    """Remove ownerReferences to ``uid`` from every object (``propagationPolicy: Orphan``)."""
    changed = 0
    for storage, table in list(store.tables.items()):
        rt = _BY_STORAGE.get(storage)
        if rt is None:
            continue
        for rec in list(table.values()):
            refs = _refs(rec)
            if not any(r["uid"] == uid for r in refs):
                continue
            meta = dict(rec.obj["metadata"])
            kept = [r for r in meta.get("ownerReferences") or [] if r.get("uid") != uid]
            if kept:
                meta["ownerReferences"] = kept
            else:
                meta.pop("ownerReferences", None)
            store.update(rt, {**rec.obj, "metadata": meta}, expect_rv=None)
            changed += 1
    return changed


class Controllers:
    """The Deployment and Job controllers and the garbage collector, on one store."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self._dependents: dict[str, set[tuple[str, Key]]] = {}  # owner uid -> dependents
        self._dirty: set[tuple[ResourceType, Key]] = set()
        self._gone: list[str] = []  # uids of deleted owners, to collect
        self._scheduled = self._running = False
        store.listeners.append(self._on_change)

    # -- change intake (inside the store's commit: no writes here) ---------------------------

    def _on_change(self, ch: Change) -> None:
        rt = _BY_STORAGE.get(ch.storage)
        if rt is None:
            return
        old = _refs(ch.prev)
        new = [] if ch.type == DELETED else _refs(ch.record)
        wake = False
        if old or new:
            dep = (ch.storage, ch.key)
            new_uids = {r["uid"] for r in new}
            for r in old:
                if r["uid"] not in new_uids:
                    self._dependents.get(r["uid"], set()).discard(dep)
            for r in new:
                self._dependents.setdefault(r["uid"], set()).add(dep)
            if rt is PODS:
                for r in old or new:
                    owner = _OWNERS.get((r.get("apiVersion", ""), r.get("kind", "")))
                    if owner is not None and r.get("controller"):
                        self._dirty.add((owner, (ch.key[0], r.get("name", ""))))
                        wake = True
        if rt in (DEPLOYMENTS, JOBS):
            self._dirty.add((rt, ch.key))
            wake = True
        if ch.type == DELETED and ch.record.obj["metadata"].get("uid") in self._dependents:
            self._gone.append(ch.record.obj["metadata"]["uid"])
            wake = True
        if wake:
            self._schedule()

    def _schedule(self) -> None:
        if self._scheduled or self._running:
            return
        self._scheduled = True
        try:
            asyncio.get_running_loop().call_soon(self._run)
        except RuntimeError:  # a write from outside the loop (set-up code): act now
            self._run()

    def _run(self) -> None:
        self._scheduled, self._running = False, True
        try:
            while self._gone or self._dirty:
                if self._gone:
                    self._collect(self._gone.pop())
                    continue
                rt, key = self._dirty.pop()
                try:
                    if rt is DEPLOYMENTS:
                        self._sync_deployment(key)
                    else:
                        self._sync_job(key)
                except errors.ApiError as e:  # e.g. its namespace is being deleted
                    log.warning("sim controller: %s %s/%s: %s", rt.kind, *key, e)
        finally:
            self._running = False

    # -- garbage collection ------------------------------------------------------------------

    def _owner_exists(self, ref: dict[str, Any], namespace: str) -> bool:
        rt = _BY_KIND.get((ref.get("apiVersion", ""), ref.get("kind", "")))
        if rt is None:
            return False
        rec = self.store.try_get(rt, namespace, ref.get("name", ""))
        return rec is not None and rec.obj["metadata"].get("uid") == ref["uid"]

    def _collect(self, uid: str) -> None:
        for storage, key in list(self._dependents.pop(uid, ())):
            rt = _BY_STORAGE[storage]
            rec = self.store.table(rt).get(key)
            refs = _refs(rec)
            if rec is None or not any(r["uid"] == uid for r in refs):
                continue
            if any(r["uid"] != uid and self._owner_exists(r, key[0]) for r in refs):
                continue
            try:
                self.store.delete(rt, key[0], key[1], uid=rec.obj["metadata"]["uid"])
            except errors.ApiError:
                continue

    # -- workloads ---------------------------------------------------------------------------

    def _owned(self, uid: str) -> list[Record]:
        """Pods controlled by ``uid`` (current records)."""
        table = self.store.table(PODS)
        pods = []
        for storage, key in self._dependents.get(uid, ()):
            rec = table.get(key) if storage == PODS.storage_key else None
            if rec is not None and any(r["uid"] == uid and r.get("controller") for r in _refs(rec)):
                pods.append(rec)
        return pods

    def _create_pods(
        self,
        rt: ResourceType,
        owner: dict[str, Any],
        count: int,
        prefix: str,
        labels: dict[str, str],
    ) -> None:
        meta = owner["metadata"]
        template = (owner.get("spec") or {}).get("template") or {}
        tmeta = template.get("metadata") or {}
        ref = {
            "apiVersion": rt.api_version,
            "kind": rt.kind,
            "name": meta["name"],
            "uid": meta["uid"],
            "controller": True,
            "blockOwnerDeletion": True,
        }
        for _ in range(count):
            pod_meta: dict[str, Any] = {
                "generateName": prefix,
                "namespace": meta["namespace"],
                "labels": {**(tmeta.get("labels") or {}), **labels},
                "ownerReferences": [dict(ref)],
            }
            if tmeta.get("annotations"):
                pod_meta["annotations"] = dict(tmeta["annotations"])
            pod = {"metadata": pod_meta, "spec": copy.deepcopy(template.get("spec") or {})}
            defaults.on_create(PODS, pod)
            self.store.create(PODS, pod)

    def _delete_pods(self, pods: Iterable[Record]) -> None:
        for rec in pods:
            meta = rec.obj["metadata"]
            try:
                self.store.delete(PODS, meta["namespace"], meta["name"], uid=meta["uid"])
            except errors.ApiError:
                continue

    def _set_status(self, rt: ResourceType, rec: Record, status: dict[str, Any]) -> None:
        if status != rec.obj.get("status"):
            obj = {**rec.obj, "metadata": dict(rec.obj["metadata"]), "status": status}
            self.store.update(rt, obj, expect_rv=None)

    def _sync_deployment(self, key: Key) -> None:
        rec = self.store.try_get(DEPLOYMENTS, *key)
        if rec is None:
            return  # its pods go with the garbage collector
        obj = rec.obj
        spec = obj.get("spec") or {}
        want = int(spec.get("replicas", 1))
        pod_hash = template_hash(spec.get("template") or {})
        pods = [p for p in self._owned(obj["metadata"]["uid"]) if not _terminal(p)]
        current = [p for p in pods if _labels(p).get("pod-template-hash") == pod_hash]
        self._delete_pods(p for p in pods if _labels(p).get("pod-template-hash") != pod_hash)
        if len(current) < want:
            prefix = f"{obj['metadata']['name']}-{pod_hash}-"
            self._create_pods(
                DEPLOYMENTS, obj, want - len(current), prefix, {"pod-template-hash": pod_hash}
            )
        elif len(current) > want:
            extra = _deletion_order(current)[: len(current) - want]
            self._delete_pods(extra)
        rec = self.store.get(DEPLOYMENTS, *key)
        pods = [p for p in self._owned(obj["metadata"]["uid"]) if not _terminal(p)]
        ready = sum(1 for p in pods if _running(p))
        status = {
            **(rec.obj.get("status") or {}),
            "observedGeneration": rec.obj["metadata"].get("generation", 1),
            "replicas": len(pods),
            "updatedReplicas": len(pods),
            "readyReplicas": ready,
            "availableReplicas": ready,
        }
        if len(pods) - ready:
            status["unavailableReplicas"] = len(pods) - ready
        else:
            status.pop("unavailableReplicas", None)
        self._set_status(DEPLOYMENTS, rec, status)

    def _sync_job(self, key: Key) -> None:
        rec = self.store.try_get(JOBS, *key)
        if rec is None:
            return
        obj = rec.obj
        meta, spec = obj["metadata"], obj.get("spec") or {}
        pods = self._owned(meta["uid"])
        phases = [(p.obj.get("status") or {}).get("phase") for p in pods]
        succeeded, failed = phases.count("Succeeded"), phases.count("Failed")
        active = [p for p in pods if not _terminal(p)]
        parallelism = int(spec.get("parallelism", 1))
        completions = spec.get("completions")
        over_limit = failed > int(spec.get("backoffLimit", 6))
        if completions is None:
            complete = succeeded > 0 and not active
            want = 0 if succeeded else parallelism
        else:
            complete = succeeded >= int(completions)
            want = max(0, min(parallelism, int(completions) - succeeded))
        if spec.get("suspend") or over_limit or complete:
            want = 0
        if len(active) < want:
            labels = {
                **dict.fromkeys(defaults.JOB_UID_LABELS, meta["uid"]),
                **dict.fromkeys(defaults.JOB_NAME_LABELS, meta["name"]),
            }
            self._create_pods(JOBS, obj, want - len(active), f"{meta['name']}-", labels)
        elif len(active) > want:
            self._delete_pods(_deletion_order(active)[: len(active) - want])
        rec = self.store.get(JOBS, *key)
        old = rec.obj.get("status") or {}
        active = [p for p in self._owned(meta["uid"]) if not _terminal(p)]
        status: dict[str, Any] = {k: v for k, v in old.items() if k in ("startTime",)}
        if not spec.get("suspend"):
            status.setdefault("startTime", now_rfc3339())
        status.update(
            active=len(active),
            ready=sum(1 for p in active if _running(p)),
            succeeded=succeeded,
            failed=failed,
        )
        conditions = list(old.get("conditions") or [])
        done = "Complete" if complete else ("Failed" if over_limit else None)
        if done and not any(c.get("type") == done for c in conditions):
            now = now_rfc3339()
            cond = {"type": done, "status": "True", "lastProbeTime": now}
            cond["lastTransitionTime"] = now
            if done == "Failed":
                cond.update(reason="BackoffLimitExceeded", message="Job has reached the limit")
            conditions.append(cond)
            if done == "Complete":
                status["completionTime"] = now
        elif "completionTime" in old:
            status["completionTime"] = old["completionTime"]
        if conditions:
            status["conditions"] = conditions
        self._set_status(JOBS, rec, status)


def _labels(rec: Record) -> dict[str, str]:
    labels: dict[str, str] = rec.obj["metadata"].get("labels") or {}
    return labels


def _terminal(rec: Record) -> bool:
    return (rec.obj.get("status") or {}).get("phase") in _TERMINAL


def _running(rec: Record) -> bool:
    return (rec.obj.get("status") or {}).get("phase") == "Running"


def _deletion_order(pods: list[Record]) -> list[Record]:
    """Pods in the order a ReplicaSet deletes them: unbound, not Running, newest first."""
    newest = sorted(
        pods,
        key=lambda p: (p.obj["metadata"].get("creationTimestamp", ""), p.obj["metadata"]["name"]),
        reverse=True,
    )
    return sorted(
        newest, key=lambda p: (bool((p.obj.get("spec") or {}).get("nodeName")), _running(p))
    )
