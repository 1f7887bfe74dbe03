"""The watch side of the scheduler: an explicit kopf registry and the kopf operator run.

:class:`Controller` owns the pod and node event appliers (``pods``, ``nodes``), the cache
sync (``sync``) and one ``kopf.OperatorRegistry`` holding exactly:

* ``on.login``: credentials from our :class:`~scheduler.kube.client.ApiClient`, so kopf and
  our own requests authenticate the same way (kubeconfig, exec plugins, in-cluster);
* ``on.event`` for ``v1/pods`` and ``v1/nodes``: raw events straight into the appliers.

Only ``on.event`` handlers are used: kopf's change-detecting handlers (create/update/delete,
timers, daemons) write finalizers and annotations onto the objects they handle, and pods and
nodes are not ours to write. The handlers are ``async`` although they never await: kopf runs
sync handlers in a thread pool, and the cache and queue are single-threaded by design.

:meth:`Controller.run` does the initial LIST first, then runs kopf (clusterwide,
standalone: peering is not leader election) beside the re-list handling (``relist``: a
Replace after every listing of kopf's, including the one after a 410) and the periodic
safety net, until :meth:`Controller.stop`; the ``synced`` gate opens once kopf has
delivered its own listing (``sync``). kopf installs SIGINT/SIGTERM handlers of its own
when it runs in the main thread; ``ready`` is set once it has, so the composition root can
put its handlers back (``app.runtime``).

Neighbours: ``settings`` (kopf settings), ``kube.client`` (credentials, LISTs); the binder,
reporter and leader are siblings this package never imports (an import contract).
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import TYPE_CHECKING, Any

import kopf

from scheduler import logs
from scheduler.kube.controller.nodes import NodeEvents
from scheduler.kube.controller.pods import PodEvents
from scheduler.kube.controller.relist import Relists, WatchRestarts
from scheduler.kube.controller.settings import ControllerOptions, operator_settings
from scheduler.kube.controller.sync import CacheSync, Kind, Synced

if TYPE_CHECKING:
    from scheduler.cycle.ports import Reporter
    from scheduler.cycle.schedule_one import Scheduler
    from scheduler.kube.client import ApiClient
    from scheduler.metrics import Metrics

log = logs.get_logger(__name__)


def build_registry(
    client: ApiClient,
    *,
    pods: PodEvents,
    nodes: NodeEvents,
    sync: CacheSync,
    relists: Relists,
) -> kopf.OperatorRegistry:
    """A fresh registry with our login and event handlers (nothing registers at import)."""
    registry = kopf.OperatorRegistry()

    @kopf.on.login(registry=registry)
    async def login(**_: Any) -> kopf.ConnectionInfo:
        return client.credentials().as_kopf()

    @kopf.on.event("v1", "pods", registry=registry)
    async def pod_event(event: kopf.RawEvent, **_: Any) -> None:
        kind = event.get("type")
        pods.apply(kind, event["object"])
        if kind is None:  # listed, not watched: kopf (re-)listed pods
            sync.watch_listed("pods")
            relists.listed(Kind.PODS)

    @kopf.on.event("v1", "nodes", registry=registry)
    async def node_event(event: kopf.RawEvent, **_: Any) -> None:
        kind = event.get("type")
        nodes.apply(kind, event["object"])
        if kind is None:
            sync.watch_listed("nodes")
            relists.listed(Kind.NODES)

    return registry


class Controller:
    """Keeps one Scheduler's cache and queue in step with the cluster."""

    def __init__(
        self,
        scheduler: Scheduler,
        client: ApiClient,
        *,
        metrics: Metrics | None = None,
        reporter: Reporter | None = None,
        options: ControllerOptions | None = None,
    ) -> None:
        self.options = options or ControllerOptions()
        self.client = client
        self.synced = Synced()
        """Opens when the initial LIST is in the cache (the loop and /readyz wait on it)."""
        self.ready = asyncio.Event()
        """Set when kopf is up (and has installed its signal handlers)."""
        self.pods = PodEvents(scheduler, metrics=metrics, reporter=reporter)
        self.nodes = NodeEvents(scheduler, metrics=metrics)
        self.sync = CacheSync(
            client,
            pods=self.pods,
            nodes=self.nodes,
            synced=self.synced,
            interval=self.options.resync_interval,
            metrics=metrics,
        )
        self.relists = Relists(self.sync.replace)
        """Runs kube's Replace soon after kopf (re-)listed a kind (``relist``)."""
        self.registry = build_registry(
            client, pods=self.pods, nodes=self.nodes, sync=self.sync, relists=self.relists
        )
        self._stop = asyncio.Event()

    def stop(self) -> None:
        """Ask :meth:`run` to return: kopf closes its watches and exits."""
        self._stop.set()

    async def run(self) -> None:
        """Initial sync, then kopf and the reconcile until :meth:`stop`."""
        sync = asyncio.create_task(self.sync.initial(), name="initial-sync")
        stop = asyncio.create_task(self._stop.wait(), name="controller-stop")
        await asyncio.wait({sync, stop}, return_when=asyncio.FIRST_COMPLETED)
        if not sync.done():  # stopped before the cluster answered
            sync.cancel()
            await asyncio.wait({sync, stop})
            stop.cancel()
            return
        stop.cancel()
        sync.result()
        loop = asyncio.get_running_loop()

        def restarted(kind: Kind) -> None:  # from kopf's logging: hop onto our loop
            with contextlib.suppress(RuntimeError):  # the loop is closing
                loop.call_soon_threadsafe(self.relists.restarted, kind)

        restarts = WatchRestarts(restarted)
        restarts.install()
        try:
            async with asyncio.TaskGroup() as tg:
                tasks = [
                    tg.create_task(self.sync.repair_forever(), name="cache-repair"),
                    # One per kind, created here: kopf cancels tasks created after its
                    # start only after waiting 5 s for them (``Relists.serve``).
                    *(tg.create_task(self.relists.serve(k), name=f"relist-{k}") for k in Kind),
                    tg.create_task(
                        self.sync.wait_for_watch_listing(loop.time), name="watch-listing"
                    ),
                ]
                await kopf.operator(
                    registry=self.registry,
                    settings=operator_settings(self.options),
                    memo=kopf.Memo(),
                    clusterwide=True,
                    standalone=True,
                    stop_flag=self._stop,
                    ready_flag=self.ready,
                )
                for task in tasks:
                    task.cancel()
        finally:
            restarts.uninstall()
        log.info("controller_stopped")
