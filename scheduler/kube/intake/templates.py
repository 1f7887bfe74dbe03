"""Parse a pod once per template: the pods of one Deployment, Job or burst differ only by name.

A burst of pods from one template (a ReplicaSet's, a Job's, a benchmark's) carries the same
spec, labels, annotations, owner and creation second; only the name, uid and
resourceVersion differ, and ``model.parse_pod`` reads those for the record's identity alone
(the name also names ephemeral volumes' claims, so a pod with an ephemeral volume keeps its
name in the template). :class:`PodTemplates` keeps the record parsed for each template
(``peek.PodPeek.template()``: the bytes of everything else the parser reads, compared
exactly, never by hash) and gives the next pod of that template a copy with its own
identity: the record ``pod_from_raw`` would have built, for about a tenth of its cost
(``bench.intake``). A template whose pod failed to parse is never kept, so every bad pod
is parsed, and reported by name, on its own. Each template gets an id
(``Pod.template_id``), carried by every record given out for it, so that the Signer signs
a template once.

Neighbours: ``appliers`` (asks first, keeps what it parsed), ``peek`` (the template).
"""

from __future__ import annotations

import dataclasses
import itertools
from collections import OrderedDict
from typing import TYPE_CHECKING

from scheduler.model.keys import Uid, pod_key

if TYPE_CHECKING:
    from scheduler.kube.intake.peek import PodPeek
    from scheduler.model.pod import Pod

__all__ = ["PodTemplates"]

CAPACITY = 256
"""Templates kept (least recently used out): a few KB each."""


class PodTemplates:
    """The parsed record per pod template; see the module docstring."""

    def __init__(self, capacity: int = CAPACITY) -> None:
        self.capacity = capacity
        self._records: OrderedDict[bytes, Pod] = OrderedDict()
        self._ids = itertools.count(1)
        self.hits = 0

    def get(self, peek: PodPeek) -> Pod | None:
        """The record for ``peek``'s pod if its template was parsed before, else None."""
        if not peek.name:
            return None  # the parser refuses it: let it say so
        key = peek.template()
        template = self._records.get(key)
        if template is None:
            return None
        self._records.move_to_end(key)
        self.hits += 1
        pod = template.copied()
        namespace = peek.namespace or "default"
        object.__setattr__(pod, "key", pod_key(namespace, peek.name))
        object.__setattr__(pod, "name", peek.name)
        object.__setattr__(pod, "uid", Uid(peek.uid))
        object.__setattr__(pod, "resource_version", peek.resource_version)
        return pod

    def put(self, peek: PodPeek, pod: Pod) -> None:
        """Keep ``pod`` (parsed from ``peek``'s object) for its template, under a new id."""
        key = peek.template()
        self._records[key] = dataclasses.replace(pod, template_id=next(self._ids))
        self._records.move_to_end(key)
        while len(self._records) > self.capacity:
            self._records.popitem(last=False)
