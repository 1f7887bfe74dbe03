"""The Go programs under bench/ (each its own module, client-go from the pinned
Kubernetes version), built on demand into their gitignored ``bin/``.

* ``bench/bindceiling``: the API server's bind limit, and bench.e2e's ceiling client;
* ``bench/draalloc``: scheduler_perf's ``allocResourceClaims`` op with kube's structured
  DRA allocator.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

BENCH = Path(__file__).resolve().parent


class GoToolError(RuntimeError):
    """A Go program that cannot be built; the message says what is missing."""


def binary(name: str) -> Path:
    """``bench/<name>/bin/<name>``, built first when missing or older than its sources."""
    source = BENCH / name
    target = source / "bin" / name
    sources = [*source.glob("*.go"), source / "go.mod", source / "go.sum"]
    newest = max(p.stat().st_mtime for p in sources)
    if target.exists() and target.stat().st_mtime >= newest:
        return target
    try:
        subprocess.run(
            ["go", "build", "-trimpath", "-o", str(target), "."],
            cwd=source,
            check=True,
            capture_output=True,
            text=True,
        )
    except FileNotFoundError as exc:
        raise GoToolError(f"cannot build bench/{name}: Go >= 1.26 is not on PATH") from exc
    except subprocess.CalledProcessError as exc:
        raise GoToolError(f"cannot build bench/{name}: {exc.stderr.strip()}") from exc
    return target
