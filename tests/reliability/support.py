"""Reliability harness: the emulator's API over loopback, the scheduler as a subprocess, a
mixed workload with known outcomes, and bounded waits.

Real parts only: the scheduler is ``python -m scheduler run --kubeconfig ...`` exactly as a
user starts it (kopf and the official client unchanged, nothing patched); the test talks to
the emulator over HTTP like any other client; every wait has a deadline and every process is
killed in ``finally`` by the tests.
"""

from __future__ import annotations

import asyncio
import json
import random
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from scheduler.sim import workload as simwork
from tests.reliability import invariants
from tests.scheduler_process import BATCHING, SCHEDULER, SchedulerProc, wait_for

if TYPE_CHECKING:
    from pathlib import Path

    from scheduler.sim.server import SimServer

MakeSim = Callable[..., "tuple[SimServer, Api, Path]"]
"""The ``make_sim`` fixture: ``make_sim(faults=None, token=None, nodes=0)``."""

NS = "default"
ZONE = "topology.kubernetes.io/zone"
DEDICATED_TAINT = {"key": "dedicated", "value": "batch", "effect": "NoSchedule"}
RETRIABLE = (429, 500, 503)


FIGURES: list[dict[str, Any]] = []
"""Every figure recorded in this run (printed at the end, see conftest)."""


class Figures:
    """The ``figures`` fixture: ``figures.record(pods=..., faults_injected=...)``."""

    def __init__(self, test: str) -> None:
        self.test = test

    def record(self, **values: Any) -> None:
        row = {"test": self.test, **values}
        FIGURES.append(row)
        print(f"\nRELIABILITY {json.dumps(row)}")


# -- the emulator's API, as a plain HTTP client ------------------------------------------------


class ApiError(RuntimeError):
    def __init__(self, status: int, body: str) -> None:
        super().__init__(f"{status}: {body[:300]}")
        self.status = status


class Api:
    """JSON over loopback HTTP; writes retry the emulator's injected 429/500/503."""

    def __init__(self, url: str, token: str | None = None) -> None:
        self.url = url
        self.token = token
        self.retried = 0
        """Writes of the test itself retried after an injected fault."""

    def request(self, method: str, path: str, body: Any = None, *, ctype: str = "") -> Any:
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(self.url + path, data=data, method=method)
        if data is not None:
            req.add_header("Content-Type", ctype or "application/json")
        if self.token:
            req.add_header("Authorization", f"Bearer {self.token}")
        try:
            with urllib.request.urlopen(req, timeout=30) as resp:
                return json.loads(resp.read() or b"null")
        except urllib.error.HTTPError as e:
            raise ApiError(e.code, e.read().decode(errors="replace")) from None

    def write(self, method: str, path: str, body: Any = None, *, ctype: str = "") -> Any:
        """A write, retried on injected faults (they fail before anything is written)."""
        for attempt in range(50):
            try:
                return self.request(method, path, body, ctype=ctype)
            except ApiError as e:
                if e.status not in RETRIABLE:
                    raise
                self.retried += 1
                time.sleep(min(0.2, 0.01 * 2**attempt))
        raise AssertionError(f"{method} {path}: still failing after 50 attempts")

    def create(self, obj: dict[str, Any]) -> Any:
        return self.write("POST", simwork.collection_path(obj), obj)

    def pods(self) -> list[dict[str, Any]]:
        return list(self.request("GET", "/api/v1/pods")["items"])

    def nodes(self) -> list[dict[str, Any]]:
        return list(self.request("GET", "/api/v1/nodes")["items"])

    def stats(self) -> dict[str, Any]:
        return dict(self.request("GET", "/sim/stats"))

    def patch_node(self, name: str, patch: dict[str, Any]) -> Any:
        return self.write(
            "PATCH", f"/api/v1/nodes/{name}", patch, ctype="application/strategic-merge-patch+json"
        )

    def delete_node(self, name: str) -> Any:
        return self.write("DELETE", f"/api/v1/nodes/{name}")

    def delete_pod(self, key: str) -> Any:
        ns, name = key.split("/", 1)
        return self.write("DELETE", f"/api/v1/namespaces/{ns}/pods/{name}")

    def lease_holder(self, name: str = SCHEDULER, namespace: str = "kube-system") -> str:
        try:
            lease = self.request(
                "GET", f"/apis/coordination.k8s.io/v1/namespaces/{namespace}/leases/{name}"
            )
        except ApiError:
            return ""
        return str((lease.get("spec") or {}).get("holderIdentity") or "")


def create_paced(api: Api, objects: Iterable[dict[str, Any]], per_second: float = 0.0) -> int:
    """Create ``objects`` in order, at most ``per_second`` of them a second (0: no pacing)."""
    start, count = time.monotonic(), 0
    for obj in objects:
        api.create(obj)
        count += 1
        if per_second > 0:
            ahead = start + count / per_second - time.monotonic()
            if ahead > 0:
                time.sleep(ahead)
    return count


def create_concurrently(api: Api, objects: list[dict[str, Any]], concurrency: int = 16) -> int:
    """Create ``objects`` with ``concurrency`` requests in flight (aiohttp); returns the count.

    On a thread of its own: ``asyncio.run`` unsets the calling thread's event loop when it
    ends, and in the main thread that would orphan the loop the looptime plugin put there
    (its ResourceWarning then fails whichever test the garbage collector happens to run in).
    """
    result: list[int] = []
    errors: list[BaseException] = []

    def run() -> None:
        try:
            result.append(
                asyncio.run(
                    simwork.create_all(api.url, objects, token=api.token, concurrency=concurrency)
                )
            )
        except BaseException as e:
            errors.append(e)

    thread = threading.Thread(target=run, name="create-concurrently")
    thread.start()
    thread.join()
    if errors:
        raise errors[0]
    return result[0]


class Burst:
    """Create objects from ``threads`` threads in the background, ``per_second`` in total.

    ``created`` counts what was created; :meth:`join` waits (bounded) and re-raises a failure.
    """

    def __init__(
        self, api: Api, objects: list[dict[str, Any]], per_second: float, threads: int = 4
    ) -> None:
        self.created = 0
        self.total = len(objects)
        self._lock = threading.Lock()
        self._errors: list[BaseException] = []
        slices = [objects[i::threads] for i in range(threads)]
        self._threads = [
            threading.Thread(target=self._run, args=(api, s, per_second / threads), daemon=True)
            for s in slices
        ]
        for t in self._threads:
            t.start()

    def _run(self, api: Api, objects: list[dict[str, Any]], rate: float) -> None:
        start = time.monotonic()
        try:
            for i, obj in enumerate(objects, 1):
                api.create(obj)
                with self._lock:
                    self.created += 1
                ahead = start + i / rate - time.monotonic()
                if ahead > 0:
                    time.sleep(ahead)
        except BaseException as e:
            self._errors.append(e)

    @property
    def running(self) -> bool:
        return any(t.is_alive() for t in self._threads)

    def join(self, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        for t in self._threads:
            t.join(max(0.0, deadline - time.monotonic()))
        assert not self.running, "creation did not finish"
        if self._errors:
            raise self._errors[0]


def bound_count(api: Api, keys: set[str]) -> int:
    return sum(1 for p in api.pods() if invariants.pod_key(p) in keys and _node(p))


def ours_idle(procs: Iterable[SchedulerProc]) -> bool:
    """No pod waits in an active or backoff queue of any live scheduler (gauges: 1 s)."""
    for p in procs:
        if p.alive() and (
            p.metric("scheduler_pending_pods", queue="active")
            + p.metric("scheduler_pending_pods", queue="backoff")
        ):
            return False
    return True


# -- a workload with known outcomes -----------------------------------------------------------


@dataclass
class Workload:
    """Nodes and pods (in creation order) with what must become of each pod.

    ``fill`` pods can only go to the ``general`` pool and are ``fill_capacity`` + overflow in
    number: exactly ``fill_capacity`` of them must be bound (fewer means phantom usage in the
    cache, more an over-commit the checker would see too), the rest reported unschedulable.
    """

    nodes: list[dict[str, Any]] = field(default_factory=list)
    pods: list[dict[str, Any]] = field(default_factory=list)
    must_bind: set[str] = field(default_factory=set)
    must_fail: set[str] = field(default_factory=set)
    fill: set[str] = field(default_factory=set)
    fill_capacity: int = 0
    foreign: set[str] = field(default_factory=set)

    @property
    def keys(self) -> set[str]:
        return {invariants.pod_key(p) for p in self.pods}

    def problems(self, pods: Iterable[dict[str, Any]]) -> list[str]:
        """How the API's pods differ from the outcomes this workload must have."""
        state = {invariants.pod_key(p): p for p in pods}
        out = []
        unbound = [k for k in sorted(self.must_bind) if not _node(state.get(k))]
        if unbound:
            out.append(f"{len(unbound)} pods that fit were not bound: {unbound[:10]}")
        wrongly = [k for k in sorted(self.must_fail) if _node(state.get(k))]
        if wrongly:
            out.append(f"{len(wrongly)} pods that fit nowhere were bound: {wrongly[:10]}")
        filled = sum(1 for k in self.fill if _node(state.get(k)))
        if self.fill and filled != self.fill_capacity:
            out.append(f"fill pool: {filled} bound, capacity {self.fill_capacity}")
        return out

    def settled(self, pods: Iterable[dict[str, Any]]) -> bool:
        """Outcomes reached and every pod of ours bound or reported (not necessarily idle)."""
        pods = list(pods)
        if self.problems(pods):
            return False
        wanted = self.keys - self.foreign
        return all(
            _node(p) or invariants.reported_unschedulable(p)
            for p in pods
            if invariants.pod_key(p) in wanted
        )


def _node(pod: dict[str, Any] | None) -> str:
    return str(((pod or {}).get("spec") or {}).get("nodeName") or "")


def mixed_workload(
    prefix: str = "",
    *,
    general: int = 20,
    per_node: int = 8,
    overflow: int = 10,
    zoned: int = 6,
    zone_pods: int = 60,
    dedicated: int = 3,
    dedicated_pods: int = 30,
    impossible: int = 10,
    untolerated: int = 5,
    foreign: int = 10,
    seed: int = 1,
) -> Workload:
    """Pools fenced as operators fence them, and pods with a known fate in each.

    * ``general`` nodes (pool=general), filled exactly by ``fill`` pods (``per_node`` per
      node, nodeSelector pool=general, batched) plus ``overflow`` more: Insufficient cpu;
    * ``zoned`` nodes, half in zone a: ``zone_pods`` with required affinity zone In [a];
    * ``dedicated`` nodes tainted dedicated=batch:NoSchedule: ``dedicated_pods`` tolerate
      it and select pool=dedicated; ``untolerated`` select it without the toleration;
    * ``impossible`` pods select a pool that does not exist;
    * ``foreign`` pods name another scheduler and must stay pending.
    """
    w = Workload()
    w.nodes += simwork.make_nodes(general, prefix=f"{prefix}gen-", labels={"pool": "general"})
    for i in range(zoned):
        w.nodes += simwork.make_nodes(
            1, prefix=f"{prefix}zone-{i}-", labels={"pool": "zoned", ZONE: "ab"[i % 2]}
        )
    w.nodes += simwork.make_nodes(
        dedicated,
        prefix=f"{prefix}ded-",
        labels={"pool": "dedicated"},
        taints=[DEDICATED_TAINT],
    )
    cpu = f"{4000 // per_node}m"
    zone_a = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {"matchExpressions": [{"key": ZONE, "operator": "In", "values": ["a"]}]}
                ]
            }
        }
    }
    toleration = {"key": "dedicated", "operator": "Equal", "value": "batch", "effect": "NoSchedule"}

    def ours(count: int, kind: str, **kw: Any) -> list[dict[str, Any]]:
        return simwork.make_pods(
            count,
            prefix=f"{prefix}{kind}-",
            scheduler_name=SCHEDULER,
            labels={"kind": kind},
            **kw,
        )

    fill = ours(
        general * per_node + overflow,
        "fill",
        cpu=cpu,
        memory="256Mi",
        node_selector={"pool": "general"},
        annotations=BATCHING,
    )
    zone = ours(
        zone_pods, "zone", cpu="100m", memory="128Mi", affinity=zone_a, annotations=BATCHING
    )
    ded = ours(
        dedicated_pods,
        "ded",
        cpu="100m",
        memory="128Mi",
        node_selector={"pool": "dedicated"},
        tolerations=[toleration],
        annotations=BATCHING,
    )
    untol = ours(untolerated, "untol", cpu="100m", node_selector={"pool": "dedicated"})
    nowhere = ours(impossible, "nowhere", cpu="100m", node_selector={"pool": "nowhere"})
    others = simwork.make_pods(foreign, prefix=f"{prefix}foreign-", labels={"kind": "foreign"})
    w.fill = {invariants.pod_key(p) for p in fill}
    w.fill_capacity = general * per_node
    w.must_bind = {invariants.pod_key(p) for p in zone + ded}
    w.must_fail = {invariants.pod_key(p) for p in untol + nowhere}
    w.foreign = {invariants.pod_key(p) for p in others}
    # Creation order: runs of up to 8 pods of one kind, shuffled (seeded), so that batches
    # form and break as they do in a real mix.
    runs: list[list[dict[str, Any]]] = []
    for group in (fill, zone, ded, untol, nowhere, others):
        runs += [group[i : i + 8] for i in range(0, len(group), 8)]
    random.Random(seed).shuffle(runs)
    w.pods = [p for run in runs for p in run]
    return w


def settle(
    api: Api,
    work: Workload,
    procs: Iterable[SchedulerProc],
    timeout: float,
    extra: Callable[[list[dict[str, Any]]], bool] | None = None,
) -> tuple[bool, float, list[dict[str, Any]]]:
    """Wait until the workload's outcomes are reached, every pod of ours is bound or reported,
    and the live schedulers' queues are idle; returns (settled, seconds, last pod LIST)."""
    procs = list(procs)
    start = time.monotonic()
    last: list[dict[str, Any]] = []

    def done() -> bool:
        nonlocal last
        last = api.pods()
        return work.settled(last) and (extra is None or extra(last)) and ours_idle(procs)

    ok = bool(wait_for(done, timeout, 0.5))
    return ok, round(time.monotonic() - start, 1), last


def verify(
    api: Api,
    work: Workload,
    pods: list[dict[str, Any]] | None = None,
    **check: Any,
) -> invariants.Report:
    """Run the invariant checker and the workload's outcome checks; raises on any problem."""
    pods = pods if pods is not None else api.pods()
    report = invariants.check(pods, api.nodes(), ours=[SCHEDULER], created=work.keys, **check)
    problems = report.problems + work.problems(pods)
    assert not problems, "\n".join(problems)
    return report
