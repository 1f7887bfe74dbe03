"""A cheap look at a pod or node event: its identity, and a fingerprint of what we read.

``msgspec`` decodes an event into small structs that name only the fields the model reads
(everything else — ``managedFields``, container states, heartbeat conditions — is skipped
by its scanner without building a Python object); the subtrees we read whole (``spec``,
labels, allocatable, …) stay raw bytes. The fingerprint is Python's hash of those bytes
(keyed SipHash, 64 bits: two versions of one object collide with odds of 2**-64, and no
one can aim at it without the process's key): two versions with equal fingerprints parse
to equal model records but for the resourceVersion (and, for a pod, ``spec.nodeName``,
which the fingerprint leaves out so the MODIFIED echo of our own bind matches the pending
pod we assumed).

A pod's fingerprint covers ``metadata`` name, namespace, labels, annotations,
creationTimestamp, deletionTimestamp and ownerReferences; ``spec`` (less ``nodeName``);
``status`` phase, nominatedNodeName, startTime, the ``DisruptionTarget`` and
``PodResizePending`` conditions and each container status's name, allocatedResources and
resources — what ``model.parse_pod`` and ``model.parse_requests`` read. A node's covers
name, uid, labels, ``spec``, allocatable, capacity and images (``model.parse_node``).
Anything the structs cannot take (a wrong type, bad JSON) raises :class:`PeekError`: the
caller then parses in full, which names the bad field.

Decoder chosen by measurement (``python -m bench.intake``, docs/performance.md): a
``msgspec`` peek of a 2.2 KB pod is about 2 µs where ``json.loads`` of it is 15.

Neighbours: ``appliers`` (skips on equal fingerprints), ``reflector`` (splits the stream).
"""

from __future__ import annotations

import msgspec

__all__ = [
    "Buffer",
    "NodePeek",
    "PeekError",
    "PodPeek",
    "WatchEvent",
    "decode_event",
    "peek_node",
    "peek_pod",
    "top_level_node_name",
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


class _PodStatus(msgspec.Struct):
    phase: msgspec.Raw = _NONE
    nominatedNodeName: msgspec.Raw = _NONE
    startTime: msgspec.Raw = _NONE
    conditions: list[_Condition] = msgspec.field(default_factory=list)
    containerStatuses: list[_ContainerStatus] = msgspec.field(default_factory=list)
    initContainerStatuses: list[_ContainerStatus] = msgspec.field(default_factory=list)


class _Pod(msgspec.Struct):
    metadata: _PodMeta = msgspec.field(default_factory=_PodMeta)
    spec: msgspec.Raw = _NONE
    status: _PodStatus = msgspec.field(default_factory=_PodStatus)


class _PodSpec(msgspec.Struct):
    nodeName: str = ""


class _NodeMeta(msgspec.Struct):
    name: str = ""
    uid: str = ""
    resourceVersion: str = ""
    labels: msgspec.Raw = _NONE


class _NodeStatus(msgspec.Struct):
    allocatable: msgspec.Raw = _NONE
    capacity: msgspec.Raw = _NONE
    images: msgspec.Raw = _NONE


class _Node(msgspec.Struct):
    metadata: _NodeMeta = msgspec.field(default_factory=_NodeMeta)
    spec: msgspec.Raw = _NONE
    status: _NodeStatus = msgspec.field(default_factory=_NodeStatus)


_events = msgspec.json.Decoder(WatchEvent)
_identities = msgspec.json.Decoder(_Identity)
_pods = msgspec.json.Decoder(_Pod)
_nodes = msgspec.json.Decoder(_Node)
_DECODE_ERRORS = (msgspec.DecodeError, msgspec.ValidationError)


class _SpecOnly(msgspec.Struct):
    spec: _PodSpec = msgspec.field(default_factory=_PodSpec)


_spec_only = msgspec.json.Decoder(_SpecOnly)
_NODE_NAME = b'"nodeName":"'
_EPHEMERAL = b'"ephemeral":'
_SEPARATOR = b"\x00"
"""Joins the fingerprinted parts: JSON text never holds a raw NUL, so the join is
unambiguous."""


class PodPeek(msgspec.Struct, frozen=True):
    uid: str
    resource_version: str
    node_name: str
    fingerprint: int
    namespace: str
    name: str
    template: bytes
    """Every part the model reads but the pod's identity (``templates``)."""


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
    meta, status = pod.metadata, pod.status
    spec, node_name = _without_node_name(bytes(pod.spec))
    parts = [
        meta.name.encode(),
        meta.namespace.encode(),
        meta.labels,
        meta.annotations,
        meta.creationTimestamp,
        meta.deletionTimestamp,
        meta.ownerReferences,
        spec,
        status.phase,
        status.nominatedNodeName,
        status.startTime,
    ]
    for condition in status.conditions:
        if condition.type in _READ_CONDITIONS:
            parts += (b"\x01", condition.type.encode(), condition.status, condition.reason)
    for mark, statuses in (
        (b"\x02", status.initContainerStatuses),
        (b"\x03", status.containerStatuses),
    ):
        for cs in statuses:
            parts += (mark, cs.name, cs.allocatedResources, cs.resources)
    fingerprint = hash(_SEPARATOR.join(parts))
    # The template: the same parts but the name (read only to name ephemeral volumes' claims)
    # and with the node, exactly (compared as bytes, not hashed: ``templates``).
    if _EPHEMERAL not in spec:
        parts[0] = b""
    parts.append(node_name.encode())
    template = _SEPARATOR.join(parts)
    return PodPeek(
        meta.uid,
        meta.resourceVersion,
        node_name,
        fingerprint,
        meta.namespace,
        meta.name,
        template,
    )


def top_level_node_name(raw: Buffer) -> str:
    """``spec.nodeName`` decoded properly (the peek finds it by its bytes; this checks it
    where a skip depends on it)."""
    try:
        return _spec_only.decode(raw).spec.nodeName
    except _DECODE_ERRORS as exc:
        raise PeekError(str(exc)) from None


def peek_node(raw: Buffer) -> NodePeek:
    """The node's name, resourceVersion and fingerprint (see the module docstring)."""
    try:
        node = _nodes.decode(raw)
    except _DECODE_ERRORS as exc:
        raise PeekError(str(exc)) from None
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


def _without_node_name(spec: bytes) -> tuple[bytes, str]:
    """``spec`` without its ``"nodeName":"…"`` member (as the pending pod's spec was), and
    the member's value ("" if there is none).

    The member is found as the serializer writes it; written any other way it stays in the
    fingerprinted bytes, which then differ from the pending pod's, and the event is parsed
    in full: never a wrong skip. (The byte sequence cannot occur inside a JSON string, whose
    quotes are escaped; PodSpec has no other ``nodeName`` key, and the one skip that relies
    on the value being ``spec.nodeName``, the bind echo, checks it with
    :func:`top_level_node_name`.)"""
    at = spec.find(_NODE_NAME)
    if at < 0:
        return spec, ""
    start = at + len(_NODE_NAME)
    end = spec.find(b'"', start)
    value = spec[start:end]
    if end < 0 or not value or b"\\" in value:
        return spec, ""  # escapes, or empty: leave it to the full parse
    stop = end + 1
    if spec[stop : stop + 1] == b",":
        stop += 1  # the member and its comma
    elif spec[at - 1 : at] == b",":
        at -= 1  # the last member and the comma before it
    return spec[:at] + spec[stop:], value.decode()
