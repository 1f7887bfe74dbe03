"""Resource URLs of the emulated API: ``/api/v1/namespaces/ns/pods/name/status`` → a
:class:`Target`, or the discovery document a group or version path asks for."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from scheduler.sim import discovery, errors

if TYPE_CHECKING:
    from scheduler.sim.discovery import ResourceType


@dataclass(frozen=True, slots=True)
class Target:
    """A parsed resource URL."""

    rt: ResourceType
    namespace: str | None
    name: str | None
    sub: str | None


def parse_path(path: str) -> Target | dict[str, Any]:
    """A resource target, or a discovery document for ``/api/v1``-like paths; 404 otherwise."""
    segs = [s for s in path.split("/") if s]
    if segs == ["api"]:
        return discovery.api_versions()
    if segs == ["apis"]:
        return discovery.api_group_list()
    if segs[:1] == ["api"]:
        group, rest = "", segs[1:]
    elif segs[:1] == ["apis"] and len(segs) >= 2:
        group, rest = segs[1], segs[2:]
    else:
        raise errors.ApiError(404, "NotFound", "the server could not find the requested resource")
    if not rest:
        if group in discovery.GROUP_VERSIONS and group:
            return discovery.api_group(group)
        raise errors.ApiError(404, "NotFound", "the server could not find the requested resource")
    version, rest = rest[0], rest[1:]
    if not rest:
        doc = discovery.resource_list(group, version)
        if doc is None:
            raise errors.ApiError(
                404, "NotFound", "the server could not find the requested resource"
            )
        return doc
    namespace = None
    if (
        rest[0] == "namespaces"
        and len(rest) >= 3
        and not (len(rest) == 3 and rest[2] in ("status", "finalize"))
    ):
        namespace, rest = rest[1], rest[2:]
    rt = discovery.lookup(group, version, rest[0])
    if rt is None or len(rest) > 3 or (namespace is not None and not rt.namespaced):
        raise errors.ApiError(404, "NotFound", "the server could not find the requested resource")
    name = rest[1] if len(rest) > 1 else None
    sub = rest[2] if len(rest) > 2 else None
    if sub is not None and sub not in rt.subresources:
        raise errors.ApiError(404, "NotFound", "the server could not find the requested resource")
    return Target(rt, namespace, name, sub)
