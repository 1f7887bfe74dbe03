"""What the intake needs from the watch side that runs it, as protocols.

The informers deliver to appliers and a Replace they do not own: the controller's
``PodEvents`` and ``NodeEvents`` (parse, report bad objects, call ``cycle.eventhandlers``),
its cache sync (``replace_listed``) and its watch timeouts (``ControllerOptions``). Declared
here, as ``cycle.ports`` declares what the cycle needs from I/O, so that the intake imports
nothing of ``kube.controller``: the controller builds the informers and hands itself in
(``kube.controller.operator``), never the reverse.

Neighbours: ``appliers`` (feeds :class:`PodApplier` and :class:`NodeApplier`),
``reflector`` (asks :class:`Replacer` for the Replace after a re-list, reads
:class:`WatchTimeouts`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from collections.abc import Mapping

    from scheduler.cycle.eventhandlers import EventHandlers
    from scheduler.kube.kinds import Kind
    from scheduler.kube.listing import Cause
    from scheduler.model.keys import Uid
    from scheduler.model.pod import Pod

__all__ = ["NodeApplier", "ObjectApplier", "PodApplier", "Replacer", "WatchTimeouts"]


class PodApplier(Protocol):
    """Parsed pods into the event handlers (``kube.controller.pods.PodEvents``)."""

    versions: dict[Uid, str]
    """resourceVersion last applied per pod the scheduler holds."""

    @property
    def handlers(self) -> EventHandlers:
        """The event handlers: the intake reads their cache and queue to skip safely."""

    def apply(self, event_type: str | None, raw: Mapping[str, object]) -> Pod | None:
        """A decoded event, parsed in full; the record delivered, if one was."""

    def deliver(self, pod: Pod) -> bool:
        """A record built without a parse; whether the scheduler holds the pod."""

    def confirm_bound(self, uid: Uid, version: str) -> bool:
        """The echo of our bind of an assumed pod; whether it was assumed."""

    def delete(self, uid: Uid) -> None:
        """The pod is gone from the API."""

    def remove(self, key: str) -> None:
        """The pod of uid ``key`` is gone (a Replace found it missing)."""

    def held(self) -> dict[str, str]:
        """uid → resourceVersion of every pod held."""

    def version(self, key: str) -> str | None:
        """The resourceVersion applied for the pod of uid ``key`` (None: not held)."""


class NodeApplier(Protocol):
    """Parsed nodes into the event handlers (``kube.controller.nodes.NodeEvents``)."""

    versions: dict[str, str]
    """resourceVersion of each node in the cache."""

    def apply(self, event_type: str | None, raw: Mapping[str, object]) -> None:
        """A decoded event, parsed in full."""

    def delete(self, name: str) -> None:
        """The node is gone from the API."""

    def remove(self, key: str) -> None:
        """Node ``key`` is gone (a Replace found it missing)."""

    def held(self) -> dict[str, str]:
        """name → resourceVersion of every cached node."""

    def version(self, key: str) -> str | None:
        """The resourceVersion cached for node ``key`` (None: not cached)."""


class ObjectApplier(Protocol):
    """Parsed objects of one kind into the event handlers
    (``kube.controller.objects.ObjectEvents``)."""

    @property
    def kind(self) -> Kind:
        """The kind it parses."""

    def apply(self, event_type: str | None, raw: Mapping[str, object]) -> None:
        """A decoded event (``None``: a listed object), parsed in full; DELETED removes."""


class Replacer(Protocol):
    """kube's Replace after an informer's re-list (``kube.controller.sync.CacheSync``)."""

    def replace_listed(
        self, kind: Kind, listed: set[str], version: str, *, cause: Cause, since: float | None
    ) -> int:
        """Remove what a LIST at ``version`` lacks (unless newer); returns how many went."""


class WatchTimeouts(Protocol):
    """The watch's timeouts (``kube.controller.settings.ControllerOptions``), in seconds."""

    @property
    def watch_server_timeout(self) -> int:
        """How long the API server keeps one watch open (``timeoutSeconds``)."""

    @property
    def watch_client_timeout(self) -> float:
        """How long the client waits on one watch before giving up."""

    @property
    def connect_timeout(self) -> float:
        """How long establishing a connection may take."""
