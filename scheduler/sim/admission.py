"""The admission kube-apiserver applies to a new pod that the emulator mimics: Priority and
DefaultTolerationSeconds.

kube's Priority admission plugin resolves ``spec.priorityClassName`` to ``spec.priority``
(and ``preemptionPolicy``): a class that does not exist, or an integer priority in the
pod that differs from what the class gives, is refused with 403 Forbidden. Without a
class name the ``globalDefault`` class applies, or priority 0. The two system classes
kube-apiserver creates at start exist here too (:func:`system_priority_classes`).
DefaultTolerationSeconds gives every pod that does not tolerate them already 300 s
``NoExecute`` tolerations of the not-ready and unreachable node taints; the scheduler's
TaintToleration filter reads them.

NamespaceLifecycle's 403 for writes into a namespace being terminated has no counterpart:
the emulator deletes a namespace and its contents at once, so no namespace is ever in
that state (docs/architecture.md, "Emulator vs kube-apiserver").
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from scheduler.sim import errors
from scheduler.sim.discovery import PRIORITY_CLASSES

if TYPE_CHECKING:
    from scheduler.sim.store import Store

SYSTEM_CLASSES = {"system-node-critical": 2000001000, "system-cluster-critical": 2000000000}


def system_priority_classes() -> list[dict[str, Any]]:
    """The PriorityClasses kube-apiserver creates when it starts (stored form)."""
    return [
        {
            "metadata": {"name": name},
            "value": value,
            "preemptionPolicy": "PreemptLowerPriority",
            "description": "Used for system critical pods that must not be moved from their "
            "current node."
            if name == "system-node-critical"
            else "Used for system critical "
            "pods that must run in the cluster, but can be moved to another node if necessary.",
        }
        for name, value in SYSTEM_CLASSES.items()
    ]


NOT_READY = "node.kubernetes.io/not-ready"
UNREACHABLE = "node.kubernetes.io/unreachable"
DEFAULT_TOLERATION_SECONDS = 300


def default_tolerations(pod: dict[str, Any]) -> None:
    """DefaultTolerationSeconds: tolerate not-ready and unreachable nodes for 300 s."""
    spec = pod.setdefault("spec", {})
    tolerations = spec.get("tolerations")
    if tolerations is None:
        tolerations = []
    elif not isinstance(tolerations, list):
        return  # malformed (kube would not decode it): left for the scheduler to name
    for key in (NOT_READY, UNREACHABLE):
        if not any(
            isinstance(t, dict)
            and t.get("key") in (key, "", None)
            and t.get("effect") in ("NoExecute", "", None)
            for t in tolerations
        ):
            tolerations = [
                *tolerations,
                {
                    "key": key,
                    "operator": "Exists",
                    "effect": "NoExecute",
                    "tolerationSeconds": DEFAULT_TOLERATION_SECONDS,
                },
            ]
    spec["tolerations"] = tolerations


def admit_pod(store: Store, pod: dict[str, Any]) -> None:
    """Admission of a new pod (in place), or 403 as kube words it."""
    _priority(store, pod)
    default_tolerations(pod)


def _priority(store: Store, pod: dict[str, Any]) -> None:
    spec = pod.setdefault("spec", {})
    name = pod["metadata"].get("name") or pod["metadata"].get("generateName", "")
    class_name = spec.get("priorityClassName") or ""
    chosen: dict[str, Any] | None = None
    if class_name:
        record = store.try_get(PRIORITY_CLASSES, "", class_name)
        if record is None:
            raise errors.forbidden(
                "pods", name, f"no PriorityClass with name {class_name} was found"
            )
        chosen = record.obj
    else:
        chosen = next(
            (r.obj for r in store.table(PRIORITY_CLASSES).values() if r.obj.get("globalDefault")),
            None,
        )
        if chosen is not None:
            spec["priorityClassName"] = chosen["metadata"]["name"]
    priority = int(chosen.get("value") or 0) if chosen is not None else 0
    given = spec.get("priority")
    if given is not None and given != priority:
        raise errors.forbidden(
            "pods",
            name,
            f"the integer value of priority ({given}) must not be provided in pod spec; "
            "priority admission controller computed "
            f"{priority} from the given PriorityClass name",
        )
    spec["priority"] = priority
    policy = chosen.get("preemptionPolicy") if chosen is not None else None
    if policy:
        if spec.get("preemptionPolicy") not in (None, policy):
            raise errors.forbidden(
                "pods",
                name,
                f"the string value of PreemptionPolicy ({spec['preemptionPolicy']}) must not "
                "be provided in pod spec; priority admission controller computed "
                f"{policy} from the given PriorityClass name",
            )
        spec["preemptionPolicy"] = policy
