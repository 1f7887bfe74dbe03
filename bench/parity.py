"""Differential decisions: the same pending pods, one at a time, with kube-scheduler v1.37.2
and with ours on the real API server; agreement per feature family.

``python -m bench.parity [--seeds 0-9] [--nodes 16] [--running 30] [--pending 80]
[--config default|list] [--batching off|on] [--replicas 1] [--out PATH]`` prints the
agreement per feature family and every disagreement (with kube's per-plugin scores next to
ours, replayed by :mod:`bench.parity_explain`) and writes ``bench/results/parity.json``.
docs/fidelity.md has the method and the figures.

One control plane (etcd + kube-apiserver, no controller-manager) serves every seed. Per seed
(cases from :mod:`bench.parity_cases`): create the nodes, then for each scheduler in turn
create the running pods (bound by the admin), start the scheduler, and for every pending pod:
create it, wait until it is bound or its ``PodScheduled`` condition says why not, delete it
when unscheduled (so that no retry races the next pod), next. Then stop the scheduler and
force-delete every pod: each scheduler starts from the same state.

Ties: where several nodes share the best score kube-scheduler picks one at random. It runs at
``--vmodule=schedule_one=10,resource_allocation=10``, which logs every node's final score
(and each plugin's) per pod; ours agrees when
its node is one of kube's best. So that a tie broken differently does not make the clusters
drift apart, ours follows kube's trajectory: after each decision of ours the pod is put where
kube put it (deleted and re-created bound to kube's node, or deleted when kube left it
pending), so every pod of ours meets exactly the cluster kube's met.

Both profiles are kube's defaults (or ``--config list``: PodTopologySpread ``defaultingType:
List``), both with ``DefaultPreemption`` disabled (see ``parity_harness._config``); batching off in
both (``--batching on`` turns it on in both; kube then logs no scores for hinted pods and
ties are judged on the node alone). ``--replicas K`` makes the pending pods workloads of K
equal pods, half of them a ReplicaSet's (``parity_cases.build``), so that batching meets runs
of equal signatures; ours' pods placed from a hint or on the exact path are counted from its
/metrics.

This module drives the seeds and prints; :mod:`bench.parity_harness` runs one scheduler over
a case, :mod:`bench.parity_compare` judges the two runs pod by pod.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bench import parity_cases
from bench.configs import CONFIGS
from bench.parity_compare import compare, table
from bench.parity_harness import SCHEDULER_NAME, Harness
from controlplane.launcher import ControlPlane, ControlPlaneError
from controlplane.processes import missing_binaries

if TYPE_CHECKING:
    from collections.abc import Callable

RESULTS = Path(__file__).parent / "results" / "parity.json"


def run_seeds(
    cp: ControlPlane,
    workdir: Path,
    seeds: list[int],
    *,
    nodes: int,
    running: int,
    pending: int,
    batching: bool = False,
    config: str = "default",
    replicas: int = 1,
    log: Callable[[str], None] = print,
    paths: dict[str, float] | None = None,
) -> list[dict[str, Any]]:
    """Every seed's case with both schedulers on ``cp``; one compared row per pending pod."""
    harness = Harness(cp, workdir, batching=batching, config=config)
    harness.setup()
    rows: list[dict[str, Any]] = []
    for seed in seeds:
        case = parity_cases.build(
            seed,
            nodes=nodes,
            running=running,
            pending=pending,
            scheduler=SCHEDULER_NAME,
            replicas=replicas,
            replica_set_uid=harness.replica_set_uid,
        )
        for node in case.nodes:
            harness.api("POST", "/api/v1/nodes", node)
        started = time.monotonic()
        kube = harness.run("kube", case, None)
        ours = harness.run("ours", case, kube)
        for node in case.nodes:
            harness.api("DELETE", f"/api/v1/nodes/{node['metadata']['name']}")
        got = compare(case, kube, ours)
        rows += got
        agree = sum(r["verdict"] == "agree" for r in got)
        batched = ", ".join(f"{k} {v:.0f}" for k, v in ours.paths.items())
        log(
            f"seed {seed}: {agree}/{len(got)} agree, ours batched: {batched or 'none'} "
            f"({time.monotonic() - started:.0f} s)"
        )
        if paths is not None:
            for key, value in ours.paths.items():
                paths[key] = paths.get(key, 0.0) + value
    return rows


def _seeds(text: str) -> list[int]:
    seeds: list[int] = []
    for part in text.split(","):
        lo, _, hi = part.partition("-")
        seeds += range(int(lo), int(hi or lo) + 1)
    return seeds


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.parity")
    parser.add_argument("--seeds", default="0-9", help="e.g. 0-9 or 1,4,9")
    parser.add_argument("--nodes", type=int, default=16, help="per seed, 1..99")
    parser.add_argument("--running", type=int, default=30, help="bound pods per seed")
    parser.add_argument("--pending", type=int, default=80, help="pending pods per seed")
    parser.add_argument("--batching", choices=("off", "on"), default="off")
    parser.add_argument("--config", choices=CONFIGS, default="default")
    parser.add_argument(
        "--replicas", type=int, default=1, help="equal pods per workload (1: every pod drawn)"
    )
    parser.add_argument("--out", type=Path, default=RESULTS)
    a = parser.parse_args(argv)
    try:
        seeds = _seeds(a.seeds)
    except ValueError:
        parser.error(f"--seeds: {a.seeds!r} is not like 0-7 or 1,4,9")
    if not 1 <= a.nodes < 100:
        parser.error(f"--nodes: {a.nodes} must be within 1..99 (every node evaluated)")
    if a.running < 0 or a.pending < 1:
        parser.error("--running must be >= 0 and --pending >= 1")
    if a.replicas < 1:
        parser.error(f"--replicas: {a.replicas} must be >= 1")
    reason = missing_binaries()
    if reason:
        print(f"bench.parity: {reason}", file=sys.stderr)
        return 2
    workdir = Path(tempfile.mkdtemp(prefix="parity-"))
    paths: dict[str, float] = {}
    try:
        with ControlPlane.start(workdir / "cp", controller_manager=False) as cp:
            rows = run_seeds(
                cp,
                workdir,
                seeds,
                nodes=a.nodes,
                running=a.running,
                pending=a.pending,
                batching=a.batching == "on",
                config=a.config,
                replicas=a.replicas,
                paths=paths,
            )
    except (ControlPlaneError, RuntimeError) as exc:
        print(f"bench.parity: {exc} (logs in {workdir})", file=sys.stderr)
        return 1
    text, families = table(rows)
    print(text)
    print(
        "ours placed from batches: "
        + (", ".join(f"{k} {v:.0f}" for k, v in paths.items()) or "none")
    )
    for row in rows:
        if row["verdict"] != "agree":
            print(
                f"  {row['verdict']:>8} {row['pod']} {row['families']}: "
                f"kube {row['kube']!r} (best {row['kube_tied_best']}) ours {row['ours']!r}"
            )
            print(f"           ours replayed offline: {row['why']['ours_replayed']!r}")
            for node, both in row["why"]["nodes"].items():
                print(f"           {node}: kube {both['kube']}")
                print(f"           {'':>{len(node)}}  ours {both['ours']}")
    a.out.parent.mkdir(parents=True, exist_ok=True)
    meta = {
        "date": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
        "seeds": seeds,
        "nodes": a.nodes,
        "running": a.running,
        "pending": a.pending,
        "batching": a.batching,
        "config": a.config,
        "replicas": a.replicas,
        "ours_batched": paths,
        "kube_scheduler": "v1.37.2",
        "preemption": "disabled in both",
    }
    a.out.write_text(json.dumps({"meta": meta, "families": families, "pods": rows}, indent=1))
    print(f"written: {a.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
