"""What of a pod's containers and volumes the model reads, for ``peek``.

Two questions the peek asks of a pending or bound pod without parsing it:

* its *template* key (``PodPeek.template``): the containers less what the model does not
  read (``volumeMounts``, env, probes: they name the pod's own ``kube-api-access-*``
  volume), the volumes less their names (ServiceAccount admission names each pod's token
  volume apart), so the pods of one ReplicaSet share one parse;
* whether the container statuses only restate the spec's requests (a kubelet's, before
  any resize): then the requests the model derives are the spec's either way, and a
  Running update can be applied to the record held (``PodPeek.rest``).

Anything that does not decode as expected is kept whole or answered "no": never a wrong
match, only a parse more.

Neighbours: ``peek`` (the only user).
"""

from __future__ import annotations

import msgspec

__all__ = [
    "NONE",
    "SEPARATOR",
    "Buffer",
    "ContainerStatus",
    "read_containers",
    "restate_spec",
    "unnamed_volumes",
]

Buffer = bytes | msgspec.Raw
"""An encoded object: a line's bytes, or a ``msgspec.Raw`` slice of an event or a LIST."""
NONE = msgspec.Raw(b"")
"""A raw field the object does not have (distinct from ``null``: b"null")."""
SEPARATOR = b"\x00"
"""Joins parts: JSON text never holds a raw NUL, so a join is unambiguous."""
_DECODE_ERRORS = (msgspec.DecodeError, msgspec.ValidationError)


class ContainerStatus(msgspec.Struct):
    name: msgspec.Raw = NONE
    allocatedResources: msgspec.Raw = NONE
    resources: msgspec.Raw = NONE


class _Container(msgspec.Struct):
    """The members of a container the model reads (``parse_requests.container_from_raw``,
    ``parse_pod``: images and host ports)."""

    name: msgspec.Raw = NONE
    image: msgspec.Raw = NONE
    ports: msgspec.Raw = NONE
    resources: msgspec.Raw = NONE
    restartPolicy: msgspec.Raw = NONE


class _Requirements(msgspec.Struct):
    requests: msgspec.Raw = NONE


_containers = msgspec.json.Decoder(list[_Container])
_requirements = msgspec.json.Decoder(_Requirements)
_names = msgspec.json.Decoder(str)
_volume_list = msgspec.json.Decoder(list[msgspec.Raw])
_VOLUME_NAME = b'{"name":"'


def read_containers(raw: Buffer) -> Buffer:
    """A container list as the members the model reads; unchanged if it does not decode
    (then only the same bytes match)."""
    if not raw:
        return raw
    try:
        containers = _containers.decode(raw)
    except _DECODE_ERRORS:
        return raw
    parts: list[Buffer] = []
    for c in containers:
        parts += (b"\x05", c.name, c.image, c.ports, c.resources, c.restartPolicy)
    return SEPARATOR.join(parts)


def restate_spec(containers: Buffer, inits: Buffer, statuses: tuple[ContainerStatus, ...]) -> bool:
    """Whether every container status names a container of the spec and reports, as
    allocated and as actual requests, nothing or exactly the bytes of that container's
    requests (the API server writes a ResourceList with sorted keys, so equal lists are
    equal bytes; written otherwise, they only fail to match)."""
    try:
        requests: dict[str, bytes] = {}
        for raw in (containers, inits):
            for c in _containers.decode(raw) if raw else ():
                name = _names.decode(c.name) if c.name else ""
                wanted = _requirements.decode(c.resources).requests if c.resources else NONE
                requests.setdefault(name, bytes(wanted))
        for cs in statuses:
            wanted_bytes = requests.get(_names.decode(cs.name) if cs.name else "")
            if wanted_bytes is None:
                return False
            allocated = bytes(cs.allocatedResources)
            if allocated not in (b"", b"null", wanted_bytes):
                return False
            actual = _requirements.decode(cs.resources).requests if cs.resources else NONE
            if bytes(actual) not in (b"", b"null", wanted_bytes):
                return False
    except _DECODE_ERRORS:
        return False
    return True


def unnamed_volumes(raw: bytes) -> bytes:
    """A volume list with each leading ``"name"`` member cut (the serializer writes it
    first); a volume written otherwise keeps it, so only the same bytes match."""
    if not raw:
        return raw
    try:
        volumes = _volume_list.decode(raw)
    except _DECODE_ERRORS:
        return raw
    parts: list[bytes] = []
    for volume in volumes:
        data = bytes(volume)
        end = data.find(b'"', len(_VOLUME_NAME))
        if (
            data.startswith(_VOLUME_NAME)
            and end > 0
            and data[end + 1 : end + 2] == b","
            and b"\\" not in data[len(_VOLUME_NAME) : end]
        ):
            data = b"{" + data[end + 2 :]
        parts.append(data)
    return b"\x06".join(parts)
