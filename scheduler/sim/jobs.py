"""The Job controller of the emulator (``batch/v1``), as kube-controller-manager's in small.

It keeps ``min(parallelism, completions - succeeded)`` pods active (``parallelism``
defaults to 1; without ``completions`` until one pod succeeds), none while ``suspend`` is
true or after more than ``backoffLimit`` pods failed. Pods are named ``<job>-<5 chars>``,
carry the template's labels plus ``job-name``, ``batch.kubernetes.io/job-name``,
``controller-uid`` and ``batch.kubernetes.io/controller-uid``, and an ownerReference
(``controller: true``). Status: ``startTime``, ``active``, ``ready``, ``succeeded``,
``failed``, and the ``Complete``/``Failed`` condition. Nothing makes pods finish: the
emulator's kubelet only marks them Running, so a Job completes only if a client sets pod
phases. Not emulated: pod failure policies, indexed Jobs, ``ttlSecondsAfterFinished``,
``activeDeadlineSeconds``, the template's immutability.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from scheduler.sim import defaults, podtemplates
from scheduler.sim.discovery import JOBS, PODS
from scheduler.sim.store import now_rfc3339

if TYPE_CHECKING:
    from scheduler.sim.ownership import Ownership
    from scheduler.sim.store import Key, Store


def sync(store: Store, ownership: Ownership, key: Key) -> None:
    """Reconcile one Job: its active pods, then its status."""
    rec = store.try_get(JOBS, *key)
    if rec is None:
        return
    obj = rec.obj
    meta, spec = obj["metadata"], obj.get("spec") or {}
    pods = ownership.owned(meta["uid"], PODS)
    phases = [(p.obj.get("status") or {}).get("phase") for p in pods]
    succeeded, failed = phases.count("Succeeded"), phases.count("Failed")
    active = [p for p in pods if not podtemplates.terminal(p)]
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
        podtemplates.create_pods(
            store, JOBS, obj, [("", f"{meta['name']}-")] * (want - len(active)), labels
        )
    elif len(active) > want:
        podtemplates.delete_pods(store, podtemplates.deletion_order(active)[: len(active) - want])
    rec = store.get(JOBS, *key)
    old = rec.obj.get("status") or {}
    active = [p for p in ownership.owned(meta["uid"], PODS) if not podtemplates.terminal(p)]
    status: dict[str, Any] = {k: v for k, v in old.items() if k in ("startTime",)}
    if not spec.get("suspend"):
        status.setdefault("startTime", now_rfc3339())
    status.update(
        active=len(active),
        ready=sum(1 for p in active if podtemplates.running(p)),
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
    podtemplates.set_status(store, JOBS, rec, status)
