"""The gang benchmark's records as ``OUT/latest.json`` and ``OUT/latest.md``: the figures of
both schedulers per shape, and issue 38's targets, each met or missed.

Targets (item 7), per signature-label variant and node count:

* 1000-pod gangs (``gangs-3x1000``): ours' pods/s ≥ 2× kube's (or ≥ 0.8× the bind limit
  where that is lower: ``bench/results/bind_ceiling/latest.json``), scheduler CPU per pod
  ≤ 1/3 of kube's, the group algorithm's seconds ≤ 1/5 of kube's;
* 3-pod gangs (``gangs-1000x3``): ours ≥ 1.5× kube's, and ≥ 0.9× ours' own pods/s for the
  same pods without a group (``plain-3000``);
* the infeasible gang: rejected with ≤ 2 full passes per attempt (counted in-process,
  :mod:`bench.gang.work`), and the pods beside it ≥ 0.9× their pods/s without it (ours'
  ``infeasible`` against ours' ``plain-3000``).

Neighbours: :mod:`bench.gang.cli` writes the files, :mod:`bench.gang.backlog` makes the
records.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bench.scheduler_perf.capability import KUBE, OURS

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

Record = dict[str, Any]
CEILING = Path(__file__).resolve().parents[1] / "results" / "bind_ceiling" / "latest.json"


def key(record: Mapping[str, Any]) -> tuple[str, str, int, str]:
    return (record["shape"], record.get("labels", "pod"), record["nodes"], record["scheduler"])


def load(record: Mapping[str, Any]) -> float:
    """The 1-minute load average when the run started (what else ran on the machine; the
    run itself raises it: a scheduler, the API server and etcd on two cores)."""
    before = record.get("loadavg_before")
    return float(before[0]) if before else float("inf")


def best(records: Sequence[Record]) -> list[Record]:
    """Per shape, labels and nodes, the runs of the pair that started at the lowest load (a pair
    with a failed run only when no other is complete)."""
    pairs: dict[str, list[Record]] = {}
    for record in records:
        pairs.setdefault(str(record.get("pair", id(record))), []).append(record)
    chosen: dict[tuple[str, str, int], tuple[tuple[int, float], list[Record]]] = {}
    for runs in pairs.values():
        row = key(runs[0])[:3]
        failed = sum(1 for r in runs if "failed" in r)
        rank = (failed, max(load(r) for r in runs))
        if row not in chosen or rank < chosen[row][0]:
            chosen[row] = (rank, runs)
    return [r for _, runs in chosen.values() for r in runs]


def write(records: Sequence[Record], meta: Mapping[str, Any], out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    doc = {"meta": dict(meta), "runs": list(records)}
    (out / "latest.json").write_text(json.dumps(doc, indent=1) + "\n")
    (out / "latest.md").write_text(markdown(records, meta))


def bind_ceiling(nodes: int) -> float | None:
    """The most binds/s ``bench.bind_ceiling`` recorded at ``nodes`` nodes, if it did."""
    try:
        doc = json.loads(CEILING.read_text())
    except (OSError, ValueError):
        return None
    rates = [
        step["binds_per_s"]
        for result in doc.get("results", [])
        if result.get("nodes") == nodes
        for step in result.get("steps", [])
    ]
    return max(rates) if rates else None


def _ok(record: Record | None) -> bool:
    return record is not None and "failed" not in record


def _ratio(a: float | None, b: float | None) -> float | None:
    return None if not a or b is None else b / a


def _load(record: Record | None) -> str:
    if not _ok(record):
        return ""
    assert record is not None
    before = record.get("loadavg_before") or [0]
    after = record.get("loadavg_after") or [0]
    return f"{before[0]:.2f}→{after[0]:.2f}"


def _x(value: float | None) -> str:
    return "" if value is None else f"{value:.2f}x"


def _n(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.1f}" if abs(value) >= 10 else f"{value:.2f}"
    return str(value)


def lead_table(records: Sequence[Record]) -> list[str]:
    """One row per shape: both schedulers' pods/s, CPU per pod, group algorithm seconds."""
    runs = {key(r): r for r in records}
    rows = sorted({k[:3] for k in runs}, key=lambda k: (k[1], k[2], k[0]))
    lines = [
        "| shape | labels | nodes | kube pods/s | ours pods/s | ours / kube | CPU ms/pod kube "
        "/ ours | group algorithm s kube / ours | load avg kube / ours |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |",
    ]
    for row in rows:
        kube, ours = runs.get((*row, KUBE)), runs.get((*row, OURS))
        kp = kube.get("pods_per_s") if _ok(kube) and kube else None
        op = ours.get("pods_per_s") if _ok(ours) and ours else None
        kc = kube.get("cpu_ms_per_pod") if _ok(kube) and kube else None
        oc = ours.get("cpu_ms_per_pod") if _ok(ours) and ours else None
        ka = kube.get("group_algorithm_s") if _ok(kube) and kube else None
        oa = ours.get("group_algorithm_s") if _ok(ours) and ours else None
        lines.append(
            f"| {row[0]} | {row[1]} | {row[2]} | {_n(kp) or _failed(kube)} | "
            f"{_n(op) or _failed(ours)} | {_x(_ratio(kp, op))} | {_n(kc)} / {_n(oc)} | "
            f"{_n(ka)} / {_n(oa)} | {_load(kube)} / {_load(ours)} |"
        )
    return lines


def _failed(record: Record | None) -> str:
    if record is None:
        return "not run"
    return "failed" if "failed" in record else ""


def details(records: Sequence[Record], chosen: Sequence[Record] = ()) -> list[str]:
    """Every run; ``*`` marks those of the pairs the lead table shows."""
    marked = {id(r) for r in chosen}
    lines = [
        "| shape | labels | nodes | scheduler | pods | ready s | ready → last bind s | pods/s "
        "| CPU s | CPU ms/pod | API server CPU s | group attempts | group algorithm s "
        "(count) | decisions | peak RSS MB | load avg before → after |",
        "| --- | --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- "
        "| ---: | --- | ---: | --- |",
    ]
    for r in sorted(records, key=key):
        if "failed" in r:
            lines.append(
                f"| {r['shape']} | {r.get('labels', 'pod')} | {r['nodes']} | {r['scheduler']} "
                f"| failed: {r['failed']} |" + " |" * 11
            )
            continue
        attempts = ", ".join(f"{k} {v}" for k, v in r.get("group_attempts", {}).items())
        decisions = ", ".join(f"{k} {v}" for k, v in (r.get("decisions") or {}).items())
        before = "/".join(f"{x:.2f}" for x in r.get("loadavg_before", []))
        after = "/".join(f"{x:.2f}" for x in r.get("loadavg_after", []))
        who = r["scheduler"] + (f" #{r['attempt']}" if r.get("attempt") else "")
        who += " *" if id(r) in marked else ""
        lines.append(
            f"| {r['shape']} | {r.get('labels', 'pod')} | {r['nodes']} | {who} | "
            f"{r.get('pods')} | {_n(r.get('ready_s'))} | {_n(r.get('measure_s'))} | "
            f"{_n(r.get('pods_per_s'))} | {_n(r.get('cpu_s'))} | "
            f"{_n(r.get('cpu_ms_per_pod'))} | {_n(r.get('apiserver_cpu_s'))} | {attempts} | "
            f"{_n(r.get('group_algorithm_s'))} ({r.get('group_algorithm_count', 0)}) | "
            f"{decisions} | {_n(r.get('rss_mb'))} | {before} → {after} |"
        )
    return lines


def work_key(labels: str, nodes: int) -> str:
    return f"{labels}/{nodes}"


def targets(records: Sequence[Record], works: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """Each target of the module docstring, met or missed, per labels and node count
    (``works``: :func:`bench.gang.work.infeasible_work`'s answers by :func:`work_key`)."""
    runs = {key(r): r for r in records if _ok(r)}
    out: list[str] = []
    for labels, nodes in sorted({(k[1], k[2]) for k in runs}):

        def get(shape: str, scheduler: str, field: str) -> float | None:
            record = runs.get((shape, labels, nodes, scheduler))  # noqa: B023
            value = None if record is None else record.get(field)
            return None if value is None else float(value)

        checks: list[tuple[str, float | None, float, str]] = []
        kube_rate = get("gangs-3x1000", KUBE, "pods_per_s")
        ceiling = bind_ceiling(nodes)
        want = 2.0
        if kube_rate and ceiling and 0.8 * ceiling < 2 * kube_rate:
            want = 0.8 * ceiling / kube_rate
        checks += [
            (
                "1000-pod gangs: ours / kube pods/s",
                _ratio(kube_rate, get("gangs-3x1000", OURS, "pods_per_s")),
                want,
                "≥",
            ),
            (
                "1000-pod gangs: ours / kube CPU per pod",
                _ratio(
                    get("gangs-3x1000", KUBE, "cpu_ms_per_pod"),
                    get("gangs-3x1000", OURS, "cpu_ms_per_pod"),
                ),
                1 / 3,
                "≤",
            ),
            (
                "1000-pod gangs: ours / kube group algorithm seconds",
                _ratio(
                    get("gangs-3x1000", KUBE, "group_algorithm_s"),
                    get("gangs-3x1000", OURS, "group_algorithm_s"),
                ),
                1 / 5,
                "≤",
            ),
            (
                "3-pod gangs: ours / kube pods/s",
                _ratio(
                    get("gangs-1000x3", KUBE, "pods_per_s"), get("gangs-1000x3", OURS, "pods_per_s")
                ),
                1.5,
                "≥",
            ),
            (
                "3-pod gangs: ours with groups / ours without",
                _ratio(
                    get("plain-3000", OURS, "pods_per_s"), get("gangs-1000x3", OURS, "pods_per_s")
                ),
                0.9,
                "≥",
            ),
            (
                "pods beside the infeasible gang: ours with it / without",
                _ratio(
                    get("plain-3000", OURS, "pods_per_s"), get("infeasible", OURS, "pods_per_s")
                ),
                0.9,
                "≥",
            ),
        ]
        out.append(f"Targets, labels per {labels}, {nodes} nodes:")
        out.append("")
        for name, value, bound, op in checks:
            if value is None:
                verdict = "not measured"
            else:
                met = value >= bound if op == "≥" else value <= bound
                verdict = f"{value:.2f} ({op} {bound:.2f}): {'met' if met else 'MISSED'}"
            out.append(f"- {name}: {verdict}")
        work = works.get(work_key(labels, nodes))
        if work:
            fulls = [a["decisions"].get("full", 0) for a in work["attempts"]]
            met = max(fulls) <= 2
            out.append(
                f"- infeasible gang: full passes per rejected attempt (in-process, "
                f"{len(fulls)} attempts): {', '.join(map(str, fulls))} (≤ 2): "
                f"{'met' if met else 'MISSED'}"
            )
        out.append("")
    return out


def work_lines(work: Mapping[str, Any] | None) -> list[str]:
    if not work:
        return []
    lines = [
        f"The infeasible gang in-process ({work['nodes']} nodes, pool {work['pool']}, "
        f"{work['gang_size']} members, labels per {work['labels']}; one full pass of a member "
        f"{work['member_full_pass_s'] * 1000:.2f} ms, of a plain pod "
        f"{work['plain_full_pass_s'] * 1000:.2f} ms):",
        "",
        "| attempt | placed | decisions | decision s by path | algorithm s | in member full "
        "passes |",
        "| ---: | ---: | --- | --- | ---: | ---: |",
    ]
    for i, attempt in enumerate(work["attempts"], 1):
        paths = ", ".join(f"{k} {v}" for k, v in attempt["decisions"].items())
        seconds = ", ".join(f"{k} {v:.4f}" for k, v in attempt["decision_s"].items())
        lines.append(
            f"| {i} | {attempt['placed']} | {paths} | {seconds} | {attempt['algorithm_s']:.4f} | "
            f"{work['algorithm_in_member_full_passes'][i - 1]} |"
        )
    return [*lines, ""]


def markdown(records: Sequence[Record], meta: Mapping[str, Any]) -> str:
    facts = [f"{k} {meta[k]}" for k in ("commit", "date", "machine") if meta.get(k)]
    commands = [c for c in meta.get("commands", []) if c]
    works = meta.get("work") or {}
    out = [
        "Gang scheduling on the real API server, the backlog made first, scheduler ready → "
        "last bind; " + "; ".join(facts) + ".",
        "",
        "```",
        *commands,
        "```",
        "",
        *lead_table(best(records)),
        "",
    ]
    out += targets(best(records), works)
    for work in works.values():
        out += work_lines(work)
    out += [
        "Every run (#: the pair's attempt; *: the pair shown above, the one that started at the "
        "lowest load):",
        "",
        *details(records, best(records)),
        "",
    ]
    out += profiles(records)
    return "\n".join(out)


def profiles(records: Sequence[Record]) -> list[str]:
    """Ours' CPU by stage, for the runs py-spy sampled (:mod:`bench.gang.profile`)."""
    out: list[str] = []
    for r in sorted(records, key=key):
        found = r.get("profile_stages")
        if not found:
            continue
        out += [
            f"Ours' CPU by stage, {r['shape']}, labels per {r.get('labels', 'pod')}, "
            f"{r['nodes']} nodes (py-spy, {found['samples']} samples, spawn to last bind, "
            f"{r.get('cpu_s_at_last')} s of CPU):",
            "",
            "| stage | share | CPU s | ms per pod |",
            "| --- | ---: | ---: | ---: |",
        ]
        pods = r.get("pods") or 1
        for stage, share in found["stages"].items():
            seconds = found["seconds"][stage]
            out.append(f"| {stage} | {share:.1%} | {seconds:.2f} | {seconds * 1000 / pods:.3f} |")
        out.append("")
    return out
