"""CacheSync against the emulator: the initial LIST, and a reconcile after lost events.

No watch runs here (no kopf), so an object changed in the emulator after the initial LIST
is exactly an event lost in a 410 gap: only the reconcile can bring the cache back.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scheduler.kube.controller.nodes import NodeEvents
from scheduler.kube.controller.pods import PodEvents
from scheduler.kube.controller.sync import CacheSync, Synced
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
    assert sync.synced.is_open()
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
