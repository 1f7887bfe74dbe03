"""The composition root of ``run``: every part built once, run in one TaskGroup, stopped in order.

Parts: ``Metrics``; the API client (kubeconfig); the ``Binder``, ``Reporter`` and
``ApiPreemptor`` (the cycle's ports); the scheduling core from ``app.core.build_scheduler``;
the kopf ``Controller`` (cache and queue from the watch, the ``synced`` gate); the
``LeaderElector`` (the ``leading`` gate; an always-open gate without ``--leader-elect``);
the HTTP ``Endpoints``; ``run_loop`` and ``run_flushes``. All long-running tasks live in one
``asyncio.TaskGroup``: if one fails, the others are cancelled and the failure surfaces
(exit 1), never a half-alive process.

Graceful shutdown (SIGTERM/SIGINT, or :meth:`Runtime.stop`), in this order, because each
step needs the ones after it still running:

1. stop the scheduling loop and the flushes: no new decisions, nothing newly assumed;
2. give up the pods waiting at Permit and the PreBinds in flight (each unreserved,
   forgotten and requeued), then drain the binder (up to ``shutdown_timeout``): each bind
   in flight finishes and is
   confirmed, or is cancelled and its assumption forgotten — nothing stays half-assumed;
   then the preemptor: evictions already decided are written;
3. release the lease, so a follower takes over without waiting for it to expire;
4. drain the reporter: the Events and conditions of those last binds get written;
5. stop kopf (closes its watches), then the endpoints, then close the client.

kopf installs its own SIGINT/SIGTERM handlers when it starts in the main thread; ours are
installed again once kopf reports ready, so a signal always takes the ordered path.

Neighbours: ``cli.main`` (flags → settings → :func:`run`), ``demo`` (runs a
:class:`Runtime` in-process), ``settings``, ``endpoints``, ``core``.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import gc
import signal
from typing import TYPE_CHECKING, Any

from scheduler import logs
from scheduler.app.core import build_scheduler
from scheduler.app.endpoints import Endpoints
from scheduler.app.serving_cert import server_context
from scheduler.app.settings import parse_address
from scheduler.clock import LoopClock
from scheduler.cycle.eventhandlers import EventHandlers
from scheduler.cycle.loop import OpenGate, run_flushes, run_loop
from scheduler.kube.binder import Binder
from scheduler.kube.claim_writer import ClaimWriter
from scheduler.kube.client import USER_AGENT, create_client
from scheduler.kube.controller.operator import Controller, watched_kinds
from scheduler.kube.delegated_auth import DelegatedAuth, connect
from scheduler.kube.group_status import GroupStatus
from scheduler.kube.kinds import Kind
from scheduler.kube.leader import LeaderElector, default_identity
from scheduler.kube.preemption import ApiPreemptor
from scheduler.kube.reporter import Reporter
from scheduler.kube.volume_binder import VolumeBinder, node_labels_in
from scheduler.metrics.registry import Metrics
from scheduler.plugins.dynamic_resources.claim_binding import CLAIM_WRITER
from scheduler.plugins.volume_binding import VOLUME_BINDER

if TYPE_CHECKING:
    from collections.abc import Coroutine, Mapping
    from pathlib import Path

    from scheduler.app.settings import SchedulerSettings
    from scheduler.cycle.loop import Gate
    from scheduler.cycle.schedule_one import Scheduler
    from scheduler.framework.config import SchedulerConfig
    from scheduler.framework.profile import PluginFactory
    from scheduler.kube.client import ApiClient

log = logs.get_logger(__name__)

_SIGNALS = (signal.SIGTERM, signal.SIGINT)
CONNECTIONS_BESIDE_BINDS = 16


class Runtime:
    """One scheduler process: build with settings and a configuration, then ``await run()``."""

    def __init__(
        self,
        settings: SchedulerSettings,
        config: SchedulerConfig,
        *,
        handle_signals: bool = True,
        registry: Mapping[str, PluginFactory] | None = None,
    ) -> None:
        self.settings = settings
        self.config = config
        self.registry = registry
        """Plugin name → factory (None: in-tree only; app.plugin_loading adds others)."""
        self.handle_signals = handle_signals
        self.identity = settings.identity or default_identity()
        self.metrics = Metrics()
        self.scheduler: Scheduler | None = None
        """The scheduling core, once :meth:`run` has built it (the demo reads its stats)."""
        self.endpoints: Endpoints | None = None
        """The plain-HTTP endpoints (``metrics_addr``), once started."""
        self.secure_endpoints: Endpoints | None = None
        """The secure port's endpoints (``secure_port``), once started."""
        self.synced: Gate | None = None
        self._stop = asyncio.Event()
        self._stopping = False
        self._leading: Gate = OpenGate()

    def stop(self) -> None:
        """Begin the graceful shutdown (idempotent; call on the runtime's loop)."""
        if not self._stop.is_set():
            log.info("shutdown_requested")
        self._stop.set()

    async def run(self) -> None:
        """Run until :meth:`stop` or a signal; raises if a part fails."""
        settings = self.settings
        _quiet_kopf_watch_finalizer(asyncio.get_running_loop())
        connection = self.config.client_connection
        # --kubeconfig wins over clientConnection.kubeconfig (kube-scheduler ignores the flag
        # when --config is given; an explicit flag is the likelier intent).
        flag = settings.kubeconfig
        kubeconfig = str(flag) if flag is not None else connection.kubeconfig or None
        # The identity in the User-Agent tells the API server's audit log (and the emulator's
        # /sim/stats) which replica sent a request, e.g. which one bound a pod.
        client = await create_client(
            kubeconfig,
            user_agent=f"{USER_AGENT} ({self.identity})",
            qps=connection.qps,
            burst=connection.burst,
            # A connection per bind in flight, and some for the watches, the reporter, the
            # preemptor, the volume binder and the lease.
            pool_size=settings.binder.concurrency + CONNECTIONS_BESIDE_BINDS,
        )
        binder = Binder(client, settings.binder)
        # Each eviction asks the leading gate first: after the lease is lost, queued
        # preemptions are dropped rather than written by a replica that no longer leads.
        preemptor = ApiPreemptor(client, identity=self.identity, leading=self._may_write)
        endpoints: Endpoints | None = None
        group_status: GroupStatus | None = None
        claim_writer: ClaimWriter | None = None
        secure: Endpoints | None = None
        auth: DelegatedAuth | None = None
        try:
            reporter = Reporter(
                client, identity=self.identity, options=settings.reporter, metrics=self.metrics
            )
            group_status = GroupStatus(client)
            scheduler = build_scheduler(
                self.config,
                clock=LoopClock(),
                binder=binder,
                reporter=reporter,
                preemptor=preemptor,
                batching=settings.batching,
                metrics=self.metrics,
                registry=self.registry,
                gates=settings.feature_gates,
                group_reporter=group_status,
            )
            self.scheduler = scheduler
            binder.node_exists = scheduler.cluster.has_node  # no bind to a node deleted since
            # VolumeBinding's PreBind writes the volume bindings through this port.
            volume_binder = VolumeBinder(
                client,
                scheduler.cluster.volumes,
                node_labels=node_labels_in(scheduler.cluster.snapshot),
            )
            # DynamicResources' PreBind, Unreserve and PostFilter write claims through this.
            claim_writer = ClaimWriter(client, scheduler.cluster.dra)
            for profile in scheduler.profiles.values():
                profile.provide(VOLUME_BINDER, volume_binder)
                profile.provide(CLAIM_WRITER, claim_writer)
            kinds = await watched_kinds(client, settings.feature_gates)
            scheduler.cluster.pod_groups.coscheduling = Kind.COSCHEDULING_POD_GROUPS in kinds
            controller = Controller(
                EventHandlers(scheduler),
                client,
                metrics=self.metrics,
                reporter=reporter,
                options=settings.controller,
                kinds=kinds,
            )
            controller.nodes.binds_on_wire = binder.binds_on_wire
            self.synced = controller.synced
            leader = self._leader(client)
            leading: Gate = leader if leader is not None else OpenGate()
            self._leading = leading
            if leader is None:
                self.metrics.is_leader.set(1)
            if settings.metrics_addr:
                host, port = parse_address(settings.metrics_addr, field="metrics_addr")
                endpoints = Endpoints(
                    metrics=self.metrics,
                    synced=controller.synced,
                    host=host,
                    port=port,
                    configz=configz(self.config),
                )
                await endpoints.start()
                self.endpoints = endpoints
            if settings.secure_port:
                auth = await connect(
                    _path(settings.authentication_kubeconfig),
                    _path(settings.authorization_kubeconfig),
                )
                secure = Endpoints(
                    metrics=self.metrics,
                    synced=controller.synced,
                    host=settings.bind_address,
                    port=settings.secure_port,
                    configz=configz(self.config),
                    tls=server_context(settings.tls_cert_file, settings.tls_private_key_file),
                    auth=auth,
                    field="secure_port",
                )
                await secure.start()
                self.secure_endpoints = secure
            self._install_signals()
            log.info(
                "scheduler_starting",
                identity=self.identity,
                profiles=sorted(scheduler.profiles),
                batching=str(settings.batching.mode),
                leader_elect=leader is not None,
                feature_gates=settings.feature_gates.flag() or None,
                pod_groups=sorted(str(k) for k in kinds if k.gate) or None,
            )
            async with asyncio.TaskGroup() as tg:

                def start(coro: Coroutine[Any, Any, None], name: str) -> asyncio.Task[None]:
                    task = tg.create_task(coro, name=name)
                    # A part that ends by itself (kopf stopped by a signal it caught first,
                    # say) ends the process, in order.
                    task.add_done_callback(lambda _: self.stop())
                    return task

                reporting = start(reporter.run(), "reporter")
                watching = start(controller.run(), "controller")
                electing = start(leader.run(), "leader") if leader is not None else None
                looping = start(
                    run_loop(scheduler, synced=controller.synced, leading=leading), "loop"
                )
                flushing = start(run_flushes(scheduler), "flushes")
                freezing = tg.create_task(_freeze_after_sync(controller.synced), name="gc")
                signals = tg.create_task(self._reinstall_signals(controller.ready), name="signals")

                await self._stop.wait()
                self._stopping = True
                signals.cancel()
                # 1. No new decisions.
                await _cancel(looping, flushing, freezing)
                # 2. Pods waiting at Permit and PreBinds in flight are given up (unreserved,
                # forgotten); binds in flight finish, or are cancelled and forgotten.
                await scheduler.binding.drain()
                await binder.drain(settings.shutdown_timeout)
                await binder.close()
                # ... and so do the evictions of preemptions already decided.
                await preemptor.drain(settings.shutdown_timeout)
                await preemptor.close()
                # 3. Hand over leadership now rather than after the lease expires.
                if electing is not None:
                    await _cancel(electing)
                # 4. The last Events and conditions.
                await reporter.drain(settings.shutdown_timeout)
                await group_status.drain(settings.shutdown_timeout)
                await claim_writer.drain(settings.shutdown_timeout)
                await _cancel(reporting)
                # 5. Watches.
                controller.stop()
                await asyncio.wait({watching}, timeout=settings.shutdown_timeout)
                await _cancel(watching)
            log.info("scheduler_stopped", **_summary(scheduler))
        finally:
            self._remove_signals()
            gc.unfreeze()  # in-process users (demo, tests) go on with a plain collector
            await binder.close()
            await preemptor.close()
            if group_status is not None:
                await group_status.stop()
            if claim_writer is not None:
                await claim_writer.stop()
            if endpoints is not None:
                await endpoints.stop()
            if secure is not None:
                await secure.stop()
            if auth is not None:
                await auth.close()
            await client.close()

    def _may_write(self) -> bool:
        """Whether this replica leads (always, without leader election)."""
        return self._leading.is_open()

    def _leader(self, client: ApiClient) -> LeaderElector | None:
        election = self.config.leader_election
        enabled = self.settings.leader_elect
        if enabled is None:
            enabled = election.leader_elect
        if not enabled:
            return None
        self.metrics.is_leader.set(0)
        return LeaderElector(
            client,
            election,
            identity=self.identity,
            leading_changed=lambda leading: self.metrics.is_leader.set(1 if leading else 0),
        )

    # -- signals ------------------------------------------------------------------------------

    def _install_signals(self) -> None:
        if not self.handle_signals:
            return
        loop = asyncio.get_running_loop()
        for sig in _SIGNALS:
            with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                loop.add_signal_handler(sig, self.stop)

    def _remove_signals(self) -> None:
        if not self.handle_signals:
            return
        loop = asyncio.get_running_loop()
        for sig in _SIGNALS:
            with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                loop.remove_signal_handler(sig)

    async def _reinstall_signals(self, kopf_ready: asyncio.Event) -> None:
        # kopf replaces the loop's SIGINT/SIGTERM handlers right after it spawns its tasks;
        # its ready flag comes at about the same time, so wait a moment past it.
        await kopf_ready.wait()
        await asyncio.sleep(0.2)
        if not self._stopping:
            self._install_signals()


_ASYNCGEN_CLOSE_ERROR = "an error occurred during closing of asynchronous generator"


def _quiet_kopf_watch_finalizer(loop: asyncio.AbstractEventLoop) -> None:
    """Log kopf's watch-generator finalization error as one debug line, not a traceback.

    When kopf stops while a watch generator is suspended at ``yield``, the generator is only
    closed by the loop's shutdown (``shutdown_asyncgens``), and kopf's ``streaming_block``
    then raises "generator didn't stop after athrow()" (kopf 1.45). Nothing is lost: kopf
    and its connections are already stopped. Every other error keeps the previous handler.
    The handler stays installed past :meth:`Runtime.run`, because that shutdown comes after.
    """
    previous = loop.get_exception_handler()

    def handler(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        generator = context.get("asyncgen")
        if (
            str(context.get("message", "")).startswith(_ASYNCGEN_CLOSE_ERROR)
            and getattr(generator, "__qualname__", "") == "infinite_watch"
        ):
            log.debug("kopf_watch_close_error", error=repr(context.get("exception")))
            return
        if previous is not None:
            previous(loop, context)
        else:
            loop.default_exception_handler(context)

    loop.set_exception_handler(handler)


async def _cancel(*tasks: asyncio.Task[None]) -> None:
    """Cancel and wait, without letting the cancellation escape into the caller."""
    for task in tasks:
        task.cancel()
    await asyncio.wait(tasks)
    for task in tasks:
        if not task.cancelled() and task.exception() is not None:
            raise task.exception()  # type: ignore[misc]


def _summary(scheduler: Scheduler) -> dict[str, int]:
    counts = scheduler.counts()
    return {
        "cycles": counts.cycles,
        "scheduled": counts.scheduled,
        "batched": counts.batched,
        "full_passes": counts.full_passes,
        "unschedulable": counts.unschedulable,
    }


def _path(value: Path | None) -> str | None:
    return None if value is None else str(value)


def configz(config: SchedulerConfig) -> dict[str, Any]:
    """The effective configuration as ``/configz`` shows it (our field names, JSON values)."""
    plain = _plain(dataclasses.asdict(config))
    assert isinstance(plain, dict)
    return plain


def _plain(value: object) -> object:
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, set | frozenset):
        return sorted(str(v) for v in value)
    if value is None or isinstance(value, bool | int | float | str):
        return value
    return str(value)


async def run(
    settings: SchedulerSettings,
    config: SchedulerConfig,
    registry: Mapping[str, PluginFactory] | None = None,
) -> None:
    """``batch-scheduler run``: the process until SIGTERM/SIGINT."""
    await Runtime(settings, config, registry=registry).run()


async def _freeze_after_sync(synced: Gate) -> None:
    """Once the caches are synced, move every object alive into the collector's permanent
    generation (``gc.freeze``): the modules imported (the kubernetes client's alone are
    tens of thousands of objects), the plugins, the nodes and pods listed. The full
    collections a backlog of pending pods triggers then traverse only what came since:
    measured in docs/performance.md ("garbage collector"). What of the frozen state later
    dies is freed by reference counting as before; only cyclic garbage among it is never
    collected, bounded by the state at sync."""
    await synced.wait_open()
    gc.collect()
    gc.freeze()
