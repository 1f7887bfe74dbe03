"""``explain`` of a gang member: its group's cycle, run on the snapshot.

kube-scheduler places a PodGroup's pods together (GenericWorkload): whether one member fits
depends on the others. So for a member, ``explain`` also runs the group's own cycle
(``cycle/schedule_group.py``, the code ``run`` uses) against the snapshot, with only that
group's pending pods queued, and reports: each member's node or why it did not fit (its
FitError names the plugins; a member never tried gets the group's status), how many members
were tried and how many placements were found among them (``tried``, ``found``; against
``minCount``, with ``bound_before``), how many are placed in the end (``placed``: all
found, or none), the
``PodGroupInitiallyScheduled`` condition kube would write (reason, message), or the
PreEnqueue plugin that keeps the group out of the queue (a PodGroup missing, fewer than
``minCount`` members). Nothing is written anywhere: the scheduler is thrown away.

Neighbours: ``app.explain`` (the pod's own report, which holds this as ``group``),
``app.explain_render`` (prints it), ``app.cluster_snapshot`` (the same loading).
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

from scheduler.app import cluster_snapshot
from scheduler.app.core import build_scheduler
from scheduler.app.local_binder import LocalBinder
from scheduler.app.simulate_groups import held_by
from scheduler.clock import FakeClock
from scheduler.cycle.schedule_one import BatchingSettings
from scheduler.metrics.registry import Metrics
from scheduler.model.pod_groups import GroupApi, group_of
from scheduler.queueing.queued_group import QueuedPodGroupInfo

if TYPE_CHECKING:
    from collections.abc import Mapping

    from scheduler.app.snapshot_file import Snapshot
    from scheduler.batching.signature import BatchingMode
    from scheduler.framework.config import SchedulerConfig
    from scheduler.framework.feature_gates import FeatureGates
    from scheduler.framework.profile import PluginFactory
    from scheduler.model.pod import Pod
    from scheduler.model.pod_groups import GroupCondition, PodGroup

__all__ = ["explain_group"]


class _Outcomes:
    """Reporter and GroupReporter: each member's message, the group's condition."""

    def __init__(self) -> None:
        self.messages: dict[str, str] = {}
        self.condition: GroupCondition | None = None

    def scheduled(self, pod: Pod, node: str) -> None:
        self.messages.pop(pod.key, None)

    def unschedulable(self, pod: Pod, message: str) -> None:
        self.messages[pod.key] = message

    def failed(self, pod: Pod, message: str) -> None:
        self.messages[pod.key] = message

    def pod_group_condition(
        self, pod_group: PodGroup, condition_type: str, condition: GroupCondition
    ) -> None:
        self.condition = condition


def explain_group(
    snapshot: Snapshot,
    config: SchedulerConfig,
    pod: Pod,
    *,
    mode: BatchingMode,
    registry: Mapping[str, PluginFactory] | None,
    gates: FeatureGates | None,
) -> dict[str, Any] | None:
    """The group part of the report for ``pod`` (see the module docstring); None when the
    pod is in no group or the GenericWorkload gate is off (its pods are placed alone)."""
    if gates is None or not gates.generic_workload:
        return None
    coscheduling = any(g.api is GroupApi.COSCHEDULING for g in snapshot.pod_groups)
    key = group_of(pod, coscheduling=coscheduling)
    if key is None:
        return None
    members = [p for p in snapshot.pending if group_of(p, coscheduling=coscheduling) == key]
    before = [p for p in snapshot.running if group_of(p, coscheduling=coscheduling) == key]
    outcomes = _Outcomes()
    binder = LocalBinder()
    scheduler = build_scheduler(
        config,
        clock=FakeClock(),
        binder=binder,
        reporter=outcomes,
        batching=BatchingSettings(mode=mode),
        metrics=Metrics(),
        seed=0,
        registry=registry,
        gates=gates,
        group_reporter=outcomes,
    )
    binder.scheduler = scheduler
    cluster_snapshot.load(scheduler, dataclasses.replace(snapshot, pending=members))
    pod_group = scheduler.cluster.pod_groups.pod_group(key)
    report: dict[str, Any] = {
        "pod_group": key.split("/", 1)[1],
        "exists": pod_group is not None,
        "min_count": pod_group.min_count if pod_group is not None and pod_group.gang else None,
        "bound_before": len(before),
        "held_by": None,
        "held": None,
        "tried": 0,
        "found": 0,
        "placed": 0,
        "members": [],
        "condition": None,
    }
    held = held_by(scheduler, pod)
    if held is not None:
        report["held_by"], report["held"] = held
        return report
    popped = scheduler.queue.try_pop()
    if not isinstance(popped, QueuedPodGroupInfo):  # held as a whole (a member's gate)
        return report
    attempt = scheduler.schedule_group(popped)
    if attempt is not None:
        report["tried"], report["found"] = attempt.tried, attempt.found
    for member in members:
        assigned = scheduler.cluster.get_pod(member.uid)
        node = assigned.node_name if assigned is not None else None
        report["members"].append(
            {"pod": member.key, "node": node or None, "reason": outcomes.messages.get(member.key)}
        )
    report["placed"] = sum(1 for m in report["members"] if m["node"])
    if outcomes.condition is not None:
        condition = outcomes.condition
        report["condition"] = {
            "status": condition.status,
            "reason": condition.reason,
            "message": condition.message,
        }
    return report
