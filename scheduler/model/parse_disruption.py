"""Parse a PodDisruptionBudget (policy/v1) into :class:`model.disruption.PodDisruptionBudget`.

Only what preemption reads is validated; ``ModelError`` names the object and field.
"""

from __future__ import annotations

from scheduler.model.disruption import PodDisruptionBudget
from scheduler.model.parse_common import named_reader
from scheduler.model.parse_selectors import label_selector_from_raw

__all__ = ["pdb_from_raw"]


def pdb_from_raw(raw: object) -> PodDisruptionBudget:
    r, meta = named_reader(raw, "PodDisruptionBudget", namespaced=True)
    body = raw if isinstance(raw, dict) else {}  # named_reader refused anything else
    namespace = str(meta.get("namespace") or "default")
    name = str(meta["name"])
    spec = r.mapping(body.get("spec"), "spec")
    status = r.mapping(body.get("status"), "status")
    raw_selector = spec.get("selector")
    selector = (
        None
        if raw_selector is None
        else label_selector_from_raw(raw_selector, obj=r.obj, field="spec.selector")
    )
    allowed = r.integer(status.get("disruptionsAllowed"), "status.disruptionsAllowed")
    if allowed < 0:
        raise r.error("status.disruptionsAllowed", f"must not be negative, got {allowed}")
    disrupted = r.mapping(status.get("disruptedPods"), "status.disruptedPods")
    return PodDisruptionBudget(
        namespace=namespace,
        name=name,
        uid=r.string(meta.get("uid"), "metadata.uid"),
        resource_version=r.string(meta.get("resourceVersion"), "metadata.resourceVersion"),
        selector=selector,
        disruptions_allowed=allowed,
        disrupted_pods=frozenset(str(key) for key in disrupted),
    )
