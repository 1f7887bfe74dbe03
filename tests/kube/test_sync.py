"""CacheSync against the emulator: the initial LIST, and a reconcile after lost events.

No watch runs here (no kopf), so an object changed in the emulator after the initial LIST
is exactly an event lost in a 410 gap: only the reconcile can bring the cache back.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from scheduler.kube.controller.nodes import NodeEvents
from scheduler.kube.controller.pods import PodEvents
from scheduler.kube.controller.sync import LISTING_POLL, LISTING_QUIET, CacheSync, Synced
from scheduler.sim.discovery import PODS
from tests.harness import scheduler_for
from tests.kube.kube_helpers import create_pod

if TYPE_CHECKING:
    from scheduler.kube.client import ApiClient
    from scheduler.sim.server import SimServer


async def test_reconcile_drops_an_assumed_pod_deleted_during_a_gap(
    sim: SimServer, api: ApiClient
) -> None:
    """Assumptions never expire, so a deleted assumed pod must leave by reconcile."""
    scheduler, _, _ = scheduler_for([], auto_bind=False)
    pods, nodes = PodEvents(scheduler), NodeEvents(scheduler)
    sync = CacheSync(api, pods=pods, nodes=nodes, synced=Synced(), interval=60.0)
    gone = await create_pod(api, "gone", cpu="1")
    kept = await create_pod(api, "kept", cpu="1")
    await sync.initial()
    assert not sync.synced.is_open()  # not before the watch delivered its own listing
    assert scheduler.cluster.num_nodes == 3
    node = "node-0"
    for pod in (gone, kept):
        scheduler.cluster.assume(pod, node)
    info = scheduler.cluster.node_info(node)
    assert info is not None
    assert info.requested.milli_cpu == 2000

    sim.store.delete(PODS, "default", "gone")  # its DELETED event is "lost"
    assert await sync.reconcile() == (0, 1)

    assert not scheduler.cluster.is_assumed(gone.uid)
    assert scheduler.cluster.get_pod(gone.uid) is None
    assert scheduler.cluster.is_assumed(kept.uid)  # still in the API: its bind decides
    assert info.requested.milli_cpu == 1000


async def test_the_gate_opens_when_the_watch_listing_is_delivered_or_quiet(
    sim: SimServer, api: ApiClient
) -> None:
    """Synced needs kopf's listing: all of it, or a quiet LISTING_QUIET after the last."""
    scheduler, _, _ = scheduler_for([])
    sync = CacheSync(
        api, pods=PodEvents(scheduler), nodes=NodeEvents(scheduler), synced=Synced(), interval=0
    )
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

    quiet = CacheSync(
        api, pods=PodEvents(scheduler), nodes=NodeEvents(scheduler), synced=Synced(), interval=0
    )
    await quiet.initial()
    quiet.watch_listed("nodes")  # the rest never comes (deleted between the two LISTs)
    waiting = asyncio.create_task(quiet.wait_for_watch_listing(lambda: now[0]))
    await asyncio.sleep(LISTING_POLL * 3)
    assert not quiet.synced.is_open()
    now[0] += LISTING_QUIET
    await asyncio.wait_for(waiting, 1.0)
    assert quiet.synced.is_open()
