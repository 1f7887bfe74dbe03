"""Node: the scheduler's record of a node, built once from the API's dict (``model.parse``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Mapping

    from scheduler.model.keys import NodeName, Uid
    from scheduler.model.resources import Resources
    from scheduler.model.taints import Taint


@dataclass(frozen=True, slots=True)
class Node:
    name: NodeName
    uid: Uid
    resource_version: str
    labels: Mapping[str, str]
    allocatable: Resources
    """``status.allocatable``, or ``status.capacity`` where allocatable is absent (as the API
    server defaults it); ``allowed_pod_number`` from the ``pods`` entry."""
    taints: tuple[Taint, ...]
    unschedulable: bool
    images: Mapping[str, int]
    """Normalized image name → size in bytes, for every name of every image on the node."""
