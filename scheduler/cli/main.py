"""Command line: ``run``, ``demo``, ``simulate``, ``explain`` and ``sim serve`` — flags →
settings → app.

Exit codes: 0 done, 1 failure while running, 2 bad input (flags, configuration, snapshot),
with a message naming the field.
"""

from __future__ import annotations

import argparse
import functools
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from scheduler import __version__
from scheduler.app.plugin_loading import PluginLoadError
from scheduler.app.snapshot_file import USED_KINDS as SNAPSHOT_KINDS_READ
from scheduler.batching.signature import BatchingMode
from scheduler.cli import kube_flags
from scheduler.cli.common import bad_input, feature_gates, offline_gates, plugin_registry
from scheduler.cli.run_command import run_command
from scheduler.framework.config import DEFAULT_SCHEDULER_NAME, ConfigError
from scheduler.framework.feature_gates import (
    OPPORTUNISTIC_BATCHING,
    FeatureGateError,
    FeatureGates,
)

if TYPE_CHECKING:
    from scheduler.app.snapshot_file import Snapshot


def _batching(value: str) -> BatchingMode:
    try:
        return BatchingMode(value)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"--batching: must be one of annotated, all, off (got {value!r})"
        ) from None


def _positive(value: str) -> int:
    if not value.isdigit() or int(value) < 1:
        raise argparse.ArgumentTypeError(f"must be a whole number of at least 1 (got {value!r})")
    return int(value)


def _add_plugin_flag(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--plugin",
        action="append",
        default=[],
        metavar="[NAME=]MODULE:FACTORY",
        help="register an out-of-tree plugin (repeatable; NAME defaults to the factory's "
        "'name' attribute); enable it in --config like an in-tree one (docs/plugins.md)",
    )


def _add_feature_gates_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--feature-gates",
        action="append",
        metavar="NAME=BOOL,...",
        help="kube-scheduler's feature gates by kube's names (repeatable): GenericWorkload=true "
        "gang-schedules PodGroups; OpportunisticBatching=false turns batching off; the other "
        "gates of kube v1.37.2 are accepted",
    )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="batch-scheduler",
        description="A second Kubernetes scheduler with opportunistic batching (KEP-5598).",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)

    run = commands.add_parser("run", help="schedule pods of a cluster (the scheduler itself)")
    run.add_argument("--kubeconfig", type=Path, help="kubeconfig file (default: in-cluster)")
    run.add_argument("--config", type=Path, help="KubeSchedulerConfiguration file")
    _add_plugin_flag(run)
    run.add_argument("--scheduler-name", default=DEFAULT_SCHEDULER_NAME)
    run.add_argument("--batching", type=_batching, help="annotated (default), all or off")
    _add_feature_gates_flag(run)
    run.add_argument(
        "--leader-elect",
        nargs="?",
        const=True,
        default=None,
        type=kube_flags.go_bool,
        metavar="BOOL",
        help="Lease-based leader election; =false turns it off, as kube-scheduler's flag "
        "(default: as the config file says, else off)",
    )
    run.add_argument("--no-leader-elect", dest="leader_elect", action="store_false")
    # Serving, named as kube-scheduler's flags (app/settings.py documents each).
    run.add_argument(
        "--secure-port",
        type=int,
        help="HTTPS port of /metrics (delegated authn/authz), /healthz, /readyz, /livez, "
        "/configz (default 10259); 0: no HTTPS",
    )
    run.add_argument(
        "--bind-address", metavar="IP", help="IP address of the secure port (default 0.0.0.0)"
    )
    run.add_argument(
        "--tls-cert-file", type=Path, help="serving certificate (default: self-signed)"
    )
    run.add_argument("--tls-private-key-file", type=Path, help="key of --tls-cert-file")
    run.add_argument(
        "--authentication-kubeconfig",
        type=Path,
        help="kubeconfig for TokenReviews (default: in-cluster, else tokens are anonymous)",
    )
    run.add_argument(
        "--authorization-kubeconfig",
        type=Path,
        help="kubeconfig for SubjectAccessReviews (default: in-cluster)",
    )
    run.add_argument(
        "--metrics-addr",
        metavar="HOST:PORT",
        help="also serve the endpoints over plain HTTP, unauthenticated, for local use "
        "(default: off)",
    )
    kube_flags.add_arguments(run)
    # Flags left out take the settings' defaults (app/settings.py and the options classes
    # it nests): one source for every default.
    run.add_argument(
        "--bind-concurrency",
        type=int,
        help="bind calls in flight at once (default: 4 x the config's parallelism, 64)",
    )
    run.add_argument("--max-batch-age", type=float, help="seconds a batch state may be reused")
    run.add_argument(
        "--batching-verify-ratio",
        type=float,
        metavar="R",
        help="fraction of hinted pods that also get a full pass, to count divergences",
    )
    run.add_argument(
        "--resync-interval",
        type=float,
        help="seconds between safety-net LISTs; re-lists are reconciled at once (0: off)",
    )

    demo = commands.add_parser(
        "demo", help="emulated cluster + workload + this scheduler, with a report"
    )
    demo.add_argument("--nodes", type=int, default=500, help="emulated 4-CPU nodes (500)")
    demo.add_argument(
        "--pods",
        type=int,
        default=1500,
        help="pods: one job per node (up to half), rest web (1500)",
    )
    demo.add_argument(
        "--compare",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="run batching off, then on, and show the speedup (the default; --no-compare: "
        "one run, in the --batching mode)",
    )
    demo.add_argument("--batching", type=_batching, help="annotated (default), all or off")
    demo.add_argument("--config", type=Path, help="KubeSchedulerConfiguration file")
    _add_plugin_flag(demo)

    simulate = commands.add_parser(
        "simulate", help="placements for a cluster snapshot (kubectl get ... -o yaml), offline"
    )
    simulate.add_argument(
        "cluster",
        type=Path,
        help="a kubectl List (-o json or -o yaml) or multi-document YAML, - for stdin: "
        f"{', '.join(SNAPSHOT_KINDS_READ)} (other kinds are named on stderr, one line each, "
        "and skipped)",
    )
    simulate.add_argument("--config", type=Path, help="KubeSchedulerConfiguration file")
    _add_plugin_flag(simulate)
    _add_feature_gates_flag(simulate)
    simulate.add_argument("--batching", type=_batching, help="annotated (default), all or off")
    simulate.add_argument("--seed", type=int, default=0, help="seed for tie-breaking")
    simulate.add_argument("--output", choices=("json", "table"), default="table")
    simulate.add_argument(
        "--compare",
        action="store_true",
        help="run batching off and on, print both and the placements that differ",
    )
    simulate.add_argument("--scheduler-name", default=DEFAULT_SCHEDULER_NAME)

    explain = commands.add_parser(
        "explain",
        help="one pending pod of a cluster snapshot: every node's Filter verdict and Score "
        "breakdown, offline",
    )
    explain.add_argument(
        "cluster", type=Path, help="a cluster snapshot, as for simulate (kubectl get ... -o yaml)"
    )
    explain.add_argument("pod", metavar="NAMESPACE/NAME", help="the pending pod to explain")
    explain.add_argument("--config", type=Path, help="KubeSchedulerConfiguration file")
    _add_plugin_flag(explain)
    _add_feature_gates_flag(explain)
    explain.add_argument("--batching", type=_batching, help="annotated (default), all or off")
    explain.add_argument("--output", choices=("table", "json"), default="table")
    explain.add_argument("--scheduler-name", default=DEFAULT_SCHEDULER_NAME)
    explain.add_argument(
        "--profile", help="explain under this profile, whatever the pod's schedulerName"
    )
    explain.add_argument(
        "--top",
        type=_positive,
        metavar="N",
        help="only the N best-scored nodes, and up to N rejected ones (a node for each "
        "distinct reason first)",
    )
    explain.add_argument("--node", metavar="NAME", help="only this node's verdict and scores")

    from scheduler.sim import cli as sim_cli

    sim = commands.add_parser("sim", help="the Kubernetes API emulator")
    # Bad ``serve`` flags: one line and exit 2, without the dozen lines of its usage.
    sim_commands = sim.add_subparsers(
        dest="sim_command", required=True, parser_class=sim_cli.OneLineParser
    )
    serve = sim_commands.add_parser("serve", help="run the emulator in the foreground")
    sim_cli.add_arguments(serve)
    return parser


def main(argv: list[str] | None = None) -> None:
    args = build_parser().parse_args(argv)
    sys.exit(_dispatch(args))


def _dispatch(args: argparse.Namespace) -> int:
    if args.command == "run":
        return run_command(args)
    if args.command == "demo":
        return _demo(args)
    if args.command == "simulate":
        return _simulate(args)
    if args.command == "explain":
        return _explain(args)
    if args.command == "sim":
        from scheduler.sim import cli as sim_cli

        return sim_cli.main(args)
    raise AssertionError(args.command)  # argparse only lets known commands through


def _simulate(args: argparse.Namespace) -> int:
    from scheduler.app import simulate
    from scheduler.app.config_file import read_config
    from scheduler.logs.setup import configure_logging

    # stdout carries the report (one JSON object with --output json); logs go to stderr.
    configure_logging(fmt="console", level="warning", stream=sys.stderr)

    try:
        registry = plugin_registry(args)
        read = functools.partial(
            read_config,
            args.config,
            scheduler_name=args.scheduler_name,
            plugin_names=registry.out_of_tree,
        )
        config = read(gates=feature_gates(args))
        names = {p.scheduler_name for p in config.profiles}
        snapshot = simulate.read_snapshot_file(args.cluster, names)
        gates = offline_gates(args, pod_groups=len(snapshot.pod_groups))
        config = read(gates=gates)  # the gates enable plugins (GangScheduling)
        run = simulate.compare if args.compare else simulate.simulate
        mode = _mode(args, gates)
        report = run(snapshot, config, mode=mode, seed=args.seed, registry=registry, gates=gates)
    except FeatureGateError as exc:
        return bad_input(f"--feature-gates: {exc}")
    except PluginLoadError as exc:
        return bad_input(exc)
    except ConfigError as exc:  # plugin args are validated when the profiles are built
        return bad_input(exc.in_file(str(args.config)) if args.config else exc)
    except simulate.InputError as exc:
        return bad_input(exc)
    _print_notices(snapshot)  # once the input is known good: an error stays one line
    if args.output == "json":
        return _print_report(simulate.to_json(report))
    if args.compare:
        return _print_report(simulate.render_compare(report))
    return _print_report(simulate.render_table(report))


def _explain(args: argparse.Namespace) -> int:
    from scheduler.app import explain, explain_render
    from scheduler.app.config_file import read_config
    from scheduler.logs.setup import configure_logging

    # stdout carries the report; the report says itself what a warning would.
    configure_logging(fmt="console", level="error", stream=sys.stderr)

    try:
        registry = plugin_registry(args)
        feature_gates(args)  # a bad flag is named before the snapshot is read
        snapshot = explain.read_cluster(args.cluster)
        gates = offline_gates(args, pod_groups=len(snapshot.pod_groups))
        config = read_config(
            args.config,
            scheduler_name=args.scheduler_name,
            plugin_names=registry.out_of_tree,
            gates=gates,
        )
        report = explain.explain(
            snapshot,
            config,
            args.pod,
            mode=_mode(args, gates),
            profile=args.profile,
            registry=registry,
            gates=gates,
        )
        report = explain.select(report, top=args.top, node=args.node)
    except FeatureGateError as exc:
        return bad_input(f"--feature-gates: {exc}")
    except PluginLoadError as exc:
        return bad_input(exc)
    except ConfigError as exc:  # plugin args are validated when the profiles are built
        return bad_input(exc.in_file(str(args.config)) if args.config else exc)
    except (explain.InputError, explain.ExplainError) as exc:
        return bad_input(exc)
    _print_notices(snapshot)  # once the input is known good: an error stays one line
    json_out = args.output == "json"
    return _print_report(
        explain_render.to_json(report) if json_out else explain_render.render_table(report)
    )


SIGPIPE_EXIT = 128 + 13
"""The exit status of a process a closed pipe stopped (``… | head``), as the shell shows it."""


def _print_report(text: str) -> int:
    """The report on stdout; a reader that stops early (``| head``) ends the command
    quietly, with the status a closed pipe gives, never a BrokenPipeError traceback."""
    try:
        print(text)
        sys.stdout.flush()
    except BrokenPipeError:
        import os

        # Python flushes stdout again at exit: point it at /dev/null so that says nothing.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return SIGPIPE_EXIT
    return 0


def _print_notices(snapshot: Snapshot) -> None:
    """What the snapshot held and the command does not read, one line each, on stderr."""
    from scheduler.app.snapshot_file import notices

    for line in notices(snapshot):
        print(line, file=sys.stderr)


def _mode(args: argparse.Namespace, gates: FeatureGates | None = None) -> BatchingMode:
    """``--batching``, or off under ``OpportunisticBatching=false`` (as ``run``), or
    BatchingSettings' default when it was left out."""
    if args.batching is not None:
        return BatchingMode(args.batching)
    if gates is not None and not gates.enabled(OPPORTUNISTIC_BATCHING):
        return BatchingMode.OFF
    from scheduler.cycle.schedule_one import BatchingSettings

    return BatchingSettings().mode


def _demo(args: argparse.Namespace) -> int:
    import asyncio

    from scheduler.app import demo
    from scheduler.app.config_file import read_config
    from scheduler.logs.setup import configure_logging

    configure_logging(fmt="console", level="warning", stream=sys.stderr)
    try:
        demo.Workload.plan(args.nodes, args.pods)
    except ValueError as exc:
        print(f"batch-scheduler: {exc}", file=sys.stderr)
        return 2
    try:
        registry = plugin_registry(args)
        config = read_config(args.config, plugin_names=registry.out_of_tree)
    except PluginLoadError as exc:
        return bad_input(exc)
    except ConfigError as exc:
        return bad_input(exc.in_file(str(args.config)) if args.config else exc)
    try:
        asyncio.run(
            demo.demo(
                nodes=args.nodes,
                pods=args.pods,
                compare=args.compare,
                mode=_mode(args),
                config=config,
                registry=registry,
            )
        )
    except PluginLoadError as exc:  # an out-of-tree plugin failed when its profile was built
        return bad_input(exc)
    except ConfigError as exc:  # plugin args are validated when the profiles are built
        return bad_input(exc.in_file(str(args.config)) if args.config else exc)
    except KeyboardInterrupt:
        return 130
    except RuntimeError as exc:
        print(f"batch-scheduler: {exc}", file=sys.stderr)
        return 1
    return 0
