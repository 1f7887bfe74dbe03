"""Parse a v1 Node dict into a ``model.node.Node``, validating what the scheduler reads.

Allocatable follows the API server's defaulting (``status.capacity`` when
``status.allocatable`` is absent) and kube-scheduler's accounting (``NewResource``: cpu in
millicores rounded up, bytes rounded up, ``pods`` as the pod-count limit, scalar resources
only for names kube accounts). Image names are kept as the kubelet reports them: kube
compares them verbatim with the pod's normalized image names.

Neighbours: ``parse_common`` (field readers), ``parse_pod`` (tolerations, the other side
of taints), ``cache.cluster_state`` (the consumer).
"""

from __future__ import annotations

from collections.abc import Mapping

from scheduler.model.keys import NodeName, Uid
from scheduler.model.node import Node
from scheduler.model.parse_common import Reader, resources_from_list
from scheduler.model.taints import Effect, Taint

__all__ = ["node_from_raw", "taint_from_raw"]

_EFFECTS = ", ".join(e.value for e in Effect)


def effect_from_raw(r: Reader, value: object, field: str) -> Effect:
    """A taint effect; the empty string is not one (tolerations handle "" themselves)."""
    text = r.string(value, field)
    try:
        return Effect(text)
    except ValueError:
        raise r.error(field, f"unknown effect {text!r} (want one of {_EFFECTS})") from None


def taint_from_raw(r: Reader, raw: object, field: str) -> Taint:
    m = r.mapping(raw, field)
    key = r.required_string(m.get("key"), f"{field}.key")
    value = r.string(m.get("value"), f"{field}.value")
    return Taint(key, value, effect_from_raw(r, m.get("effect"), f"{field}.effect"))


def node_from_raw(raw: Mapping[str, object]) -> Node:
    """The Node record for a v1 Node dict; ``ModelError`` names the field on bad input."""
    r = Reader("Node <unnamed>")
    if not isinstance(raw, Mapping):
        raise r.error("", f"expected an object, got {type(raw).__name__}")
    meta = r.mapping(raw.get("metadata"), "metadata")
    name = r.required_string(meta.get("name"), "metadata.name")
    r = Reader(f"Node {name}")
    spec = r.mapping(raw.get("spec"), "spec")
    status = r.mapping(raw.get("status"), "status")

    if status.get("allocatable") is not None:
        allocatable = r.resource_list(status["allocatable"], "status.allocatable")
    else:
        allocatable = r.resource_list(status.get("capacity"), "status.capacity")

    images: dict[str, int] = {}
    for path, image in r.objects(status.get("images"), "status.images"):
        size = r.integer(image.get("sizeBytes"), f"{path}.sizeBytes")
        for image_name in r.strings(image.get("names"), f"{path}.names"):
            images.setdefault(image_name, size)

    return Node(
        name=NodeName(name),
        uid=Uid(r.string(meta.get("uid"), "metadata.uid")),
        resource_version=r.string(meta.get("resourceVersion"), "metadata.resourceVersion"),
        labels=r.string_map(meta.get("labels"), "metadata.labels"),
        allocatable=resources_from_list(allocatable, count_pods=True),
        taints=tuple(
            taint_from_raw(r, t, path) for path, t in r.objects(spec.get("taints"), "spec.taints")
        ),
        unschedulable=r.boolean(spec.get("unschedulable"), "spec.unschedulable"),
        images=images,
    )
