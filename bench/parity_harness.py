"""One scheduler's run of a :mod:`bench.parity` case on the real API server, one pending pod
at a time, and what it decided and said.

:class:`Harness` creates the namespaces and cluster objects, starts kube-scheduler v1.37.2
(at ``--vmodule=schedule_one=10,resource_allocation=10``) or ours with the same profile,
creates each pending pod and waits for its binding or its ``PodScheduled`` message, and
with ``follow`` puts the pod where the other scheduler did (the trajectory rule in
:mod:`bench.parity`'s docstring). A :class:`Run` keeps the decisions, kube's final and
per-plugin scores read from its log, and our batched paths read from our ``pod_bound`` lines
and ``/metrics``. Neighbours: :mod:`bench.parity` drives it per seed,
:mod:`bench.parity_compare` judges two runs, :mod:`bench.parity_cases` builds the case,
:mod:`bench.configs` the profiles.
"""

from __future__ import annotations

import json
import re
import signal
import ssl
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from bench import parity_cases
from bench.configs import scheduler_config
from controlplane.processes import free_port

if TYPE_CHECKING:
    from bench.parity_cases import Case
    from controlplane.launcher import ControlPlane

ROOT = Path(__file__).parent.parent
NAMESPACE = "parity"
SCHEDULER_NAME = "parity-scheduler"
NAMESPACES = (NAMESPACE, parity_cases.OTHER_NAMESPACE)
PODS = f"/api/v1/namespaces/{NAMESPACE}/pods"
DECISION_TIMEOUT = 30.0
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
        put each pod where ``follow`` did afterwards (see :mod:`bench.parity`)."""
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
