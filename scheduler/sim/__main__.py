"""``python -m scheduler.sim serve [flags]``: the emulator alone, for kubectl and benchmarks."""

from __future__ import annotations

import argparse
import sys

from scheduler.sim import cli


def run(argv: list[str] | None = None) -> int:
    """Parse ``serve`` and its flags, then run it."""
    parser = argparse.ArgumentParser(
        prog="python -m scheduler.sim", description="Kubernetes API emulator"
    )
    sub = parser.add_subparsers(dest="command", required=True, parser_class=cli.OneLineParser)
    cli.add_arguments(sub.add_parser("serve", help="run the API emulator in the foreground"))
    return cli.main(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(run())
