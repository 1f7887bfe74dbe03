"""The two ports the cycle needs from the outside world (dependency inversion, as kube's
Handle/Bind): dispatching a bind and reporting outcomes. ``kube.binder`` and
``kube.reporter`` implement them against the API; ``simulate`` and tests use in-memory ones.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from scheduler.model.pod import Pod
    from scheduler.queueing.scheduling_queue import QueuedPodInfo


class BindResult(StrEnum):
    BOUND = "success"
    CONFLICT = "conflict"
    """409: the pod is bound already (another scheduler, or an earlier bind of ours)."""
    GONE = "gone"
    """404: the pod was deleted meanwhile."""
    ERROR = "error"
    """Anything else (5xx, 429, network): retried with backoff."""


@dataclass(slots=True)
class BindRequest:
    info: QueuedPodInfo
    pod: Pod
    """The assumed pod (``node_name`` set)."""
    node: str
    profile: str
    cycle: int
    started: float


BindDone = Callable[[BindRequest, BindResult, str], None]
"""Called on the event loop when a bind ends: request, result, message (empty on success)."""


class BindDispatcher(Protocol):
    def dispatch(self, request: BindRequest, done: BindDone) -> None:
        """Start binding ``request.pod`` to ``request.node``; must not block, must call
        ``done`` exactly once, later or immediately."""
        ...


class Reporter(Protocol):
    """Events and conditions users see. Fire-and-forget: never blocks the cycle."""

    def scheduled(self, pod: Pod, node: str) -> None:
        """``Scheduled`` event: Successfully assigned ns/name to node."""
        ...

    def unschedulable(self, pod: Pod, message: str) -> None:
        """``PodScheduled=False`` (reason Unschedulable) and a ``FailedScheduling`` event."""
        ...

    def failed(self, pod: Pod, message: str) -> None:
        """A scheduling error (not a fit problem): ``FailedScheduling`` with the error."""
        ...
