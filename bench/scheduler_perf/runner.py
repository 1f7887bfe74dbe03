"""One workload, one scheduler: a fresh control plane, the scheduler, the ops, the record.

As kube's ``setupTestCase``/``mustSetupCluster`` do, each run gets a new etcd and
kube-apiserver (with the workload's feature gates; ``--runtime-config`` for the DRA and
scheduling.k8s.io/v1beta1 APIs when the workload turns their gates on; admission without
ServiceAccount, TaintNodesByCondition and Priority, as in kube's test), then the scheduler
starts and syncs before the first op runs. kube's test also runs a few controllers
in-process; here kube-controller-manager runs only for workloads whose claims come from
ResourceClaimTemplates (its resourceclaim controller makes them), since on two cores every
idle controller's watch costs the schedulers CPU, and with kube's client limits.

The record (one per workload and scheduler) is what ``OUT/latest.json`` lists: kube's
SchedulingThroughput and the SLI duration of the (last) collection, the scheduler's CPU
seconds during the collection and in all, its peak RSS, the wall time, or why it was
skipped or failed.

Neighbours: :mod:`bench.scheduler_perf.executor` runs the ops,
:mod:`bench.scheduler_perf.schedulers` the processes, :mod:`bench.scheduler_perf.cli` the
selection.
"""

from __future__ import annotations

import asyncio
import shutil
import time
import traceback
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from bench import gotools
from bench.measure import cpu_seconds
from bench.scheduler_perf import capability, decode, ops, schedulers
from bench.scheduler_perf.api import Api, tls_for
from bench.scheduler_perf.capability import DRA, KUBE, OURS, Plan
from bench.scheduler_perf.executor import Executor, Measurement, SchedulerProbe, WorkloadError
from bench.scheduler_perf.objects import ObjectError
from bench.scheduler_perf.podwatch import PodWatch
from controlplane.launcher import ControlPlane, ControlPlaneError

if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path

    from bench.scheduler_perf.suite import Selected

Record = dict[str, Any]
DISABLED_ADMISSION = "ServiceAccount,TaintNodesByCondition,Priority"
CONTROLLER_MANAGER_ARGS = ("--kube-api-qps=5000", "--kube-api-burst=5000")
"""kube's test gives its in-process controllers the client QPS and burst of 5000
(``mustSetupCluster``); at kube-controller-manager's default of 20 the resourceclaim
controller, two or three requests per pod, paced every DRA workload at about 4 pods/s."""
DRA_APIS = ("resource.k8s.io/v1", "resource.k8s.io/v1beta2", "resource.k8s.io/v1beta1")
DRA_APIS_ALPHA = ("resource.k8s.io/v1alpha3",)
ALLOCATOR_FEATURES = {
    "DRAAdminAccess": "AdminAccess",
    "DRADeviceCompatibilityGroups": "CompatibilityGroups",
    "DRAConsumableCapacity": "ConsumableCapacity",
    "DRADeviceTaints": "DeviceTaints",
    "DRAListTypeAttributes": "ListTypeAttributes",
    "DRAPartitionableDevices": "PartitionableDevices",
    "DRAPrioritizedList": "PrioritizedList",
}
"""kube's feature gates → the structured allocator's features (dra.go's NewAllocator call)."""


@dataclass(frozen=True)
class WorkloadPlan:
    """A selected workload's ops and what each scheduler makes of it."""

    selected: Selected
    ops: tuple[ops.Op, ...]
    plans: Mapping[str, Plan]
    features: frozenset[str]


def plan(selected: Selected) -> WorkloadPlan:
    """Resolve the ops and decide for both schedulers; a workload kube's runner would
    refuse (a bad op, an unused param) is skipped for both, with kube's message."""
    reason = capability.runner_skip(selected)
    try:
        resolved, params = decode.resolve(selected)
        unused = params.unused()
        if unused and reason is None:
            reason = f"the parameters {unused} are defined on the workload, but unused"
    except (ops.OpError, ObjectError) as exc:
        resolved, reason = [], reason or f"invalid workload: {exc}"
    if reason is not None:
        return WorkloadPlan(
            selected,
            (),
            {s: Plan(s, skip=f"runner: {reason}") for s in capability.SCHEDULERS},
            frozenset(),
        )
    features = frozenset(capability.features_used(resolved))
    ours = capability.ours_plan(selected, resolved, schedulers.ours_config_error(selected))
    plans = {KUBE: capability.kube_plan(selected), OURS: ours}
    return WorkloadPlan(selected, tuple(resolved), plans, features)


def apiserver_args(gates: Mapping[str, bool]) -> list[str]:
    """kube's ``mustSetupCluster`` flags for the workload's (explicitly set) gates."""
    args = [f"--disable-admission-plugins={DISABLED_ADMISSION}"]
    runtime: list[str] = []
    if gates.get("DynamicResourceAllocation"):
        runtime += DRA_APIS + DRA_APIS_ALPHA
    if gates.get("GenericWorkload"):
        runtime.append("scheduling.k8s.io/v1beta1")
    if runtime:
        args.append("--runtime-config=" + ",".join(f"{api}=true" for api in runtime))
    args += capability.gate_flag(gates)
    version = capability.emulated_version(gates)
    if version:
        args.append(f"--emulated-version=kube={version}")
    return args


async def allocate_claims(cp: ControlPlane, namespace: str, gates: Mapping[str, bool]) -> None:
    """kube's ``allocResourceClaims``: ``bench/draalloc`` with the allocator features the
    workload's gates (or their v1.37 defaults) turn on."""
    defaults = capability.gate_defaults()
    enabled = [
        feature
        for gate, feature in ALLOCATOR_FEATURES.items()
        if gates.get(gate, defaults[gate].default if gate in defaults else False)
    ]
    program = await asyncio.to_thread(gotools.binary, "draalloc")
    proc = await asyncio.create_subprocess_exec(
        str(program),
        "--kubeconfig",
        str(cp.admin_kubeconfig),
        "--namespace",
        namespace,
        "--features",
        ",".join(enabled),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    out, _ = await proc.communicate()
    if proc.returncode != 0:
        raise WorkloadError(f"allocResourceClaims: {out.decode(errors='replace').strip()}")


def base_record(selected: Selected, scheduler: str) -> Record:
    return {
        "test": selected.case.name,
        "workload": selected.workload.name,
        "topic": selected.case.topic,
        "params": dict(selected.params),
        "overridden": dict(selected.overridden),
        "scheduler": scheduler,
        "feature_gates": selected.feature_gates,
        "threshold": selected.threshold(),
    }


async def run(
    workload: WorkloadPlan, scheduler: str, *, workdir: Path, wait_timeout: float
) -> Record:
    """Run ``workload`` with ``scheduler``; the record (skipped and failed ones too)."""
    selected = workload.selected
    record = base_record(selected, scheduler)
    scheduler_plan = workload.plans[scheduler]
    record["args"] = list(scheduler_plan.args)
    if scheduler_plan.skip is not None:
        return {**record, "skipped": scheduler_plan.skip}
    started = time.monotonic()
    gates = selected.feature_gates
    claims = DRA in workload.features
    try:
        cp = await asyncio.to_thread(
            ControlPlane.start,
            workdir / "cp",
            controller_manager=claims,
            controller_manager_args=CONTROLLER_MANAGER_ARGS,
            apiserver_args=apiserver_args(gates),
        )
    except ControlPlaneError as exc:
        return {**record, "failed": f"control plane: {exc}"}
    process = None
    try:
        process = schedulers.start(scheduler, cp, selected, scheduler_plan, workdir)
        await process.wait_ready()
        measured = await _execute(workload, scheduler, cp, process, wait_timeout)
        record.update(measured)
    except (WorkloadError, RuntimeError, OSError, gotools.GoToolError) as exc:
        record["failed"] = str(exc).splitlines()[0][:400] if str(exc) else repr(exc)
        record["failure_detail"] = "".join(traceback.format_exception(exc))[-3000:]
    finally:
        if process is not None:
            await asyncio.to_thread(process.stop)
            record["cpu_s_total"] = round(process.cpu_at_exit or 0.0, 2)
            record["rss_mb"] = round(process.rss_mb, 1)
            record["log"] = str(process.log)
        await asyncio.to_thread(cp.stop)
        # etcd's data of a finished workload is tens of MB each; the logs stay.
        shutil.rmtree(workdir / "cp" / "etcd", ignore_errors=True)
    record["wall_s"] = round(time.monotonic() - started, 1)
    return record


async def _execute(
    workload: WorkloadPlan,
    scheduler: str,
    cp: ControlPlane,
    process: schedulers.SchedulerProcess,
    wait_timeout: float,
) -> Record:
    name = schedulers.pod_scheduler_name(scheduler, workload.selected)
    async with Api(cp.api_url, tls_for(cp)) as api:
        watch = PodWatch(api)
        await watch.start()
        apiserver = cp.process("kube-apiserver").proc.pid
        gates = workload.selected.feature_gates

        async def allocate(namespace: str) -> None:
            await allocate_claims(cp, namespace, gates)

        probe = SchedulerProbe(
            process.scrape, process.cpu_seconds, lambda: cpu_seconds(apiserver), allocate
        )
        executor = Executor(api, watch, probe, name, wait_timeout=wait_timeout)
        try:
            await executor.run(workload.ops)
        finally:
            await executor.close()
            await watch.stop()
    if not executor.measurements:
        raise WorkloadError("no op collected metrics")
    return measurement_fields(executor.measurements)


def measurement_fields(measurements: list[Measurement]) -> Record:
    """The record's figures: those of the last collection (kube's workloads have one),
    and every collection when there are several."""
    last = measurements[-1]
    fields: Record = {
        "SchedulingThroughput": _rounded(last.throughput),
        "SchedulingSLI_ms": _rounded(last.sli_ms),
        "attempts": last.attempts,
        "exact_batch": last.exact_batch,
        "pods_scheduled": last.scheduled,
        "measure_s": round(last.seconds, 2),
        "cpu_s": round(last.cpu_s, 2),
        "apiserver_cpu_s": round(last.apiserver_cpu_s, 2),
        "created": last.created,
        "create_s": round(last.create_s, 2),
        "cpu_ms_per_pod": round(last.cpu_s * 1000 / last.scheduled, 3) if last.scheduled else None,
    }
    if last.throughput is None:
        fields["note"] = (
            "no SchedulingThroughput: scheduling took under a sampling interval "
            "(kube: increase pods and/or nodes)"
        )
    if len(measurements) > 1:
        fields["collections"] = [
            {"name": m.name, "SchedulingThroughput": _rounded(m.throughput)} for m in measurements
        ]
    return fields


def _rounded(values: Mapping[str, float] | None) -> dict[str, float] | None:
    return None if values is None else {k: round(v, 2) for k, v in values.items()}
