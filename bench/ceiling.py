"""The bind ceiling of the end-to-end benchmarks: a bare client that watches pods and binds
each new pending one to a pre-chosen node, with no decision at all
(``python -m bench.e2e ceiling``).

What the fastest possible scheduler would achieve against the same API server on this
machine, creation included: the same watch, the same binds, the scheduler's bind
concurrency (:mod:`bench.e2e` runs it against the emulator, :mod:`bench.real` against
kube-apiserver). The client is ``bench/bindceiling`` (Go, client-go, no client-side rate
limit, HTTP/2 to a TLS API server) in ``watch`` mode: the Python client it replaces spent
more CPU per bind than the API server did, so it measured itself, not the limit. The
limit itself, binds only, is :mod:`bench.bind_ceiling`.
"""

from __future__ import annotations

import argparse
import os

from bench.bind_ceiling import binary
from bench.burst import BIND_CONCURRENCY


def main(argv: list[str]) -> int:
    """``python -m bench.e2e ceiling --kubeconfig F --nodes N --port P [--concurrency C]``:
    becomes the Go client (same pid, so the harness measures it)."""
    p = argparse.ArgumentParser(prog="python -m bench.e2e ceiling")
    p.add_argument("--kubeconfig", required=True)
    p.add_argument("--concurrency", type=int, default=BIND_CONCURRENCY)
    p.add_argument("--nodes", type=int, required=True)
    p.add_argument("--port", type=int, required=True)
    a = p.parse_args(argv)
    program = str(binary())
    args = ["watch", "--kubeconfig", a.kubeconfig, "--nodes", str(a.nodes)]
    args += ["--port", str(a.port), "--concurrency", str(a.concurrency)]
    os.execv(program, [program, *args])
