"""Parse Namespaces, Services and pod controllers (RC, ReplicaSet, StatefulSet) into records.

Only the fields default topology spreading and namespace selectors read are validated;
``ModelError`` names the object and field, as for pods and nodes.

Neighbours: ``model.workloads`` (the records), ``parse_selectors`` (label selectors).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scheduler.model.labels import LabelSelector, Operator, Requirement
from scheduler.model.parse_common import Reader, named_reader
from scheduler.model.parse_selectors import canonical, label_selector_from_raw
from scheduler.model.workloads import Controller, ControllerKind, ControllerRef, Namespace, Service

if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = [
    "controller_from_raw",
    "controller_ref_from_raw",
    "namespace_from_raw",
    "service_from_raw",
]

_KIND_NAMES = {
    ControllerKind.REPLICATION_CONTROLLER: "ReplicationController",
    ControllerKind.REPLICA_SET: "ReplicaSet",
    ControllerKind.STATEFUL_SET: "StatefulSet",
}


def namespace_from_raw(raw: object) -> Namespace:
    r, meta = named_reader(raw, "Namespace", namespaced=False)
    return Namespace(
        name=str(meta["name"]),
        resource_version=r.string(meta.get("resourceVersion"), "metadata.resourceVersion"),
        labels=r.string_map(meta.get("labels"), "metadata.labels"),
    )


def service_from_raw(raw: object) -> Service:
    r, meta = named_reader(raw, "Service", namespaced=True)
    spec = r.mapping(raw.get("spec") if isinstance(raw, dict) else None, "spec")
    selector = spec.get("selector")
    return Service(
        namespace=str(meta.get("namespace") or "default"),
        name=str(meta["name"]),
        resource_version=r.string(meta.get("resourceVersion"), "metadata.resourceVersion"),
        selector=None if selector is None else r.string_map(selector, "spec.selector"),
    )


def controller_from_raw(raw: object, kind: ControllerKind) -> Controller:
    """A ReplicationController (``spec.selector`` a label map) or a ReplicaSet/StatefulSet
    (``spec.selector`` a LabelSelector)."""
    r, meta = named_reader(raw, _KIND_NAMES[kind], namespaced=True)
    spec = r.mapping(raw.get("spec") if isinstance(raw, dict) else None, "spec")
    if kind is ControllerKind.REPLICATION_CONTROLLER:
        labels = r.string_map(spec.get("selector"), "spec.selector")
        selector = LabelSelector(
            canonical(Requirement(k, Operator.IN, (v,)) for k, v in labels.items())
        )
    elif spec.get("selector") is None:
        selector = LabelSelector()
    else:
        selector = label_selector_from_raw(spec["selector"], obj=r.obj, field="spec.selector")
    return Controller(
        kind=kind,
        namespace=str(meta.get("namespace") or "default"),
        name=str(meta["name"]),
        resource_version=r.string(meta.get("resourceVersion"), "metadata.resourceVersion"),
        selector=selector,
    )


def controller_ref_from_raw(r: Reader, meta: Mapping[str, object]) -> ControllerRef | None:
    """The owner reference with ``controller: true`` (metav1.GetControllerOf), if any."""
    for path, owner in r.objects(meta.get("ownerReferences"), "metadata.ownerReferences"):
        if r.boolean(owner.get("controller"), f"{path}.controller"):
            return ControllerRef(
                api_version=r.string(owner.get("apiVersion"), f"{path}.apiVersion"),
                kind=r.string(owner.get("kind"), f"{path}.kind"),
                name=r.string(owner.get("name"), f"{path}.name"),
            )
    return None
