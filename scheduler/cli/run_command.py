"""``batch-scheduler run``: flags and the configuration file → settings → the runtime.

Every bad input (a flag, the file, a plugin, the kubeconfig) ends in one line on stderr and
exit 2; a failure once running is logged and exit 1.

Neighbours: cli/main.py (the parser that routes here), cli/kube_flags.py (kube-scheduler's
flags laid over the file), app/runtime.py (what runs).
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from scheduler.app import allocator
from scheduler.app.plugin_loading import PluginLoadError
from scheduler.batching.signature import BatchingMode
from scheduler.cli import kube_flags
from scheduler.cli.common import bad_input, feature_gates, given, plugin_registry
from scheduler.framework.config import ConfigError
from scheduler.framework.feature_gates import OPPORTUNISTIC_BATCHING, FeatureGateError

if TYPE_CHECKING:
    import argparse

    from scheduler.framework.config import SchedulerConfig
    from scheduler.framework.feature_gates import FeatureGates


def run_command(args: argparse.Namespace) -> int:
    import asyncio

    from scheduler.app import runtime
    from scheduler.app.config_file import read_config
    from scheduler.app.settings import SchedulerSettings, SettingsError
    from scheduler.cycle.schedule_one import BatchingSettings
    from scheduler.kube.binder import BINDS_PER_PARALLELISM, BinderOptions
    from scheduler.kube.client import KubeconfigError
    from scheduler.kube.controller.settings import ControllerOptions
    from scheduler.logs.setup import configure_logging

    if args.kubeconfig is not None and not args.kubeconfig.is_file():
        print(f"batch-scheduler: --kubeconfig: no such file: {args.kubeconfig}", file=sys.stderr)
        return 2
    try:
        configure_logging(fmt=kube_flags.log_format(args), level=kube_flags.log_level(args))
    except ValueError as exc:  # an unknown level
        return bad_input(f"--log-level: {exc}")
    try:
        gates = feature_gates(args)
    except FeatureGateError as exc:
        return bad_input(f"--feature-gates: {exc}")
    try:
        registry = plugin_registry(args)
        config = read_config(
            args.config,
            scheduler_name=args.scheduler_name,
            plugin_names=registry.out_of_tree,
            gates=gates,
        )
    except PluginLoadError as exc:
        return bad_input(exc)
    except ConfigError as exc:
        return bad_input(exc.in_file(str(args.config)) if args.config else exc)
    try:
        config = kube_flags.apply_to(config, args)
    except ConfigError as exc:  # a flag's value, or the file's value the flag clashes with
        return bad_input(exc)
    # kube's OpportunisticBatching=false turns batching off unless --batching says otherwise.
    batching, off = gates.enabled(OPPORTUNISTIC_BATCHING), BatchingMode.OFF
    try:
        settings = SchedulerSettings(
            kubeconfig=args.kubeconfig,
            batching=BatchingSettings(
                **given(
                    mode=args.batching if args.batching is not None or batching else off,
                    max_batch_age=args.max_batch_age,
                    verify_ratio=args.batching_verify_ratio,
                )
            ),
            feature_gates=gates,
            # kube's parallelism bounds its Filter/Score workers; ours filter and score on
            # one thread, so it bounds the next parallel thing, binds in flight.
            binder=BinderOptions(
                concurrency=BINDS_PER_PARALLELISM * config.parallelism
                if args.bind_concurrency is None
                else args.bind_concurrency
            ),
            leader_elect=args.leader_elect,
            controller=ControllerOptions(**given(resync_interval=args.resync_interval)),
            **given(
                metrics_addr=args.metrics_addr,
                secure_port=args.secure_port,
                bind_address=args.bind_address,
                tls_cert_file=args.tls_cert_file,
                tls_private_key_file=args.tls_private_key_file,
                authentication_kubeconfig=args.authentication_kubeconfig,
                authorization_kubeconfig=args.authorization_kubeconfig,
            ),
        )
        settings.validate()
    except SettingsError as exc:
        return bad_input(exc)
    _log_notes(config, gates)
    allocator.fix_mmap_threshold()  # before the first LIST: see app/allocator.py
    try:
        asyncio.run(runtime.run(settings, config, registry))
    except PluginLoadError as exc:  # an out-of-tree plugin failed when its profile was built
        return bad_input(exc)
    except ConfigError as exc:  # plugin args are validated when the profiles are built
        return bad_input(exc.in_file(str(args.config)) if args.config else exc)
    except (KubeconfigError, SettingsError) as exc:  # kubeconfig; a metrics port in use
        return bad_input(exc)
    except KeyboardInterrupt:  # a second Ctrl+C before our handlers are in place
        return 130
    except Exception:
        from scheduler import logs

        logs.get_logger(__name__).exception("scheduler_failed")
        return 1
    return 0


def _log_notes(config: SchedulerConfig, gates: FeatureGates) -> None:
    """One line per configuration field, or feature gate, accepted without the effect it
    has in kube."""
    from scheduler import logs
    from scheduler.framework.config_run import notes

    log = logs.get_logger(__name__)
    for note in notes(config):
        (log.warning if note.warning else log.info)(
            "config_field_note", field=note.path, note=note.message
        )
    for text in gates.notes():
        log.warning("feature_gate_note", note=text)
