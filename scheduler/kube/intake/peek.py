"""A cheap look at a pod or node event: its identity, and a fingerprint of what we read.

``msgspec`` decodes an event into small structs that name only the fields the model reads
(everything else — ``managedFields``, container states, heartbeat conditions — is skipped
by its scanner without building a Python object); the subtrees we read whole (labels, each
PodSpec member the model reads, allocatable, …) stay raw bytes. A watch line is decoded
once, its object peeked in the same pass (:func:`decode_pod_event`). The fingerprint is
Python's hash of those bytes (keyed SipHash, 64 bits: two versions of one object collide
with odds of 2**-64, and no one can aim at it without the process's key): two versions
with equal fingerprints parse to equal model records but for the resourceVersion (and,
for a pod, ``spec.nodeName``, which the fingerprint leaves out so the MODIFIED echo of our
own bind matches the pending pod we assumed).

A pod's fingerprint covers ``metadata`` name, namespace, labels, annotations,
creationTimestamp, deletionTimestamp and ownerReferences; the ``spec`` members the model
reads (``_PodSpec``) but ``nodeName``; ``status`` phase, nominatedNodeName, startTime, the
``DisruptionTarget`` and ``PodResizePending`` conditions and each container status's name,
allocatedResources and resources — what ``model.parse_pod`` and ``model.parse_requests``
read (``tests/kube/test_peek.py`` holds the lists equal). A node's covers name, uid,
labels, ``spec``, allocatable, capacity and images (``model.parse_node``).
Anything the structs cannot take (a wrong type, bad JSON) raises :class:`PeekError`: the
caller then parses in full, which names the bad field.

Decoder chosen by measurement (``python -m bench.intake``, docs/performance.md): the
``msgspec`` peek of a 2.2 KB pod costs about half of ``orjson.loads`` of it, and a third
of ``json.loads``.

Neighbours: ``appliers`` (skips on equal fingerprints), ``reflector`` (splits the stream).
"""

from __future__ import annotations

import msgspec

__all__ = [
    "Buffer",
    "Node",
    "NodeEvent",
    "NodePeek",
    "PeekError",
    "Pod",
    "PodEvent",
    "PodPeek",
    "WatchEvent",
    "decode_event",
    "decode_node_event",
    "decode_pod_event",
    "identity",
    "node_peek",
    "peek_node",
    "peek_pod",
    "pod_peek",
]

Buffer = bytes | msgspec.Raw
"""An encoded object: a line's bytes, or a ``msgspec.Raw`` slice of an event or a LIST."""
_NONE = msgspec.Raw(b"")
"""A raw field the object does not have (distinct from ``null``: b"null")."""
_READ_CONDITIONS = frozenset({"DisruptionTarget", "PodResizePending"})
"""The pod conditions the model reads (``parse_pod._preempted``, ``parse_requests``)."""


class PeekError(ValueError):
    """The event does not fit the peek's structs: parse it in full instead."""


class WatchEvent(msgspec.Struct):
    """One line of a watch stream; ``object`` stays raw until someone needs it."""

    type: str = ""
    object: msgspec.Raw = _NONE


class _Identity(msgspec.Struct):
    """Enough of an object to key it (DELETED events, listed objects)."""

    class Meta(msgspec.Struct):
        name: str = ""
        namespace: str = ""
        uid: str = ""
        resourceVersion: str = ""

    metadata: Meta = msgspec.field(default_factory=Meta)


class _Condition(msgspec.Struct):
    type: str = ""
    status: msgspec.Raw = _NONE
    reason: msgspec.Raw = _NONE


class _ContainerStatus(msgspec.Struct):
    name: msgspec.Raw = _NONE
    allocatedResources: msgspec.Raw = _NONE
    resources: msgspec.Raw = _NONE


class _PodMeta(msgspec.Struct):
    name: str = ""
    namespace: str = ""
    uid: str = ""
    resourceVersion: str = ""
    labels: msgspec.Raw = _NONE
    annotations: msgspec.Raw = _NONE
    creationTimestamp: msgspec.Raw = _NONE
    deletionTimestamp: msgspec.Raw = _NONE
    ownerReferences: msgspec.Raw = _NONE


class _PodSpec(msgspec.Struct):
    """The PodSpec members the model reads (``model.parse_pod``, ``parse_requests``: a test
    holds the two lists equal), raw; ``nodeName`` decoded, and left out of the
    fingerprint."""

    nodeName: str = ""
    schedulerName: msgspec.Raw = _NONE
    priority: msgspec.Raw = _NONE
    preemptionPolicy: msgspec.Raw = _NONE
    schedulingGates: msgspec.Raw = _NONE
    containers: msgspec.Raw = _NONE
    initContainers: msgspec.Raw = _NONE
    overhead: msgspec.Raw = _NONE
    resources: msgspec.Raw = _NONE
    nodeSelector: msgspec.Raw = _NONE
    affinity: msgspec.Raw = _NONE
    tolerations: msgspec.Raw = _NONE
    topologySpreadConstraints: msgspec.Raw = _NONE
    resourceClaims: msgspec.Raw = _NONE
    volumes: msgspec.Raw = _NONE


class _PodStatus(msgspec.Struct):
    phase: msgspec.Raw = _NONE
    nominatedNodeName: msgspec.Raw = _NONE
    startTime: msgspec.Raw = _NONE
    conditions: list[_Condition] = msgspec.field(default_factory=list)
    containerStatuses: list[_ContainerStatus] = msgspec.field(default_factory=list)
    initContainerStatuses: list[_ContainerStatus] = msgspec.field(default_factory=list)


class Pod(msgspec.Struct):
    """A pod as the peek decodes it: identity, ``spec.nodeName``, the rest raw."""

    metadata: _PodMeta = msgspec.field(default_factory=_PodMeta)
    spec: _PodSpec = msgspec.field(default_factory=_PodSpec)
    status: _PodStatus = msgspec.field(default_factory=_PodStatus)


class _NodeMeta(msgspec.Struct):
    name: str = ""
    uid: str = ""
    resourceVersion: str = ""
    labels: msgspec.Raw = _NONE


class _NodeStatus(msgspec.Struct):
    allocatable: msgspec.Raw = _NONE
    capacity: msgspec.Raw = _NONE
    images: msgspec.Raw = _NONE


class Node(msgspec.Struct):
    """A node as the peek decodes it."""

    metadata: _NodeMeta = msgspec.field(default_factory=_NodeMeta)
    spec: msgspec.Raw = _NONE
    status: _NodeStatus = msgspec.field(default_factory=_NodeStatus)


class PodEvent(msgspec.Struct):
    """A watch line of the pods' watch, its object peeked in the same pass."""

    type: str = ""
    object: Pod = msgspec.field(default_factory=Pod)


class NodeEvent(msgspec.Struct):
    """A watch line of the nodes' watch, its object peeked in the same pass."""

    type: str = ""
    object: Node = msgspec.field(default_factory=Node)


_events = msgspec.json.Decoder(WatchEvent)
_identities = msgspec.json.Decoder(_Identity)
_pods = msgspec.json.Decoder(Pod)
_nodes = msgspec.json.Decoder(Node)
_pod_events = msgspec.json.Decoder(PodEvent)
_node_events = msgspec.json.Decoder(NodeEvent)
_DECODE_ERRORS = (msgspec.DecodeError, msgspec.ValidationError)
_EPHEMERAL = b'"ephemeral":'
_SEPARATOR = b"\x00"
"""Joins the fingerprinted parts: JSON text never holds a raw NUL, so the join is
unambiguous."""


class PodPeek(msgspec.Struct):
    uid: str
    resource_version: str
    node_name: str
    fingerprint: int
    namespace: str
    name: str
    parts: tuple[Buffer, ...]
    """What the fingerprint hashed, kept for :meth:`template`."""
    volumes: Buffer
    _template: bytes | None = None

    def template(self) -> bytes:
        """Every part the model reads but the pod's identity (``templates``): the
        fingerprinted parts less the name (read only to name ephemeral volumes' claims) and
        with the node, exactly (compared as bytes, not hashed). Built on first use: only a
        pending pod's ADDED asks."""
        if self._template is None:
            parts = list(self.parts)
            if _EPHEMERAL not in bytes(self.volumes):
                parts[0] = b""
            parts.append(self.node_name.encode())
            self._template = _SEPARATOR.join(parts)
        return self._template


class NodePeek(msgspec.Struct, frozen=True):
    name: str
    resource_version: str
    fingerprint: int


def decode_event(line: Buffer) -> WatchEvent:
    """One watch line: its type and raw object."""
    try:
        return _events.decode(line)
    except _DECODE_ERRORS as exc:
        raise PeekError(str(exc)) from None


def decode_pod_event(line: Buffer) -> PodEvent | WatchEvent:
    """A line of the pods' watch: peeked in one pass where the object fits the peek's
    structs, else (an ERROR's Status, a malformed pod) with its object raw."""
    try:
        return _pod_events.decode(line)
    except _DECODE_ERRORS:
        return decode_event(line)


def decode_node_event(line: Buffer) -> NodeEvent | WatchEvent:
    """A line of the nodes' watch, as :func:`decode_pod_event`."""
    try:
        return _node_events.decode(line)
    except _DECODE_ERRORS:
        return decode_event(line)


def identity(raw: Buffer) -> tuple[str, str, str, str]:
    """(namespace, name, uid, resourceVersion) of a raw object."""
    try:
        meta = _identities.decode(raw).metadata
    except _DECODE_ERRORS as exc:
        raise PeekError(str(exc)) from None
    return meta.namespace, meta.name, meta.uid, meta.resourceVersion


def peek_pod(raw: Buffer) -> PodPeek:
    """The pod's uid, resourceVersion, nodeName and fingerprint (see the module docstring)."""
    try:
        pod = _pods.decode(raw)
    except _DECODE_ERRORS as exc:
        raise PeekError(str(exc)) from None
    return pod_peek(pod)


def pod_peek(pod: Pod) -> PodPeek:
    """The peek of a decoded pod (a LIST item's or a watch line's)."""
    meta, spec, status = pod.metadata, pod.spec, pod.status
    parts: tuple[Buffer, ...] = (
        meta.name.encode(),
        meta.namespace.encode(),
        meta.labels,
        meta.annotations,
        meta.creationTimestamp,
        meta.deletionTimestamp,
        meta.ownerReferences,
        spec.schedulerName,
        spec.priority,
        spec.preemptionPolicy,
        spec.schedulingGates,
        spec.containers,
        spec.initContainers,
        spec.overhead,
        spec.resources,
        spec.nodeSelector,
        spec.affinity,
        spec.tolerations,
        spec.topologySpreadConstraints,
        spec.resourceClaims,
        spec.volumes,
        status.phase,
        status.nominatedNodeName,
        status.startTime,
    )
    more: list[Buffer] = []
    for condition in status.conditions:
        if condition.type in _READ_CONDITIONS:
            more += (b"\x01", condition.type.encode(), condition.status, condition.reason)
    for cs in status.initContainerStatuses:
        more += (b"\x02", cs.name, cs.allocatedResources, cs.resources)
    for cs in status.containerStatuses:
        more += (b"\x03", cs.name, cs.allocatedResources, cs.resources)
    if more:
        parts += tuple(more)
    return PodPeek(
        meta.uid,
        meta.resourceVersion,
        spec.nodeName,
        hash(_SEPARATOR.join(parts)),
        meta.namespace,
        meta.name,
        parts,
        spec.volumes,
    )


def peek_node(raw: Buffer) -> NodePeek:
    """The node's name, resourceVersion and fingerprint (see the module docstring)."""
    try:
        node = _nodes.decode(raw)
    except _DECODE_ERRORS as exc:
        raise PeekError(str(exc)) from None
    return node_peek(node)


def node_peek(node: Node) -> NodePeek:
    """The peek of a decoded node (a LIST item's or a watch line's)."""
    meta, status = node.metadata, node.status
    parts = (
        meta.name.encode(),
        meta.uid.encode(),
        meta.labels,
        node.spec,
        status.allocatable,
        status.capacity,
        status.images,
    )
    return NodePeek(meta.name, meta.resourceVersion, hash(_SEPARATOR.join(parts)))
