"""``sim serve``: run the emulator in the foreground until SIGINT/SIGTERM.

``add_arguments`` and ``main`` are what the project's CLI wires as ``batch-scheduler sim
serve``; ``python -m scheduler.sim serve`` uses them too. When ready, one line with the
URL goes to stdout (SimProcess waits for it).

Bad flags are one line on stderr and exit 2, as argparse's errors without the usage (the
usage of ``serve`` is a dozen lines): ``batch-scheduler sim serve: error: argument --port:
must be a whole number from 0 to 65535 (got '99999')``. Values are checked as they are
parsed (:class:`OneLineParser`, the type functions below); what only listening can tell
(a host that does not resolve or is not ours, a port in use) and a kubeconfig that cannot
be written are reported the same way (:class:`FlagError`), never as a traceback.
"""

from __future__ import annotations

import argparse
import asyncio
import errno
import math
import os
import signal
import socket
import sys
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

from scheduler.sim.faults import VERBS, FaultConfig
from scheduler.sim.server import SimServer

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

INJECTABLE_CODES = (500, 503, 429)


class OneLineParser(argparse.ArgumentParser):
    """An ArgumentParser whose errors are one line (``PROG: error: MESSAGE``), exit 2, and
    which refuses unknown flags itself (as a subcommand's parser, they would otherwise
    reach the top-level parser and its usage)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message}\n")

    def parse_known_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        parsed, extras = super().parse_known_args(args, namespace)
        if extras:
            self.error(f"unrecognized arguments: {' '.join(extras)}")
        return parsed, extras


class FlagError(Exception):
    """A flag whose value only turned out bad when used (listening, writing the kubeconfig)."""

    def __init__(self, flag: str, message: str) -> None:
        super().__init__(f"argument {flag}: {message}")


def _port(value: str) -> int:
    if not value.isdigit() or int(value) > 65535:
        raise argparse.ArgumentTypeError(f"must be a whole number from 0 to 65535 (got {value!r})")
    return int(value)


def _whole(least: int) -> Callable[[str], int]:
    def parse(value: str) -> int:
        if not value.isdigit() or int(value) < least:
            raise argparse.ArgumentTypeError(
                f"must be a whole number of at least {least} (got {value!r})"
            )
        return int(value)

    return parse


def _number(value: str) -> float:
    try:
        number = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number (got {value!r})") from None
    if not math.isfinite(number):
        raise argparse.ArgumentTypeError(f"must be a finite number (got {value!r})")
    return number


def _seconds(value: str) -> float:
    seconds = _number(value)
    if seconds < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more seconds (got {value!r})")
    return seconds


def _interval(value: str) -> float:
    seconds = _number(value)
    if seconds <= 0:
        raise argparse.ArgumentTypeError(f"must be more than 0 seconds (got {value!r})")
    return seconds


def _fraction(value: str) -> float:
    fraction = _number(value)
    if not 0 <= fraction <= 1:
        raise argparse.ArgumentTypeError(f"must be within [0, 1] (got {value!r})")
    return fraction


def _fail_rate(value: str) -> str:
    verb, sep, probability = value.partition("=")
    if not sep or (verb not in VERBS and verb != "*"):
        raise argparse.ArgumentTypeError(
            f"want VERB=P with VERB in {', '.join(VERBS)} or * (got {value!r})"
        )
    _fraction(probability)
    return value


def _fail_codes(value: str) -> tuple[int, ...]:
    parts = [part.strip() for part in value.split(",") if part.strip()]
    if not parts or not all(p.isdigit() and int(p) in INJECTABLE_CODES for p in parts):
        codes = ", ".join(map(str, INJECTABLE_CODES))
        raise argparse.ArgumentTypeError(f"only {codes} can be injected (got {value!r})")
    return tuple(int(p) for p in parts)


def _file_to_write(value: str) -> str:
    path = Path(value)
    if path.is_dir():
        raise argparse.ArgumentTypeError(f"{value!r} is a directory")
    parent = path.parent
    if not parent.is_dir():
        raise argparse.ArgumentTypeError(f"{value!r}: no directory {str(parent)!r}")
    if not os.access(parent, os.W_OK) or (path.exists() and not os.access(path, os.W_OK)):
        raise argparse.ArgumentTypeError(f"{value!r}: not writable")
    return value


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Flags of ``serve``, each checked as it is parsed."""
    parser.set_defaults(serve_prog=parser.prog)
    parser.add_argument("--host", default="127.0.0.1", help="listen address (loopback)")
    parser.add_argument("--port", type=_port, default=0, help="listen port; 0 picks a free one")
    parser.add_argument(
        "--nodes",
        type=_whole(0),
        default=0,
        help="create N default nodes (4 CPU, 32Gi, 110 pods) at start",
    )
    parser.add_argument("--token", default=None, help="require 'Authorization: Bearer TOKEN'")
    parser.add_argument(
        "--kubeconfig-out",
        type=_file_to_write,
        default=None,
        metavar="FILE",
        help="write a kubeconfig for this server to FILE when ready",
    )
    parser.add_argument(
        "--fail-rate",
        type=_fail_rate,
        action="append",
        default=[],
        metavar="VERB=P",
        help="inject 500/503/429 on VERB (create, update, patch, delete, bind, "
        "get, list, watch, or *) with probability P; repeatable",
    )
    parser.add_argument(
        "--fail-codes",
        type=_fail_codes,
        default=INJECTABLE_CODES,
        help="comma-separated codes drawn for injected errors",
    )
    parser.add_argument("--latency", type=_seconds, default=0.0, help="seconds added per request")
    parser.add_argument(
        "--drop-watches-every",
        type=_seconds,
        default=0.0,
        metavar="S",
        help="close all watch streams every S seconds",
    )
    parser.add_argument(
        "--compact-every",
        type=_seconds,
        default=0.0,
        metavar="S",
        help="every S s: cut watches off for 0.5 s, then drop the history (resumes get 410)",
    )
    parser.add_argument(
        "--rogue-bind-fraction",
        type=_fraction,
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
    parser.add_argument("--kubelet-delay", type=_seconds, default=0.1)
    parser.add_argument(
        "--no-controllers",
        dest="controllers",
        action="store_false",
        help="run no workload controllers (Deployment, ReplicaSet, StatefulSet, RC, Job) or "
        "garbage collector (no pods from workloads)",
    )
    parser.add_argument(
        "--history", type=_whole(1), default=20_000, help="watch events retained for resumes"
    )
    parser.add_argument(
        "--bookmark-interval",
        type=_interval,
        default=5.0,
        help="seconds between BOOKMARKs on watches that allow them",
    )
    parser.add_argument("--seed", type=_whole(0), default=0, help="seed of every random fault")


def build_server(args: argparse.Namespace) -> SimServer:
    """A SimServer from parsed (hence checked) flags."""
    faults = FaultConfig(
        fail_rates=FaultConfig.parse_rates(args.fail_rate),
        fail_codes=tuple(args.fail_codes),
        latency=args.latency,
        drop_watches_every=args.drop_watches_every,
        compact_every=args.compact_every,
        rogue_bind_fraction=args.rogue_bind_fraction,
        rogue_scheduler_name=args.rogue_scheduler_name,
        seed=args.seed,
    )
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
    try:
        url = await server.start(args.host, args.port)
    except OSError as exc:
        await server.stop()
        raise _listen_error(exc, args.host, args.port) from None
    if args.kubeconfig_out:
        try:
            server.write_kubeconfig(args.kubeconfig_out)
        except OSError as exc:
            await server.stop()
            why = exc.strerror or str(exc)
            raise FlagError(
                "--kubeconfig-out", f"cannot write {args.kubeconfig_out!r}: {why}"
            ) from None
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    print(f"sim serving at {url}", flush=True)
    try:
        await stop.wait()
    finally:
        await server.stop()


def _listen_error(exc: OSError, host: str, port: int) -> FlagError:
    """What a failed listen says about the flags."""
    if isinstance(exc, socket.gaierror):
        return FlagError("--host", f"cannot resolve {host!r}")
    if exc.errno == errno.EADDRINUSE:
        return FlagError("--port", f"{port} is in use on {host}")
    if exc.errno == errno.EADDRNOTAVAIL:
        return FlagError("--host", f"{host} is not an address of this machine")
    if exc.errno == errno.EACCES:
        return FlagError("--port", f"not allowed to listen on {port} (below 1024 needs privileges)")
    return FlagError("--host/--port", f"cannot listen on {host}:{port}: {exc.strerror or exc}")


def main(args: argparse.Namespace) -> int:
    """Run ``serve``; returns the exit code (2: a bad flag, in one line on stderr)."""
    try:
        asyncio.run(serve(args))
    except FlagError as exc:
        prog = getattr(args, "serve_prog", "sim serve")
        print(f"{prog}: error: {exc}", file=sys.stderr)
        return 2
    return 0
