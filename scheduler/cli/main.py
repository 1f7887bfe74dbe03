"""Command line: ``run``, ``demo``, ``simulate`` and ``sim serve`` — flags → settings → app.

Exit codes: 0 done, 1 failure while running, 2 bad input (flags, configuration, snapshot),
with a message naming the field.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from scheduler import __version__
from scheduler.batching.signature import BatchingMode
from scheduler.framework.config import DEFAULT_SCHEDULER_NAME, ConfigError


def _batching(value: str) -> BatchingMode:
    try:
        return BatchingMode(value)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"--batching: must be one of annotated, all, off (got {value!r})"
        ) from None


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="batch-scheduler",
        description="A second Kubernetes scheduler with opportunistic batching (KEP-5598).",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)

    simulate = commands.add_parser(
        "simulate", help="placements for a YAML snapshot of Nodes and Pods, offline"
    )
    simulate.add_argument("cluster", type=Path, help="multi-document YAML of Node and Pod")
    simulate.add_argument("--config", type=Path, help="KubeSchedulerConfiguration file")
    simulate.add_argument("--batching", type=_batching, default=BatchingMode.ANNOTATED)
    simulate.add_argument("--seed", type=int, default=0, help="seed for tie-breaking")
    simulate.add_argument("--output", choices=("json", "table"), default="table")
    simulate.add_argument(
        "--compare", action="store_true", help="run batching off and on, print both"
    )
    simulate.add_argument("--scheduler-name", default=DEFAULT_SCHEDULER_NAME)

    sim = commands.add_parser("sim", help="the Kubernetes API emulator")
    sim_commands = sim.add_subparsers(dest="sim_command", required=True)
    serve = sim_commands.add_parser("serve", help="run the emulator in the foreground")
    from scheduler.sim import cli as sim_cli

    sim_cli.add_arguments(serve)
    return parser


def main(argv: list[str] | None = None) -> None:
    args = build_parser().parse_args(argv)
    sys.exit(_dispatch(args))


def _dispatch(args: argparse.Namespace) -> int:
    if args.command == "simulate":
        return _simulate(args)
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
        config = read_config(args.config, scheduler_name=args.scheduler_name)
        text = args.cluster.read_text(encoding="utf-8")
        snapshot = simulate.read_snapshot(text, {p.scheduler_name for p in config.profiles})
        if args.compare:
            report = simulate.compare(snapshot, config, mode=args.batching, seed=args.seed)
            if args.output == "json":
                print(simulate.to_json(report))
            else:
                for label in ("off", "on"):
                    print(f"== batching {report[label]['summary']['batching']}")
                    print(simulate.render_table(report[label]))
                speedup = report["speedup"]
                print(f"speedup (decision time): {speedup:.2f}x" if speedup else "speedup: n/a")
            return 0
        report = simulate.simulate(snapshot, config, mode=args.batching, seed=args.seed)
    except (ConfigError, simulate.InputError) as exc:
        print(f"batch-scheduler: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"batch-scheduler: {args.cluster}: {exc.strerror}", file=sys.stderr)
        return 2
    if args.output == "json":
        print(simulate.to_json(report))
    else:
        print(simulate.render_table(report))
    return 0
