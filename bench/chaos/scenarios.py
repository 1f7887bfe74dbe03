"""The faults of issue 37, each injected mid-burst into a running cluster.

A scenario names when its fault starts (``trigger``: a share of the burst's pods bound, a
share created, or the burst's start for a fault that lasts the whole burst) and a coroutine
that injects it and returns when the fault is over: that moment is the fault's end, from
which recovery (the last bind) is measured. What a fault does to the cluster (nodes and
pods deleted, with the resourceVersion each deletion had at most; compactions made; when
Services appeared) is noted in the run's :class:`Context` for the figures.

kube-apiserver v1.37 serves watches from its watch cache, which keeps the history etcd
compacts away: compaction alone gives a watcher 410 Gone only once that history leaves the
cache. ``etcd-compact`` therefore runs the API server with ``--watch-cache=false`` (every
watch and LIST goes to etcd, and a watch resumed below the compacted revision ends with
410). ``apiserver-429`` turns API Priority and Fairness off and sets the classic in-flight
limits low, so that excess requests are refused with 429 at once.

Neighbours: :mod:`bench.chaos.run` (calls them), :mod:`bench.chaos.workload` (objects).
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from bench.chaos import workload
from bench.chaos.workload import NAMESPACE

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from bench.chaos.fleet import Fleet
    from bench.chaos.watch import BindWatch
    from bench.scheduler_perf.api import Api
    from controlplane.launcher import ControlPlane

DOWN_SECONDS = 2.0
"""How long a killed component stays down before its restart."""
PAUSE_SECONDS = 15.0
COMPACT_EVERY = 5.0
COMPACT_FOR = 600.0
"""Compactions stop after this long even if some pod is never bound."""
DELETE_SHARE = 0.1
"""Of the nodes, and of the pods pending at the fault, deleted."""


@dataclass
class Context:
    """What a fault acts on, and what it leaves for the figures."""

    cp: ControlPlane
    api: Api
    fleet: Fleet
    watch: BindWatch
    nodes: int
    pods: int
    burst_done: asyncio.Event
    deleted_nodes: dict[str, int] = field(default_factory=dict)
    """Node → a resourceVersion read right after its DELETE returned (≥ its deletion's)."""
    deleted_pods: set[str] = field(default_factory=set)
    notes: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Scenario:
    name: str
    fault: str
    inject: Callable[[Context], Awaitable[None]]
    trigger: Literal["bound", "created", "start"] = "bound"
    share: float = 0.4
    """Of the burst's pods, bound (or created) when the fault starts."""
    apiserver_args: tuple[str, ...] = ()
    replicas: int = 1
    gang: bool = False
    """The pods are gang members whose PodGroups the fault creates."""


async def _restart(ctx: Context, component: str) -> None:
    ctx.cp.kill(component)
    await asyncio.sleep(DOWN_SECONDS)
    ctx.notes["restart_s"] = round(await asyncio.to_thread(ctx.cp.restart, component), 2)
    if component == "etcd":  # the API server is back when it answers ready again
        ready = ctx.cp.readiness["kube-apiserver"]
        while not await asyncio.to_thread(ready):  # noqa: ASYNC110 - an HTTP probe
            await asyncio.sleep(0.1)


async def apiserver_kill(ctx: Context) -> None:
    await _restart(ctx, "kube-apiserver")


async def etcd_kill(ctx: Context) -> None:
    await _restart(ctx, "etcd")


async def apiserver_pause(ctx: Context) -> None:
    ctx.cp.pause("kube-apiserver")
    try:
        await asyncio.sleep(PAUSE_SECONDS)
    finally:
        ctx.cp.resume("kube-apiserver")


async def etcd_compact(ctx: Context) -> None:
    """Compact every 5 s from the burst's start until every pod made is bound."""
    revisions = []
    while True:
        revisions.append(await asyncio.to_thread(ctx.cp.compact))
        if ctx.burst_done.is_set() and len(ctx.watch.binds) >= ctx.pods:
            break
        if len(revisions) * COMPACT_EVERY > COMPACT_FOR:
            break
        await asyncio.sleep(COMPACT_EVERY)
    ctx.notes["compactions"] = len(revisions)


async def burst_long(ctx: Context) -> None:
    """The fault is the API server's flags: it lasts the burst."""
    await ctx.burst_done.wait()


async def scheduler_kill(ctx: Context) -> None:
    await ctx.fleet.restart(await ctx.fleet.leader())


async def leader_kill(ctx: Context) -> None:
    """The leader SIGKILLed; the follower takes the Lease once it expires."""
    ctx.fleet.kill(await ctx.fleet.leader())


async def deletions(ctx: Context) -> None:
    """A tenth of the nodes and a tenth of the pods still pending, deleted at once."""
    victims = [
        workload.node_name(i) for i in range(ctx.nodes - int(ctx.nodes * DELETE_SHARE), ctx.nodes)
    ]
    pending = sorted(p.name for p in ctx.watch.pods.values() if not p.node_name)
    doomed = pending[: int(len(pending) * DELETE_SHARE)]

    async def node(name: str) -> None:
        await workload.delete_retrying(ctx.api, f"/api/v1/nodes/{name}")
        ctx.deleted_nodes[name] = await workload.resource_version(ctx.api, "/api/v1/nodes")

    async def pod(name: str) -> None:
        await workload.delete_retrying(ctx.api, f"{workload.PODS}/{name}")
        ctx.deleted_pods.add(name)

    await asyncio.gather(*(node(n) for n in victims), *(pod(p) for p in doomed))


async def service_race(ctx: Context) -> None:
    """A Service and a ReplicaSet for every app, after many of its pods are queued."""
    ctx.notes["services_at"] = time.monotonic()
    apps = sorted({workload.app(i * workload.APP_RUN) for i in range(workload.APPS)})
    await asyncio.gather(
        *(
            workload.create_retrying(
                ctx.api, f"/api/v1/namespaces/{NAMESPACE}/services", workload.service(a)
            )
            for a in apps
        ),
        *(
            workload.create_retrying(
                ctx.api,
                f"/apis/apps/v1/namespaces/{NAMESPACE}/replicasets",
                workload.replica_set(a),
            )
            for a in apps
        ),
    )


async def podgroups_late(ctx: Context) -> None:
    """Every gang's PodGroup, after half of the members exist."""
    gangs = -(-ctx.pods // workload.GANG_SIZE)
    await asyncio.gather(
        *(
            workload.create_retrying(ctx.api, workload.PODGROUPS, workload.pod_group(i))
            for i in range(gangs)
        )
    )


WATCH_CACHE_OFF = ("--watch-cache=false",)
LOW_INFLIGHT = (
    "--enable-priority-and-fairness=false",
    "--max-requests-inflight=10",
    "--max-mutating-requests-inflight=5",
)

SCENARIOS = {
    s.name: s
    for s in (
        Scenario("apiserver-kill", "kube-apiserver SIGKILL, restarted 2 s later", apiserver_kill),
        Scenario("etcd-kill", "etcd SIGKILL, restarted 2 s later", etcd_kill),
        Scenario("apiserver-pause", "kube-apiserver SIGSTOP for 15 s", apiserver_pause),
        Scenario(
            "etcd-compact",
            "etcd compacted every 5 s (API server --watch-cache=false)",
            etcd_compact,
            trigger="start",
            apiserver_args=WATCH_CACHE_OFF,
        ),
        Scenario(
            "apiserver-429",
            "--max-requests-inflight=10, mutating 5, APF off (429s)",
            burst_long,
            trigger="start",
            apiserver_args=LOW_INFLIGHT,
        ),
        Scenario(
            "scheduler-kill",
            "the scheduler SIGKILLed with binds in flight, restarted",
            scheduler_kill,
        ),
        Scenario("leader-kill", "two replicas, the leader SIGKILLed", leader_kill, replicas=2),
        Scenario("deletions", "10 % of nodes and 10 % of pending pods deleted", deletions),
        Scenario(
            "service-race",
            "a Service and a ReplicaSet per app created after its pods",
            service_race,
            trigger="created",
            share=0.5,
        ),
        Scenario(
            "podgroup-late",
            "PodGroups created after half of their members",
            podgroups_late,
            trigger="created",
            share=0.5,
            gang=True,
        ),
    )
}
