"""The watch side of the scheduler: the hot kinds' informers beside the kopf operator.

:class:`Controller` owns one event applier per cached kind (``pods``, ``nodes``, and
``objects`` for namespaces, services, controllers, storage and budgets: the table is
``kube.kinds.Kind``), the cache sync (``sync``), the typed informers of pods and nodes
(``kube.intake``: one reflector each, the appliers behind a cheap peek) and one
``kopf.OperatorRegistry`` holding exactly:

* ``on.login``: credentials from our :class:`~scheduler.kube.client.ApiClient`, so kopf and
  our own requests authenticate the same way (kubeconfig, exec plugins, in-cluster);
* ``on.event`` for every other ``Kind`` (``v1/services``, ``apps/v1/replicasets``, …): raw
  events straight into that kind's applier. kopf's per-event cost (about 400 µs) is
  nothing at their rates; at a pod's two to four events it was most of our CPU per pod
  (docs/performance.md, "intake").

Only ``on.event`` handlers are used: kopf's change-detecting handlers (create/update/delete,
timers, daemons) write finalizers and annotations onto the objects they handle, and none of
these objects is ours to write. The handlers are ``async`` although they never await: kopf runs
sync handlers in a thread pool, and the cache and queue are single-threaded by design.

:meth:`Controller.run` does the initial LIST first (the informers' own, for pods and
nodes, which they then watch from), then runs the informers and kopf (clusterwide,
standalone: peering is not leader election) beside kopf's re-list handling (``relist``: a
Replace after every listing of kopf's, including the one after a 410) and the periodic
safety net, until :meth:`Controller.stop`; the ``synced`` gate opens once kopf has
delivered its own listing (``sync``); one log line then says how many queued pods default
topology spreading keeps from batching (``default_spreading_unsignable``). kopf installs
SIGINT/SIGTERM handlers of its own when it runs in the main thread; ``ready`` is set once
it has, so the composition root can put its handlers back (``app.runtime``). While kopf
runs, its request retries are our rate-limited lines, not its error records
(``kopf_retries``).

Neighbours: ``settings`` (kopf settings), ``kube.client`` (credentials, LISTs),
``kube.intake`` (the informers this runs; they import nothing of this package); the
binder, reporter, preemption, leader and volume binder are siblings this package never
imports (import contracts).
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import TYPE_CHECKING, Any

import kopf

from scheduler import logs
from scheduler.kube import errors
from scheduler.kube.controller.kopf_retries import KopfRetries
from scheduler.kube.controller.nodes import NodeEvents
from scheduler.kube.controller.objects import PARSERS, ObjectEvents
from scheduler.kube.controller.pods import PodEvents
from scheduler.kube.controller.relist import Relists, WatchRestarts
from scheduler.kube.controller.settings import ControllerOptions, operator_settings
from scheduler.kube.controller.sync import Applier, CacheSync, Synced
from scheduler.kube.intake.appliers import NodeIntake, PodIntake
from scheduler.kube.intake.objects import ObjectIntake
from scheduler.kube.intake.reflector import Reflector
from scheduler.kube.kinds import INFORMED, OPTIONAL, Kind
from scheduler.logs import foreign

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Collection

    from scheduler.cycle.eventhandlers import EventHandlers
    from scheduler.cycle.ports import Reporter
    from scheduler.framework.feature_gates import FeatureGates
    from scheduler.kube.client import ApiClient
    from scheduler.metrics.registry import Metrics

log = logs.get_logger(__name__)


def default_kinds() -> frozenset[Kind]:
    """The kinds kept without a feature gate or an optional CRD."""
    return frozenset(kind for kind in Kind if not kind.gate and kind not in OPTIONAL)


async def watched_kinds(client: ApiClient, gates: FeatureGates) -> frozenset[Kind]:
    """The kinds this run keeps: the defaults, those whose feature gate is on, and of those
    an optional custom resource only when the API server serves its group and version
    (asked once, at start: Coscheduling's CRD installed later needs a restart)."""
    kinds = set(default_kinds())
    for kind in Kind:
        if not kind.gate or not gates.enabled(kind.gate):
            continue
        if kind in OPTIONAL and not await _served(client, kind):
            continue
        kinds.add(kind)
    return frozenset(kinds)


async def _served(client: ApiClient, kind: Kind) -> bool:
    try:
        resources = await client.request("GET", f"/apis/{kind.api_version}")
    except errors.ApiError:
        return False  # 404: not installed; anything else: not usable now either
    listed = resources.get("resources")
    return isinstance(listed, list) and any(
        isinstance(item, dict) and item.get("name") == kind.plural for item in listed
    )


def build_registry(
    client: ApiClient, *, sync: CacheSync, relists: Relists
) -> kopf.OperatorRegistry:
    """A fresh registry with our login handler and one event handler per kind the sync
    keeps (nothing registers at import)."""
    registry = kopf.OperatorRegistry()

    @kopf.on.login(registry=registry)
    async def login(**_: Any) -> kopf.ConnectionInfo:
        return client.credentials().as_kopf()

    for kind, applier in sync.appliers.items():
        if kind not in sync.listers:  # an informer's kind (``kube.intake``): not kopf's
            _watch(registry, kind, applier.apply, sync=sync, relists=relists)
    return registry


def _watch(
    registry: kopf.OperatorRegistry,
    kind: Kind,
    apply: Callable[[str | None, Any], object],
    *,
    sync: CacheSync,
    relists: Relists,
) -> None:
    """``on.event`` for ``kind``: the applier, then the listing signals (a closure per kind:
    a handler defined in the loop would see only the last kind)."""

    @kopf.on.event(kind.api_version, kind.plural, registry=registry, id=f"{kind}-event")
    async def event_handler(event: kopf.RawEvent, **_: Any) -> None:
        event_type = event.get("type")
        apply(event_type, event["object"])
        if event_type is None:  # listed, not watched: kopf (re-)listed this kind
            sync.watch_listed(kind)
            relists.listed(kind)


class Controller:
    """Keeps one Scheduler's cache and queue in step with the cluster, through its event
    handlers."""

    def __init__(
        self,
        handlers: EventHandlers,
        client: ApiClient,
        *,
        metrics: Metrics,
        reporter: Reporter,
        options: ControllerOptions | None = None,
        kinds: Collection[Kind] | None = None,
    ) -> None:
        """``kinds``: the kinds to keep (None: every kind no gate or CRD holds back)."""
        self.options = options or ControllerOptions()
        self.kinds = frozenset(kinds) if kinds is not None else default_kinds()
        self.client = client
        self.synced = Synced()
        """Opens when the initial LIST is in the cache (the loop and /readyz wait on it)."""
        self.ready = asyncio.Event()
        """Set when kopf is up (and has installed its signal handlers)."""
        self.scheduler = handlers.scheduler
        self.pods = PodEvents(handlers, metrics=metrics, reporter=reporter)
        self.nodes = NodeEvents(handlers, metrics=metrics)
        self.objects = [
            ObjectEvents(handlers, kind, metrics=metrics) for kind in PARSERS if kind in self.kinds
        ]
        """The appliers of the other kinds kept (``objects``): PodGroups' fed by an informer,
        the rest by kopf."""
        self.pod_intake = PodIntake(self.pods, metrics=metrics)
        self.node_intake = NodeIntake(self.nodes, metrics=metrics)
        intakes: dict[Kind, PodIntake | NodeIntake | ObjectIntake] = {
            Kind.NODES: self.node_intake,
            Kind.PODS: self.pod_intake,
        }
        informed: dict[Kind, tuple[Applier, Callable[[], Awaitable[int]]]] = {
            Kind.NODES: (self.node_intake, self._lister(Kind.NODES)),
            Kind.PODS: (self.pod_intake, self._lister(Kind.PODS)),
        }
        for events in self.objects:
            if events.kind in INFORMED:  # PodGroups: the intake parses each event in full
                intakes[events.kind] = ObjectIntake(events, metrics=metrics)
                informed[events.kind] = (events, self._lister(events.kind))
        self.reflectors: dict[Kind, Reflector] = {}
        """The informers of the hot kinds (``kube.intake``), built once the sync is."""
        self.sync = CacheSync(
            client,
            pods=self.pods,
            nodes=self.nodes,
            objects=self.objects,
            synced=self.synced,
            interval=self.options.resync_interval,
            metrics=metrics,
            informed=informed,
        )
        for kind, intake in intakes.items():
            self.reflectors[kind] = Reflector(
                client, kind, intake, sync=self.sync, options=self.options
            )
        self.kopf_kinds = tuple(kind for kind in Kind if kind in self.kinds - INFORMED)
        self.relists = Relists(self.sync.replace, self.kopf_kinds, retry_log=client.retry_log)
        """Runs kube's Replace soon after kopf (re-)listed a kind (``relist``)."""
        self.registry = build_registry(client, sync=self.sync, relists=self.relists)
        self.kopf_retries = KopfRetries(client.retry_log)
        """Takes kopf's request-retry error records while kopf runs (``kopf_retries``)."""
        self._stop = asyncio.Event()

    def _lister(self, kind: Kind) -> Callable[[], Awaitable[int]]:
        """The initial LIST of ``kind`` by its reflector (built after the sync)."""

        async def lister() -> int:
            return await self.reflectors[kind].list()

        return lister

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

        restarts = WatchRestarts(restarted, self.kopf_kinds)
        restarts.install()
        try:
            with foreign.taking(self.kopf_retries):
                await self._run_kopf(loop.time)
        finally:
            restarts.uninstall()
        log.info("controller_stopped")

    async def _run_kopf(self, clock: Callable[[], float]) -> None:
        """kopf until :meth:`stop`, beside the informers, the Replaces and the safety net."""
        async with asyncio.TaskGroup() as tg:
            tasks = [
                tg.create_task(self.sync.repair_forever(), name="cache-repair"),
                # One per kind, created here: kopf cancels tasks created after its
                # start only after waiting 5 s for them (``Relists.serve``).
                *(
                    tg.create_task(self.relists.serve(k), name=f"relist-{k}")
                    for k in self.kopf_kinds
                ),
                *(
                    tg.create_task(reflector.run(), name=f"informer-{k}")
                    for k, reflector in self.reflectors.items()
                ),
                tg.create_task(self._synced(clock), name="watch-listing"),
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

    async def _synced(self, clock: Callable[[], float]) -> None:
        """Open the gate once kopf's listing is in, then say what default spreading costs:
        queued pods it makes unsignable (kube's defaultingType System does so for every pod
        a Service or controller selects; docs/operations.md)."""
        await self.sync.wait_for_watch_listing(clock)
        log.info("default_spreading_unsignable", pods=self.scheduler.default_spreading_unsignable())
