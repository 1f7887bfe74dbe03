"""PodDisruptionBudgets in the emulator: kube-apiserver's validation and the status half of
kube-controller-manager's disruption controller.

A scheduler's preemption reads ``status.disruptionsAllowed`` (and ``disruptedPods``), which on
a real cluster only the disruption controller writes, so :func:`sync` computes the status as
its ``trySync`` does, over the pods of the budget's namespace its selector matches (a missing
selector matches none, an empty one every pod, as in policy/v1):

* ``minAvailable`` as an integer: ``expectedPods`` is the number of matching pods and
  ``desiredHealthy`` the integer;
* ``maxUnavailable``, or ``minAvailable`` as a percentage: ``expectedPods`` is the sum of
  the scales of the pods' controllers (a ReplicaSet's, or its Deployment's when one controls
  it; a ReplicationController's; a StatefulSet's); pods without a controller are left out
  (kube's "unmanaged pods"); a controller of another kind fails the sync, which then sets
  only ``disruptionsAllowed: 0`` and the ``SyncFailed`` condition (kube's ``failSafe``);
  percentages round up;
* ``currentHealthy`` counts matching pods with ``Ready=True`` (the emulator's kubelet sets
  it) that are not being deleted; ``disruptionsAllowed = max(0, currentHealthy -
  desiredHealthy)``, and 0 while no pod is expected; the ``DisruptionAllowed`` condition
  and ``observedGeneration`` follow.

Create clears the status a client sends (kube's ``PrepareForCreate``); ``/status`` writes are
kept until the next sync. Not emulated: the eviction API and the ``disruptedPods`` timeouts
(entries a client writes stay until the pod goes), Events, the scale subresource of custom
resources.
"""

from __future__ import annotations

import json
import math
import re
from typing import TYPE_CHECKING, Any

from scheduler.sim import errors
from scheduler.sim.discovery import (
    DEPLOYMENTS,
    POD_DISRUPTION_BUDGETS,
    PODS,
    REPLICA_SETS,
    REPLICATION_CONTROLLERS,
    STATEFUL_SETS,
    ResourceType,
)
from scheduler.sim.selectors import label_selector_matches
from scheduler.sim.store import now_rfc3339

if TYPE_CHECKING:
    from scheduler.sim.store import Record, Store

_PERCENT = re.compile(r"^([0-9]+)%$")
_CONTROLLERS: dict[tuple[str, str], ResourceType] = {
    ("ReplicaSet", "apps"): REPLICA_SETS,
    ("ReplicationController", ""): REPLICATION_CONTROLLERS,
    ("StatefulSet", "apps"): STATEFUL_SETS,
    ("Deployment", "apps"): DEPLOYMENTS,
}
STORAGES = frozenset(
    rt.storage_key
    for rt in (
        POD_DISRUPTION_BUDGETS,
        PODS,
        DEPLOYMENTS,
        REPLICA_SETS,
        REPLICATION_CONTROLLERS,
        STATEFUL_SETS,
    )
)
"""Changes to these storages may change a budget's status: they wake :func:`sync`."""


class SyncFailed(Exception):
    """The expected pod count cannot be computed (kube's sync error → failSafe)."""


def _invalid(obj: dict[str, Any], field_error: str) -> errors.ApiError:
    return errors.invalid(
        "PodDisruptionBudget", obj["metadata"].get("name", ""), field_error, group="policy"
    )


def _int_or_percent(obj: dict[str, Any], field: str, value: Any) -> None:
    """ValidatePositiveIntOrPercent and IsNotMoreThan100Percent, in kube's words."""
    shown = json.dumps(value)
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise _invalid(obj, f"spec.{field}: Invalid value: {shown}: must be an integer or a string")
    if isinstance(value, int):
        if value < 0:
            raise _invalid(
                obj, f"spec.{field}: Invalid value: {value}: must be greater than or equal to 0"
            )
        return
    match = _PERCENT.match(value)
    if match is None:
        raise _invalid(
            obj,
            f"spec.{field}: Invalid value: {shown}: a valid percent string must be a numeric "
            "string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation "
            "is '[0-9]+%')",
        )
    if int(match.group(1)) > 100:
        raise _invalid(obj, f"spec.{field}: Invalid value: {shown}: must not be greater than 100%")


def validate(obj: dict[str, Any], *, creating: bool) -> None:
    """Validate a budget's spec in place (422 naming the field); a create drops the status."""
    spec = obj.setdefault("spec", {})
    if not isinstance(spec, dict):
        raise _invalid(obj, "spec: Invalid value: must be an object")
    if spec.get("minAvailable") is not None and spec.get("maxUnavailable") is not None:
        raise _invalid(
            obj, "spec: Invalid value: minAvailable and maxUnavailable cannot be both set"
        )
    for field in ("minAvailable", "maxUnavailable"):
        if spec.get(field) is not None:
            _int_or_percent(obj, field, spec[field])
    selector = spec.get("selector")
    if selector is not None and not isinstance(selector, dict):
        raise _invalid(obj, "spec.selector: Invalid value: must be an object")
    policy = spec.get("unhealthyPodEvictionPolicy")
    if policy is not None and policy not in ("AlwaysAllow", "IfHealthyBudget"):
        raise _invalid(
            obj,
            f'spec.unhealthyPodEvictionPolicy: Unsupported value: "{policy}": '
            'supported values: "AlwaysAllow", "IfHealthyBudget"',
        )
    if creating:
        obj["status"] = {"disruptionsAllowed": 0, "currentHealthy": 0}
        obj["status"].update(desiredHealthy=0, expectedPods=0)


def _scaled(value: Any, total: int) -> int:
    """kube's GetScaledValueFromIntOrPercent, rounding up."""
    if isinstance(value, int):
        return value
    return math.ceil(int(value.rstrip("%")) * total / 100)


def _controller_of(obj: dict[str, Any]) -> dict[str, Any] | None:
    refs = obj["metadata"].get("ownerReferences") or []
    return next((r for r in refs if isinstance(r, dict) and r.get("controller")), None)


def _scale(store: Store, namespace: str, ref: dict[str, Any]) -> tuple[str, int] | None:
    """(uid, replicas) of the workload a controllerRef names (a ReplicaSet's Deployment when
    one controls it), None when it is gone; SyncFailed for a kind without a known scale."""
    group = str(ref.get("apiVersion", "")).rpartition("/")[0]
    rt = _CONTROLLERS.get((str(ref.get("kind", "")), group))
    if rt is None:
        kind = str(ref.get("kind", ""))
        if (kind, group) == ("Job", "batch"):
            raise SyncFailed("jobs.batch does not implement the scale subresource")
        raise SyncFailed(f'no matches for kind "{kind}" in version "{ref.get("apiVersion")}"')
    rec = store.try_get(rt, namespace, str(ref.get("name", "")))
    if rec is None or rec.obj["metadata"].get("uid") != ref.get("uid"):
        return None
    if rt is REPLICA_SETS:
        owner = _controller_of(rec.obj)
        if owner is not None and owner.get("kind") == "Deployment":
            return _scale(store, namespace, owner)
    replicas = (rec.obj.get("spec") or {}).get("replicas", 1)
    return rec.obj["metadata"]["uid"], replicas if isinstance(replicas, int) else 1


def _expected(store: Store, spec: dict[str, Any], pods: list[dict[str, Any]]) -> tuple[int, int]:
    """(expectedPods, desiredHealthy) as kube's getExpectedPodCount."""
    min_available, max_unavailable = spec.get("minAvailable"), spec.get("maxUnavailable")
    if max_unavailable is None and (min_available is None or isinstance(min_available, int)):
        return len(pods), min_available or 0
    scales: dict[str, int] = {}
    for pod in pods:
        ref = _controller_of(pod)
        if ref is None:
            continue  # unmanaged: kube logs it and goes on
        found = _scale(store, pod["metadata"]["namespace"], ref)
        if found is None:
            raise SyncFailed(f'found no controllers for pod "{pod["metadata"]["name"]}"')
        scales[found[0]] = found[1]
    expected = sum(scales.values())
    if max_unavailable is not None:
        return expected, max(0, expected - _scaled(max_unavailable, expected))
    return expected, _scaled(min_available, expected)


def _ready(pod: dict[str, Any]) -> bool:
    conditions = (pod.get("status") or {}).get("conditions") or []
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)


def _condition(old: list[Any], allowed: bool, generation: int, message: str = "") -> list[Any]:
    reason = "SufficientPods" if allowed else ("SyncFailed" if message else "InsufficientPods")
    status = "True" if allowed else "False"
    before = next((c for c in old if c.get("type") == "DisruptionAllowed"), None)
    changed = before is None or before.get("status") != status
    condition = {
        "type": "DisruptionAllowed",
        "status": status,
        "reason": reason,
        "message": message,
        "observedGeneration": generation,
        "lastTransitionTime": (
            now_rfc3339() if before is None or changed else before.get("lastTransitionTime")
        ),
    }
    return [*(c for c in old if c.get("type") != "DisruptionAllowed"), condition]


def _status(store: Store, rec: Record) -> dict[str, Any]:
    obj = rec.obj
    meta, spec = obj["metadata"], obj.get("spec") or {}
    old = dict(obj.get("status") or {})
    generation = meta.get("generation", 1)
    selector = spec.get("selector")
    pods = (
        []
        if not isinstance(selector, dict)
        else [
            p.obj
            for p in store.table(PODS).values()
            if p.obj["metadata"].get("namespace") == meta.get("namespace")
            and label_selector_matches(selector, p.obj["metadata"].get("labels") or {})
        ]
    )
    conditions = list(old.get("conditions") or [])
    try:
        expected, desired = _expected(store, spec, pods)
    except SyncFailed as e:
        return {
            **old,
            "disruptionsAllowed": 0,
            "conditions": _condition(conditions, False, old.get("observedGeneration", 0), str(e)),
        }
    names = {p["metadata"]["name"] for p in pods}
    disrupted = {k: v for k, v in (old.get("disruptedPods") or {}).items() if k in names}
    healthy = sum(
        1
        for p in pods
        if not p["metadata"].get("deletionTimestamp")
        and p["metadata"]["name"] not in disrupted
        and _ready(p)
    )
    allowed = max(0, healthy - desired) if expected > 0 else 0
    status: dict[str, Any] = {
        "observedGeneration": generation,
        "disruptionsAllowed": allowed,
        "currentHealthy": healthy,
        "desiredHealthy": desired,
        "expectedPods": expected,
        "conditions": _condition(conditions, allowed > 0, generation),
    }
    if disrupted:
        status["disruptedPods"] = disrupted
    return status


def sync(store: Store) -> None:
    """Recompute every budget's status, writing only those that changed."""
    for rec in list(store.table(POD_DISRUPTION_BUDGETS).values()):
        status = _status(store, rec)
        if status != rec.obj.get("status"):
            obj = {**rec.obj, "metadata": dict(rec.obj["metadata"]), "status": status}
            store.update(POD_DISRUPTION_BUDGETS, obj, expect_rv=None)
