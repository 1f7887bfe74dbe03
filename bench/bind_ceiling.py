"""The API server's bind limit on this machine: ``python -m bench.bind_ceiling``.

    python -m bench.bind_ceiling [--nodes 500,5000] [--pods 3000] [--concurrency 1,2,...]
        [--repeats 1] [--out bench/results/bind_ceiling]

For each node count, a fresh etcd and kube-apiserver (``controlplane/``, no
controller-manager), then ``bench/bindceiling`` (Go, client-go v0.37.2) in ``sweep`` mode:
the nodes exist as objects; per concurrency step, pending pods are created first (not
timed), then only bound, C bindings in flight (POST ``pods/{name}/binding``) over one
HTTP/2 connection with no client-side rate limit, as ``system:kube-scheduler`` (the
identity and authorization path kube-scheduler binds with). The result is the most
bindings per second the API server (and etcd) took: what no scheduler on this machine can
exceed, whatever it decides. Also the API server's and etcd's CPU per binding while
binding, which holds still where binds/s move with whatever else the machine runs.

The same program in ``watch`` mode is the end-to-end benchmarks' ceiling client
(:mod:`bench.ceiling`). :func:`binary` builds it (``make bench-ceiling`` does the same).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench import gotools

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results" / "bind_ceiling"


def binary() -> Path:
    """The Go program, built first when missing or older than its sources."""
    try:
        return gotools.binary("bindceiling")
    except gotools.GoToolError as exc:
        raise SystemExit(str(exc)) from exc


def sweep(nodes: int, *, pods: int, concurrency: str, repeats: int) -> dict[str, Any]:
    """One node count on a fresh control plane: every step's line (binds/s, and the API
    server's and etcd's CPU per binding), the best step."""
    from controlplane.launcher import ControlPlane

    program = binary()
    workdir = Path(tempfile.mkdtemp(prefix=f"bind-ceiling-{nodes}-"))
    try:
        with ControlPlane.start(workdir / "cp", controller_manager=False) as cp:
            binder = cp.client_kubeconfig("scheduler", "system:kube-scheduler")
            pids = ",".join(f"{n}={cp.process(n).proc.pid}" for n in ("kube-apiserver", "etcd"))
            cmd = [str(program), "sweep", "--kubeconfig", str(binder)]
            cmd += ["--setup-kubeconfig", str(cp.admin_kubeconfig), "--nodes", str(nodes)]
            cmd += ["--pods", str(pods), "--repeats", str(repeats), "--cpu-pids", pids]
            cmd += ["--clock-ticks", str(os.sysconf("SC_CLK_TCK"))]
            if concurrency:
                cmd += ["--concurrency", concurrency]
            out = subprocess.run(cmd, capture_output=True, text=True, check=False)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    if out.returncode != 0:
        raise SystemExit(f"bindceiling sweep failed: {out.stderr.strip()}")
    lines = [json.loads(line) for line in out.stdout.splitlines() if line.startswith("{")]
    steps = [line for line in lines if "best" not in line]
    best = next(line["best"] for line in lines if "best" in line)
    return {"nodes": nodes, "steps": steps, "best": best, "cpu": cpu_per_bind(steps)}


def cpu_per_bind(steps: list[dict[str, Any]]) -> dict[str, float]:
    """The API server's and etcd's CPU ms per binding at the fastest step, and how many
    bindings per second they alone would then fill two cores with (the client's own CPU
    left out: an upper bound)."""
    best = max(steps, key=lambda s: s["binds_per_s"])
    found = {k: round(v, 3) for k, v in best.get("cpu_ms_per_bind", {}).items()}
    total = sum(found.values())
    if total:
        found["binds_per_s_on_2_cores"] = round(2000 / total)
    return found


def markdown(results: list[dict[str, Any]], meta: dict[str, Any]) -> str:
    steps = sorted({s["concurrency"] for r in results for s in r["steps"]})
    head = "| nodes | " + " | ".join(f"C={c}" for c in steps) + " | max binds/s | "
    head += "API server + etcd CPU ms per binding there |"
    lines = [head, "|" + " ---: |" * (len(steps) + 3)]
    for r in results:
        rates: dict[int, list[float]] = {}
        for s in r["steps"]:
            rates.setdefault(s["concurrency"], []).append(s["binds_per_s"])
        cells = ["/".join(f"{v:.0f}" for v in rates[c]) if c in rates else "" for c in steps]
        best, cpu = r["best"], r.get("cpu", {})
        cpu_cell = (
            f"{cpu.get('kube-apiserver', 0):.2f} + {cpu.get('etcd', 0):.2f} "
            f"(fills 2 cores at {cpu.get('binds_per_s_on_2_cores', 0)}/s)"
            if cpu
            else ""
        )
        lines.append(
            f"| {r['nodes']} | " + " | ".join(cells) + f" | **{best['binds_per_s']:.0f}** "
            f"(C={best['concurrency']}) | {cpu_cell} |"
        )
    return "\n".join(
        [
            f"bind ceiling, binds/s by bindings in flight (each repeat): `{meta['command']}`; "
            f"commit {meta['commit']}; {meta['date']}; {meta['machine']}",
            "",
            *lines,
            "",
        ]
    )


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.bind_ceiling", description=__doc__)
    p.add_argument("--nodes", default="500,5000")
    p.add_argument("--pods", type=int, default=3000, help="pods bound per step")
    p.add_argument("--concurrency", default="", help="steps (default 1,2,4,...,256)")
    p.add_argument("--repeats", type=int, default=1)
    p.add_argument("--out", type=Path, default=RESULTS)
    args = p.parse_args(sys.argv[1:] if argv is None else argv)
    shown = sys.argv[1:] if argv is None else argv
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=False
    ).stdout.strip()
    meta = {
        "command": "python -m bench.bind_ceiling " + " ".join(shown),
        "commit": commit,
        "date": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs",
    }
    results = []
    for nodes in (int(n) for n in args.nodes.split(",") if n):
        result = sweep(nodes, pods=args.pods, concurrency=args.concurrency, repeats=args.repeats)
        for step in result["steps"]:
            print(json.dumps(step), flush=True)
        print(
            f"{nodes} nodes: max {result['best']['binds_per_s']:.0f} binds/s at "
            f"{result['best']['concurrency']} in flight; CPU per binding {result['cpu']}",
            flush=True,
        )
        results.append(result)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "latest.json").write_text(
        json.dumps({"meta": meta, "results": results}, indent=1) + "\n"
    )
    text = markdown(results, meta)
    (args.out / "latest.md").write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
