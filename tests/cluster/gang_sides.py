"""Gang scheduling side by side: kube-scheduler v1.37.2 and ours on one kube-apiserver, both
with the GenericWorkload gate (``test_cluster_gang*.py``).

Each side is one scheduler with a namespace and fake nodes of its own: its pods name its
scheduler and select its nodes by label, so the two never compete for room, while both
schedulers see the same cluster (every node, so their ``0/N nodes`` texts agree). A case's
steps run on the two sides at once, one thread each; what a step observes (bound or not,
the ``PodScheduled`` condition, the PodGroup's ``PodGroupInitiallyScheduled`` condition,
the ``FailedScheduling`` and ``Preempted`` texts, namespace and uids made neutral) is
recorded per side and the two records compared. Priorities are PriorityClasses (the
Priority admission plugin refuses a bare ``spec.priority`` on pods and PodGroups alike).

Both schedulers run with a 1 s backoff (initial and maximum), as near as their validation
allows to the zero backoff of kube's integration tests (``podgroup_test.go``); a rejected
group retries after at most ``sqrt(size)`` seconds. No kube-controller-manager: nothing here
needs one, and its CPU is better left to the two schedulers on a 2-core machine.

Neighbours: ``conformance.Backend`` (the requests), ``tests.scheduler_process`` (ours as a
process), ``controlplane.launcher`` (the control plane and kube-scheduler's flags).
"""

from __future__ import annotations

import contextlib
import json
import re
import ssl
import subprocess
import time
import urllib.request
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import yaml
from prometheus_client.parser import text_string_to_metric_families

from controlplane.launcher import ControlPlane
from controlplane.processes import free_port
from tests.cluster.conformance import Backend
from tests.scheduler_process import SCHEDULER, SchedulerProc, wait_for

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator
    from pathlib import Path

GATE = "GenericWorkload=true"
KUBE, OURS = "kube", "ours"
SIDE_LABEL = "batch-scheduler.io/gang-side"
SPARE = "spare"
PODGROUPS = "/apis/scheduling.k8s.io/v1beta1/namespaces/{ns}/podgroups"
MERGE_PATCH = "application/merge-patch+json"
CONDITION = "PodGroupInitiallyScheduled"
PRIORITIES = (5, 10, 50, 100)
"""The priorities of kube's cases, each a PriorityClass (admission refuses a bare one)."""
UID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
Json = dict[str, Any]


def priority_class(priority: int) -> str:
    return f"gang-priority-{priority}"


def config(
    *, kubeconfig: Path | None = None, backoff: int = 1, parallelism: int | None = None
) -> Json:
    """Both schedulers' KubeSchedulerConfiguration: kube's defaults but the backoff (initial
    and maximum, seconds) and, if given, ``parallelism``."""
    doc: Json = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "leaderElection": {"leaderElect": False},
        "podInitialBackoffSeconds": backoff,
        "podMaxBackoffSeconds": backoff,
    }
    if parallelism is not None:
        doc["parallelism"] = parallelism
    if kubeconfig is not None:
        doc["clientConnection"] = {"kubeconfig": str(kubeconfig), "qps": 200, "burst": 400}
    return doc


class KubeScheduler:
    """kube-scheduler v1.37.2 as a process of our own (so a test may SIGKILL it)."""

    def __init__(self, cp: ControlPlane, workdir: Path, backoff: int = 1) -> None:
        self.cp = cp
        self.workdir = workdir
        self.backoff = backoff
        self.starts = 0
        self.proc: subprocess.Popen[bytes] | None = None
        self.url = ""

    def start(self) -> None:
        self.starts += 1
        kubeconfig = self.cp.client_kubeconfig("scheduler", "system:kube-scheduler")
        path = self.workdir / "kube-scheduler.yaml"
        path.write_text(yaml.safe_dump(config(kubeconfig=kubeconfig, backoff=self.backoff)))
        port = free_port()
        cmd = [str(self.cp.bin / "kube-scheduler"), f"--config={path}", f"--feature-gates={GATE}"]
        cmd += [*self.cp.kube_scheduler_flags(port), "--v=2"]
        with (self.workdir / f"kube-scheduler-{self.starts}.log").open("wb") as out:
            self.proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT)
        self.url = f"https://127.0.0.1:{port}"
        wait_for(lambda: self._get("/readyz")[0] == 200 or not self.alive(), 60)
        assert self._get("/readyz")[0] == 200, f"kube-scheduler not ready:\n{self.tail()}"

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def kill(self) -> None:
        """SIGKILL, as ``SchedulerProc.kill``."""
        if self.proc is not None and self.alive():
            self.proc.kill()
            self.proc.wait(timeout=10)

    def stop(self) -> None:
        if self.proc is not None and self.alive():
            self.proc.terminate()
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def tail(self) -> str:
        return (self.workdir / f"kube-scheduler-{self.starts}.log").read_text()[-3000:]

    def _get(self, path: str) -> tuple[int, str]:
        context = ssl.create_default_context()
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
        try:
            with urllib.request.urlopen(self.url + path, timeout=5, context=context) as r:
                return int(r.status), r.read().decode()
        except OSError:
            return 0, ""

    def metric(self, name: str, **labels: str) -> float:
        status, text = self._get("/metrics")
        return _sum(text if status == 200 else "", name, labels)


class Ours:
    """``batch-scheduler run`` with the gate, as its ServiceAccount, batching every pod."""

    def __init__(self, cp: ControlPlane, workdir: Path, backoff: int = 1) -> None:
        self.cp = cp
        self.workdir = workdir
        self.backoff = backoff
        self.procs: list[SchedulerProc] = []

    @property
    def proc(self) -> SchedulerProc:
        return self.procs[-1]

    def start(self, *, parallelism: int | None = None) -> None:
        """A new process; ``parallelism`` (kube's default 16) also sets its binds in flight."""
        path = self.workdir / "ours.yaml"
        path.write_text(yaml.safe_dump(config(backoff=self.backoff, parallelism=parallelism)))
        log = self.workdir / f"ours-{len(self.procs) + 1}.log"
        args = ("--config", str(path), "--feature-gates", GATE, "--batching", "all")
        proc = SchedulerProc(self.cp.scheduler_kubeconfig, log, *args)
        self.procs.append(proc)
        proc.wait_ready(60)

    def metric(self, name: str, **labels: str) -> float:
        return self.proc.metric(name, **labels)


def _sum(text: str, name: str, labels: dict[str, str]) -> float:
    total = 0.0
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == name and labels.items() <= sample.labels.items():
                total += sample.value
    return total


@dataclass
class GangCluster:
    """The control plane and the two schedulers (conftest's ``gang_cluster``)."""

    cp: ControlPlane
    api: Backend
    kube: KubeScheduler
    ours: Ours

    @classmethod
    @contextlib.contextmanager
    def start(cls, workdir: Path, *, backoff: int = 1) -> Iterator[GangCluster]:
        """Start everything; yield; stop everything (ours checked for a clean exit).
        ``backoff``: both schedulers' initial and maximum pod backoff, seconds."""
        with ControlPlane.start(workdir / "cp", controller_manager=False, feature_gates=GATE) as cp:
            context = ssl.create_default_context(cafile=str(cp.pki.ca_cert))
            cert, key = cp.pki.client("admin")
            context.load_cert_chain(str(cert), str(key))
            api = Backend("kube-apiserver", cp.api_url, context, lambda: None)
            sides = KubeScheduler(cp, workdir, backoff), Ours(cp, workdir, backoff)
            cluster = cls(cp, api, *sides)
            for priority in PRIORITIES:
                body = {
                    "apiVersion": "scheduling.k8s.io/v1",
                    "kind": "PriorityClass",
                    "metadata": {"name": priority_class(priority)},
                    "value": priority,
                }
                api.request("POST", "/apis/scheduling.k8s.io/v1/priorityclasses", body)
            try:
                cluster.kube.start()
                cluster.ours.start()
                yield cluster
            finally:
                cluster.kube.stop()
                if cluster.ours.procs:
                    code = cluster.ours.proc.terminate()
                    cluster.ours.proc.assert_clean_exit(code)
                from tests.cluster.conftest import assert_no_forbidden  # it imports this

                for proc in cluster.ours.procs:
                    assert_no_forbidden(proc)

    def metric(self, side: str, name: str, **labels: str) -> float:
        return (self.kube if side == KUBE else self.ours).metric(name, **labels)

    def settle(self, nodes: int) -> None:
        """Both caches hold ``nodes`` nodes and no pod (the previous case is gone)."""

        def settled(side: str) -> bool:
            size = "scheduler_cache_size"
            return (
                self.metric(side, size, type="nodes") == nodes
                and self.metric(side, size, type="pods") == 0
            )

        assert wait_for(lambda: settled(KUBE), 30, 0.2), "kube-scheduler's cache unsettled"
        assert wait_for(lambda: settled(OURS), 30, 0.2), "our cache unsettled"


@dataclass
class Side:
    """One scheduler's half of a case: its namespace, its nodes, its record."""

    name: str
    cluster: GangCluster
    namespace: str = ""
    nodes: list[str] = field(default_factory=list)
    spares: list[str] = field(default_factory=list)
    """Its nodes no pod selects yet (``reveal``)."""
    record: list[Any] = field(default_factory=list)
    attempts_before: float = 0.0
    """scheduler_podgroup_schedule_attempts_total when the case began."""

    @property
    def scheduler_name(self) -> str:
        return "default-scheduler" if self.name == KUBE else SCHEDULER

    # -- requests --------------------------------------------------------------------------

    def request(self, method: str, path: str, body: Any = None, **kw: Any) -> Any:
        status, reply = self.cluster.api.request(method, path, body, **kw)
        assert 200 <= status < 300, f"{method} {path}: {status} {reply}"
        return reply

    def items(self, path: str, **params: str) -> list[Json]:
        query = "?" + "&".join(f"{k}={v}" for k, v in params.items()) if params else ""
        items: list[Json] = self.request("GET", path + query)["items"]
        return items

    # -- objects ---------------------------------------------------------------------------

    def add_nodes(self, count: int, cpu: str, *, spare: bool = False) -> None:
        """``count`` nodes of the side's, or ``spare`` ones no pod selects until ``reveal``
        (so a node added mid-case changes no ``0/N nodes`` text of the other side)."""
        for i in range(len(self.nodes), len(self.nodes) + count):
            name = f"{self.namespace}-n{i}"
            side = SPARE if spare else self.namespace
            labels = {"kubernetes.io/hostname": name, SIDE_LABEL: side}
            capacity = {"cpu": cpu, "memory": "64Gi", "pods": "110"}
            node = {
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": {"name": name, "labels": labels},
                "status": {
                    "capacity": capacity,
                    "allocatable": capacity,
                    "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady"}],
                },
            }
            self.request("POST", "/api/v1/nodes", node)
            self.nodes.append(name)
            if spare:
                self.spares.append(name)

    def reveal(self) -> None:
        """The side's spare nodes become its own (a node added, as far as its pods go)."""
        patch = {"metadata": {"labels": {SIDE_LABEL: self.namespace}}}
        for node in self.spares:
            self.request("PATCH", f"/api/v1/nodes/{node}", patch, content_type=MERGE_PATCH)
        self.spares.clear()

    def pod(
        self,
        name: str,
        *,
        cpu: str = "1",
        group: str | None = None,
        priority: int | None = None,
        gated: bool = False,
    ) -> None:
        spec: Json = {
            "schedulerName": self.scheduler_name,
            "terminationGracePeriodSeconds": 0,  # no kubelet: a deleted pod goes at once
            "nodeSelector": {SIDE_LABEL: self.namespace},
            "containers": [
                {
                    "name": "c",
                    "image": "registry.k8s.io/pause:3.10",
                    "resources": {"requests": {"cpu": cpu, "memory": "64Mi"}},
                }
            ],
        }
        if group is not None:
            spec["schedulingGroup"] = {"podGroupName": group}
        if priority is not None:
            spec["priorityClassName"] = priority_class(priority)
        if gated:
            spec["schedulingGates"] = [{"name": "foo-gate"}]
        body = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": spec}
        self.request("POST", f"/api/v1/namespaces/{self.namespace}/pods", body)

    def pod_group(self, name: str, min_count: int | None, priority: int | None = None) -> None:
        policy: Json = {"basic": {}} if min_count is None else {"gang": {"minCount": min_count}}
        spec: Json = {"schedulingPolicy": policy}
        if priority is not None:  # the Priority admission plugin fills spec.priority in
            spec["priorityClassName"] = priority_class(priority)
        body = {
            "apiVersion": "scheduling.k8s.io/v1beta1",
            "kind": "PodGroup",
            "metadata": {"name": name},
            "spec": spec,
        }
        self.request("POST", PODGROUPS.format(ns=self.namespace), body)

    def min_count(self, name: str, min_count: int) -> None:
        patch = {"spec": {"schedulingPolicy": {"gang": {"minCount": min_count}}}}
        path = f"{PODGROUPS.format(ns=self.namespace)}/{name}"
        self.request("PATCH", path, patch, content_type=MERGE_PATCH)

    def ungate(self, name: str) -> None:
        patch = {"spec": {"schedulingGates": None}}
        path = f"/api/v1/namespaces/{self.namespace}/pods/{name}"
        self.request("PATCH", path, patch, content_type=MERGE_PATCH)

    def delete_pods(self, names: Iterable[str]) -> None:
        for name in names:
            path = f"/api/v1/namespaces/{self.namespace}/pods/{name}?gracePeriodSeconds=0"
            self.cluster.api.request("DELETE", path)

    def delete_group(self, name: str, *, lift: bool = True) -> None:
        """Delete a PodGroup. The API server protects it with a finalizer that
        kube-controller-manager lifts once no pod names the group (none runs here); ``lift``
        lifts it at once: the PodGroup is gone, as in kube's integration tests (whose API
        server adds none). Without, it stays, deleting, as long as it has pods."""
        path = f"{PODGROUPS.format(ns=self.namespace)}/{name}"
        self.cluster.api.request("DELETE", path)
        if lift:
            patch = {"metadata": {"finalizers": None}}
            self.cluster.api.request("PATCH", path, patch, content_type=MERGE_PATCH)

    def clear(self) -> None:
        """Every pod and PodGroup of the side gone (force: no kubelet would confirm)."""
        pods = f"/api/v1/namespaces/{self.namespace}/pods"
        self.cluster.api.request("DELETE", f"{pods}?gracePeriodSeconds=0")
        for group in self.items(PODGROUPS.format(ns=self.namespace)):
            self.delete_group(group["metadata"]["name"])
        assert wait_for(lambda: not self.items(pods, limit="1"), 30), f"{self.name}: pods left"

    # -- reads -----------------------------------------------------------------------------

    def pods(self) -> dict[str, Json]:
        return {
            p["metadata"]["name"]: p
            for p in self.items(f"/api/v1/namespaces/{self.namespace}/pods")
        }

    def bound(self, names: Iterable[str] | None = None) -> set[str]:
        pods = self.pods()
        wanted = pods.keys() if names is None else set(names)
        return {n for n in wanted if n in pods and pods[n]["spec"].get("nodeName")}

    def pod_state(self, pod: Json | None) -> tuple[Any, ...]:
        """Bound or not, and the ``PodScheduled`` condition (False only: True has no text)."""
        if pod is None:
            return ("gone",)
        if pod["spec"].get("nodeName"):
            return ("bound",)
        for condition in pod.get("status", {}).get("conditions", []):
            if condition["type"] == "PodScheduled":
                return ("pending", condition["reason"], self.text(condition.get("message", "")))
        return ("pending",)

    def group_condition(self, name: str) -> tuple[str, ...] | None:
        path = f"{PODGROUPS.format(ns=self.namespace)}/{name}"
        status, body = self.cluster.api.request("GET", path)
        if status != 200:
            return None
        for condition in (body.get("status") or {}).get("conditions", []):
            if condition["type"] == CONDITION:
                message = self.text(condition.get("message", ""))
                return (condition["status"], condition["reason"], message)
        return None

    def failed_scheduling(self) -> dict[str, list[str]]:
        """Pod name → the distinct texts of its FailedScheduling events, sorted."""
        return self.events("FailedScheduling")

    def events(self, reason: str) -> dict[str, list[str]]:
        """Object name → the distinct texts of its events of ``reason``, sorted."""
        events = self.items(
            f"/api/v1/namespaces/{self.namespace}/events", fieldSelector=f"reason={reason}"
        )
        out: dict[str, set[str]] = {}
        for event in events:
            name = event["involvedObject"]["name"]
            out.setdefault(name, set()).add(self.text(event.get("message", "")))
        return {name: sorted(texts) for name, texts in sorted(out.items())}

    def text(self, message: str) -> str:
        """A message with the side's own names (namespace, nodes, uids) made neutral."""
        return UID.sub("<uid>", message.replace(self.namespace, "<ns>"))


@dataclass
class Case:
    """The two sides of one case (``open`` makes their namespaces, and clears them, their
    pods and their nodes after)."""

    kube: Side
    ours: Side

    @classmethod
    @contextlib.contextmanager
    def open(cls, cluster: GangCluster) -> Iterator[Case]:
        run = uuid.uuid4().hex[:6]
        case = cls(Side(KUBE, cluster), Side(OURS, cluster))
        for side in case.both:
            side.namespace = f"gang-{side.name}-{run}"
            side.request("POST", "/api/v1/namespaces", {"metadata": {"name": side.namespace}})
            side.request(
                "POST",
                f"/api/v1/namespaces/{side.namespace}/serviceaccounts",
                {"metadata": {"name": "default"}},
            )
        try:
            yield case
        finally:
            for side in case.both:
                side.clear()
                for node in side.nodes:
                    cluster.api.request("DELETE", f"/api/v1/nodes/{node}")
                cluster.api.request("DELETE", f"/api/v1/namespaces/{side.namespace}")

    @property
    def both(self) -> tuple[Side, Side]:
        return (self.kube, self.ours)

    def nodes(self, count: int, cpu: str, *, spare: tuple[int, str] = (0, "")) -> None:
        """``count`` nodes of ``cpu`` per side (and ``spare``: how many hidden ones of how
        many CPUs), in both caches before the case goes on."""
        for side in self.both:
            side.add_nodes(count, cpu)
            side.add_nodes(spare[0], spare[1], spare=True)
        self.kube.cluster.settle(len(self.kube.nodes) + len(self.ours.nodes))

    def run(self, script: Callable[[Side], Any]) -> tuple[Any, Any]:
        """``script`` on both sides at once; (kube's result, ours)."""
        with ThreadPoolExecutor(2) as pool:
            kube, ours = pool.map(script, self.both)
        return kube, ours


def stable(read: Callable[[], Any], *, quiet: float = 0.6, timeout: float = 15.0) -> Any:
    """``read()`` once it returns the same value twice ``quiet`` seconds apart."""
    deadline = time.monotonic() + timeout
    last = read()
    while time.monotonic() < deadline:
        time.sleep(quiet)
        now = read()
        if now == last:
            return now
        last = now
    return last


def diff(kube: Any, ours: Any) -> str:
    """The two records, side by side, for an assertion message."""
    return f"\nkube-scheduler:\n{json.dumps(kube, indent=1)}\nours:\n{json.dumps(ours, indent=1)}"
