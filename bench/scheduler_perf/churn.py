"""The ops that keep the API server busy while the scheduler works (``executor.go``):

* ``churn``: every ``intervalMilliseconds``, each template's object (read as is, no
  templating) is created; in ``recreate`` mode a ring of ``number`` slots per template
  alternates creating into an empty slot and deleting what a slot holds; in ``create``
  mode objects are only created, up to ``number`` rounds (0: no limit). Runs until the
  workload ends.
* ``deletePods``: the namespace's pods matching the selector (as the pod watch lists them
  when the op starts), one per ``1 / deletePodsPerSecond`` seconds, or one DELETE of the
  collection.
* ``createPods`` with ``steadyState``: the backlog of ``count`` pods, then each pod seen
  scheduled is deleted (grace 0) and one more created (index 0 of 1, as kube's strategy
  call with count 1 makes it), one at a time, until ``duration`` has passed since the op
  began; no pod scheduled at all is an error.

Neighbours: :mod:`bench.scheduler_perf.executor` starts these.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import time
from typing import TYPE_CHECKING, Any

from bench.scheduler_perf import objects
from bench.scheduler_perf.api import CREATE_WORKERS, ApiError, parallel
from bench.scheduler_perf.podwatch import became_scheduled

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from bench.scheduler_perf import ops
    from bench.scheduler_perf.api import Api
    from bench.scheduler_perf.podwatch import PodInfo, PodWatch


async def churn_loop(api: Api, op: ops.Churn, namespace: str, scheduler_name: str) -> None:
    bodies = [
        objects.own_pods(copy.deepcopy(objects.read_static(t)), scheduler_name)
        for t in op.templates
    ]
    resources = [await api.resource(str(b.get("apiVersion")), str(b["kind"])) for b in bodies]
    paths = [r.collection(namespace if r.namespaced else "") for r in resources]
    slots: list[list[str]] = [[""] * max(op.number, 1) for _ in bodies]
    interval = op.interval_ms / 1000
    rounds = 0
    start = time.monotonic()
    while op.mode == "recreate" or op.number == 0 or rounds < op.number:
        await asyncio.sleep(max(0.0, start + (rounds + 1) * interval - time.monotonic()))
        for i, body in enumerate(bodies):
            if op.mode == "create":
                await _create(api, paths[i], body)
                continue
            slot = rounds % op.number
            held = slots[i][slot]
            if held:
                with contextlib.suppress(ApiError):
                    await api.request("DELETE", f"{paths[i]}/{held}")
                slots[i][slot] = ""
            else:
                slots[i][slot] = await _create(api, paths[i], body)
        rounds += 1


async def _create(api: Api, path: str, body: dict[str, Any]) -> str:
    """The created object's name; "" when the create failed (kube ignores that too)."""
    try:
        made = await api.create(path, body)
    except ApiError:
        return ""
    return str(made.get("metadata", {}).get("name", ""))


async def delete_pods(api: Api, watch: PodWatch, op: ops.DeletePods) -> None:
    path = f"/api/v1/namespaces/{op.namespace}/pods"
    if not op.per_second:
        selector = ",".join(f"{k}={v}" for k, v in op.label_selector.items())
        await api.request("DELETE", path, params={"labelSelector": selector} if selector else None)
        return
    names = [p.name for p in watch.select({op.namespace}, op.label_selector)]
    start = time.monotonic()
    for i, name in enumerate(names):
        await asyncio.sleep(max(0.0, start + (i + 1) / op.per_second - time.monotonic()))
        with contextlib.suppress(ApiError):
            await api.request("DELETE", f"{path}/{name}")


async def steady_state(
    api: Api,
    watch: PodWatch,
    op: ops.CreatePods,
    namespace: str,
    create: Callable[[int, int], Awaitable[None]],
) -> None:
    deadline = time.monotonic() + op.duration_s
    scheduled: asyncio.Queue[PodInfo] = asyncio.Queue()

    def on_pod(old: PodInfo | None, new: PodInfo) -> None:
        if new.namespace == namespace and became_scheduled(old, new):
            scheduled.put_nowait(new)

    remove = watch.add_handler(on_pod)
    seen = 0
    try:
        await _within(deadline, _backlog(op.count, create))
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                break
            try:
                pod = await asyncio.wait_for(scheduled.get(), left)
            except TimeoutError:
                break
            seen += 1
            body = {"gracePeriodSeconds": 0, "propagationPolicy": "Background"}
            with contextlib.suppress(ApiError):
                await api.request("DELETE", f"/api/v1/namespaces/{namespace}/pods/{pod.name}", body)
            await _within(deadline, create(0, 1))
    finally:
        remove()
    if seen == 0:
        raise RuntimeError(
            "no pod at all got scheduled, either because of a problem or because the test "
            "interval was too small"
        )


async def _backlog(count: int, create: Callable[[int, int], Awaitable[None]]) -> None:
    await parallel(count, CREATE_WORKERS, lambda i: create(i, count))


async def _within(deadline: float, work: Awaitable[None]) -> None:
    """``work`` unless the duration ends first (kube's context deadline)."""
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(work, max(0.0, deadline - time.monotonic()))
