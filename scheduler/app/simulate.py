"""``batch-scheduler simulate``: placements for a YAML snapshot, offline.

The same cache, profiles, queue, batching and cycle as ``run``; only the edges differ: the
bind succeeds at once (and is confirmed as the watch would), events are collected, time is
a fake clock that moves only between rounds (so batch state never expires mid-run and
results do not depend on machine speed). Each pending pod is attempted in queue order.

Preemption (PostFilter, DefaultPreemption) runs as in ``run``: :class:`_Evictor` takes the
victims out of the simulated cluster at once, as their deletion would, and the preemptor
waits nominated. When a round of attempts preempted anything, the victims' deletion is
announced to the queue (``AssignedPodDelete``), the clock jumps past the longest backoff and
the woken pods are attempted again, the preemptor first on its nominated node: it is counted
scheduled when it then fits. Each pod keeps one placement row, its final outcome, with the
node it was nominated to and the victims it evicted (``nominated_node``, ``victims``). A
victim that was itself placed earlier in the run is gone at the end: its row loses its node
and says who preempted it (``reason``); the summary counts it under ``preempted`` (every
victim, running or placed in the run), not under ``unschedulable``.

A pending pod with ``schedulingGates`` is never attempted, as in kube: its row says
``gated`` (``"gated": true``, kube's ``SchedulingGated`` reason and the gates), and the
summary counts it under ``gated``. ``--compare`` adds the placements that differ between the
two runs (:func:`differences`).

The snapshot file is read by ``app.snapshot_file`` (re-exported here for the CLI): besides
Nodes and Pods, its Namespaces, Services and pod controllers go into the cache before any
pod is signed, since default topology spreading and namespace selectors read them; so do its
StorageClasses, PVs, claims and CSINodes (the volume plugins), and its PodDisruptionBudgets
(preemption's choice of victims). PriorityClasses are ignored: admission has already written
``spec.priority`` into every pod of a snapshot. Every ignored kind is counted in
``summary.ignored``, and the pending pods of schedulers no profile serves in
``summary.left_out``; the CLI names both on stderr (``snapshot_file.notices``).

Volumes: there is no PV controller offline, so the volume binder VolumeBinding's PreBind
writes through plays its part (``app.local_binder.LocalVolumeBinder``,
:func:`commit_volumes`): a PV chosen for a claim is bound to it both ways, and a claim to
provision keeps its selected node as if a provisioner had made a volume there. Later pods
see those bindings.

Gangs (the GenericWorkload gate; the CLI turns it on for a snapshot with PodGroups): a
group is placed whole in one cycle, as in ``run``; each member's row has its
``pod_group``, and ``summary.pod_groups`` each PodGroup's outcome (members placed against
``minCount`` and its ``PodGroupInitiallyScheduled`` condition, kube's reason and message).
A pending pod a PreEnqueue plugin holds (a gang still short of ``minCount`` members, or
whose PodGroup is not in the snapshot) is never attempted: its row says which plugin holds
it and why (``held_by``), and the summary counts it under ``waiting``.

Permit: no timer runs offline, so a pod a Permit plugin still holds when the run ends is
rejected as its timeout would reject it (``rejected due to timeout after waiting …``): its
row has no node and that reason.
"""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING, Any

from scheduler.app import cluster_snapshot
from scheduler.app.core import build_scheduler
from scheduler.app.local_binder import LocalBinder, attempt_queued, commit_volumes
from scheduler.app.simulate_groups import group_line, group_outcomes, held_rows
from scheduler.app.snapshot_file import InputError, Snapshot, read_snapshot_file
from scheduler.batching.signature import BatchingMode
from scheduler.clock import FakeClock
from scheduler.cycle.eventhandlers import EventHandlers
from scheduler.cycle.schedule_one import BatchingSettings
from scheduler.framework.events import ClusterEvent

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from scheduler.cycle.schedule_one import Scheduler
    from scheduler.framework.config import SchedulerConfig
    from scheduler.framework.feature_gates import FeatureGates
    from scheduler.framework.profile import PluginFactory
    from scheduler.model.pod import Pod
    from scheduler.model.pod_groups import GroupCondition, PodGroup

__all__ = [
    "GATED_MESSAGE",
    "GATED_REASON",
    "InputError",
    "Snapshot",
    "commit_volumes",
    "compare",
    "differences",
    "read_snapshot_file",
    "render_compare",
    "render_table",
    "simulate",
    "to_json",
]

GATED_REASON = "SchedulingGated"
"""kube's PodScheduled=False reason for a pod with scheduling gates."""
GATED_MESSAGE = "Scheduling is blocked due to non-empty scheduling gates"
"""The message the API server sets with it (pkg/registry/core/pod/strategy.go)."""


class _Evictor:
    """The Preemptor offline: victims leave the cluster at once, as their deletion would;
    nominations stay in the scheduler's own memory (no ``status`` to patch)."""

    def __init__(self) -> None:
        self.scheduler: Scheduler | None = None
        self.nominated: dict[str, str] = {}
        """Preemptor key → the node it was nominated to (its last preemption)."""
        self.victims: dict[str, list[str]] = {}
        """Preemptor key → the keys of every pod it evicted, in eviction order."""
        self.preempted_by: dict[str, tuple[str, str]] = {}
        """Victim key → (preemptor key, node)."""
        self.evictions = 0
        """Preemptions so far: a round that adds any is followed by another round."""

    def preempt(self, pod: Pod, node: str, victims: Sequence[Pod]) -> None:
        self.evictions += 1
        self.nominated[pod.key] = node
        evicted = self.victims.setdefault(pod.key, [])
        for victim in victims:
            evicted.append(victim.key)
            self.preempted_by[victim.key] = (pod.key, node)
            if self.scheduler is not None:  # deleted: the watch's DELETED
                EventHandlers(self.scheduler).on_pod_deleted(victim.uid)

    def clear_nominated_node(self, pods: Sequence[Pod]) -> None:
        return None


class _GroupConditions:
    """The GroupReporter offline: each PodGroup's last condition, by ``namespace/name``."""

    def __init__(self) -> None:
        self.last: dict[str, GroupCondition] = {}

    def pod_group_condition(
        self, pod_group: PodGroup, condition_type: str, condition: GroupCondition
    ) -> None:
        self.last[f"{pod_group.namespace}/{pod_group.name}"] = condition


class _Collector:
    def __init__(self) -> None:
        self.reasons: dict[str, str] = {}

    def scheduled(self, pod: Pod, node: str) -> None:
        self.reasons.pop(pod.key, None)

    def unschedulable(self, pod: Pod, message: str) -> None:
        self.reasons[pod.key] = message

    def failed(self, pod: Pod, message: str) -> None:
        self.reasons[pod.key] = message


def simulate(
    snapshot: Snapshot,
    config: SchedulerConfig,
    *,
    mode: BatchingMode,
    seed: int | None = 0,
    registry: Mapping[str, PluginFactory] | None = None,
    gates: FeatureGates | None = None,
) -> dict[str, Any]:
    """Place every pending pod (see the module docstring); returns the JSON-ready report.
    ``registry`` None: the in-tree plugins only; ``gates`` None: kube's defaults."""
    binder = LocalBinder()
    reporter = _Collector()
    evictor = _Evictor()
    conditions = _GroupConditions()
    clock = FakeClock()
    scheduler = build_scheduler(
        config,
        clock=clock,
        binder=binder,
        reporter=reporter,
        batching=BatchingSettings(mode=mode),
        seed=seed,
        preemptor=evictor,
        registry=registry,
        gates=gates,
        group_reporter=conditions,
    )
    binder.scheduler = evictor.scheduler = scheduler
    cluster_snapshot.load(scheduler, snapshot)
    rows: dict[str, dict[str, Any]] = {}
    started = time.perf_counter()
    for _ in range(len(snapshot.pending) + 1):  # each round but the last preempts
        evictions = evictor.evictions
        for pod, placed in attempt_queued(scheduler):
            rows[pod.key] = {
                "pod": pod.key,
                "node": placed or None,
                "reason": None if placed else reporter.reasons.get(pod.key),
            }
        if evictor.evictions == evictions:
            break
        # The victims are gone: what their deletion wakes is tried again, after backoff.
        scheduler.queue.on_cluster_event(ClusterEvent.ASSIGNED_POD_DELETE)
        clock.advance(config.pod_max_backoff_seconds + 1.0)
        scheduler.queue.flush()
    for key in _expire_waiting(scheduler):
        if key in rows:
            rows[key].update(node=None, reason=reporter.reasons.get(key))
    wall = time.perf_counter() - started
    placements = [_final(row, evictor) for row in rows.values()]
    placements += [_gated(pod) for pod in snapshot.pending if pod.scheduling_gates]
    unattempted = [p for p in snapshot.pending if p.key not in rows and not p.scheduling_gates]
    placements += held_rows(scheduler, unattempted)
    if gates is not None and gates.generic_workload:
        groups = group_outcomes(scheduler, snapshot, placements, conditions.last)
    else:  # no gangs: the pods were placed one by one
        groups = []
        for row in placements:
            row["pod_group"] = None
    stats = scheduler.counts()
    return {
        "placements": placements,
        "summary": {
            "scheduled": sum(1 for p in placements if p["node"]),
            "unschedulable": sum(
                1
                for p in placements
                if not p["node"]
                and not p["gated"]
                and not p["held_by"]
                and p["pod"] not in evictor.preempted_by
            ),
            "preempted": len(evictor.preempted_by),
            "gated": sum(1 for p in placements if p["gated"]),
            "waiting": sum(1 for p in placements if p["held_by"]),
            "batched": stats.batched,
            "exact": stats.exact,
            "full_passes": stats.full_passes,
            "decision_seconds": round(stats.decision_seconds, 6),
            "wall_seconds": round(wall, 6),
            "batching": str(mode),
            "ignored": dict(sorted(snapshot.ignored.items())),
            "left_out": dict(sorted(snapshot.left_out.items())),
            "pod_groups": groups,
            # A plugin without sign_pod makes its profile's pods unsignable (said once).
            "unsignable_plugins": {
                name: signer.disabled_by
                for name, signer in sorted(scheduler.signers.items())
                if signer.disabled_by and mode is not BatchingMode.OFF
            },
        },
    }


def _expire_waiting(scheduler: Scheduler) -> list[str]:
    """Reject every pod still waiting at Permit as its timeout would; their keys."""
    held = [w for p in scheduler.profiles.values() for w in list(p.binding.waiting.values())]
    for waiting in held:
        waiting.expire()
    scheduler.binding.run_decided()
    return [waiting.pod.key for waiting in held]


def _final(row: dict[str, Any], evictor: _Evictor) -> dict[str, Any]:
    """A placement row with its preemption: the nomination and victims of a preemptor; a
    victim placed earlier in the run loses its node and says who preempted it."""
    key = row["pod"]
    row = {
        **row,
        "gated": False,
        "held_by": None,
        "nominated_node": evictor.nominated.get(key),
        "victims": evictor.victims.get(key, []),
    }
    if key in evictor.preempted_by:
        by, node = evictor.preempted_by[key]
        row.update(node=None, reason=f"preempted by {by} on node {node}")
    return row


def _gated(pod: Pod) -> dict[str, Any]:
    """The row of a pod its scheduling gates keep out of the queue: never attempted, with
    kube's PodScheduled condition reason and message."""
    return {
        "pod": pod.key,
        "node": None,
        "reason": f"{GATED_REASON}: {GATED_MESSAGE} ({', '.join(pod.scheduling_gates)})",
        "gated": True,
        "held_by": None,
        "nominated_node": None,
        "victims": [],
    }


def render_table(report: Mapping[str, Any]) -> str:
    rows = [("POD", "NODE", "REASON")]
    rows += [
        (p["pod"], "gated" if p.get("gated") else p["node"] or "-", _reason(p))
        for p in report["placements"]
    ]
    widths = [max(len(r[i]) for r in rows) for i in range(2)]
    lines = [f"{r[0]:<{widths[0]}}  {r[1]:<{widths[1]}}  {r[2]}".rstrip() for r in rows]
    summary = report["summary"]
    lines.append("")
    waiting = f"waiting {summary['waiting']}, " if summary.get("waiting") else ""
    lines.append(
        f"scheduled {summary['scheduled']}, unschedulable {summary['unschedulable']}, "
        f"preempted {summary.get('preempted', 0)}, gated {summary.get('gated', 0)}, {waiting}"
        f"batched {summary['batched']} (exact {summary.get('exact', 0)}), "
        f"full passes {summary['full_passes']}, "
        f"decision {summary['decision_seconds'] * 1000:.1f} ms"
    )
    lines += [group_line(group) for group in summary.get("pod_groups", [])]
    for profile, plugins in summary.get("unsignable_plugins", {}).items():
        lines.append(
            f"batching off for profile {profile}: plugin(s) {', '.join(plugins)} cannot sign pods"
        )
    return "\n".join(lines)


def _reason(placement: Mapping[str, Any]) -> str:
    """The reason, and a preemptor's victims in short (three named, then a count)."""
    reason = placement["reason"] or ""
    victims = placement.get("victims") or []
    if not victims:
        return reason
    named = ", ".join(victims[:3]) + (f" +{len(victims) - 3} more" if len(victims) > 3 else "")
    evicted = f"preempted {named} on {placement.get('nominated_node')}"
    return f"{reason} ({evicted})" if reason else evicted


def compare(
    snapshot: Snapshot,
    config: SchedulerConfig,
    *,
    mode: BatchingMode,
    seed: int | None,
    registry: Mapping[str, PluginFactory] | None = None,
    gates: FeatureGates | None = None,
) -> dict[str, Any]:
    """Batching off and ``mode`` (``all`` if ``off``) over the same input, with the speedup."""
    off = simulate(
        snapshot, config, mode=BatchingMode.OFF, seed=seed, registry=registry, gates=gates
    )
    on_mode = BatchingMode.ALL if mode is BatchingMode.OFF else mode
    on = simulate(snapshot, config, mode=on_mode, seed=seed, registry=registry, gates=gates)
    on_seconds = on["summary"]["decision_seconds"]
    speedup = off["summary"]["decision_seconds"] / on_seconds if on_seconds else None
    return {"off": off, "on": on, "speedup": speedup, "differences": differences(off, on)}


def differences(off: Mapping[str, Any], on: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The pods placed differently by the two runs (another node, or placed in one only),
    in the first run's order: ``pod``, ``off`` and ``on`` (the node, None if not placed)."""
    on_nodes = {p["pod"]: p["node"] for p in on["placements"]}
    return [
        {"pod": p["pod"], "off": p["node"], "on": on_nodes.get(p["pod"])}
        for p in off["placements"]
        if p["node"] != on_nodes.get(p["pod"])
    ]


def render_compare(report: Mapping[str, Any]) -> str:
    """Both tables, the speedup, then the placements that differ (batching may place a pod
    on another node of the same score, or fit fewer pods: docs/fidelity.md)."""
    lines: list[str] = []
    for label in ("off", "on"):
        lines += [f"== batching {report[label]['summary']['batching']}"]
        lines += [render_table(report[label])]
    speedup = report["speedup"]
    lines += [f"speedup (decision time): {speedup:.2f}x" if speedup else "speedup: n/a"]
    diffs = report["differences"]
    total = len(report["off"]["placements"])
    if not diffs:
        lines += [f"placements that differ: none of {total}"]
        return "\n".join(lines)
    lines += ["", f"placements that differ: {len(diffs)} of {total}"]
    rows = [("POD", "OFF", "ON")]
    rows += [(d["pod"], d["off"] or "-", d["on"] or "-") for d in diffs]
    widths = [max(len(r[i]) for r in rows) for i in range(2)]
    lines += [f"{r[0]:<{widths[0]}}  {r[1]:<{widths[1]}}  {r[2]}" for r in rows]
    return "\n".join(lines)


def to_json(report: Mapping[str, Any]) -> str:
    return json.dumps(report, indent=None, separators=(",", ":"))
