"""``simulate``'s gangs: the rows of pods a PreEnqueue plugin holds, and each PodGroup's
outcome (members placed against ``minCount``, its ``PodGroupInitiallyScheduled``
condition as kube-scheduler would have written it).

Neighbours: ``app.simulate`` (the run and the report), ``cycle/schedule_group.py`` (which
decides the conditions), ``plugins/gang_scheduling.py`` (whose PreEnqueue holds members).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from scheduler.app.snapshot_file import Snapshot
    from scheduler.cycle.schedule_one import Scheduler
    from scheduler.model.pod import Pod
    from scheduler.model.pod_groups import GroupCondition

__all__ = ["group_line", "group_outcomes", "held_by", "held_rows"]


def held_by(scheduler: Scheduler, pod: Pod) -> tuple[str, str] | None:
    """The first PreEnqueue plugin that keeps ``pod`` out of the queue (kube runs them in
    order and stops at the first), and its message; None: none does."""
    profile = scheduler.profiles.get(pod.scheduler_name)
    if profile is None:
        return None
    for plugin in profile.binding.pre_enqueue_plugins:
        status = plugin.pre_enqueue(pod)
        if not status.is_success:
            return plugin.name, status.message()
    return None


def held_rows(scheduler: Scheduler, pods: Sequence[Pod]) -> list[dict[str, Any]]:
    """A row for each pending pod of ours that was never attempted and that a PreEnqueue
    plugin holds: the plugin and its message."""
    rows: list[dict[str, Any]] = []
    for pod in pods:
        held = held_by(scheduler, pod)
        if held is not None:
            rows.append(
                {
                    "pod": pod.key,
                    "node": None,
                    "reason": held[1],
                    "gated": False,
                    "held_by": held[0],
                    "nominated_node": None,
                    "victims": [],
                }
            )
    return rows


def group_outcomes(
    scheduler: Scheduler,
    snapshot: Snapshot,
    placements: list[dict[str, Any]],
    conditions: Mapping[str, GroupCondition],
) -> list[dict[str, Any]]:
    """Each PodGroup of the snapshot with pending members: ``pod_group``, ``api``,
    ``min_count`` (None: basic policy), ``members``, ``placed`` and its last condition
    (``status``, ``reason``, ``message``; None where no cycle ran). Sets each row's
    ``pod_group`` (``namespace/name``, its PodGroup there or not; None: no group)."""
    groups = scheduler.cluster.pod_groups
    by_key = {pod.key: pod for pod in snapshot.pending}
    counts: dict[str, list[int]] = {}
    for row in placements:
        pod = by_key.get(row["pod"])
        key = groups.key_of(pod) if pod is not None else None
        row["pod_group"] = key.split("/", 1)[1] if key is not None else None
        if key is not None:
            count = counts.setdefault(key, [0, 0])
            count[0] += 1
            count[1] += 1 if row["node"] else 0
    out = []
    for pod_group in sorted(snapshot.pod_groups, key=lambda g: (g.namespace, g.name, g.api)):
        if pod_group.key not in counts:
            continue
        members, placed = counts[pod_group.key]
        name = f"{pod_group.namespace}/{pod_group.name}"
        condition = conditions.get(name)
        out.append(
            {
                "pod_group": name,
                "api": str(pod_group.api),
                "min_count": pod_group.min_count if pod_group.gang else None,
                "members": members,
                "placed": placed,
                "status": condition.status if condition else None,
                "reason": condition.reason if condition else None,
                "message": condition.message if condition else None,
            }
        )
    return out


def group_line(group: Mapping[str, Any]) -> str:
    """``pod group default/train: 3 of 4 placed (minCount 3), Scheduled``."""
    policy = f"minCount {group['min_count']}" if group["min_count"] is not None else "basic"
    outcome = group["reason"] or "not attempted"
    message = f": {group['message']}" if group["message"] else ""
    return (
        f"pod group {group['pod_group']}: {group['placed']} of {group['members']} placed "
        f"({policy}), {outcome}{message}"
    )
