"""Status and Code: the outcome of a plugin call, as kube-scheduler's framework.Status.

Statuses are values, never exceptions, on the hot path. ``SUCCESS`` is a shared singleton so
a passing Filter allocates nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum


class Code(IntEnum):
    SUCCESS = 0
    """The plugin ran and the pod may go on."""
    ERROR = 1
    """Internal error: the pod is requeued with backoff; nodes are not blamed."""
    UNSCHEDULABLE = 2
    """Does not fit now; preemption or a cluster change might help. Requeued by events."""
    UNSCHEDULABLE_AND_UNRESOLVABLE = 3
    """Does not fit and no preemption on this node can help (e.g. node affinity)."""
    WAIT = 4
    """From Permit: the pod is held, its assumption kept, until a plugin allows or rejects
    it or the wait times out (framework/waiting_pods.py)."""
    SKIP = 5
    """From PreFilter/PreScore: the plugin has nothing to do for this pod; its
    Filter/Score are skipped for this cycle."""


CODE_LABELS = {
    Code.SUCCESS: "Success",
    Code.ERROR: "Error",
    Code.UNSCHEDULABLE: "Unschedulable",
    Code.UNSCHEDULABLE_AND_UNRESOLVABLE: "UnschedulableAndUnresolvable",
    Code.WAIT: "Wait",
    Code.SKIP: "Skip",
}
"""kube's spelling of each code, as metrics label it (``status`` label values)."""


@dataclass(frozen=True, slots=True)
class Status:
    code: Code = Code.SUCCESS
    reasons: tuple[str, ...] = ()
    plugin: str = ""
    """Name of the plugin that returned it (stamped by the runner when failing)."""

    @property
    def is_success(self) -> bool:
        return self.code is Code.SUCCESS

    @property
    def is_rejected(self) -> bool:
        """Unschedulable or UnschedulableAndUnresolvable."""
        return self.code in (Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE)

    @property
    def is_skip(self) -> bool:
        return self.code is Code.SKIP

    def message(self) -> str:
        return ", ".join(self.reasons)

    def with_plugin(self, plugin: str) -> Status:
        return self if self.plugin == plugin else Status(self.code, self.reasons, plugin)


SUCCESS = Status()
SKIP = Status(Code.SKIP)


def unschedulable(*reasons: str) -> Status:
    return Status(Code.UNSCHEDULABLE, reasons)


def unresolvable(*reasons: str) -> Status:
    return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, reasons)


def error(message: str) -> Status:
    return Status(Code.ERROR, (message,))
