"""CacheSync against the emulator: the initial LIST, the Replace's removal rules, the safety net.

No watch runs here (no kopf), so an object changed in the emulator after the initial LIST
is exactly an event lost in a 410 gap: only a reconciling LIST can bring the cache back.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

import pytest

from scheduler.cycle.eventhandlers import EventHandlers
from scheduler.kube.controller.nodes import NodeEvents
from scheduler.kube.controller.pods import PodEvents
from scheduler.kube.controller.sync import LISTING_POLL, LISTING_QUIET, CacheSync, Synced
from scheduler.kube.kinds import Kind
from scheduler.kube.listing import Cause
from scheduler.metrics.registry import Metrics
from scheduler.model.parse_pod import pod_from_raw
from scheduler.sim.discovery import NODES, PODS
from tests.builders import make_node, make_pod
from tests.harness import scheduler_for
from tests.kube.kube_helpers import create_pod

if TYPE_CHECKING:
    from scheduler.cycle.schedule_one import Scheduler
    from scheduler.kube.client import ApiClient
    from scheduler.sim.server import SimServer

FAR = 10**9
"""A resourceVersion no LIST in these tests reaches: the object arrived after the LIST."""


def _sync(
    api: ApiClient, scheduler: Scheduler, metrics: Metrics | None = None, interval: float = 60.0
) -> CacheSync:
    handlers = EventHandlers(scheduler)
    return CacheSync(
        api,
        pods=PodEvents(handlers, metrics=scheduler.metrics, reporter=scheduler.reporter),
        nodes=NodeEvents(handlers, metrics=scheduler.metrics),
        synced=Synced(),
        interval=interval,
        metrics=metrics or scheduler.metrics,
    )


def _versioned(raw: dict[str, Any], version: str) -> dict[str, Any]:
    raw["metadata"]["resourceVersion"] = version
    return raw


async def test_replace_drops_an_assumed_pod_deleted_during_a_gap(
    sim: SimServer, api: ApiClient
) -> None:
    """Assumptions never expire, so a deleted assumed pod must leave by the Replace."""
    scheduler, _, _ = scheduler_for([], auto_bind=False)
    sync = _sync(api, scheduler)
    gone = await create_pod(api, "gone", cpu="1")
    kept = await create_pod(api, "kept", cpu="1")
    await sync.initial()
    assert not sync.synced.is_open()  # not before the watch delivered its own listing
    assert scheduler.cluster.num_nodes == 3
    node = "node-0"
    for pod in (gone, kept):
        scheduler.queue.delete(pod.uid)
        scheduler.cluster.assume(pod, node)
    info = scheduler.cluster.node_info(node)
    assert info is not None
    assert info.requested.milli_cpu == 2000

    sim.run_sync(lambda: sim.store.delete(PODS, "default", "gone"))  # DELETED "lost"
    assert await sync.replace(Kind.NODES, cause=Cause.LISTED) == 0
    assert await sync.replace(Kind.PODS, cause=Cause.LISTED) == 1

    assert not scheduler.cluster.is_assumed(gone.uid)
    assert scheduler.cluster.get_pod(gone.uid) is None
    assert scheduler.cluster.is_assumed(kept.uid)  # still in the API: its bind decides
    assert info.requested.milli_cpu == 1000


@pytest.mark.parametrize(
    ("kind", "version", "removed"),
    [
        pytest.param("node", "1", True, id="node-older-than-the-list-is-removed"),
        pytest.param("node", str(FAR), False, id="node-newer-than-the-list-stays"),
        pytest.param("node", "v7", False, id="node-with-a-non-numeric-version-stays"),
        pytest.param("assigned", "1", True, id="assigned-pod-older-than-the-list-is-removed"),
        pytest.param("assigned", str(FAR), False, id="assigned-pod-newer-than-the-list-stays"),
        pytest.param("pending", "1", True, id="queued-pod-older-than-the-list-is-dequeued"),
        pytest.param("pending", str(FAR), False, id="queued-pod-newer-than-the-list-stays"),
        pytest.param("assumed", "1", True, id="assumed-pod-older-than-the-list-is-removed"),
        pytest.param("assumed", str(FAR), False, id="assumed-pod-newer-than-the-list-stays"),
    ],
)
async def test_replace_removes_what_its_list_lacks_unless_newer(
    sim: SimServer, api: ApiClient, kind: str, version: str, removed: bool
) -> None:
    """An object absent from the LIST goes unless its version postdates the LIST's."""
    scheduler, _, _ = scheduler_for([], auto_bind=False)
    sync = _sync(api, scheduler)
    await sync.initial()
    cluster, queue = scheduler.cluster, scheduler.queue
    if kind == "node":
        sync.nodes.apply("ADDED", _versioned(make_node("absent"), version))
        assert await sync.replace(Kind.NODES, cause=Cause.LISTED) == int(removed)
        assert ("absent" in cluster.node_names()) is not removed
        return
    raw = _versioned(make_pod("absent", cpu="1", node_name="node-0"), version)
    if kind != "assigned":
        del raw["spec"]["nodeName"]
    sync.pods.apply("ADDED", raw)
    uid = raw["metadata"]["uid"]
    if kind == "assumed":
        queue.delete(uid)  # popped by the cycle, then assumed
        cluster.assume(pod_from_raw(raw), "node-1")

    def held() -> bool:
        if kind == "assigned":
            return cluster.get_pod(uid) is not None
        if kind == "pending":
            return queue.get(uid) is not None
        return cluster.is_assumed(uid)

    assert held()
    assert await sync.replace(Kind.PODS, cause=Cause.WATCH_RESTART) == int(removed)
    assert held() is not removed


async def test_the_safety_net_counts_only_what_the_watch_missed(
    sim: SimServer, api: ApiClient
) -> None:
    """A LIST ahead of a late watch is no repair: only what is still cached, unchanged,
    after the grace is removed and counted in batch_scheduler_cache_repairs_total."""
    scheduler, _, _ = scheduler_for([], auto_bind=False)
    metrics = Metrics()
    sync = _sync(api, scheduler, metrics)
    await sync.initial()
    late = sim.run_sync(lambda: sim.store.get(NODES, "", "node-1").obj)
    for name in ("node-1", "node-2"):

        def delete(name: str = name) -> object:
            return sim.store.delete(NODES, "", name)

        sim.run_sync(delete)

    suspects = await sync.suspects()
    assert set(suspects[Kind.NODES]) == {"node-1", "node-2"}
    assert suspects[Kind.PODS] == {}
    sync.nodes.apply("DELETED", late)  # the watch was only late for this one

    assert sync.remove_stale(suspects) == {Kind.NODES: 1, Kind.PODS: 0}
    assert scheduler.cluster.node_names() == {"node-0"}
    repairs = metrics.registry.get_sample_value
    assert repairs("batch_scheduler_cache_repairs_total", {"kind": "node"}) == 1
    assert repairs("batch_scheduler_cache_repairs_total", {"kind": "pod"}) is None


async def test_the_safety_net_keeps_a_suspect_the_watch_brought_back(
    sim: SimServer, api: ApiClient
) -> None:
    """A node deleted and re-created between the LIST and the check has a new version."""
    scheduler, _, _ = scheduler_for([], auto_bind=False)
    sync = _sync(api, scheduler, Metrics())
    await sync.initial()
    sim.run_sync(lambda: sim.store.delete(NODES, "", "node-2"))
    suspects = await sync.suspects()
    sync.nodes.apply("ADDED", _versioned(make_node("node-2"), str(FAR)))
    assert sync.remove_stale(suspects) == {Kind.NODES: 0, Kind.PODS: 0}
    assert "node-2" in scheduler.cluster.node_names()


async def test_the_gate_opens_when_the_watch_listing_is_delivered_or_quiet(
    sim: SimServer, api: ApiClient
) -> None:
    """Synced needs kopf's listing: all of it, or a quiet LISTING_QUIET after the last."""
    scheduler, _, _ = scheduler_for([])
    sync = _sync(api, scheduler, interval=0)
    await create_pod(api, "listed", cpu="1")
    await sync.initial()
    assert sync.expected == {"nodes": 3, "pods": 1}
    now = [0.0]
    waiting = asyncio.create_task(sync.wait_for_watch_listing(lambda: now[0]))
    for _ in range(3):
        sync.watch_listed("nodes")
    await asyncio.sleep(LISTING_POLL * 3)
    assert not sync.synced.is_open()  # the pod is not delivered yet
    sync.watch_listed("pods")
    await asyncio.wait_for(waiting, 1.0)
    assert sync.synced.is_open()

    quiet = _sync(api, scheduler, interval=0)
    await quiet.initial()
    quiet.watch_listed("nodes")  # the rest never comes (deleted between the two LISTs)
    waiting = asyncio.create_task(quiet.wait_for_watch_listing(lambda: now[0]))
    await asyncio.sleep(LISTING_POLL * 3)
    assert not quiet.synced.is_open()
    now[0] += LISTING_QUIET
    await asyncio.wait_for(waiting, 1.0)
    assert quiet.synced.is_open()
