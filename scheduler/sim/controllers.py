"""Minimal workload controllers inside the emulator, and the loop that runs them.

So that ``kubectl apply -f manifests/examples/`` yields pods for a scheduler to place,
:class:`Controllers` (on by default; ``sim serve --no-controllers`` or
``SimServer(controllers=False)`` turns it off) plays these kube-controller-manager loops,
one module each:

* **Deployment** (:mod:`scheduler.sim.deployments`): owns one ReplicaSet per pod
  template (``<deployment>-<pod-template-hash>``); a template change scales the old
  ones to 0 at once (no rolling update).
* **ReplicaSet** and **ReplicationController** (:mod:`scheduler.sim.replicasets`):
  keep ``spec.replicas`` pods ``<owner>-<5 chars>`` owned by them, whether a Deployment
  or a user made the ReplicaSet.
* **StatefulSet** (:mod:`scheduler.sim.statefulsets`): pods ``<set>-0`` ..
  ``<set>-(N-1)`` with the pod-name and pod-index labels (all at once, not in order).
* **Job** (:mod:`scheduler.sim.jobs`).
* **PersistentVolume binding** (:mod:`scheduler.sim.volumes`): the PV controller's
  binding of a PV to the claim its claimRef names (what the scheduler's PreBind waits for).
* **Disruption** (:mod:`scheduler.sim.disruption`): the disruption controller's status of
  every PodDisruptionBudget (``disruptionsAllowed`` and the counts behind it), recomputed
  after a change to budgets, pods or the workloads whose scale it reads.
* **ResourceClaims from templates** (:mod:`scheduler.sim.resource_claims`): a pod's claim
  templates become claims owned by the pod, named in its ``status.resourceClaimStatuses``;
  a deleted or finished pod leaves its claims' ``reservedFor``.
* **Garbage collection** (:mod:`scheduler.sim.ownership`): deleting an owner deletes
  its dependents in background cascade (Deployment -> ReplicaSets -> pods).

A change to a workload, or to an object whose controller ownerReference names one (a
pod of a ReplicaSet, a ReplicaSet of a Deployment), marks that workload dirty; the loop
syncs dirty workloads until none is left. Like the other actors it listens to store
changes and writes through the store on the server's loop, deferred (``call_soon``) so
that every listener sees a change before any write it causes.

Not emulated anywhere: rollout history and strategies beyond the above, adoption of
orphans, ``minReadySeconds``, ``paused``, finalizers and foreground deletion, pod
``deletionTimestamp`` (pods go at once), Events from these controllers, and Priority
admission of the pods they make (docs/architecture.md, "Emulator vs kube-apiserver").
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING

from scheduler.sim import (
    deployments,
    disruption,
    errors,
    jobs,
    replicasets,
    resource_claims,
    statefulsets,
    volumes,
)
from scheduler.sim.discovery import (
    DEPLOYMENTS,
    JOBS,
    POD_DISRUPTION_BUDGETS,
    PODS,
    REPLICA_SETS,
    REPLICATION_CONTROLLERS,
    RESOURCE_CLAIM_TEMPLATES,
    STATEFUL_SETS,
    WORKLOADS,
    ResourceType,
)
from scheduler.sim.ownership import BY_STORAGE, Ownership

if TYPE_CHECKING:
    from collections.abc import Callable

    from scheduler.sim.store import Change, Key, Store

log = logging.getLogger(__name__)

_SYNCS: dict[ResourceType, Callable[[Store, Ownership, Key], None]] = {
    DEPLOYMENTS: deployments.sync,
    REPLICA_SETS: replicasets.sync_replica_set,
    REPLICATION_CONTROLLERS: replicasets.sync_replication_controller,
    STATEFUL_SETS: statefulsets.sync,
    JOBS: jobs.sync,
}
_CONTROLLER_KINDS = {(rt.api_version, rt.kind): rt for rt in WORKLOADS}


class Controllers:
    """The workload controllers and the garbage collector, on one store."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.ownership = Ownership(store)
        self._dirty: set[tuple[ResourceType, Key]] = set()
        self._gone: list[str] = []  # uids of deleted owners, to collect
        self._volumes_dirty = False
        self._budgets_dirty = False
        self._claims_dirty: set[Key] = set()  # pods whose claim templates need claims
        self._released: list[str] = []  # uids of pods gone or finished, with claims
        self._scheduled = self._running = False
        store.listeners.append(self._on_change)

    # -- change intake (inside the store's commit: no writes here) ---------------------------

    def _on_change(self, ch: Change) -> None:
        budgets = self.store.tables.get(POD_DISRUPTION_BUDGETS.storage_key)
        if budgets and ch.storage in disruption.STORAGES:
            self._budgets_dirty = True
            self._schedule()
        if ch.storage in volumes.STORAGES:
            self._volumes_dirty = True
            self._schedule()
            return
        if ch.storage in (PODS.storage_key, RESOURCE_CLAIM_TEMPLATES.storage_key):
            self._claims_changed(ch)
        rt = BY_STORAGE.get(ch.storage)
        if rt is None:
            return
        touched, gone = self.ownership.track(ch)
        wake = False
        for ref in touched:
            owner = _CONTROLLER_KINDS.get((ref.get("apiVersion", ""), ref.get("kind", "")))
            if owner is not None and ref.get("controller"):
                self._dirty.add((owner, (ch.key[0], ref.get("name", ""))))
                wake = True
        if rt in _SYNCS:
            self._dirty.add((rt, ch.key))
            wake = True
        if gone:
            self._gone.append(ch.record.obj["metadata"]["uid"])
            wake = True
        if wake:
            self._schedule()

    def _claims_changed(self, ch: Change) -> None:
        obj = ch.record.obj
        if ch.storage == RESOURCE_CLAIM_TEMPLATES.storage_key:
            if ch.type != "DELETED":  # a template arrived: its pods may need claims now
                pods = self.store.table(PODS)
                for key, rec in pods.items():
                    if key[0] == ch.key[0] and resource_claims.wants_claims(rec.obj):
                        self._claims_dirty.add(key)
                self._schedule()
            return
        if not (obj.get("spec") or {}).get("resourceClaims"):
            return
        finished = (obj.get("status") or {}).get("phase") in ("Succeeded", "Failed")
        if ch.type == "DELETED" or finished:
            self._released.append(obj["metadata"]["uid"])
            self._schedule()
        elif resource_claims.wants_claims(obj):
            self._claims_dirty.add(ch.key)
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
            while (
                self._gone
                or self._dirty
                or self._volumes_dirty
                or self._budgets_dirty
                or self._claims_dirty
                or self._released
            ):
                if self._budgets_dirty and not (self._gone or self._dirty):
                    self._budgets_dirty = False  # after the workloads settle: fewer writes
                    disruption.sync(self.store)
                    continue
                if self._volumes_dirty:
                    self._volumes_dirty = False
                    volumes.sync(self.store)
                    continue
                if self._gone:
                    self.ownership.collect(self._gone.pop())
                    continue
                if self._claims_dirty:
                    resource_claims.sync_pod(self.store, self._claims_dirty.pop())
                    continue
                if self._released:
                    resource_claims.release(self.store, self._released.pop())
                    continue
                rt, key = self._dirty.pop()
                try:
                    _SYNCS[rt](self.store, self.ownership, key)
                except errors.ApiError as e:  # e.g. its namespace is being deleted
                    log.warning("sim controller: %s %s/%s: %s", rt.kind, *key, e)
        finally:
            self._running = False
