"""The chaos suite's records: ``latest.json`` (every run, with the invocation's facts) and
``latest.md`` (a table fault × scheduler with the invariants and the recovery).

Columns, per run: lost (neither bound nor reported Unschedulable), already bound (binds the
API server refused with 409 "already assigned"), on deleted nodes (bound after the node's
deletion, as any scheduler can with a bind on the wire or sent before the deletion's watch
event arrived), after deletion seen (ours only: binds that landed although they started
after its cache had dropped the node, the invariant in its place), overcommitted nodes,
recovery (fault end → last bind; negative: all bound before the fault ended), the
scheduler's error-level log lines, and its 429s, 410s and pod LISTs (initial ones
included) as the audit log saw them. Ours is also held to ``nodes_not_seen_deleted`` = 0
(a deleted node its cache never dropped), shown per run when it is not.

Neighbours: :mod:`bench.chaos.cli` (writes them), :mod:`bench.chaos.figures`.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pathlib import Path

Record = dict[str, Any]
COLUMNS = (
    ("lost", "lost"),
    ("binds_already_bound", "already bound"),
    ("on_deleted_nodes", "on deleted nodes"),
    ("binds_after_deletion_seen", "after deletion seen"),
    ("overcommitted_nodes", "overcommitted"),
    ("recovery_s", "recovery s"),
    ("error_lines", "error lines"),
    ("bound", "bound"),
    ("code_429", "429s"),
    ("code_410", "410s"),
    ("pod_lists", "pod LISTs"),
)
INVARIANTS = (
    "lost",
    "binds_already_bound",
    "binds_after_deletion_seen",
    "nodes_not_seen_deleted",
    "overcommitted_nodes",
)


def violations(record: Record) -> list[str]:
    """The invariants a run broke (a failed run breaks them all; one present but None could
    not be measured)."""
    if "failed" in record:
        return [f"failed: {record['failed']}"]
    return [
        f"{key}={record[key]}"
        for key in INVARIANTS
        if key in record and (record[key] is None or record[key])
    ]


def markdown(records: list[Record], meta: Record) -> str:
    head = ["fault", "scheduler", *(title for _, title in COLUMNS)]
    lines = [
        "# Faults on the real control plane: ours and kube-scheduler v1.37.2",
        "",
        f"- commit `{meta.get('commit')}`, {meta.get('date')}",
        f"- command: `{meta.get('command')}`",
        f"- machine: {meta.get('machine')}",
        "",
        "| " + " | ".join(head) + " |",
        "|" + "---|" * len(head),
    ]
    for r in records:
        if "failed" in r:
            cells = [f"failed: {r['failed'][:120]}", *([""] * (len(COLUMNS) - 1))]
        else:
            cells = [_cell(r.get(key)) for key, _ in COLUMNS]
        lines.append("| " + " | ".join([r["fault"], r["scheduler"], *cells]) + " |")
    lines += ["", "Per run (nodes, pods, pods bound when the fault began, load average):", ""]
    for r in records:
        lines.append(
            f"- {r['scenario']} [{r['scheduler']}]: {r['nodes']} nodes, {r['pods']} pods, "
            f"fault at {r.get('fault_at_bound')} bound / {r.get('fault_at_created')} created, "
            f"lasting {r.get('fault_s')} s; load {r.get('loadavg_before')} → "
            f"{r.get('loadavg_after')}; {_extra(r)}; commit {r.get('commit')}"
        )
    return "\n".join(lines) + "\n"


def _cell(value: object) -> str:
    return "–" if value is None else str(value)


def _extra(r: Record) -> str:
    keys: tuple[str, ...] = (
        "compactions",
        "restart_s",
        "deleted_nodes",
        "deleted_pods",
        "unschedulable",
    )
    keys += ("terminating", "watch_expired", "pod_watches", "kubelet_failed", "spread")
    keys += ("binds_on_wire_at_deletion", "nodes_not_seen_deleted")
    return ", ".join(f"{k} {r[k]}" for k in keys if r.get(k) not in (None, 0, {}))


def write(records: list[Record], meta: Record, out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    kept = [{k: v for k, v in r.items() if k not in ("logs", "failure_detail")} for r in records]
    (out / "latest.json").write_text(json.dumps({"meta": meta, "runs": kept}, indent=1) + "\n")
    (out / "latest.md").write_text(markdown(records, meta))


def soak_markdown(record: Record, meta: Record) -> str:
    lines = [
        "# Soak: churn on the real control plane, ours",
        "",
        f"- commit `{meta.get('commit')}`, {meta.get('date')}",
        f"- command: `{meta.get('command')}`",
        f"- machine: {meta.get('machine')}",
        f"- {record['minutes']} min, {record['nodes']} nodes, {record['rate']} pods/s created "
        f"and deleted, {record['live']} kept; a node added or removed every 30 s",
        f"- end: {record.get('pending_at_end')} pending after the churn stopped; "
        f"{record.get('pods_created')} created, {record.get('pods_deleted')} deleted; "
        f"longest wait for a bind {record.get('longest_wait_s')} s",
        "",
        "| minute | RSS MB | RSS peak in the minute MB | sockets | CPU s | bound | CPU ms/pod "
        "| pending | oldest pending s | reports queued | mean Event delay s so far | load |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    lines.extend(
        f"| {s['minute']} | {s['rss_mb']} | {_cell(s.get('rss_peak_mb'))} | "
        f"{_cell(s.get('sockets'))} | {s['cpu_s']} | "
        f"{s['bound']} | "
        f"{_cell(s['cpu_ms_per_pod'])} | {s['pending']} | {s['oldest_pending_s']} | "
        f"{_cell(s.get('reports_queued'))} | {_cell(s.get('event_delay_s'))} | "
        f"{s['loadavg'][0]} |"
        for s in record.get("samples", [])
    )
    return "\n".join(lines) + "\n"


def write_soak(record: Record, meta: Record, out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    (out / "soak.json").write_text(json.dumps({"meta": meta, "soak": record}, indent=1) + "\n")
    (out / "soak.md").write_text(soak_markdown(record, meta))
