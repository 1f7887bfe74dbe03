"""The ReplicaSet and ReplicationController controllers of the emulator.

Both keep ``spec.replicas`` (default 1) non-terminal pods of their template, as
kube-controller-manager's ReplicaSet controller does for either kind: pods are named
``<owner>-<5 chars>``, carry the template's labels and annotations and an ownerReference
to the ReplicaSet (``apps/v1``) or ReplicationController (``v1``) with
``controller: true``. Scale-down deletes unbound, then not-Running, then newest pods
first. A ReplicaSet made by a Deployment (:mod:`scheduler.sim.deployments`) and one
created by a user are served alike. Status: ``replicas``, ``fullyLabeledReplicas``,
``readyReplicas``, ``availableReplicas`` (pods Running, e.g. with ``--kubelet``),
``observedGeneration``, and a ReplicaSet's ``terminatingReplicas`` (always 0: pods go at
once); zero counts are omitted, as kube's ``omitempty`` drops them.

Not emulated: adoption of matching orphan pods and release of pods whose labels stop
matching (only pods this controller made are counted), ``minReadySeconds``, burst limits
and expectations (a sync acts at once on what the store holds).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from scheduler.sim import podtemplates
from scheduler.sim.discovery import PODS, REPLICA_SETS, REPLICATION_CONTROLLERS, ResourceType
from scheduler.sim.selectors import label_selector_matches

if TYPE_CHECKING:
    from scheduler.sim.ownership import Ownership
    from scheduler.sim.store import Key, Store


def counts(ownership: Ownership, rt: ResourceType, obj: dict[str, Any]) -> dict[str, Any]:
    """The replica counts of a ReplicaSet/RC's status from the pods it controls now."""
    pods = [
        p for p in ownership.owned(obj["metadata"]["uid"], PODS) if not podtemplates.terminal(p)
    ]
    template_labels = (((obj.get("spec") or {}).get("template") or {}).get("metadata") or {}).get(
        "labels"
    ) or {}
    labelled = {"matchLabels": template_labels}
    ready = sum(1 for p in pods if podtemplates.running(p))
    status: dict[str, Any] = {
        "replicas": len(pods),
        "fullyLabeledReplicas": sum(
            1 for p in pods if label_selector_matches(labelled, podtemplates.labels_of(p))
        ),
        "readyReplicas": ready,
        "availableReplicas": ready,
        "observedGeneration": obj["metadata"].get("generation", 1),
    }
    counted = {k: v for k, v in status.items() if v or k == "replicas"}
    if rt is REPLICA_SETS:  # a pointer in apps/v1, so 0 shows; pods go at once here
        counted["terminatingReplicas"] = 0
    return counted


def sync(store: Store, ownership: Ownership, rt: ResourceType, key: Key) -> None:
    """Reconcile one ReplicaSet or ReplicationController: its pods, then its status."""
    rec = store.try_get(rt, *key)
    if rec is None:
        return  # its pods go with the garbage collector
    obj = rec.obj
    want = int((obj.get("spec") or {}).get("replicas", 1))
    pods = [
        p for p in ownership.owned(obj["metadata"]["uid"], PODS) if not podtemplates.terminal(p)
    ]
    if len(pods) < want:
        prefix = f"{obj['metadata']['name']}-"
        podtemplates.create_pods(store, rt, obj, [("", prefix)] * (want - len(pods)))
    elif len(pods) > want:
        podtemplates.delete_pods(store, podtemplates.deletion_order(pods)[: len(pods) - want])
    rec = store.get(rt, *key)
    status = {**(rec.obj.get("status") or {})}
    for k in ("replicas", "fullyLabeledReplicas", "readyReplicas", "availableReplicas"):
        status.pop(k, None)
    status.update(counts(ownership, rt, rec.obj))
    podtemplates.set_status(store, rt, rec, status)


def sync_replica_set(store: Store, ownership: Ownership, key: Key) -> None:
    """:func:`sync` for an ``apps/v1`` ReplicaSet."""
    sync(store, ownership, REPLICA_SETS, key)


def sync_replication_controller(store: Store, ownership: Ownership, key: Key) -> None:
    """:func:`sync` for a ``v1`` ReplicationController."""
    sync(store, ownership, REPLICATION_CONTROLLERS, key)
