"""Raw pod and node events → the controller's appliers, skipping what changes nothing we read.

Each event is peeked first (``peek``). Against what we applied last for that object, kept
as (fingerprint, base, rest, nodeName) per pod and a fingerprint per node:

* **same fingerprint, same nodeName** (a kubelet status update that changes nothing the
  model reads, a node heartbeat): nothing is parsed or delivered; only the tracked
  resourceVersion moves on (the Replace and the "listed again" check compare it). What
  the event handlers would have done with the parsed record is no more than that: an
  equal record but for its version (``cycle.eventhandlers``: an unchanged node is dropped,
  an unchanged assigned pod upserted in place, an unchanged queued pod refreshed). A
  pending pod is skipped only while it is queued or assumed — otherwise the handlers
  would queue it, and they still do;
* **same fingerprint, nodeName now set to the node we assumed it on** (the MODIFIED echo of
  our own bind): the handlers confirm the assumption in place
  (``EventHandlers.on_assumed_pod_bound``: the parsed record would equal the assumed one
  but for its version), without building a model;
* **same rest** (only labels, phase, startTime, nominatedNodeName or the DisruptionTarget
  condition changed: a kubelet's Running, a nomination; at the same node, or the echo of
  our bind with the node's zone and region labels that kube-apiserver's
  PodTopologyLabels admission copies onto the pod): the record we hold, with those members
  decoded from the peek (``model.parse.pod_with_status``), goes to the handlers;
* anything else of a pod template parsed before (the next pod of a ReplicaSet or a Job:
  ``templates``): that record with this pod's identity goes to the handlers;
* anything else: decoded in full and parsed (``model.parse``) by the controller's
  ``PodEvents`` / ``NodeEvents`` (``ports.PodApplier`` / ``ports.NodeApplier``), as kopf's
  events were: the same handler calls, the same bad-object reports naming object and field.

Synchronous and await-free. Neighbours: ``reflector`` (feeds :meth:`PodIntake.apply_event`),
``ports`` (the controller's appliers this wraps, as protocols).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

import msgspec
import orjson

from scheduler import logs
from scheduler.kube.intake.peek import (
    Buffer,
    NodeEvent,
    PeekError,
    PodEvent,
    WatchEvent,
    decode_node_event,
    decode_pod_event,
    identity,
    node_peek,
    peek_node,
    peek_pod,
    pod_peek,
)
from scheduler.kube.intake.templates import PodTemplates
from scheduler.kube.kinds import object_ref, resource_version
from scheduler.model.errors import ModelError
from scheduler.model.keys import Uid
from scheduler.model.parse import pod_with_status

if TYPE_CHECKING:
    from scheduler.kube.intake.peek import NodePeek, PodPeek
    from scheduler.kube.intake.ports import NodeApplier, PodApplier
    from scheduler.metrics.registry import Metrics
    from scheduler.model.pod import Pod

__all__ = ["NodeIntake", "PodIntake", "decode_object", "decoded"]

log = logs.get_logger(__name__)

DELETED = "DELETED"


def decode_object(raw: Buffer, *, in_event: bool = False) -> object:
    """The object as plain JSON values (``orjson``: the fastest to dicts here, bench.intake);
    ``in_event``: ``raw`` is a whole watch line, the object its ``object``."""
    decoded = orjson.loads(memoryview(raw))
    if in_event:
        return decoded.get("object") if isinstance(decoded, dict) else None
    return decoded


class _Counts:
    """Events by outcome, for the benchmark and the tests (cheap ints, no metrics calls)."""

    __slots__ = ("confirmed", "parsed", "restatused", "skipped", "templated")

    def __init__(self) -> None:
        self.parsed = 0
        """Decoded and parsed in full."""
        self.templated = 0
        """Built from the record of the same template (``templates``), unparsed."""
        self.restatused = 0
        """Only status members outside the base changed: applied to the held record."""
        self.skipped = 0
        self.confirmed = 0


class PodIntake:
    """Raw pod events into a :class:`~scheduler.kube.intake.ports.PodApplier` (the
    controller's ``PodEvents``); see the module docstring."""

    def __init__(self, events: PodApplier, *, metrics: Metrics) -> None:
        self.events = events
        self.metrics = metrics
        self.handlers = events.handlers
        self.counts = _Counts()
        self.templates = PodTemplates()
        self._applied: dict[Uid, tuple[int, int, int, str]] = {}
        """uid → (fingerprint, base, rest, nodeName) of the version last delivered, per
        held pod (``peek.PodPeek``)."""

    decode_line = staticmethod(decode_pod_event)

    def apply_event(self, event: PodEvent | WatchEvent, line: Buffer) -> tuple[str, str]:
        """One watch event as :meth:`decode_line` decoded it from ``line``; returns the
        pod's uid and resourceVersion (``""`` where unreadable)."""
        if isinstance(event, WatchEvent):  # the object did not fit the peek
            return self.apply_raw(event.type, event.object)
        if event.type == DELETED:
            meta = event.object.metadata
            return self._deleted(Uid(meta.uid)), meta.resourceVersion
        return self._apply(event.type, pod_peek(event.object), line, in_event=True)

    def apply_raw(self, event_type: str | None, raw: Buffer) -> tuple[str, str]:
        """One event (``None``: a listed object) with its object still encoded; returns
        the pod's uid and resourceVersion (``""`` where unreadable)."""
        if event_type == DELETED:
            return self._delete(raw)
        try:
            peek = peek_pod(raw)
        except PeekError:
            return self._parse(event_type, raw, None)
        return self._apply(event_type, peek, raw, in_event=False)

    def _apply(
        self, event_type: str | None, peek: PodPeek, raw: Buffer, *, in_event: bool
    ) -> tuple[str, str]:
        uid = Uid(peek.uid)
        held = self.events.versions.get(uid)
        if held is not None:
            if event_type is None and held == peek.resource_version:
                return uid, held  # listed again at a version already applied
            applied = self._applied.get(uid)
            if applied is not None:
                fingerprint, base, rest, node_name = applied
                if fingerprint == peek.fingerprint and self._unchanged(
                    uid, node_name, peek.node_name, peek.resource_version
                ):
                    return uid, peek.resource_version
                if rest == peek.rest() and self._restatus(peek, node_name, base != peek.base()):
                    return uid, peek.resource_version
        return self._parse(event_type, raw, peek, in_event=in_event)

    def _unchanged(self, uid: Uid, applied_node: str, node_name: str, version: str) -> bool:
        """Apply an event whose fingerprint equals the last delivered one without parsing
        it, if that is exact (module docstring); False: parse it."""
        cluster = self.handlers.cluster
        if applied_node == node_name:
            if (
                not node_name
                and self.handlers.queue.get(uid) is None
                and not cluster.is_assumed(uid)
            ):
                return False  # not queued, not assumed: the handlers would queue it
            self.events.versions[uid] = version
            self.counts.skipped += 1
            return True
        if applied_node or not cluster.is_assumed(uid):
            return False
        assumed = cluster.get_pod(uid)
        if assumed is None or assumed.node_name != node_name:
            return False  # bound elsewhere than we assumed: parse it
        if self.events.confirm_bound(uid, version):
            fingerprint, base, rest, _ = self._applied[uid]
            self._applied[uid] = (fingerprint, base, rest, node_name)
        else:
            self._applied.pop(uid, None)
        self.counts.confirmed += 1
        return True

    def _restatus(self, peek: PodPeek, applied_node: str, relabel: bool) -> bool:
        """Apply an event that changed only the labels or the status members outside the
        peek's base (a kubelet's Running, a nomination; the echo of our bind with the
        node's zone and region labels) to the record we hold, without parsing the rest
        (``model.parse.pod_with_status``); False: parse it."""
        uid = Uid(peek.uid)
        held = self._held(uid, applied_node, peek.node_name)
        if held is None:
            return False
        try:
            pod = pod_with_status(
                held,
                peek.status(),
                peek.resource_version,
                labels=peek.labels() if relabel else None,
                relabel=relabel,
            )
        except (ModelError, msgspec.DecodeError):
            return False  # the full parse reports it
        if pod is None:
            return False
        self.counts.restatused += 1
        self._delivered(uid, peek, self.events.deliver(pod))
        return True

    def _held(self, uid: Uid, applied_node: str, node_name: str) -> Pod | None:
        """The record we hold for a pod last delivered at ``applied_node`` and seen now at
        ``node_name`` ("" pending): cached, queued, or assumed on that node by us (the echo
        of our bind), else None."""
        handlers = self.handlers
        if node_name:
            assumed = handlers.cluster.is_assumed(uid)
            if applied_node != ("" if assumed else node_name):
                return None
            pod = handlers.cluster.get_pod(uid)
        elif applied_node:
            return None
        else:
            queued = handlers.queue.get(uid)
            pod = None if queued is None else queued.pod
        return pod if pod is not None and pod.node_name == node_name else None

    def _delivered(self, uid: Uid, peek: PodPeek, held: bool) -> None:
        """Remember what was delivered for ``uid`` while the scheduler holds it."""
        if held:
            self._applied[uid] = (peek.fingerprint, peek.base(), peek.rest(), peek.node_name)
        else:
            self._applied.pop(uid, None)

    def _parse(
        self, event_type: str | None, raw: Buffer, peek: PodPeek | None, *, in_event: bool = False
    ) -> tuple[str, str]:
        if peek is None:
            self.counts.parsed += 1
            obj = decoded(raw, "Pod", self.metrics)
            if obj is None:
                return "", ""
            self.events.apply(event_type, obj)
            _, _, uid_text = object_ref(obj)
            self._applied.pop(Uid(uid_text), None)
            return uid_text, resource_version(obj)
        uid = Uid(peek.uid)
        pod = self.templates.get(peek)
        if pod is not None:  # a pod of a template parsed before: its record, re-identified
            self.counts.templated += 1
            self.events.deliver(pod)
        else:
            self.counts.parsed += 1
            obj = decoded(raw, "Pod", self.metrics, in_event=in_event)
            if obj is None:
                return "", ""
            pod = self.events.apply(event_type, obj)
            if pod is not None:
                self.templates.put(peek, pod)
        self._delivered(uid, peek, uid in self.events.versions)
        return uid, peek.resource_version

    def _delete(self, raw: Buffer) -> tuple[str, str]:
        try:
            _, _, uid_text, version = identity(raw)
        except PeekError:
            obj = decoded(raw, "Pod", self.metrics)
            if obj is None:
                return "", ""
            _, _, uid_text = object_ref(obj)
            version = resource_version(obj)
        return self._deleted(Uid(uid_text)), version

    def _deleted(self, uid: Uid) -> str:
        self._applied.pop(uid, None)
        self.events.delete(uid)
        return uid

    def apply(self, event_type: str | None, raw: Mapping[str, object]) -> None:
        """A decoded event (``sync``'s protocol): parsed in full, fingerprint forgotten."""
        _, _, uid = object_ref(raw)
        self._applied.pop(Uid(uid), None)
        self.events.apply(event_type, raw)

    def held(self) -> dict[str, str]:
        return self.events.held()

    def version(self, key: str) -> str | None:
        return self.events.version(key)

    def remove(self, key: str) -> None:
        """The pod of uid ``key`` is gone (a Replace found it missing)."""
        self._applied.pop(Uid(key), None)
        self.events.remove(key)


class NodeIntake:
    """Raw node events into a :class:`~scheduler.kube.intake.ports.NodeApplier` (the
    controller's ``NodeEvents``); see the module docstring."""

    def __init__(self, events: NodeApplier, *, metrics: Metrics) -> None:
        self.events = events
        self.metrics = metrics
        self.counts = _Counts()
        self._applied: dict[str, int] = {}
        """name → fingerprint of the version last delivered, per cached node."""

    decode_line = staticmethod(decode_node_event)

    def apply_event(self, event: NodeEvent | WatchEvent, line: Buffer) -> tuple[str, str]:
        """One watch event as :meth:`decode_line` decoded it from ``line``; returns the
        node's name and resourceVersion (``""`` where unreadable)."""
        if isinstance(event, WatchEvent):  # the object did not fit the peek
            return self.apply_raw(event.type, event.object)
        if event.type == DELETED:
            meta = event.object.metadata
            return self._deleted(meta.name), meta.resourceVersion
        return self._apply(event.type, node_peek(event.object), line, in_event=True)

    def apply_raw(self, event_type: str | None, raw: Buffer) -> tuple[str, str]:
        """One event (``None``: a listed object) with its object still encoded; returns
        the node's name and resourceVersion (``""`` where unreadable)."""
        if event_type == DELETED:
            try:
                _, name, _, version = identity(raw)
            except PeekError:
                pass
            else:
                return self._deleted(name), version
        try:
            peek = peek_node(raw)
        except PeekError:
            peek = None
        return self._apply(event_type, peek, raw, in_event=False)

    def _deleted(self, name: str) -> str:
        self._applied.pop(name, None)
        self.events.delete(name)
        return name

    def _apply(
        self, event_type: str | None, peek: NodePeek | None, raw: Buffer, *, in_event: bool
    ) -> tuple[str, str]:
        if peek is not None and event_type != DELETED:
            held = self.events.versions.get(peek.name)
            if held is not None and self._applied.get(peek.name) == peek.fingerprint:
                if event_type is not None or held != peek.resource_version:
                    self.events.versions[peek.name] = peek.resource_version
                    self.counts.skipped += 1
                return peek.name, peek.resource_version
        self.counts.parsed += 1
        obj = decoded(raw, "Node", self.metrics, in_event=in_event)
        if obj is None:
            return "", ""
        self.events.apply(event_type, obj)
        name = peek.name if peek is not None else _node_name(obj)
        if peek is not None and name in self.events.versions:
            self._applied[name] = peek.fingerprint
        else:
            self._applied.pop(name, None)
        return name, peek.resource_version if peek is not None else resource_version(obj)

    def apply(self, event_type: str | None, raw: Mapping[str, object]) -> None:
        """A decoded event (``sync``'s protocol): parsed in full, fingerprint forgotten."""
        self._applied.pop(_node_name(raw), None)
        self.events.apply(event_type, raw)

    def held(self) -> dict[str, str]:
        return self.events.held()

    def version(self, key: str) -> str | None:
        return self.events.version(key)

    def remove(self, key: str) -> None:
        """Node ``key`` is gone (a Replace found it missing)."""
        self._applied.pop(key, None)
        self.events.remove(key)


def _node_name(raw: Mapping[str, object]) -> str:
    meta = raw.get("metadata")
    name = meta.get("name") if isinstance(meta, Mapping) else None
    return name if isinstance(name, str) else ""


def decoded(
    raw: Buffer, kind: str, metrics: Metrics, *, in_event: bool = False
) -> dict[str, object] | None:
    """The object as a dict, or None (counted and logged) if it is not a JSON object."""
    try:
        obj = decode_object(raw, in_event=in_event)
    except orjson.JSONDecodeError as exc:
        problem = f"not JSON: {exc}"
    else:
        if isinstance(obj, dict):
            return obj
        problem = f"expected an object, got {type(obj).__name__}"
    metrics.bad_objects.labels(kind=kind).inc()
    log.warning("bad_object_skipped", kind=kind, error=problem, bytes=len(raw))
    return None
