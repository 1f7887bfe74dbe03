"""The scheduling loop: the one task that pops pods and runs cycles.

It waits until the caches are synced and this replica leads, then pops a run (the queue's
async boundary) and runs one cycle per pod, yielding to the event loop between pods so that
watch events and bind completions keep flowing during a long run; a pod group popped whole
gets one group cycle (cycle/schedule_group.py). The run pops each next pod only after that
yield, so a higher-priority pod that arrived meanwhile goes first (kube pops one pod per
cycle). When leadership is lost, the popped pod (or group) goes back to the queue and
nothing more is bound.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Protocol

from scheduler import logs
from scheduler.metrics.labels import QueueName
from scheduler.queueing.queued_group import QueuedPodGroupInfo

if TYPE_CHECKING:
    from scheduler.cycle.schedule_one import Scheduler

log = logs.get_logger(__name__)

FLUSH_INTERVAL = 1.0
"""Seconds between moves of expired backoff / long-unschedulable pods (kube: 1 s and 30 s)."""


class Gate(Protocol):
    """Something the loop waits for and checks (cache sync, leadership)."""

    def is_open(self) -> bool: ...

    async def wait_open(self) -> None: ...


class OpenGate:
    """Always open: no leader election, or caches already synced."""

    def is_open(self) -> bool:
        return True

    async def wait_open(self) -> None:
        return None


async def run_loop(scheduler: Scheduler, *, synced: Gate, leading: Gate) -> None:
    """Schedule forever (until cancelled)."""
    await synced.wait_open()
    log.info("scheduling_loop_started")
    queue = scheduler.queue
    metrics = scheduler.metrics
    while True:
        await leading.wait_open()
        run = await queue.pop()
        if isinstance(run, QueuedPodGroupInfo):
            if leading.is_open():
                scheduler.schedule_group(run)
            else:
                queue.put_back_group(run)
                log.warning("leadership_lost_requeued", pods=run.size)
            await asyncio.sleep(0)
            continue
        popped = 0
        for info in run:
            if not leading.is_open():
                queue.requeue_backoff(info)
                log.warning("leadership_lost_requeued", pods=1)
                break
            scheduler.schedule_one(info)
            popped += 1
            await asyncio.sleep(0)
        if popped:
            metrics.group_size.observe(popped)


async def run_flushes(scheduler: Scheduler, *, interval: float = FLUSH_INTERVAL) -> None:
    """Periodic queue flushes and gauges (until cancelled)."""
    reported: set[tuple[str, str]] = set()
    metrics, queue, cluster = scheduler.metrics, scheduler.queue, scheduler.cluster
    while True:
        await asyncio.sleep(interval)
        queue.flush()
        for pool, count in queue.pending().items():
            metrics.pending_pods.labels(queue=pool).set(count)
        metrics.pending_pods.labels(queue=QueueName.GATED).set(queue.gated())
        metrics.pending_pods.labels(queue=QueueName.INCOMPLETE).set(queue.incomplete())
        metrics.pending_pods.labels(queue=QueueName.PENDING).set(queue.pending_members())
        by_plugin = queue.unschedulable_by_plugin()
        for profile, plugin in reported - by_plugin.keys():
            metrics.unschedulable_pods.labels(plugin=plugin, profile=profile).set(0)
        for (profile, plugin), count in by_plugin.items():
            metrics.unschedulable_pods.labels(plugin=plugin, profile=profile).set(count)
        reported = set(by_plugin)
        metrics.cache_nodes.set(cluster.num_nodes)
        metrics.cache_pods.set(cluster.num_pods)
        metrics.cache_size.labels(type="nodes").set(cluster.num_nodes)
        metrics.cache_size.labels(type="pods").set(cluster.num_pods)
        metrics.cache_size.labels(type="assumed_pods").set(cluster.num_assumed)
        metrics.default_spreading_unsignable.set(scheduler.default_spreading_unsignable())
