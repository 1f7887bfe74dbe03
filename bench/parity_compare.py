"""The verdict on two :mod:`bench.parity_harness` runs of one case, pod by pod, and the
agreement table per feature family.

A pod agrees when both left it unscheduled with the same ``PodScheduled`` message, or both
bound it and ours picked one of kube's tied best nodes (kube's final scores from its log).
Each disagreement carries kube's per-plugin scores next to ours replayed offline
(:mod:`bench.parity_explain`), so the report names the plugin that differs. Neighbours:
:mod:`bench.parity` prints and writes what this returns; :mod:`bench.parity_cases` tags each
pending pod with its families.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from bench import parity_cases, parity_explain

if TYPE_CHECKING:
    from bench.parity_cases import Case
    from bench.parity_harness import Run

COUNTS = ("pods", "unschedulable", "tied", "other_tied_node", "agree")
"""Per family: pending pods; kube left unscheduled; kube's best score shared by several
nodes; ours picked another of kube's tied best nodes (agreement); agreeing pods."""


def compare(case: Case, kube: Run, ours: Run) -> list[dict[str, Any]]:
    """One row per pending pod: both decisions, kube's tied best nodes, what differs."""
    rows = []
    for pod in case.pending:
        name = pod["metadata"]["name"]
        k, o = kube.decisions[name], ours.decisions[name]
        scores = kube.scores.get(name, {})
        best = max(scores.values(), default=None)
        tied = sorted(n for n, s in scores.items() if s == best) if scores else []
        if k.node and not tied:
            tied = [k.node]
        if (k.node is None) != (o.node is None):
            verdict = "outcome"
        elif k.node is not None and o.node not in tied:
            verdict = "node"
        elif k.node is None and k.message != o.message:
            verdict = "message"
        else:
            verdict = "agree"
        rows.append(
            {
                "seed": case.seed,
                "pod": name,
                "families": case.families[name],
                "verdict": verdict,
                "kube_bound": k.node,
                "kube": k.node or k.message,
                "ours": o.node or o.message,
                "kube_tied_best": tied,
                "ours_path": ours.path_of.get(name),
            }
        )
        if verdict != "agree":
            rows[-1]["why"] = _why(case, kube, ours, name, tied, o.node)
    return rows


def _why(
    case: Case, kube: Run, ours: Run, name: str, tied: list[str], node: str | None
) -> dict[str, Any]:
    """kube's per-plugin scores and ours (replayed offline) on the nodes that matter."""
    assigned, admitted = ours.seen[name]
    mine = parity_explain.explain(case.nodes, assigned, admitted)
    nodes = sorted({*tied, *([node] if node else [])})
    kube_plugins = kube.plugin_scores.get(name, {})
    return {
        "ours_replayed": mine["outcome"],
        "nodes": {
            n: {"kube": kube_plugins.get(n, {}), "ours": mine["scores"].get(n, {})} for n in nodes
        },
    }


def table(rows: list[dict[str, Any]]) -> tuple[str, dict[str, dict[str, int]]]:
    """Agreement per family (``all`` counts every pod once)."""
    families: dict[str, dict[str, int]] = {}
    for row in rows:
        path = [f"path:{row['ours_path']}"] if row.get("ours_path") else []
        for family in ["all", *row["families"], *path]:
            counts = families.setdefault(family, dict.fromkeys(COUNTS, 0))
            counts["pods"] += 1
            counts["agree"] += row["verdict"] == "agree"
            counts[row["verdict"]] = counts.get(row["verdict"], 0) + (row["verdict"] != "agree")
            counts["unschedulable"] += row["kube_bound"] is None
            counts["tied"] += len(row["kube_tied_best"]) > 1
            counts["other_tied_node"] += row["verdict"] == "agree" and row["ours"] != row["kube"]
    lines = [
        f"{'family':<24} {'pods':>5} {'unsched':>7} {'tied':>5} {'other':>5} {'agree':>6} "
        f"{'%':>7}  disagreements",
    ]
    paths = [f"path:{p}" for p in ("full", "hint", "rescore", "exact")]
    for family in ["all", *parity_cases.FAMILIES, "replicaset", *paths]:
        c = families.get(family)
        if not c:
            continue
        diff = ", ".join(f"{k} {v}" for k, v in c.items() if k not in COUNTS and v)
        lines.append(
            f"{family:<24} {c['pods']:>5} {c['unschedulable']:>7} {c['tied']:>5} "
            f"{c['other_tied_node']:>5} {c['agree']:>6} "
            f"{100 * c['agree'] / c['pods']:>6.1f}%  {diff}"
        )
    return "\n".join(lines), families
