"""``sim serve`` with a bad flag: one line on stderr naming the flag, exit 2, no traceback."""

from __future__ import annotations

import socket
import subprocess
import sys
import threading
from typing import TYPE_CHECKING

import pytest

from scheduler.cli.main import main

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

PROG = "batch-scheduler sim serve: error: "


@pytest.fixture
def taken_port() -> Iterator[int]:
    """A loopback port something else listens on."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        yield int(listener.getsockname()[1])


def _refused(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    """stderr of ``batch-scheduler sim serve ARGV``, which must exit 2 without output.

    On a thread of its own: a flag that only listening can judge runs ``asyncio.run``, which
    in the main thread would orphan the loop the looptime plugin put there."""
    codes: list[object] = []

    def run() -> None:
        try:
            main(["sim", "serve", *argv])
        except SystemExit as exited:
            codes.append(exited.code)

    thread = threading.Thread(target=run, name="sim-serve-flags")
    thread.start()
    thread.join(60)
    out, err = capsys.readouterr()
    assert codes == [2], err
    assert out == ""
    return err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        pytest.param(
            ["--port", "99999"],
            "argument --port: must be a whole number from 0 to 65535 (got '99999')",
            id="port-out-of-range",
        ),
        pytest.param(
            ["--port", "http"],
            "argument --port: must be a whole number from 0 to 65535 (got 'http')",
            id="port-not-a-number",
        ),
        pytest.param(
            ["--host", "192.0.2.1"],
            "argument --host: 192.0.2.1 is not an address of this machine",
            id="host-not-ours",
        ),
        pytest.param(
            ["--nodes", "-3"],
            "argument --nodes: must be a whole number of at least 0 (got '-3')",
            id="negative-nodes",
        ),
        pytest.param(
            ["--history", "0"],
            "argument --history: must be a whole number of at least 1 (got '0')",
            id="no-history",
        ),
        pytest.param(
            ["--bookmark-interval", "0"],
            "argument --bookmark-interval: must be more than 0 seconds (got '0')",
            id="bookmarks-without-pause",
        ),
        pytest.param(
            ["--latency", "inf"],
            "argument --latency: must be a finite number (got 'inf')",
            id="infinite-latency",
        ),
        pytest.param(
            ["--fail-rate", "bind=1.5"],
            "argument --fail-rate: must be within [0, 1] (got '1.5')",
            id="fail-rate-above-one",
        ),
        pytest.param(
            ["--fail-rate", "evict=0.1"],
            "argument --fail-rate: want VERB=P with VERB in create, update, patch, delete, "
            "bind, get, list, watch or * (got 'evict=0.1')",
            id="fail-rate-unknown-verb",
        ),
        pytest.param(
            ["--fail-codes", "500,404"],
            "argument --fail-codes: only 500, 503, 429 can be injected (got '500,404')",
            id="fail-code-not-injectable",
        ),
        pytest.param(
            ["--rogue-bind-fraction", "-0.1"],
            "argument --rogue-bind-fraction: must be within [0, 1] (got '-0.1')",
            id="negative-fraction",
        ),
        pytest.param(["--bogus"], "unrecognized arguments: --bogus", id="unknown-flag"),
    ],
)
def test_a_bad_flag_is_one_line_and_exit_2(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """argparse's error line, without the dozen lines of usage."""
    assert _refused(argv, capsys) == f"{PROG}{message}\n"


def test_a_port_in_use_is_one_line(taken_port: int, capsys: pytest.CaptureFixture[str]) -> None:
    """Listening tells: the port is taken."""
    err = _refused(["--port", str(taken_port)], capsys)
    assert err == f"{PROG}argument --port: {taken_port} is in use on 127.0.0.1\n"


@pytest.mark.parametrize(
    ("target", "message"),
    [
        pytest.param("missing/kubeconfig", "no directory", id="no-such-directory"),
        pytest.param(".", "is a directory", id="a-directory"),
    ],
)
def test_an_unusable_kubeconfig_out_is_one_line(
    tmp_path: Path, target: str, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """--kubeconfig-out is checked before the emulator starts."""
    err = _refused(["--kubeconfig-out", str(tmp_path / target)], capsys)
    assert err.startswith(f"{PROG}argument --kubeconfig-out: ")
    assert message in err
    assert err.count("\n") == 1


def test_the_reported_command_prints_no_traceback() -> None:
    """The issue's reproduction, as a user runs it: ``--port 99999`` was 32 lines."""
    done = subprocess.run(
        [sys.executable, "-m", "scheduler", "sim", "serve", "--port", "99999"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        f"{PROG}argument --port: must be a whole number from 0 to 65535 (got '99999')"
    ]
