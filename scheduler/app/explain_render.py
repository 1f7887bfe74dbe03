"""``batch-scheduler explain``'s output: the report ``app.explain`` computes, for a terminal
(a table in :data:`WIDTH` columns) or a program (one JSON object, the report as it is).

Rendering only: everything shown is in the report, so the table and the JSON never say
different things. Neighbours: ``app.explain`` (the report), ``cli.main`` (picks the output).
"""

from __future__ import annotations

import json
import textwrap
from typing import TYPE_CHECKING, Any

from scheduler.framework import explanation as ex

if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = ["WIDTH", "render_table", "to_json"]

WIDTH = 100
"""Columns the table fits in."""
_MIN_REASON_WIDTH = 30
"""Narrower than this, a Filter reason goes under its row rather than in its column."""


def to_json(report: Mapping[str, Any]) -> str:
    return json.dumps(report, indent=None, separators=(",", ":"))


def render_table(report: Mapping[str, Any]) -> str:
    """The report for a terminal, in :data:`WIDTH` columns (long reasons wrap)."""
    lines = [_headline(report)]
    if report["gated"]:
        lines += _wrap(
            f"Not attempted: {report['gated']}. What follows is what a pass would find once "
            "the gates are removed.",
            indent=2,
        )
    lines += [_pre_filter_line(report["pre_filter"]), *_batching_line(report)]
    lines += ["", "Filter (the first plugin that rejects a node, as kube's Status)"]
    lines += _filter_table(report["nodes"])
    if report["omitted"]:
        lines += [f"({report['omitted']} more nodes not shown: --top, --node)"]
    scored = [node for node in report["nodes"] if node["total"] is not None]
    if scored:
        lines += ["", "Score (feasible nodes, highest total first; weighted = normalized x weight)"]
        lines += _score_table(scored)
    if report["fit_error"]:
        lines += ["", *_wrap(f"FailedScheduling: {report['fit_error']}", indent=2)]
    if report.get("group"):
        lines += ["", *_group_lines(report["group"])]
    if report["notes"]:
        lines += ["", "Notes"]
        for note in report["notes"]:
            lines += _wrap(f"- {note}", indent=2)
    return "\n".join(line.rstrip() for line in lines)


def _group_lines(group: Mapping[str, Any]) -> list[str]:
    """The member's group: held out of the queue, or its cycle member by member."""
    policy = f"minCount {group['min_count']}" if group["min_count"] is not None else "basic"
    if not group["exists"]:
        policy = "no such PodGroup in the snapshot"
    head = f"Pod group {group['pod_group']} ({policy})"
    if group["held_by"]:
        held = f"{group['held_by']}: {group['held']}"
        return [f"{head}: not queued", *_wrap(held, first=2, indent=4)]
    head += f": {group['found']} placements found trying {group['tried']} members"
    if group["bound_before"]:
        head += f", {group['bound_before']} bound before"
    head += f"; {group['placed']} placed"
    lines = [head, "  (the group's cycle on this snapshot, its members together)"]
    for member in group["members"]:
        text = f"{member['pod']}: {member['node'] or member['reason'] or '-'}"
        lines += _wrap(text, first=2, indent=4)
    condition = group["condition"]
    if condition:
        text = f"PodGroupInitiallyScheduled={condition['status']} {condition['reason']}"
        text += f": {condition['message']}" if condition["message"] else ""
        lines += _wrap(text, first=2, indent=4)
    return lines


def _headline(report: Mapping[str, Any]) -> str:
    text = (
        f"Pod {report['pod']} (profile {report['profile']}): "
        f"{report['feasible']}/{report['num_nodes']} nodes feasible"
    )
    best = report["best"]
    if best:
        # --node NAME may have left the best node's row out: its total is then not shown.
        top = next((node for node in report["nodes"] if node["node"] == best[0]), None)
        total = f" (total {top['total']})" if top is not None and top["total"] is not None else ""
        text += f", best {' | '.join(best)}{total}"
    return text


def _pre_filter_line(pre_filter: Mapping[str, Any]) -> str:
    text = f"PreFilter: {pre_filter['code']}"
    if pre_filter["plugin"]:
        text += f" ({pre_filter['plugin']}: {', '.join(pre_filter['reasons'])})"
    elif pre_filter["reasons"]:
        text += f" ({', '.join(pre_filter['reasons'])})"
    if pre_filter["narrowed_by"]:
        text += f"; nodes narrowed by {', '.join(pre_filter['narrowed_by'])}"
    return text


def _batching_line(report: Mapping[str, Any]) -> list[str]:
    batching = report["batching"]
    text = f"Batching (--batching {batching['mode']}): "
    if batching["signable"]:
        text += f"signable, path {batching['path']} ({_PATHS[batching['path']]})"
    else:
        text += f"not signable, refused by {batching['refused_by']} ({batching['reason']})"
    opted = batching["if_opted_in"]
    if opted is not None and opted["signable"]:
        text += f"; if opted in: signable, path {opted['path']}"
    elif opted is not None:
        text += f"; if opted in: refused by {opted['refused_by']} ({opted['reason']})"
    return _wrap(text, indent=2)


_PATHS = {
    "exact": "spread or pod affinity: the exact batch places it where a full pass would",
    "hint": "kube's batching: the next node of its group's ranking, rechecked",
    "full": "a full pass",
}


def _filter_table(nodes: list[Mapping[str, Any]]) -> list[str]:
    rows = [("NODE", "STATUS", "PLUGIN", "REASON")]
    for node in nodes:
        plugin = node["plugin"] or ""
        if node["point"] == ex.PRE_FILTER:
            plugin = f"{plugin} (PreFilter)".lstrip()
        rows.append((node["node"], node["code"], plugin, ", ".join(node["reasons"])))
    widths = [max(len(row[i]) for row in rows) for i in range(3)]
    start = sum(widths) + 6
    lines: list[str] = []
    for row in rows:
        head = "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=False))
        if not row[3] or start + len(row[3]) <= WIDTH:
            lines.append(f"{head}  {row[3]}")
        elif WIDTH - start >= _MIN_REASON_WIDTH:
            wrapped = _wrap(row[3], indent=0, width=WIDTH - start)
            lines.append(f"{head}  {wrapped[0]}")
            lines += [" " * start + part for part in wrapped[1:]]
        else:
            lines.append(head)
            lines += _wrap(row[3], indent=4, first=4)
    return _with_details(nodes, lines)


def _with_details(nodes: list[Mapping[str, Any]], lines: list[str]) -> list[str]:
    """Each node's details (``explain``'s own account of a rejection) under its row."""
    if not any(node.get("details") for node in nodes):
        return lines
    out = [lines[0]]
    rows = iter(lines[1:])
    row = next(rows, None)
    for node in nodes:
        assert row is not None
        out.append(row)
        row = next(rows, None)
        while row is not None and row.startswith(" "):  # the wrapped rest of its reason
            out.append(row)
            row = next(rows, None)
        for detail in node.get("details") or ():
            out += _wrap(f"- {detail}", indent=6, first=4)
    return out


def _score_table(nodes: list[Mapping[str, Any]]) -> list[str]:
    """One block per node: its total, then each Score plugin's row (kube's V(10) values)."""
    label = "NODE / Score plugin"
    plugins = [score["plugin"] for node in nodes for score in node["scores"]]
    first = max(len(label), *(len(node["node"]) for node in nodes), *(2 + len(p) for p in plugins))
    row = f"{{:<{first}}}  {{:>5}}  {{:>10}}  {{:>6}}  {{:>8}}"
    lines = [row.format(label, "RAW", "NORMALIZED", "WEIGHT", "WEIGHTED")]
    for node in nodes:
        lines.append(row.format(node["node"], "", "", "total", node["total"]))
        lines += [
            row.format(
                f"  {score['plugin']}",
                score["raw"],
                score["normalized"],
                score["weight"],
                score["weighted"],
            )
            for score in node["scores"]
        ]
    return lines


def _wrap(text: str, *, indent: int, first: int = 0, width: int = WIDTH) -> list[str]:
    """``text`` in lines of ``width``; names and paths are never split."""
    lines = textwrap.wrap(
        text,
        width,
        initial_indent=" " * first,
        subsequent_indent=" " * indent,
        break_long_words=False,
        break_on_hyphens=False,
    )
    return lines or [""]
