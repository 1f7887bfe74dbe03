"""``sim serve``: run the emulator in the foreground until SIGINT/SIGTERM.

``add_arguments`` and ``main`` are what the project's CLI wires as ``batch-scheduler sim
serve``; ``python -m scheduler.sim serve`` uses them too. When ready, one line with the
URL goes to stdout (SimProcess waits for it).
"""

from __future__ import annotations

import asyncio
import signal
import sys
from typing import TYPE_CHECKING

from scheduler.sim.faults import FaultConfig
from scheduler.sim.server import SimServer

if TYPE_CHECKING:
    import argparse


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Flags of ``serve``."""
    parser.add_argument("--host", default="127.0.0.1", help="listen address (loopback)")
    parser.add_argument("--port", type=int, default=0, help="listen port; 0 picks a free one")
    parser.add_argument(
        "--nodes",
        type=int,
        default=0,
        help="create N default nodes (4 CPU, 32Gi, 110 pods) at start",
    )
    parser.add_argument("--token", default=None, help="require 'Authorization: Bearer TOKEN'")
    parser.add_argument(
        "--kubeconfig-out",
        default=None,
        metavar="FILE",
        help="write a kubeconfig for this server to FILE when ready",
    )
    parser.add_argument(
        "--fail-rate",
        action="append",
        default=[],
        metavar="VERB=P",
        help="inject 500/503/429 on VERB (create, update, patch, delete, bind, "
        "get, list, watch, or *) with probability P; repeatable",
    )
    parser.add_argument(
        "--fail-codes",
        default="500,503,429",
        help="comma-separated codes drawn for injected errors",
    )
    parser.add_argument("--latency", type=float, default=0.0, help="seconds added per request")
    parser.add_argument(
        "--drop-watches-every",
        type=float,
        default=0.0,
        metavar="S",
        help="close all watch streams every S seconds",
    )
    parser.add_argument(
        "--compact-every",
        type=float,
        default=0.0,
        metavar="S",
        help="every S s: cut watches off for 0.5 s, then drop the history (resumes get 410)",
    )
    parser.add_argument(
        "--rogue-bind-fraction",
        type=float,
        default=0.0,
        metavar="F",
        help="a rogue binder takes this fraction of new pending pods first",
    )
    parser.add_argument(
        "--rogue-scheduler-name",
        default=None,
        help="the rogue binder only takes pods with this schedulerName",
    )
    parser.add_argument(
        "--kubelet",
        action="store_true",
        help="mark bound pods Running after --kubelet-delay seconds",
    )
    parser.add_argument("--kubelet-delay", type=float, default=0.1)
    parser.add_argument(
        "--no-controllers",
        dest="controllers",
        action="store_false",
        help="run no workload controllers (Deployment, ReplicaSet, StatefulSet, RC, Job) or "
        "garbage collector (no pods from workloads)",
    )
    parser.add_argument(
        "--history", type=int, default=20_000, help="watch events retained for resumes"
    )
    parser.add_argument(
        "--bookmark-interval",
        type=float,
        default=5.0,
        help="seconds between BOOKMARKs on watches that allow them",
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of every random fault")


def build_server(args: argparse.Namespace) -> SimServer:
    """A SimServer from parsed flags; ValueError on bad fault flags."""
    faults = FaultConfig(
        fail_rates=FaultConfig.parse_rates(args.fail_rate),
        fail_codes=tuple(int(c) for c in args.fail_codes.split(",") if c.strip()),
        latency=args.latency,
        drop_watches_every=args.drop_watches_every,
        compact_every=args.compact_every,
        rogue_bind_fraction=args.rogue_bind_fraction,
        rogue_scheduler_name=args.rogue_scheduler_name,
        seed=args.seed,
    )
    if not set(faults.fail_codes) <= {500, 503, 429}:
        raise ValueError("--fail-codes: only 500, 503 and 429 can be injected")
    return SimServer(
        token=args.token,
        faults=faults,
        nodes=args.nodes,
        kubelet=args.kubelet,
        kubelet_delay=args.kubelet_delay,
        controllers=args.controllers,
        history_limit=args.history,
        bookmark_interval=args.bookmark_interval,
    )


async def serve(args: argparse.Namespace) -> None:
    """Start, announce the URL, wait for a signal, stop."""
    server = build_server(args)
    url = await server.start(args.host, args.port)
    if args.kubeconfig_out:
        server.write_kubeconfig(args.kubeconfig_out)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    print(f"sim serving at {url}", flush=True)
    try:
        await stop.wait()
    finally:
        await server.stop()


def main(args: argparse.Namespace) -> int:
    """Run ``serve``; returns the exit code."""
    try:
        asyncio.run(serve(args))
    except ValueError as e:
        print(f"sim: {e}", file=sys.stderr)
        return 2
    except OSError as e:  # e.g. the port is taken
        print(f"sim: cannot listen on {args.host}:{args.port}: {e}", file=sys.stderr)
        return 1
    return 0
