"""kube-scheduler's own flags on ``run``: klog's ``-v``, ``--logging-format``, the
``--leader-elect-*`` timings and Lease, ``--pod-max-in-unschedulable-pods-duration``.

The leader-election flags and the unschedulable pool's duration are laid over the
configuration file, as kube-scheduler's ``ApplyLeaderElectionTo`` lays them (a flag given
wins over the file). Durations are Go durations (``15s``, ``1m30s``).
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Literal

from scheduler.framework.config_run import LEADER_ELECTION_FLAGS, with_flags

if TYPE_CHECKING:
    from scheduler.framework.config import SchedulerConfig

_ELECTION_HELP = {
    "lease_duration": "how long followers wait before taking the lease over (default 15s)",
    "renew_deadline": "how long the leader tries to renew before it stops leading (default 10s)",
    "retry_period": "wait between two attempts to take or renew the lease (default 2s)",
    "resource_lock": "the lock object's kind: only leases",
    "resource_name": "the Lease's name (default batch-scheduler)",
    "resource_namespace": "the Lease's namespace (default kube-system)",
}


_GO_BOOLS = {
    **dict.fromkeys(("1", "t", "T", "TRUE", "true", "True"), True),
    **dict.fromkeys(("0", "f", "F", "FALSE", "false", "False"), False),
}
"""What Go's ``strconv.ParseBool`` reads, so ``--leader-elect=false`` from a kube-scheduler
manifest means what it says there."""


def go_bool(value: str) -> bool:
    """A boolean flag's value as Go's flag package reads it (``true``, ``false``, ``1``…)."""
    try:
        return _GO_BOOLS[value]
    except KeyError:
        raise argparse.ArgumentTypeError(f"must be true or false, got {value!r}") from None


def _verbosity(value: str) -> int:
    text = value.removeprefix("=")  # "-v=4" as klog writes it
    if not text.isdigit():
        raise argparse.ArgumentTypeError(f"-v: must be an integer >= 0, got {value!r}")
    return int(text)


def add_arguments(run: argparse.ArgumentParser) -> None:
    """Add the flags to the ``run`` subcommand's parser."""
    level = run.add_mutually_exclusive_group()
    level.add_argument(
        "-v",
        "--v",
        dest="verbosity",
        type=_verbosity,
        metavar="N",
        help="klog's verbosity: 0-3 info, 4-9 debug, 10 trace (kopf's per-handler lines)",
    )
    level.add_argument("--log-level", help="info (default), debug, trace, warning or error")
    run.add_argument(
        "--logging-format",
        "--log-format",
        dest="logging_format",
        choices=("json", "text", "console"),
        default="json",
        help="json (default: one object per line) or text for people (console: the same)",
    )
    for name, flag in LEADER_ELECTION_FLAGS.items():
        run.add_argument(flag, dest=f"leader_elect_{name}", help=_ELECTION_HELP[name])
    run.add_argument(
        "--pod-max-in-unschedulable-pods-duration",
        metavar="DURATION",
        help="longest wait of a pod in the unschedulable pool before it is retried "
        "(default 5m; also podMaxInUnschedulablePodsDuration in the config file)",
    )


def log_level(args: argparse.Namespace) -> str:
    """The level ``-v`` or ``--log-level`` asks for (info if neither)."""
    from scheduler.logs.setup import verbosity_level

    if args.verbosity is not None:
        return verbosity_level(args.verbosity)
    return str(args.log_level or "info")


def log_format(args: argparse.Namespace) -> Literal["json", "console"]:
    return "json" if args.logging_format == "json" else "console"


def apply_to(config: SchedulerConfig, args: argparse.Namespace) -> SchedulerConfig:
    """``config`` with the flags given laid over it; ConfigError names the flag at fault."""
    return with_flags(
        config,
        pod_max_in_unschedulable_pods_duration=args.pod_max_in_unschedulable_pods_duration,
        **{name: getattr(args, f"leader_elect_{name}") for name in LEADER_ELECTION_FLAGS},
    )
