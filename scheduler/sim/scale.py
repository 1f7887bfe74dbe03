"""The ``/scale`` subresource of the replicated workloads, as ``kubectl scale`` and HPAs use it.

Deployments, ReplicaSets, StatefulSets and ReplicationControllers serve it alike: an
``autoscaling/v1`` Scale whose ``spec.replicas`` is the workload's, ``status.replicas``
its status, ``status.selector`` its label selector as a string (a ReplicationController's
plain label map printed the same way). Writing one changes only the workload's
``spec.replicas``; a ``resourceVersion`` in the written Scale is the workload's and is
checked as on any update.
"""

from __future__ import annotations

from typing import Any

from scheduler.sim import errors


def selector_string(selector: dict[str, Any] | None) -> str:
    """A LabelSelector as kube prints it (``a=b,c in (d,e)``); matchLabels sorted first."""
    selector = selector or {}
    parts = [f"{k}={v}" for k, v in sorted((selector.get("matchLabels") or {}).items())]
    for expr in selector.get("matchExpressions") or []:
        key, op, values = expr.get("key", ""), expr.get("operator", ""), expr.get("values") or []
        if op == "Exists":
            parts.append(key)
        elif op == "DoesNotExist":
            parts.append(f"!{key}")
        else:
            parts.append(f"{key} {op.lower()} ({','.join(sorted(values))})")
    return ",".join(parts)


def _label_selector(selector: Any) -> dict[str, Any] | None:
    """A LabelSelector; a ReplicationController's plain map becomes its ``matchLabels``."""
    if not isinstance(selector, dict):
        return None
    if selector and not {"matchLabels", "matchExpressions"} & selector.keys():
        return {"matchLabels": selector}
    return selector


def to_scale(obj: dict[str, Any]) -> dict[str, Any]:
    """The Scale view of a stored (bare) workload."""
    meta = obj["metadata"]
    return {
        "kind": "Scale",
        "apiVersion": "autoscaling/v1",
        "metadata": {
            k: meta[k]
            for k in ("name", "namespace", "uid", "resourceVersion", "creationTimestamp")
            if k in meta
        },
        "spec": {"replicas": (obj.get("spec") or {}).get("replicas", 1)},
        "status": {
            "replicas": (obj.get("status") or {}).get("replicas", 0),
            "selector": selector_string(_label_selector((obj.get("spec") or {}).get("selector"))),
        },
    }


def from_scale(obj: dict[str, Any], scale: Any) -> tuple[dict[str, Any], str | None]:
    """The workload with the Scale's replicas, and the resourceVersion to expect."""
    if not isinstance(scale, dict):
        raise errors.bad_request("the body of the request must be an autoscaling/v1 Scale")
    replicas = (scale.get("spec") or {}).get("replicas", 0)
    name = obj["metadata"]["name"]
    if not isinstance(replicas, int) or isinstance(replicas, bool) or replicas < 0:
        raise errors.invalid(
            "Scale",
            name,
            f"spec.replicas: Invalid value: {replicas!r}: must be greater than or equal to 0",
        )
    expect = (scale.get("metadata") or {}).get("resourceVersion")
    new = {
        **obj,
        "metadata": dict(obj["metadata"]),
        "spec": {**(obj.get("spec") or {}), "replicas": replicas},
    }
    return new, expect
