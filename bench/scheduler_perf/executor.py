"""Runs a workload's ops against the API server, with kube's ``WorkloadExecutor`` semantics.

One op at a time, in order (``executor.go``, ``operations.go``, ``runners.go``):

* ``createNodes``: nodes from the template (or kube's base node), then the prepare
  strategy applied to ``list(nodes)[next:next+count]`` (kube's index into the full,
  name-ordered list: not necessarily the nodes just made): labels round robin, a unique
  label, or allocatable plus CSINode drivers (the allocatable patch goes to the node
  itself, where the API server drops status changes, exactly as kube's does);
* ``createPods``: 30 creates in flight (``ParallelizeUntil(30)``), each pod rendered for
  its index; then wait until the namespace has ``count`` scheduled pods (polling every
  second, 10 minutes), or record the namespace for a later barrier
  (``skipWaitToCompletion``), or keep the backlog: delete each pod as soon as it is
  scheduled and create another, for ``duration`` (``steadyState``). ``collectMetrics``
  collects around it;
* ``barrier``: wait until every pod of the namespaces is scheduled (or attempted);
* ``createNamespaces``, ``createAny``, ``updateAny`` (rate-limited, object then status),
  ``createPodGroups`` (then wait until they are listed), ``deletePods`` (rate-limited, in
  the background when ``skipWaitToCompletion``), ``churn`` (in the background until the
  workload ends), ``sleep``, ``start``/``stopCollectingMetrics``, and
  ``allocResourceClaims`` (kube's structured allocator, in Go: ``bench/draalloc``).

Neighbours: :mod:`bench.scheduler_perf.ops` (what to do), :mod:`bench.scheduler_perf.churn`
(the background loops), :mod:`bench.scheduler_perf.collector` (what is measured).
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import random
import time
import uuid
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from bench.measure import parse_metrics
from bench.scheduler_perf import objects, ops
from bench.scheduler_perf.api import CREATE_WORKERS, ApiError, parallel
from bench.scheduler_perf.churn import churn_loop, delete_pods, steady_state
from bench.scheduler_perf.collector import (
    SLI_METRIC,
    ThroughputCollector,
    counter_delta,
    histogram_summary,
)

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Coroutine, Mapping, Sequence

    from bench.measure import Metrics
    from bench.scheduler_perf.api import Api
    from bench.scheduler_perf.podwatch import PodWatch

NODE_WORKERS = 16
"""kube creates nodes one by one; nothing is measured then, so the runner goes faster."""
NODE_TRIES = 5
WAIT_TIMEOUT = 600.0
"""kube's ``waitUntilPodsScheduledInNamespace`` default: 10 minutes."""
POLL = 1.0
EXACT_BATCH = "batch_scheduler_exact_batch_total"


class WorkloadError(RuntimeError):
    """An op failed: the workload failed for this scheduler (the message says why)."""


@dataclass
class Measurement:
    """One collection (kube's data items for one ``Name``)."""

    name: str
    throughput: dict[str, float] | None
    sli_ms: dict[str, float] | None
    attempts: dict[str, int]
    exact_batch: dict[str, int]
    """Ours' exact-batch outcomes (``batch_scheduler_exact_batch_total``; kube: none)."""
    scheduled: int
    seconds: float
    cpu_s: float
    apiserver_cpu_s: float
    created: int
    """Pods the runner created while collecting (their creation competes with the run)."""
    create_s: float
    """Seconds those creates took, first to last (the pace the scheduler was fed at)."""


@dataclass
class SchedulerProbe:
    """What the executor reads of the scheduler and the control plane, and the one op that
    needs kube's own code (the DRA allocator)."""

    scrape: Callable[[], Awaitable[str]]
    cpu_seconds: Callable[[], float]
    apiserver_cpu_seconds: Callable[[], float]
    allocate_claims: Callable[[str], Awaitable[None]]
    """kube's allocResourceClaims for a namespace (bench/draalloc, kube's allocator)."""


@dataclass
class _Collection:
    name: str
    throughput: ThroughputCollector
    before: Metrics
    cpu0: float
    apiserver_cpu0: float
    created: int = 0
    create_s: float = 0.0


@dataclass
class Executor:
    api: Api
    watch: PodWatch
    probe: SchedulerProbe
    scheduler_name: str
    wait_timeout: float = WAIT_TIMEOUT
    rng: random.Random = field(default_factory=random.Random)
    namespaces: dict[str, int] = field(default_factory=dict)
    """kube's ``numPodsScheduledPerNamespace``: namespace → pods a barrier waits for."""
    measurements: list[Measurement] = field(default_factory=list)
    next_node_index: int = 0
    _collection: _Collection | None = None
    _background: set[asyncio.Task[None]] = field(default_factory=set)

    async def run(self, workload_ops: Sequence[ops.Op]) -> None:
        for index, op in enumerate(workload_ops):
            for task in self._background:
                if task.done() and not task.cancelled() and task.exception():
                    raise WorkloadError(f"background op: {task.exception()}")
            try:
                await self._run(index, op)
            except (ApiError, objects.ObjectError, ops.OpError, TimeoutError) as exc:
                raise WorkloadError(f"op {index} ({type(op).__name__}): {exc}") from exc

    async def close(self) -> None:
        """Stop what runs in the background (churn, deletions): the workload is over."""
        for task in self._background:
            task.cancel()
        for task in self._background:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        if self._collection is not None:
            await self._collection.throughput.stop()

    def _spawn(self, coro: Coroutine[Any, Any, None]) -> None:
        self._background.add(asyncio.create_task(coro))

    async def _run(self, index: int, op: ops.Op) -> None:
        if isinstance(op, ops.CreateNodes):
            await self._create_nodes(index, op)
        elif isinstance(op, ops.CreateNamespaces):
            await self._create_namespaces(op)
        elif isinstance(op, ops.CreatePods):
            await self._create_pods(index, op)
        elif isinstance(op, ops.Barrier):
            await self._barrier(op)
        elif isinstance(op, ops.CreateAny):
            await self._ensure_namespace(op.namespace)
            for i in range(op.count):
                env = {**op.template_params, "Index": i, "Count": op.count}
                await self._create_any(objects.render(op.template, env), op.namespace)
        elif isinstance(op, ops.UpdateAny):
            await self._ensure_namespace(op.namespace)
            await self._update_any(op)
        elif isinstance(op, ops.CreatePodGroups):
            await self._create_pod_groups(op)
        elif isinstance(op, ops.CreateResourceClaims):
            await self._ensure_namespace(op.namespace)
            claim = objects.read_static(op.template)
            path = f"/apis/resource.k8s.io/v1/namespaces/{op.namespace}/resourceclaims"
            await parallel(op.count, CREATE_WORKERS, lambda _: self.api.create(path, claim))
        elif isinstance(op, ops.DeletePods):
            run = delete_pods(self.api, self.watch, op)
            if op.skip_wait:
                self._spawn(run)
            else:
                await run
        elif isinstance(op, ops.Churn):
            namespace = op.namespace or f"namespace-{index}"
            await self.api.create("/api/v1/namespaces", _namespace(namespace), ok=(409,))
            self._spawn(churn_loop(self.api, op, namespace, self.scheduler_name))
        elif isinstance(op, ops.Sleep):
            await asyncio.sleep(op.duration_s)
        elif isinstance(op, ops.StartCollectingMetrics):
            await self._start_collecting(op.name, op.namespaces, op.label_selector)
        elif isinstance(op, ops.StopCollectingMetrics):
            await self._stop_collecting()
        elif isinstance(op, ops.AllocResourceClaims):
            await self.probe.allocate_claims(op.namespace)
        # CollectingProfile: a pprof of kube's test process; nothing to do here.

    # -- namespaces, nodes ------------------------------------------------------------------

    async def _ensure_namespace(self, namespace: str) -> None:
        """kube's ``createNamespaceIfNotPresent`` (one that exists already is fine)."""
        if namespace and namespace not in self.namespaces:
            await self.api.create("/api/v1/namespaces", _namespace(namespace), ok=(409,))
            self.namespaces[namespace] = 0

    async def _create_namespaces(self, op: ops.CreateNamespaces) -> None:
        base = objects.read_static(op.template) if op.template else {}
        for i in range(op.count):
            body = copy.deepcopy(base)
            body.update(apiVersion="v1", kind="Namespace")
            body.setdefault("metadata", {})["name"] = f"{op.prefix}-{i}"
            await self.api.create("/api/v1/namespaces", body, ok=(409,))
            self.namespaces.setdefault(f"{op.prefix}-{i}", 0)

    async def _create_nodes(self, index: int, op: ops.CreateNodes) -> None:
        async def create(i: int) -> None:
            # kube's PrepareNodes: up to 5 tries, each with a new random name suffix (five
            # characters of 27 collide now and then among thousands of nodes).
            for attempt in range(NODE_TRIES):
                node = objects.node(
                    op.node_template,
                    op.template_params,
                    index=i,
                    count=op.count,
                    prefix=f"node-{index}-",
                    rng=self.rng,
                )
                try:
                    await self.api.create("/api/v1/nodes", node)
                    return
                except ApiError as exc:
                    if exc.status != 409 or attempt == NODE_TRIES - 1:
                        raise

        await parallel(op.count, NODE_WORKERS, create)
        if op.allocatable or op.label_key or op.unique_label_key:
            names = [n["metadata"]["name"] for n in await self.api.list_all("/api/v1/nodes")]
            chosen = names[self.next_node_index : self.next_node_index + op.count]
            await parallel(len(chosen), NODE_WORKERS, lambda i: self._prepare(op, chosen[i], i))
        self.next_node_index += op.count

    async def _prepare(self, op: ops.CreateNodes, name: str, position: int) -> None:
        """kube's ``DoPrepareNode`` with the op's strategy (a merge patch, then CSINode)."""
        merge = "application/merge-patch+json"
        if op.label_key:
            value = op.label_values[position % len(op.label_values)]
            patch: dict[str, Any] = {"metadata": {"labels": {op.label_key: value}}}
        elif op.unique_label_key:
            patch = {"metadata": {"labels": {op.unique_label_key: str(uuid.uuid4())}}}
        else:
            assert op.allocatable is not None
            patch = {"status": {"allocatable": dict(op.allocatable.node_allocatable)}}
        await self.api.request("PATCH", f"/api/v1/nodes/{name}", patch, content_type=merge)
        if op.allocatable is None:
            return
        drivers = [
            {"name": driver, "allocatable": dict(allocatable), "nodeID": name}
            for driver, allocatable in op.allocatable.csi_node_allocatable.items()
        ]
        annotation = {
            "storage.alpha.kubernetes.io/migrated-plugins": ",".join(
                op.allocatable.migrated_plugins
            )
        }
        body = {
            "apiVersion": "storage.k8s.io/v1",
            "kind": "CSINode",
            "metadata": {"name": name, "annotations": annotation},
            "spec": {"drivers": drivers},
        }
        await self.api.create("/apis/storage.k8s.io/v1/csinodes", body)

    # -- pods -------------------------------------------------------------------------------

    async def _create_pods(self, index: int, op: ops.CreatePods) -> None:
        namespace = op.namespace or f"namespace-{index}"
        await self._ensure_namespace(namespace)
        if op.collect_metrics:
            await self._start_collecting(namespace, (namespace,), {})
        if op.steady_state:
            await steady_state(
                self.api,
                self.watch,
                op,
                namespace,
                lambda i, n: self._create_pod(op, namespace, i, n),
            )
        else:
            began = time.monotonic()
            await parallel(
                op.count, CREATE_WORKERS, lambda i: self._create_pod(op, namespace, i, op.count)
            )
            if self._collection is not None:
                self._collection.created += op.count
                self._collection.create_s += time.monotonic() - began
            if op.skip_wait:
                self.namespaces[namespace] = self.namespaces.get(namespace, 0) + op.count
            else:
                await self._wait(namespace, {}, op.count, attempted=False)
        if op.collect_metrics:
            await self._stop_collecting()

    async def _create_pod(self, op: ops.CreatePods, namespace: str, i: int, count: int) -> None:
        pod = objects.pod(
            op.pod_template,
            op.template_params,
            index=i,
            count=count,
            batch_size=op.signature_batch_size,
            scheduler_name=self.scheduler_name,
        )
        if op.pvc_template is not None:
            claim, volume = objects.claim_and_volume(
                op.pvc_template, op.pv_template, index=i, namespace=namespace
            )
            claims = f"/api/v1/namespaces/{namespace}/persistentvolumeclaims"
            await self.api.create(claims, claim)
            await self.api.request("PUT", f"{claims}/{claim['metadata']['name']}/status", claim)
            await self.api.create("/api/v1/persistentvolumes", volume)
            name = volume["metadata"]["name"]
            await self.api.request("PUT", f"/api/v1/persistentvolumes/{name}/status", volume)
            objects.with_claim(pod, i)
        await self.api.create(f"/api/v1/namespaces/{namespace}/pods", pod)

    async def _barrier(self, op: ops.Barrier) -> None:
        unknown = [ns for ns in op.namespaces if ns not in self.namespaces]
        if unknown:
            raise WorkloadError(f"unknown namespace {unknown[0]}")
        namespaces = list(op.namespaces or self.namespaces)
        attempted = op.stage == "Attempted"
        for namespace in namespaces:
            want = self.namespaces[namespace]
            await self._wait(namespace, op.label_selector, want, attempted=attempted)
        if not attempted:
            for namespace in namespaces:
                self.namespaces.pop(namespace, None)

    async def _wait(
        self, namespace: str, selector: Mapping[str, str], want: int, *, attempted: bool
    ) -> None:
        """Poll every second until ``want`` pods are scheduled (or at least attempted)."""
        deadline = time.monotonic() + self.wait_timeout
        while True:
            scheduled, tried, untried = self.watch.counts(namespace, selector)
            have = scheduled + tried if attempted else scheduled
            if have >= want:
                return
            if time.monotonic() > deadline:
                what = "attempted" if attempted else "scheduled"
                raise WorkloadError(
                    f"namespace {namespace}: {have} of {want} pods {what} after "
                    f"{self.wait_timeout:.0f} s ({tried} attempted, {untried} unattempted)"
                )
            await asyncio.sleep(POLL)

    # -- any kind ---------------------------------------------------------------------------

    async def _create_any(self, obj: dict[str, Any], namespace: str) -> None:
        """kube's ``createAny.create``: retried for 20 s (a CRD may not be served yet)."""
        obj = objects.own_pods(obj, self.scheduler_name)
        deadline = time.monotonic() + 20
        while True:
            try:
                resource = await self.api.resource(str(obj.get("apiVersion")), str(obj["kind"]))
                path = resource.collection(namespace)
                await self.api.request("POST", path, obj, params={"fieldValidation": "Strict"})
                return
            except (ApiError, ValueError) as exc:
                if time.monotonic() > deadline:
                    raise WorkloadError(f"creating {obj.get('kind')}: {exc}") from exc
            await asyncio.sleep(1)

    async def _update_any(self, op: ops.UpdateAny) -> None:
        """kube's ``updateAny``: PUT the object (or its subresources), then its status."""
        interval = 1 / op.update_per_second if op.update_per_second else 0.0
        started = time.monotonic()
        for i in range(op.count):
            if interval:
                await asyncio.sleep(max(0.0, started + (i + 1) * interval - time.monotonic()))
            obj = objects.own_pods(
                objects.render(op.template, {"Index": i, "Count": op.count}), self.scheduler_name
            )
            resource = await self.api.resource(str(obj.get("apiVersion")), str(obj["kind"]))
            path = f"{resource.collection(op.namespace)}/{obj['metadata']['name']}"
            strict = {"fieldValidation": "Strict"}
            for sub in op.subresources or ("",):
                target = f"{path}/{sub}" if sub else path
                await self.api.request("PUT", target, obj, params=strict)
            await self.api.request("PUT", f"{path}/status", obj, params=strict)

    async def _create_pod_groups(self, op: ops.CreatePodGroups) -> None:
        await self._ensure_namespace(op.namespace)
        path = f"/apis/scheduling.k8s.io/v1beta1/namespaces/{op.namespace}/podgroups"
        for i in range(op.count):
            group = objects.render(op.template, {**op.template_params, "Index": i})
            # kube decodes into the v1beta1 type and creates through its typed client.
            group.update(apiVersion="scheduling.k8s.io/v1beta1", kind="PodGroup")
            await self.api.request("POST", path, group, params={"fieldValidation": "Strict"})
        deadline = time.monotonic() + 10
        while len(await self.api.list_all(path)) < op.count:
            if time.monotonic() > deadline:
                raise WorkloadError("timed out waiting for PodGroups to be cached")
            await asyncio.sleep(0.1)

    # -- metrics ----------------------------------------------------------------------------

    async def _start_collecting(
        self, name: str, namespaces: Sequence[str], selector: Mapping[str, str]
    ) -> None:
        if self._collection is not None:
            raise WorkloadError(
                "metrics collection is overlapping. Probably second collector was started "
                "before stopping a previous one"
            )
        before = parse_metrics(await self.probe.scrape())
        collector = ThroughputCollector(self.watch, namespaces, selector, clock=time.monotonic)
        self._collection = _Collection(
            name, collector, before, self.probe.cpu_seconds(), self.probe.apiserver_cpu_seconds()
        )
        collector.start()

    async def _stop_collecting(self) -> None:
        collection = self._collection
        if collection is None:
            raise WorkloadError("missing startCollectingMetrics operation before stopping")
        self._collection = None
        throughput = await collection.throughput.stop()
        cpu = self.probe.cpu_seconds() - collection.cpu0
        apiserver_cpu = self.probe.apiserver_cpu_seconds() - collection.apiserver_cpu0
        after = parse_metrics(await self.probe.scrape())
        attempts = "scheduler_schedule_attempts_total"
        self.measurements.append(
            Measurement(
                name=collection.name,
                throughput=throughput,
                sli_ms=histogram_summary(collection.before, after, SLI_METRIC),
                attempts=counter_delta(collection.before, after, attempts, "result"),
                exact_batch=counter_delta(collection.before, after, EXACT_BATCH, "outcome"),
                scheduled=collection.throughput.scheduled,
                seconds=collection.throughput.stopped_at - collection.throughput.started_at,
                cpu_s=cpu,
                apiserver_cpu_s=apiserver_cpu,
                created=collection.created,
                create_s=collection.create_s,
            )
        )


def _namespace(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}
