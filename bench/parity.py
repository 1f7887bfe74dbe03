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
List``), both with ``DefaultPreemption`` disabled (see ``_config``); batching off in
both (``--batching on`` turns it on in both; kube then logs no scores for hinted pods and
ties are judged on the node alone). ``--replicas K`` makes the pending pods workloads of K
equal pods, half of them a ReplicaSet's (``parity_cases.build``), so that batching meets runs
of equal signatures; ours' pods placed from a hint or on the exact path are counted from its
/metrics.
"""

from __future__ import annotations

import argparse
import json
import re
import signal
import ssl
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from bench import parity_cases, parity_explain
from bench.configs import CONFIGS, scheduler_config
from controlplane.launcher import ControlPlane, ControlPlaneError, free_port, missing_binaries

if TYPE_CHECKING:
    from collections.abc import Callable

    from bench.parity_cases import Case

ROOT = Path(__file__).parent.parent
RESULTS = ROOT / "bench" / "results" / "parity.json"
NAMESPACE = "parity"
SCHEDULER_NAME = "parity-scheduler"
NAMESPACES = (NAMESPACE, parity_cases.OTHER_NAMESPACE)
PODS = f"/api/v1/namespaces/{NAMESPACE}/pods"
DECISION_TIMEOUT = 30.0
COUNTS = ("pods", "unschedulable", "tied", "other_tied_node", "agree")
"""Per family: pending pods; kube left unscheduled; kube's best score shared by several
nodes; ours picked another of kube's tied best nodes (agreement); agreeing pods."""
PLUGIN_LINE = re.compile(
    r'"Plugin scored node for pod" pod="[^/"]+/(?P<pod>[^"]+)" plugin="(?P<plugin>[^"]+)" '
    r'node="(?P<node>[^"]+)" score=(?P<score>-?\d+)'
)
SCORE_LINE = re.compile(
    r'"Calculated node\'s final score for pod" pod="[^/"]+/(?P<pod>[^"]+)" '
    r'node="(?P<node>[^"]+)" score=(?P<score>-?\d+)'
)


@dataclass
class Decision:
    node: str | None = None
    message: str | None = None
    """The ``PodScheduled`` condition's message when not bound (``timeout`` when none came)."""


@dataclass
class Run:
    decisions: dict[str, Decision] = field(default_factory=dict)
    scores: dict[str, dict[str, int]] = field(default_factory=dict)
    """kube only: pod → node → final score (absent when one node was feasible)."""
    plugin_scores: dict[str, dict[str, dict[str, int]]] = field(default_factory=dict)
    """kube only: pod → node → plugin → weighted score."""
    seen: dict[str, tuple[list[dict[str, Any]], dict[str, Any]]] = field(default_factory=dict)
    """pod → (the admitted pods bound when it was created, the admitted pod itself)."""
    paths: dict[str, float] = field(default_factory=dict)
    """ours only: pods placed per batched path (``hint``, ``exact``), from its /metrics."""
    path_of: dict[str, str] = field(default_factory=dict)
    """ours only: pod → the path of its decision (its ``pod_bound`` log line)."""


def _config(kind: str, *, kube: bool, kubeconfig: Path | None = None) -> dict[str, Any]:
    """Both without preemption: a decision is compared one pod at a time, and evictions
    would make the two clusters drift apart (preemption has its own tests)."""
    return scheduler_config(
        kind,
        scheduler_name=SCHEDULER_NAME,
        kube=kube,
        kubeconfig=kubeconfig,
        qps=1000,
        preemption=False,
    )


class Harness:
    """Both schedulers' runs of one case against ``cp``, as the admin."""

    def __init__(self, cp: ControlPlane, workdir: Path, *, batching: bool, config: str) -> None:
        self.cp = cp
        self.workdir = workdir
        self.batching = batching
        self.config = config
        self.replica_set_uid = ""
        self.metrics_url = ""

    def api(self, method: str, path: str, body: Any = None) -> Any:
        try:
            return self.cp.request(method, path, body)
        except urllib.error.HTTPError as exc:
            if exc.code == 404:
                raise
            raise RuntimeError(f"{method} {path}: {exc.code} {exc.read().decode()[:500]}") from exc

    def setup(self) -> None:
        for namespace in NAMESPACES:
            self.api("POST", "/api/v1/namespaces", {"metadata": {"name": namespace}})
            # The ServiceAccount admission plugin needs it; no controller-manager makes it.
            self.api(
                "POST",
                f"/api/v1/namespaces/{namespace}/serviceaccounts",
                {"metadata": {"name": "default"}},
            )
        for path, body in parity_cases.cluster_objects(NAMESPACE):
            self.api("POST", path, body)
        path, body = parity_cases.replica_set(NAMESPACE)
        self.replica_set_uid = self.api("POST", path, body)["metadata"]["uid"]

    # -- one scheduler process -------------------------------------------------------------

    def start(self, which: str, log: Path) -> subprocess.Popen[bytes]:
        port = free_port()
        config = self.workdir / f"{which}.yaml"
        if which == "kube":
            kubeconfig = self.cp.client_kubeconfig("scheduler", "system:kube-scheduler")
            config.write_text(
                yaml.safe_dump(_config(self.config, kube=True, kubeconfig=kubeconfig))
            )
            cmd = [str(self.cp.bin / "kube-scheduler"), f"--config={config}"]
            cmd += [
                *self.cp.kube_scheduler_flags(port),
                "--vmodule=schedule_one=10,resource_allocation=10",
            ]
            gate = "true" if self.batching else "false"
            cmd.append(f"--feature-gates=OpportunisticBatching={gate}")
            ready = f"https://127.0.0.1:{port}/readyz"
        else:
            config.write_text(yaml.safe_dump(_config(self.config, kube=False)))
            cmd = [sys.executable, "-m", "scheduler", "run", "--kubeconfig"]
            cmd += [str(self.cp.scheduler_kubeconfig), "--config", str(config)]
            # info: a pod_bound line per pod names its path (full, hint, rescore, exact)
            cmd += ["--batching", "all" if self.batching else "off", "--log-level", "info"]
            cmd += ["--logging-format", "json"]
            cmd += ["--metrics-addr", f"127.0.0.1:{port}"]
            ready = f"http://127.0.0.1:{port}/readyz"
            self.metrics_url = f"http://127.0.0.1:{port}/metrics"
        out = log.open("wb")
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, cwd=ROOT)
        out.close()
        deadline = time.monotonic() + 120
        while not _ready(ready):
            if proc.poll() is not None or time.monotonic() > deadline:
                stop(proc)
                raise RuntimeError(f"{which} scheduler not ready: {log.read_text()[-2000:]}")
            time.sleep(0.05)
        return proc

    # -- pods ------------------------------------------------------------------------------

    def create(self, pod: dict[str, Any]) -> dict[str, Any]:
        """The pod as admitted (priority, overhead, defaults filled in)."""
        namespace = pod["metadata"].get("namespace", NAMESPACE)
        created: dict[str, Any] = self.api("POST", f"/api/v1/namespaces/{namespace}/pods", pod)
        return created

    def delete(self, name: str) -> None:
        try:
            self.api("DELETE", f"{PODS}/{name}?gracePeriodSeconds=0")
        except urllib.error.HTTPError as exc:
            if exc.code != 404:
                raise
        while True:  # force deletion is immediate, but the name must be free before reuse
            try:
                self.api("GET", f"{PODS}/{name}")
            except urllib.error.HTTPError as exc:
                if exc.code == 404:
                    return
                raise
            time.sleep(0.02)

    def clear(self) -> None:
        for namespace in NAMESPACES:
            pods = f"/api/v1/namespaces/{namespace}/pods"
            self.api("DELETE", f"{pods}?gracePeriodSeconds=0")
            deadline = time.monotonic() + 120
            while self.api("GET", f"{pods}?limit=1")["items"]:
                if time.monotonic() > deadline:
                    raise RuntimeError(f"pods of {namespace} not gone in 120 s")
                time.sleep(0.1)

    def wait(self, name: str) -> Decision:
        deadline = time.monotonic() + DECISION_TIMEOUT
        while time.monotonic() < deadline:
            pod = self.api("GET", f"{PODS}/{name}")
            if pod["spec"].get("nodeName"):
                return Decision(node=pod["spec"]["nodeName"])
            for cond in pod.get("status", {}).get("conditions", []):
                if cond.get("type") == "PodScheduled" and cond.get("status") == "False":
                    return Decision(message=cond.get("message", ""))
            time.sleep(0.01)
        return Decision(message="timeout")

    def run(self, which: str, case: Case, follow: Run | None) -> Run:
        """Schedule ``case``'s pending pods one at a time with ``which``; with ``follow``,
        put each pod where ``follow`` did afterwards (see the module docstring)."""
        assigned = [self.create(pod) for pod in case.running]
        log = self.workdir / f"{which}-seed{case.seed}.log"
        proc = self.start(which, log)
        result = Run()
        try:
            for pod in case.pending:
                name = pod["metadata"]["name"]
                admitted = self.create(pod)
                result.seen[name] = (list(assigned), admitted)
                got = self.wait(name)
                result.decisions[name] = got
                want = got if follow is None else follow.decisions[name]
                if got.node != want.node or got.node is None:
                    self.delete(name)
                if want.node is not None:
                    placed = json.loads(json.dumps(pod))
                    placed["spec"]["nodeName"] = want.node
                    if got.node != want.node:
                        placed = self.create(placed)
                    else:
                        placed = {**admitted, "spec": {**admitted["spec"], "nodeName": want.node}}
                    assigned.append(placed)
            if which == "ours":
                result.paths = _batched_paths(self.metrics_url)
        finally:
            stop(proc)
        self.clear()
        if which == "ours":
            result.path_of = _bound_paths(log.read_text(errors="replace"))
        if which == "kube":
            text = log.read_text(errors="replace")
            result.scores = parse_scores(text)
            for m in PLUGIN_LINE.finditer(text):
                node = result.plugin_scores.setdefault(m["pod"], {}).setdefault(m["node"], {})
                node[m["plugin"]] = int(m["score"])
        return result


def _bound_paths(log: str) -> dict[str, str]:
    """pod name → path, from our JSON ``pod_bound`` lines (the last one wins: a pod moved
    onto kube's node is bound by the harness, not by us)."""
    out: dict[str, str] = {}
    for line in log.splitlines():
        if '"pod_bound"' not in line:
            continue
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if record.get("event") == "pod_bound":
            out[str(record["pod"]).rsplit("/", 1)[-1]] = str(record["path"])
    return out


def _batched_paths(url: str) -> dict[str, float]:
    """Pods our scheduler placed from a batch hint and on the exact path (its counters)."""
    with urllib.request.urlopen(url, timeout=10) as response:
        text = response.read().decode()
    wanted = {
        "hint": re.compile(
            r'^scheduler_batch_attempts_total\{[^}]*result="hint_used"[^}]*\} (\S+)'
        ),
        "exact": re.compile(
            r'^batch_scheduler_exact_batch_total\{[^}]*outcome="placed"[^}]*\} (\S+)'
        ),
    }
    paths = dict.fromkeys(wanted, 0.0)
    for line in text.splitlines():
        for path, pattern in wanted.items():
            m = pattern.match(line)
            if m:
                paths[path] += float(m.group(1))
    return paths


def _ready(url: str) -> bool:
    """``/readyz`` answers 200 (kube-scheduler's serving certificate is self-signed)."""
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    try:
        with urllib.request.urlopen(url, timeout=5, context=context) as response:
            return int(response.status) == 200
    except (urllib.error.URLError, OSError, ValueError):
        return False


def stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def parse_scores(log: str) -> dict[str, dict[str, int]]:
    scores: dict[str, dict[str, int]] = {}
    for match in SCORE_LINE.finditer(log):
        scores.setdefault(match["pod"], {})[match["node"]] = int(match["score"])
    return scores


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
