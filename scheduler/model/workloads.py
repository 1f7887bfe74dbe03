"""The objects that select pods for default topology spreading, and Namespaces.

kube-scheduler's PodTopologySpread gives a pod without constraints of its own the default
constraints, with a selector deduced from the Services that select the pod and from the
ReplicationController, ReplicaSet or StatefulSet that controls it (``helper.DefaultSelector``).
InterPodAffinity's ``namespaceSelector`` matches Namespace labels. These records hold only
what those two read.

Neighbours: ``parse_workloads`` (dict → record), ``cache.workloads`` (the index the plugins
read), ``model.pod`` (``Pod.controller_ref``).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Mapping

    from scheduler.model.labels import LabelSelector


class ControllerKind(StrEnum):
    """The controllers whose selector kube's DefaultSelector uses (group/version/kind)."""

    REPLICATION_CONTROLLER = "v1/ReplicationController"
    REPLICA_SET = "apps/v1/ReplicaSet"
    STATEFUL_SET = "apps/v1/StatefulSet"


@dataclass(frozen=True, slots=True)
class ControllerRef:
    """A pod's ``ownerReferences`` entry with ``controller: true``."""

    api_version: str
    kind: str
    name: str

    @property
    def controller_kind(self) -> ControllerKind | None:
        """The kind if DefaultSelector uses it (``apps/v1`` ReplicaSet, …), else None."""
        try:
            return ControllerKind(f"{self.api_version}/{self.kind}")
        except ValueError:
            return None


@dataclass(frozen=True, slots=True)
class Namespace:
    name: str
    resource_version: str
    labels: Mapping[str, str]


@dataclass(frozen=True, slots=True)
class Service:
    namespace: str
    name: str
    resource_version: str
    selector: Mapping[str, str] | None
    """``spec.selector``; None (nil) selects no pod, an empty map every pod of the namespace."""


@dataclass(frozen=True, slots=True)
class Controller:
    """A ReplicationController, ReplicaSet or StatefulSet: the selector of its pods."""

    kind: ControllerKind
    namespace: str
    name: str
    resource_version: str
    selector: LabelSelector
    """For a ReplicationController its ``map[string]string`` selector as equality
    requirements; for the others ``spec.selector`` (a nil one selects nothing: empty)."""
