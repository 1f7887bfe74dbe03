"""``batch-scheduler simulate``: placements for a YAML snapshot, offline.

The same cache, profiles, queue, batching and cycle as ``run``; only the edges differ: the
bind succeeds at once (and is confirmed as the watch would), events are collected, time is
a fake clock that does not move (so batch state never expires mid-run and results do not
depend on machine speed). Each pending pod is attempted once, in queue order.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from scheduler.app.core import build_scheduler
from scheduler.app.input_file import InputFileError, read_documents
from scheduler.batching.signature import BatchingMode
from scheduler.clock import FakeClock
from scheduler.cycle.ports import BindResult
from scheduler.cycle.schedule_one import BatchingSettings
from scheduler.model.errors import ModelError
from scheduler.model.parse import node_from_raw, pod_from_raw

if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path

    from scheduler.cycle.ports import BindDone, BindRequest
    from scheduler.cycle.schedule_one import Scheduler
    from scheduler.framework.config import SchedulerConfig
    from scheduler.model.node import Node
    from scheduler.model.pod import Pod


class InputError(ValueError):
    """The snapshot is not valid: names the document index, object and field."""


@dataclass(slots=True)
class Snapshot:
    nodes: list[Node] = field(default_factory=list)
    running: list[Pod] = field(default_factory=list)
    pending: list[Pod] = field(default_factory=list)


def read_snapshot_file(path: Path, scheduler_names: set[str]) -> Snapshot:
    """The snapshot in ``path``; InputError (one line: file, document, object, field)."""
    try:
        docs = read_documents(path)
    except InputFileError as exc:
        raise InputError(str(exc)) from None
    try:
        return snapshot_from_documents(docs, scheduler_names)
    except InputError as exc:
        raise InputError(f"{path}: {exc}") from None


def snapshot_from_documents(docs: list[object], scheduler_names: set[str]) -> Snapshot:
    """Nodes and Pods from parsed documents; an object given twice names both documents.

    Two documents with the same Node name or Pod namespace/name are one API object written
    twice (the API server would refuse the second): placing both would invent capacity.
    """
    snapshot = Snapshot()
    first_seen: dict[str, int] = {}
    for index, doc in enumerate(docs):
        if doc is None:
            continue
        if not isinstance(doc, dict):
            raise InputError(f"document {index}: must be a mapping, got {type(doc).__name__}")
        kind = doc.get("kind")
        metadata = doc.get("metadata")
        if isinstance(metadata, dict) and not metadata.get("uid"):
            # Snapshots are hand-written: give each object the identity the API server would.
            metadata["uid"] = f"simulate-{index}"
        try:
            if kind == "Node":
                node = node_from_raw(doc)
                _once(first_seen, f"Node {node.name}", index)
                _once(first_seen, f"uid {node.uid}", index)
                snapshot.nodes.append(node)
            elif kind == "Pod":
                pod = pod_from_raw(doc)
                _once(first_seen, f"Pod {pod.key}", index)
                _once(first_seen, f"uid {pod.uid}", index)
                if pod.node_name:
                    snapshot.running.append(pod)
                elif pod.scheduler_name in scheduler_names and not pod.terminal:
                    snapshot.pending.append(pod)
            else:
                raise InputError(f"document {index}: kind {kind!r} is not supported (Node or Pod)")
        except ModelError as exc:
            raise InputError(f"document {index}: {exc}") from exc
    return snapshot


def _once(first_seen: dict[str, int], what: str, index: int) -> None:
    earlier = first_seen.setdefault(what, index)
    if earlier != index:
        raise InputError(f"documents {earlier} and {index}: both are {what}")


class _ImmediateBinder:
    """Binds at once and confirms the assumption, as the watch would."""

    def __init__(self) -> None:
        self.scheduler: Scheduler | None = None

    def dispatch(self, request: BindRequest, done: BindDone) -> None:
        done(request, BindResult.BOUND, "")
        if self.scheduler is not None:
            self.scheduler.cluster.add_pod(request.pod)


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
    """Place every pending pod once; returns the JSON-ready report."""
    binder = _ImmediateBinder()
    reporter = _Collector()
    scheduler = build_scheduler(
        config,
        clock=FakeClock(),
        binder=binder,
        reporter=reporter,
        batching=BatchingSettings(mode=mode),
        seed=seed,
    )
    binder.scheduler = scheduler
    for node in snapshot.nodes:
        scheduler.cluster.add_node(node)
    for pod in snapshot.running:
        scheduler.cluster.add_pod(pod)
    for pod in snapshot.pending:
        scheduler.enqueue(pod)
    placements: list[dict[str, Any]] = []
    started = time.perf_counter()
    while group := scheduler.queue.try_pop_group():
        for info in group:
            pod = info.pod
            scheduler.schedule_one(info)
            assigned = scheduler.cluster.get_pod(pod.uid)
            placed = assigned.node_name if assigned is not None else None
            placements.append(
                {
                    "pod": pod.key,
                    "node": placed or None,
                    "reason": None if placed else reporter.reasons.get(pod.key),
                }
            )
    wall = time.perf_counter() - started
    stats = scheduler.stats
    return {
        "placements": placements,
        "summary": {
            "scheduled": sum(1 for p in placements if p["node"]),
            "unschedulable": sum(1 for p in placements if not p["node"]),
            "batched": stats.batched,
            "full_passes": stats.full_passes,
            "decision_seconds": round(stats.decision_seconds, 6),
            "wall_seconds": round(wall, 6),
            "batching": str(mode),
        },
    }


def render_table(report: Mapping[str, Any]) -> str:
    rows = [("POD", "NODE", "REASON")]
    rows += [(p["pod"], p["node"] or "-", p["reason"] or "") for p in report["placements"]]
    widths = [max(len(r[i]) for r in rows) for i in range(2)]
    lines = [f"{r[0]:<{widths[0]}}  {r[1]:<{widths[1]}}  {r[2]}".rstrip() for r in rows]
    summary = report["summary"]
    lines.append("")
    lines.append(
        f"scheduled {summary['scheduled']}, unschedulable {summary['unschedulable']}, "
        f"batched {summary['batched']}, full passes {summary['full_passes']}, "
        f"decision {summary['decision_seconds'] * 1000:.1f} ms"
    )
    return "\n".join(lines)


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
