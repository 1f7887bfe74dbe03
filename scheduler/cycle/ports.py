"""The ports the cycle needs from the outside world (dependency inversion, as kube's
Handle/Bind): dispatching a bind, reporting outcomes, and carrying out a preemption.
``kube.binder``, ``kube.reporter`` and ``kube.preemption`` implement them against the API;
``simulate`` and tests use in-memory ones.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from scheduler.framework.cycle_state import CycleState

if TYPE_CHECKING:
    from scheduler.model.keys import Uid
    from scheduler.model.pod import Pod
    from scheduler.model.pod_groups import GroupCondition, PodGroup
    from scheduler.queueing.queued_pod import QueuedPodInfo


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
    state: CycleState = field(default_factory=CycleState)
    """The pod's CycleState after Reserve and Permit, which PreBind, PostBind and Unreserve
    read (its own clone: no other pod writes it)."""
    path: str = ""
    """How the node was found (``DecisionPath``), for the ``pod_bound`` line."""
    evaluated: int = 0
    feasible: int = 0


BindDone = Callable[[BindRequest, BindResult, str], None]
"""Called on the event loop when a bind ends: request, result, message (empty on success)."""


class BindDispatcher(Protocol):
    def dispatch(self, request: BindRequest, done: BindDone) -> None:
        """Start binding ``request.pod`` to ``request.node``; must not block, must call
        ``done`` exactly once, later or immediately."""
        ...


class Preemptor(Protocol):
    """The API side of a preemption PostFilter decided (kube's Executor). Fire-and-forget:
    never blocks the cycle; failures are logged, and the preemptor's next attempt decides
    again from what the watch then shows."""

    def preempt(self, pod: Pod, node: str, victims: Sequence[Pod]) -> None:
        """Evict ``victims`` from ``node`` for ``pod``: each gets the ``DisruptionTarget``
        condition (reason ``PreemptionByScheduler``), is deleted gracefully and gets a
        ``Preempted`` event; then ``pod``'s ``status.nominatedNodeName`` is set to
        ``node``. A victim already gone or terminating is skipped."""
        ...

    def clear_nominated_node(self, pods: Sequence[Pod]) -> None:
        """Set ``status.nominatedNodeName`` of each of ``pods`` back to empty."""
        ...


@runtime_checkable
class GroupPreemptor(Protocol):
    """A Preemptor that carries out workload-aware preemption as kube does: victims are
    evicted for the PodGroup (their events say ``Preempted by podgroup <uid> on node
    cluster``) and each member is nominated to its node. Without it, the cycle hands each
    member the victims on its node through ``Preemptor.preempt``."""

    def preempt_group(
        self, pod_group: PodGroup, victims: Sequence[Pod], nominations: Sequence[tuple[Pod, str]]
    ) -> None: ...


PreemptionFinished = Callable[["Uid", bool], None]
"""Called on the event loop when a preemption stops running: preemptor uid, success."""


@runtime_checkable
class TrackedPreemptor(Preemptor, Protocol):
    """A Preemptor whose evictions run after ``preempt`` returns (kube's async preemption).

    While one runs, its preemptor pod must not be scheduled again: the watch does not show
    the victims terminating yet, so PostFilter would evict pods on a second node (kube's
    ``IsPodRunningPreemption`` in DefaultPreemption's PreEnqueue). An in-memory Preemptor
    that evicts at once need not implement this."""

    def is_running(self, uid: Uid) -> bool:
        """True from ``preempt`` until every victim's DELETE has been answered (or failed)."""
        ...

    def on_finished(self, callback: PreemptionFinished) -> None:
        """Call ``callback(uid, ok)`` when a preemption stops running; ``ok`` is False when
        an eviction failed or was dropped (nothing will delete that victim)."""
        ...


class NoPreemptor:
    """A Preemptor that evicts nothing (schedulers built without an API, and tests that do
    not look at evictions). Nominations are still recorded in memory by the cycle."""

    def preempt(self, pod: Pod, node: str, victims: Sequence[Pod]) -> None:
        return None

    def clear_nominated_node(self, pods: Sequence[Pod]) -> None:
        return None


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


class GroupReporter(Protocol):
    """What users see of a PodGroup: its conditions. Fire-and-forget, as the Reporter."""

    def pod_group_condition(
        self, pod_group: PodGroup, condition_type: str, condition: GroupCondition
    ) -> None:
        """Set ``condition_type`` on the PodGroup's status (kube's strategic-merge patch
        of ``podgroups/status``); the caller has checked that it changes something."""
        ...


class NoGroupReporter:
    """A GroupReporter that writes nothing (no API: simulate keeps its own record)."""

    def pod_group_condition(
        self, pod_group: PodGroup, condition_type: str, condition: GroupCondition
    ) -> None:
        return None
