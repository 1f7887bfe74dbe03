"""Diagnosis and FitError: why a pod fits no node, in kube-scheduler's words.

The FailedScheduling message is a histogram of per-node reasons, e.g.
``0/3 nodes are available: 1 node(s) had untolerated taint(s), 2 Insufficient cpu.`` Like
kube (``FitError.Error``) the entries are ``"<count> <reason>"`` strings sorted as strings, so
counts and reasons stay low-cardinality and aggregate across pods (since v1.35 kube no longer
names the taint in TaintToleration's reason, see plugins/taint_toleration.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from scheduler.framework.status import Status

NO_NODE_AVAILABLE = "0/{} nodes are available"


@dataclass(slots=True)
class Diagnosis:
    node_statuses: dict[str, Status] = field(default_factory=dict)
    """Explicit rejecting status per node that was evaluated."""
    absent_nodes_status: Status | None = None
    """Status for nodes never evaluated because a PreFilter result excluded them."""
    unschedulable_plugins: set[str] = field(default_factory=set)
    pre_filter_message: str = ""
    """Set when a PreFilter rejected the pod outright (then node statuses are not counted)."""


@dataclass(slots=True)
class SchedulingError:
    """A plugin returned Error: the pod is retried with backoff; no node is blamed."""

    pod_key: str
    message: str


@dataclass(slots=True)
class FitError:
    """No node fits ``pod_key``. Returned, not raised: it is an outcome, not a failure."""

    pod_key: str
    num_all_nodes: int
    diagnosis: Diagnosis

    def message(self) -> str:
        text = NO_NODE_AVAILABLE.format(self.num_all_nodes) + ":"
        diagnosis = self.diagnosis
        if diagnosis.pre_filter_message:
            return f"{text} {diagnosis.pre_filter_message}."
        counts: dict[str, int] = {}
        for node_status in diagnosis.node_statuses.values():
            for reason in node_status.reasons:
                counts[reason] = counts.get(reason, 0) + 1
        absent = self.num_all_nodes - len(diagnosis.node_statuses)
        if absent > 0 and diagnosis.absent_nodes_status is not None:
            for reason in diagnosis.absent_nodes_status.reasons:
                counts[reason] = counts.get(reason, 0) + absent
        histogram = sorted(f"{count} {reason}" for reason, count in counts.items())
        if histogram:
            text += " " + ", ".join(histogram) + "."
        return text
