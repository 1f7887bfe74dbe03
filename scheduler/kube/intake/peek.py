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
reads (``_PodSpec``) but ``nodeName``; ``status`` phase, nominatedNodeName, startTime,
resourceClaimStatuses (with the spec parts: the claims generated for a pod are its own),
the ``DisruptionTarget`` and ``PodResizePending`` conditions and each container status's
name, allocatedResources and resources — what ``model.parse_pod`` and ``model.parse_requests``
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

from scheduler.kube.intake.pod_parts import (
    NONE,
    SEPARATOR,
    Buffer,
    ContainerStatus,
    read_containers,
    restate_spec,
    unnamed_volumes,
)

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

_DISRUPTION_TARGET = "DisruptionTarget"
_READ_CONDITIONS = frozenset({_DISRUPTION_TARGET, "PodResizePending"})
"""The pod conditions the model reads (``parse_pod._preempted``, ``parse_requests``)."""


class PeekError(ValueError):
    """The event does not fit the peek's structs: parse it in full instead."""


class WatchEvent(msgspec.Struct):
    """One line of a watch stream; ``object`` stays raw until someone needs it."""

    type: str = ""
    object: msgspec.Raw = NONE


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
    status: msgspec.Raw = NONE
    reason: msgspec.Raw = NONE


class _PodMeta(msgspec.Struct):
    name: str = ""
    namespace: str = ""
    uid: str = ""
    resourceVersion: str = ""
    labels: msgspec.Raw = NONE
    annotations: msgspec.Raw = NONE
    creationTimestamp: msgspec.Raw = NONE
    deletionTimestamp: msgspec.Raw = NONE
    ownerReferences: msgspec.Raw = NONE


class _PodSpec(msgspec.Struct):
    """The PodSpec members the model reads (``model.parse_pod``, ``parse_requests``: a test
    holds the two lists equal), raw; ``nodeName`` decoded, and left out of the
    fingerprint."""

    nodeName: str = ""
    schedulerName: msgspec.Raw = NONE
    priority: msgspec.Raw = NONE
    preemptionPolicy: msgspec.Raw = NONE
    schedulingGates: msgspec.Raw = NONE
    containers: msgspec.Raw = NONE
    initContainers: msgspec.Raw = NONE
    overhead: msgspec.Raw = NONE
    resources: msgspec.Raw = NONE
    nodeSelector: msgspec.Raw = NONE
    affinity: msgspec.Raw = NONE
    tolerations: msgspec.Raw = NONE
    topologySpreadConstraints: msgspec.Raw = NONE
    resourceClaims: msgspec.Raw = NONE
    volumes: msgspec.Raw = NONE
    schedulingGroup: msgspec.Raw = NONE


class _PodStatus(msgspec.Struct):
    phase: msgspec.Raw = NONE
    nominatedNodeName: msgspec.Raw = NONE
    startTime: msgspec.Raw = NONE
    resourceClaimStatuses: msgspec.Raw = NONE
    conditions: list[_Condition] = msgspec.field(default_factory=list)
    containerStatuses: list[ContainerStatus] = msgspec.field(default_factory=list)
    initContainerStatuses: list[ContainerStatus] = msgspec.field(default_factory=list)


class Pod(msgspec.Struct):
    """A pod as the peek decodes it: identity, ``spec.nodeName``, the rest raw."""

    metadata: _PodMeta = msgspec.field(default_factory=_PodMeta)
    spec: _PodSpec = msgspec.field(default_factory=_PodSpec)
    status: _PodStatus = msgspec.field(default_factory=_PodStatus)


class _NodeMeta(msgspec.Struct):
    name: str = ""
    uid: str = ""
    resourceVersion: str = ""
    labels: msgspec.Raw = NONE


class _NodeStatus(msgspec.Struct):
    allocatable: msgspec.Raw = NONE
    capacity: msgspec.Raw = NONE
    images: msgspec.Raw = NONE


class Node(msgspec.Struct):
    """A node as the peek decodes it."""

    metadata: _NodeMeta = msgspec.field(default_factory=_NodeMeta)
    spec: msgspec.Raw = NONE
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


class PodPeek(msgspec.Struct):
    uid: str
    resource_version: str
    node_name: str
    fingerprint: int
    """Of every part the model reads (module docstring)."""
    core: int
    """Of the metadata and spec parts but the labels."""
    labelled: int
    """Of the metadata and spec parts."""
    statuses: int
    """Of the container statuses and PodResizePending (0: none)."""
    namespace: str
    name: str
    parts: tuple[Buffer, ...]
    """What the fingerprint hashed, kept for :meth:`template` and :meth:`labels`."""
    status_parts: tuple[Buffer, Buffer, Buffer]
    """phase, nominatedNodeName, startTime, raw."""
    disruption: tuple[_Condition, ...]
    """The DisruptionTarget conditions."""
    container_statuses: tuple[ContainerStatus, ...]
    """Init containers' and containers' statuses."""
    resize_pending: bool
    """A PodResizePending condition is there."""
    _template: bytes | None = None
    _trivial: bool | None = None

    def rest(self) -> int:
        """What the record's members but the labels and the :meth:`status` ones derive
        from: equal rests and unequal fingerprints mean only those changed
        (``model.parse.pod_with_status`` applies them to the record held). Container
        statuses that restate their containers' spec requests (a kubelet's, before any
        resize) count as absent: the requests the model derives are the spec's either way
        (``parse_requests``: the max of spec, allocated and actuated)."""
        return self.core if self._statuses_trivial() else hash((self.core, self.statuses))

    def base(self) -> int:
        """As :meth:`rest`, the labels included: equal bases mean the labels are equal too."""
        if self._statuses_trivial():
            return self.labelled
        return hash((self.labelled, self.statuses))

    def labels(self) -> object:
        """``metadata.labels``, decoded (None when absent)."""
        raw = self.parts[_LABELS]
        return msgspec.json.decode(raw) if raw else None

    def _statuses_trivial(self) -> bool:
        if self._trivial is None:
            self._trivial = not self.statuses or (
                not self.resize_pending
                and restate_spec(
                    self.parts[_CONTAINERS], self.parts[_INIT_CONTAINERS], self.container_statuses
                )
            )
        return self._trivial

    def template(self) -> bytes:
        """Every part the model reads but what is the pod's own (``templates``), exactly
        (compared as bytes, not hashed), with the node: the fingerprinted parts less the
        name (read only to name ephemeral volumes' claims), each container with only the
        members the model reads (not the ``volumeMounts`` naming the pod's own
        ``kube-api-access-*`` volume) and each volume without its name (which nothing
        reads but an ephemeral claim's). Built on first use: only an ADDED asks."""
        if self._template is None:
            parts = list(self.parts)
            volumes = bytes(parts[_VOLUMES])
            if _EPHEMERAL not in volumes:
                parts[0] = b""
                parts[_VOLUMES] = unnamed_volumes(volumes)
            parts[_CONTAINERS] = read_containers(parts[_CONTAINERS])
            parts[_INIT_CONTAINERS] = read_containers(parts[_INIT_CONTAINERS])
            parts.append(self.node_name.encode())
            self._template = SEPARATOR.join(parts)
        return self._template

    def status(self) -> dict[str, object]:
        """The status members outside :attr:`base`, decoded, as ``status`` holds them."""
        status: dict[str, object] = {}
        for key, raw in zip(_STATUS_KEYS, self.status_parts, strict=True):
            if raw:
                status[key] = msgspec.json.decode(raw)
        status["conditions"] = [
            {
                "type": c.type,
                "status": msgspec.json.decode(c.status) if c.status else None,
                "reason": msgspec.json.decode(c.reason) if c.reason else None,
            }
            for c in self.disruption
        ]
        return status


_STATUS_KEYS = ("phase", "nominatedNodeName", "startTime")
_LABELS, _CONTAINERS, _INIT_CONTAINERS, _VOLUMES = 2, 11, 12, 20
"""Positions in :attr:`PodPeek.parts` (``pod_peek``)."""


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
        spec.schedulingGroup,
        status.resourceClaimStatuses,
    )
    labels = bytes(meta.labels)
    core = hash(SEPARATOR.join((*parts[:_LABELS], *parts[_LABELS + 1 :])))
    labelled = hash((core, labels))
    more: list[Buffer] = []
    disruption: list[_Condition] = []
    for condition in status.conditions:
        if condition.type == _DISRUPTION_TARGET:
            disruption.append(condition)
        elif condition.type in _READ_CONDITIONS:
            more += (b"\x01", condition.type.encode(), condition.status, condition.reason)
    resize_pending = bool(more)
    statuses = (*status.initContainerStatuses, *status.containerStatuses)
    for mark, group in (
        (b"\x02", status.initContainerStatuses),
        (b"\x03", status.containerStatuses),
    ):
        for cs in group:
            more += (mark, cs.name, cs.allocatedResources, cs.resources)
    statuses_hash = hash(SEPARATOR.join(more)) if more else 0
    strict = hash((labelled, statuses_hash)) if more else labelled
    status_parts = (status.phase, status.nominatedNodeName, status.startTime)
    tail: list[Buffer] = list(status_parts)
    for condition in disruption:
        tail += (b"\x04", condition.status, condition.reason)
    return PodPeek(
        meta.uid,
        meta.resourceVersion,
        spec.nodeName,
        hash((strict, SEPARATOR.join(tail))),
        core,
        labelled,
        statuses_hash,
        meta.namespace,
        meta.name,
        (*parts, *more, *tail),
        status_parts,
        tuple(disruption),
        statuses,
        resize_pending,
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
    return NodePeek(meta.name, meta.resourceVersion, hash(SEPARATOR.join(parts)))
