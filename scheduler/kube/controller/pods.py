"""Pod watch events → parsed records for the event handlers (``cycle/eventhandlers.py``).

This module reads the watch; what an event means for the cache and the queue is decided by
:class:`~scheduler.cycle.eventhandlers.EventHandlers`. Here:

* a pod is parsed once per event (``model.parse``); a listed pod whose resourceVersion we
  have already applied (a re-list after a 410) is skipped unparsed;
* the resourceVersion of every pod the scheduler holds is tracked: the reconcile must not
  drop a pod newer than its LIST (``sync``);
* a pod that cannot be parsed is never a crash: it is counted
  (``batch_scheduler_bad_objects_total{kind="Pod"}``), logged with the object and field,
  and — when it is a pending pod of ours — reported to its owner with a
  ``FailedScheduling`` event and ``PodScheduled=False`` naming the field, once per problem.

Synchronous and await-free. Neighbours: ``kube.intake.appliers`` (the informer feeds
:meth:`PodEvents.apply` what its peek did not skip, and :meth:`PodEvents.deliver` the
records it built without a parse), ``sync`` (the Replace and the safety net remove pods).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from scheduler import logs
from scheduler.kube.kinds import object_ref, resource_version
from scheduler.model.errors import ModelError
from scheduler.model.keys import Uid
from scheduler.model.parse import pod_from_raw

if TYPE_CHECKING:
    from scheduler.cycle.eventhandlers import EventHandlers
    from scheduler.cycle.ports import Reporter
    from scheduler.metrics.registry import Metrics
    from scheduler.model.pod import Pod

log = logs.get_logger(__name__)

DELETED = "DELETED"


def _mapping(value: object) -> Mapping[str, object]:
    return value if isinstance(value, Mapping) else {}


def _text(value: object) -> str:
    return value if isinstance(value, str) else ""


def _identity_only(namespace: str, name: str, uid: str) -> Pod:
    """A Pod record carrying only the identity of a pod we cannot read, for the reporter
    (which needs namespace, name and uid); built by the parser from a minimal skeleton."""
    return pod_from_raw({"metadata": {"namespace": namespace, "name": name, "uid": uid}})


class PodEvents:
    """Feeds pod events to the event handlers; see the module docstring."""

    def __init__(self, handlers: EventHandlers, *, metrics: Metrics, reporter: Reporter) -> None:
        self.handlers = handlers
        self.metrics = metrics
        self.reporter = reporter
        self.versions: dict[Uid, str] = {}
        """resourceVersion last applied per pod the scheduler holds (cached or queued)."""
        self._bad: dict[str, str] = {}
        """uid → the parse error already reported (report each problem once, not on every
        update, and never loop on our own condition patch)."""

    def apply(self, event_type: str | None, raw: Mapping[str, object]) -> Pod | None:
        """One watch event (``None``: a listed object, as the initial listing); returns
        the record parsed and delivered, if one was."""
        if event_type == DELETED:
            _, _, uid = object_ref(raw)
            self.delete(Uid(uid))
            return None
        if event_type is None:
            _, _, uid = object_ref(raw)
            held = self.versions.get(Uid(uid))
            if held and held == resource_version(raw):
                return None  # listed again (a re-list after 410): already applied
        try:
            pod = pod_from_raw(raw)
        except ModelError as exc:
            self._unreadable(raw, exc)
            return None
        self.deliver(pod)
        return pod

    def deliver(self, pod: Pod) -> bool:
        """Hand a parsed pod to the event handlers; returns whether the scheduler holds it
        (then its version is tracked)."""
        self._bad.pop(pod.uid, None)
        if self.handlers.on_pod(pod):
            self.versions[pod.uid] = pod.resource_version
            return True
        self.versions.pop(pod.uid, None)
        return False

    def confirm_bound(self, uid: Uid, version: str) -> bool:
        """Our bind of an assumed pod, seen at ``version`` with nothing else changed
        (``EventHandlers.on_assumed_pod_bound``); returns whether the pod was assumed."""
        if not self.handlers.on_assumed_pod_bound(uid):
            return False
        self._bad.pop(uid, None)
        self.versions[uid] = version
        return True

    def delete(self, uid: Uid) -> None:
        """The pod is gone from the API."""
        self.versions.pop(uid, None)
        self._bad.pop(uid, None)
        self.handlers.on_pod_deleted(uid)

    def remove(self, key: str) -> None:
        """``sync``'s name for :meth:`delete` (``key``: the uid)."""
        self.delete(Uid(key))

    def held(self) -> dict[str, str]:
        """uid → resourceVersion of every pod we hold (the Replace compares them)."""
        return {str(uid): version for uid, version in self.versions.items()}

    def version(self, key: str) -> str | None:
        """The resourceVersion applied for the pod of uid ``key`` (None: not held)."""
        return self.versions.get(Uid(key))

    def _unreadable(self, raw: Mapping[str, object], exc: ModelError) -> None:
        """A pod we cannot parse: count it, say which field, tell its owner if it is ours."""
        namespace, name, uid = object_ref(raw)
        spec = _mapping(raw.get("spec"))
        assigned = bool(_text(spec.get("nodeName")))
        profiles = self.handlers.scheduler.profiles
        ours = not assigned and _text(spec.get("schedulerName")) in profiles
        if uid and not self.handlers.on_pod_unreadable(Uid(uid)):
            self.versions.pop(Uid(uid), None)
        if not (ours or assigned):
            return  # someone else's pending pod: not ours to judge
        message = str(exc)
        if self._bad.get(uid) == message:
            return
        self._bad[uid] = message
        self.metrics.bad_objects.labels(kind="Pod").inc()
        log.warning(
            "bad_pod", pod=f"{namespace}/{name}", field=exc.field, error=exc.message, uid=uid
        )
        if ours and name and uid:
            self.reporter.unschedulable(
                _identity_only(namespace, name, uid),
                f"cannot read the pod: {exc.field}: {exc.message}",
            )
