"""One DRA backlog, one scheduler: the claims made first, then the scheduler started on it.

A fresh etcd and kube-apiserver with kube's scheduler_perf DRA flags (the workload
``SchedulingWithResourceClaimTemplate``: :func:`bench.scheduler_perf.runner.
apiserver_args`) and kube-controller-manager (its resource-claim controller makes each
pod's claim from the template; client QPS raised so that 2000 claims take seconds, not
minutes). The backlog is kube's own DRA templates: ``nodes`` nodes
(``node-with-dra-test-driver``), one ResourceSlice of ``devices`` devices per node
(``resourceslice-basic-devices``, a fake driver), the DeviceClass, the
ResourceClaimTemplate and ``pods`` pods (``pod-with-claim-template``) naming the scheduler
under test. Only once every pod's claim exists (``status.resourceClaimStatuses``) does the
scheduler start — kube-scheduler v1.37.2 or ours (``--batching all``, as kube's
OpportunisticBatching default).

Measured as :mod:`bench.gang.backlog` measures (its ``_measure``: readiness to the last
bind seen by a pod watch; the scheduler's and the API server's CPU in that window), then
from ``/metrics`` ours' decisions by path and exact-batch outcomes, and at the end every
pod's claim checked allocated on the pod's node and reserved for it.

Neighbours: :mod:`bench.dra.cli` (the loop and the files), :mod:`bench.gang.backlog`
(the measurement), :mod:`bench.scheduler_perf` (flags, processes, templates, the watch).
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import time
from typing import TYPE_CHECKING, Any

from bench.dra import profile as dra_profile
from bench.gang.backlog import NODE_WORKERS, BacklogRun, _figures, run_on_backlog
from bench.measure import Metrics, by_label, parse_metrics
from bench.scheduler_perf import objects, runner, schedulers
from bench.scheduler_perf.api import CREATE_WORKERS, Api, parallel
from bench.scheduler_perf.capability import OURS
from bench.scheduler_perf.suite import Selected, load_suite, select

if TYPE_CHECKING:
    from pathlib import Path

Record = dict[str, Any]
CASE = "SchedulingWithResourceClaimTemplate"
WORKLOAD = "fast"
NAMESPACE = "dra-bench"
RESOURCE = "/apis/resource.k8s.io/v1"
CONTROLLER_MANAGER_QPS = ("--kube-api-qps=400", "--kube-api-burst=400")
EXACT = "batch_scheduler_exact_batch_total"


@dataclasses.dataclass(frozen=True)
class Shape:
    nodes: int = 1000
    devices: int = 8
    pods: int = 2000


@functools.cache
def selected() -> Selected:
    """kube's DRA workload whose templates and gates the backlog uses."""
    (chosen,) = select(load_suite(), labels=(), test=f"^{CASE}/{WORKLOAD}$")
    return chosen


def _template(name: str) -> Path:
    return selected().case.directory / "templates" / name


def node(index: int) -> Record:
    return objects.render(_template("node-with-dra-test-driver.yaml"), {"Index": index})


def resource_slice(index: int, devices: int) -> Record:
    env = {"Index": index, "numDevices": devices}
    return objects.render(_template("resourceslice-basic-devices.yaml"), env)


def pod(index: int, scheduler_name: str) -> Record:
    obj = objects.render(_template("pod-with-claim-template.yaml"), {"Index": index})
    obj["metadata"] = {"name": f"test-dra-{index:05d}", "namespace": NAMESPACE}
    obj["spec"]["schedulerName"] = scheduler_name
    return obj


async def create_backlog(api: Api, shape: Shape, *, scheduler_name: str) -> float:
    """Nodes, slices, the class, the namespace, the template, the pods; the seconds."""
    began = time.monotonic()
    await parallel(shape.nodes, NODE_WORKERS, lambda i: api.create("/api/v1/nodes", node(i)))
    await parallel(
        shape.nodes,
        NODE_WORKERS,
        lambda i: api.create(f"{RESOURCE}/resourceslices", resource_slice(i, shape.devices)),
    )
    await api.create(f"{RESOURCE}/deviceclasses", objects.render(_template("deviceclass.yaml"), {}))
    body = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}}
    await api.create("/api/v1/namespaces", body, ok=(409,))
    template = objects.render(_template("resourceclaimtemplate.yaml"), {})
    await api.create(f"{RESOURCE}/namespaces/{NAMESPACE}/resourceclaimtemplates", template)
    pods = f"/api/v1/namespaces/{NAMESPACE}/pods"
    await parallel(shape.pods, CREATE_WORKERS, lambda i: api.create(pods, pod(i, scheduler_name)))
    return time.monotonic() - began


async def wait_claims(api: Api, want: int, *, within: float) -> float:
    """Until the resource-claim controller made every pod's claim and named it in the
    pod's status; the seconds."""
    began = time.monotonic()
    while True:
        pods = await api.list_all(f"/api/v1/namespaces/{NAMESPACE}/pods")
        named = sum(1 for p in pods if (p.get("status") or {}).get("resourceClaimStatuses"))
        claims = await api.list_all(f"{RESOURCE}/namespaces/{NAMESPACE}/resourceclaims")
        if named >= want and len(claims) >= want:
            return time.monotonic() - began
        if time.monotonic() - began > within:
            raise TimeoutError(f"{named} of {want} pods have their claim after {within:.0f} s")
        await asyncio.sleep(2)


async def check_allocations(api: Api) -> Record:
    """Every bound pod's claim allocated on its node and reserved for it."""
    pods = await api.list_all(f"/api/v1/namespaces/{NAMESPACE}/pods")
    claims = await api.list_all(f"{RESOURCE}/namespaces/{NAMESPACE}/resourceclaims")
    by_name = {c["metadata"]["name"]: c for c in claims}
    devices: set[tuple[str, str]] = set()
    bad: list[str] = []
    for p in pods:
        node_name = p["spec"].get("nodeName")
        statuses = (p.get("status") or {}).get("resourceClaimStatuses") or []
        claim = by_name.get(statuses[0].get("resourceClaimName", "")) if statuses else None
        allocation = ((claim or {}).get("status") or {}).get("allocation")
        reserved = [
            r.get("uid") for r in ((claim or {}).get("status") or {}).get("reservedFor", [])
        ]
        results = (allocation or {}).get("devices", {}).get("results", [])
        if not node_name or not results or p["metadata"]["uid"] not in reserved:
            bad.append(p["metadata"]["name"])
            continue
        for result in results:
            if result["pool"] != f"resourceslice-{node_name.rsplit('-', 1)[1]}":
                bad.append(p["metadata"]["name"])
            devices.add((result["pool"], result["device"]))
    return {
        "pods_checked": len(pods),
        "claims_allocated_ok": len(pods) - len(bad),
        "claims_bad": bad[:10],
        "devices_distinct": len(devices),
    }


async def run(
    shape: Shape,
    scheduler: str,
    *,
    workdir: Path,
    wait_s: float,
    profile: bool = False,
    ours_log_level: str = "warning",
) -> Record:
    """``shape`` with ``scheduler`` (kube or ours): the record (a failed one says why)."""
    chosen = selected()
    plan = runner.plan(chosen).plans[scheduler]
    if scheduler == OURS:
        plan = dataclasses.replace(plan, args=(*plan.args, "--log-level", ours_log_level))
    record: Record = {"scheduler": scheduler, **dataclasses.asdict(shape), "args": list(plan.args)}
    if plan.skip is not None:
        return {**record, "failed": f"skipped: {plan.skip}"}

    async def create(api: Api, name: str) -> None:
        record["create_s"] = round(await create_backlog(api, shape, scheduler_name=name), 1)
        record["claims_s"] = round(await wait_claims(api, shape.pods, within=wait_s), 1)

    async def figures(api: Api, process: schedulers.SchedulerProcess, binds: object) -> Record:
        found = _dra_figures(parse_metrics(await process.scrape()), scheduler)
        return {**found, **await check_allocations(api)}

    return await run_on_backlog(
        record,
        BacklogRun(
            scheduler,
            chosen,
            plan,
            workdir,
            wait_s=wait_s,
            profile=profile,
            controller_manager_args=CONTROLLER_MANAGER_QPS,
        ),
        create=create,
        expected=(NAMESPACE, shape.pods),
        summarize=dra_profile.summarize,
        figures=figures,
    )


def _dra_figures(metrics: Metrics, scheduler: str) -> Record:
    """Attempts, ours' decisions by path (the share of pods batched: path exact) and the
    exact batch's outcomes."""
    figures = _figures(metrics, scheduler)
    for unused in ("group_attempts", "group_algorithm_s", "group_algorithm_count"):
        figures.pop(unused, None)
    figures.pop("group_attempt_s", None)
    if scheduler == OURS:
        decisions = figures.get("decisions", {})
        total = sum(decisions.values())
        batched = sum(v for path, v in decisions.items() if path != "full")
        figures["batched_pct"] = round(100 * batched / total, 2) if total else 0.0
        figures["exact_outcomes"] = by_label(metrics, EXACT, "outcome")
    return figures
