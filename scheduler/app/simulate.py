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

The snapshot file is read by ``app.snapshot_file`` (re-exported here for the CLI): besides
Nodes and Pods, its Namespaces, Services and pod controllers go into the cache before any
pod is signed, since default topology spreading and namespace selectors read them; so do its
StorageClasses, PVs, claims and CSINodes (the volume plugins), and its PodDisruptionBudgets
(preemption's choice of victims). PriorityClasses are ignored: admission has already written
``spec.priority`` into every pod of a snapshot.

Volumes: there is no PV controller offline, so the binder plays its part when it binds a
pod whose VolumeBinding Reserve planned bindings (:func:`commit_volumes`): a PV chosen for
a claim is bound to it both ways, and a claim to provision keeps its selected node as if
a provisioner had made a volume there. Later pods see those bindings.
"""

from __future__ import annotations

import dataclasses
import json
import time
from typing import TYPE_CHECKING, Any

from scheduler.app.core import build_scheduler
from scheduler.app.snapshot_file import InputError, Snapshot, read_snapshot_file
from scheduler.batching.signature import BatchingMode
from scheduler.clock import FakeClock
from scheduler.cycle.ports import BindResult
from scheduler.cycle.schedule_one import BatchingSettings
from scheduler.queueing.scheduling_queue import ClusterEvent

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from scheduler.cache.volumes import Volumes
    from scheduler.cycle.ports import BindDone, BindRequest
    from scheduler.cycle.schedule_one import Scheduler
    from scheduler.framework.config import SchedulerConfig
    from scheduler.model.pod import Pod
    from scheduler.plugins.volume_binding import PodVolumes

__all__ = [
    "InputError",
    "Snapshot",
    "commit_volumes",
    "compare",
    "read_snapshot_file",
    "render_table",
    "simulate",
    "to_json",
]


def commit_volumes(volumes: Volumes, plan: PodVolumes, node: str) -> None:
    """What the PV controller (and a provisioner) would make of a PreBind: the planned PVs
    bound to their claims, the claims to provision bound on ``node``."""
    for pv, pvc in plan.static_bindings:
        volumes.set_pv(dataclasses.replace(pv.with_claim(pvc), phase="Bound"))
        volumes.set_pvc(
            dataclasses.replace(pvc, volume_name=pv.name, bind_completed=True, phase="Bound")
        )
    for pvc in plan.provisions:
        volumes.set_pvc(dataclasses.replace(pvc, selected_node=node))


class _ImmediateBinder:
    """Binds at once and confirms the assumption, as the watch would (volumes first)."""

    def __init__(self) -> None:
        self.scheduler: Scheduler | None = None

    def dispatch(self, request: BindRequest, done: BindDone) -> None:
        plan = request.volumes
        if plan is not None and self.scheduler is not None:
            commit_volumes(self.scheduler.cluster.volumes, plan, request.node)
        done(request, BindResult.BOUND, "")
        if self.scheduler is not None:
            self.scheduler.cluster.add_pod(request.pod)


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
            if self.scheduler is not None:
                self.scheduler.cluster.remove_pod(victim.uid)
        if self.scheduler is not None:
            self.scheduler.queue.on_cluster_event(ClusterEvent.ASSIGNED_POD_DELETE)

    def clear_nominated_node(self, pods: Sequence[Pod]) -> None:
        return None


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
) -> dict[str, Any]:
    """Place every pending pod (see the module docstring); returns the JSON-ready report."""
    binder = _ImmediateBinder()
    reporter = _Collector()
    evictor = _Evictor()
    clock = FakeClock()
    scheduler = build_scheduler(
        config,
        clock=clock,
        binder=binder,
        reporter=reporter,
        batching=BatchingSettings(mode=mode),
        seed=seed,
        preemptor=evictor,
    )
    binder.scheduler = evictor.scheduler = scheduler
    _load(scheduler, snapshot)
    rows: dict[str, dict[str, Any]] = {}
    started = time.perf_counter()
    for _ in range(len(snapshot.pending) + 1):  # each round but the last preempts
        evictions = evictor.evictions
        while group := scheduler.queue.try_pop_group():
            for info in group:
                pod = info.pod
                scheduler.schedule_one(info)
                assigned = scheduler.cluster.get_pod(pod.uid)
                placed = assigned.node_name if assigned is not None else None
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
    wall = time.perf_counter() - started
    placements = [_final(row, evictor) for row in rows.values()]
    stats = scheduler.stats
    return {
        "placements": placements,
        "summary": {
            "scheduled": sum(1 for p in placements if p["node"]),
            "unschedulable": sum(
                1 for p in placements if not p["node"] and p["pod"] not in evictor.preempted_by
            ),
            "preempted": len(evictor.preempted_by),
            "batched": stats.batched,
            "full_passes": stats.full_passes,
            "decision_seconds": round(stats.decision_seconds, 6),
            "wall_seconds": round(wall, 6),
            "batching": str(mode),
            "ignored": dict(sorted(snapshot.ignored.items())),
        },
    }


def _load(scheduler: Scheduler, snapshot: Snapshot) -> None:
    """The snapshot into the cache, everything a signature reads first, then the pods."""
    cluster = scheduler.cluster
    for namespace in snapshot.namespaces:
        cluster.set_namespace(namespace.name, namespace.labels)
    for service in snapshot.services:
        cluster.workloads.set_service(service)
    for controller in snapshot.controllers:
        cluster.workloads.set_controller(controller)
    volumes = cluster.volumes
    for storage_class in snapshot.storage_classes:
        volumes.set_storage_class(storage_class)
    for pv in snapshot.pvs:
        volumes.set_pv(pv)
    for pvc in snapshot.pvcs:
        volumes.set_pvc(pvc)
    for csi_node in snapshot.csi_nodes:
        volumes.set_csi_node(csi_node)
    for budget in snapshot.disruption_budgets:
        cluster.disruption_budgets.add(budget)
    for node in snapshot.nodes:
        cluster.add_node(node)
    for pod in snapshot.running:
        cluster.add_pod(pod)
    for pod in snapshot.pending:
        scheduler.enqueue(pod)


def _final(row: dict[str, Any], evictor: _Evictor) -> dict[str, Any]:
    """A placement row with its preemption: the nomination and victims of a preemptor; a
    victim placed earlier in the run loses its node and says who preempted it."""
    key = row["pod"]
    row = {
        **row,
        "nominated_node": evictor.nominated.get(key),
        "victims": evictor.victims.get(key, []),
    }
    if key in evictor.preempted_by:
        by, node = evictor.preempted_by[key]
        row.update(node=None, reason=f"preempted by {by} on node {node}")
    return row


def render_table(report: Mapping[str, Any]) -> str:
    rows = [("POD", "NODE", "REASON")]
    rows += [(p["pod"], p["node"] or "-", _reason(p)) for p in report["placements"]]
    widths = [max(len(r[i]) for r in rows) for i in range(2)]
    lines = [f"{r[0]:<{widths[0]}}  {r[1]:<{widths[1]}}  {r[2]}".rstrip() for r in rows]
    summary = report["summary"]
    lines.append("")
    lines.append(
        f"scheduled {summary['scheduled']}, unschedulable {summary['unschedulable']}, "
        f"preempted {summary.get('preempted', 0)}, "
        f"batched {summary['batched']}, full passes {summary['full_passes']}, "
        f"decision {summary['decision_seconds'] * 1000:.1f} ms"
    )
    if ignored := summary.get("ignored"):
        kinds = ", ".join(f"{kind} {count}" for kind, count in ignored.items())
        lines.append(f"ignored (cannot affect a decision): {kinds}")
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
    snapshot: Snapshot, config: SchedulerConfig, *, mode: BatchingMode, seed: int | None
) -> dict[str, Any]:
    """Batching off and ``mode`` (``all`` if ``off``) over the same input, with the speedup."""
    off = simulate(snapshot, config, mode=BatchingMode.OFF, seed=seed)
    on_mode = BatchingMode.ALL if mode is BatchingMode.OFF else mode
    on = simulate(snapshot, config, mode=on_mode, seed=seed)
    on_seconds = on["summary"]["decision_seconds"]
    speedup = off["summary"]["decision_seconds"] / on_seconds if on_seconds else None
    return {"off": off, "on": on, "speedup": speedup}


def to_json(report: Mapping[str, Any]) -> str:
    return json.dumps(report, indent=None, separators=(",", ":"))
