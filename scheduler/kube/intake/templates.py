"""Parse a pod once per template: the pods of one Deployment, Job or burst differ only by name.

A burst of pods from one template (a ReplicaSet's, a Job's, a benchmark's) carries the same
spec, labels, annotations, owner and creation second; only the name, uid and
resourceVersion differ, and ``model.parse_pod`` reads those for the record's identity alone
(the name also names ephemeral volumes' claims, so a pod with an ephemeral volume keeps its
name in the template). :class:`PodTemplates` keeps the record parsed for each template
(``peek.PodPeek.template``: the bytes of everything else the parser reads, compared
exactly, never by hash) and gives the next pod of that template a copy with its own
identity: the record ``pod_from_raw`` would have built, for about a tenth of its cost
(``bench.intake``). A template whose pod failed to parse is never kept, so every bad pod
is parsed, and reported by name, on its own.

Neighbours: ``appliers`` (asks first, keeps what it parsed), ``peek`` (the template).
"""

from __future__ import annotations

from collections import OrderedDict
from typing import TYPE_CHECKING

from scheduler.model.keys import Uid, pod_key
from scheduler.model.pod import Pod

if TYPE_CHECKING:
    from scheduler.kube.intake.peek import PodPeek

__all__ = ["PodTemplates"]

CAPACITY = 256
"""Templates kept (least recently used out): a few KB each."""
_IDENTITY = frozenset({"key", "name", "uid", "resource_version"})
_SHARED: tuple[str, ...] = tuple(name for name in Pod.__slots__ if name not in _IDENTITY)


class PodTemplates:
    """The parsed record per pod template; see the module docstring."""

    def __init__(self, capacity: int = CAPACITY) -> None:
        self.capacity = capacity
        self._records: OrderedDict[bytes, Pod] = OrderedDict()
        self.hits = 0

    def get(self, peek: PodPeek) -> Pod | None:
        """The record for ``peek``'s pod if its template was parsed before, else None."""
        if not peek.name:
            return None  # the parser refuses it: let it say so
        template = self._records.get(peek.template)
        if template is None:
            return None
        self._records.move_to_end(peek.template)
        self.hits += 1
        pod = object.__new__(Pod)
        for name in _SHARED:
            object.__setattr__(pod, name, getattr(template, name))
        namespace = peek.namespace or "default"
        object.__setattr__(pod, "key", pod_key(namespace, peek.name))
        object.__setattr__(pod, "name", peek.name)
        object.__setattr__(pod, "uid", Uid(peek.uid))
        object.__setattr__(pod, "resource_version", peek.resource_version)
        return pod

    def put(self, peek: PodPeek, pod: Pod) -> None:
        """Keep ``pod`` (parsed from ``peek``'s object) for its template."""
        self._records[peek.template] = pod
        self._records.move_to_end(peek.template)
        while len(self._records) > self.capacity:
            self._records.popitem(last=False)
