"""What the end-to-end benchmarks read from a process under measurement: readiness, peak
memory and CPU time from ``/proc``, and its Prometheus ``/metrics`` text."""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from typing import TYPE_CHECKING

import aiohttp

if TYPE_CHECKING:
    import subprocess

Metrics = dict[str, list[tuple[dict[str, str], float]]]
"""Parsed ``/metrics``: name → [(labels, value)]."""


def vm_hwm_mb(pid: int) -> float:
    """Peak resident set size (``VmHWM``) of a process, MB; 0.0 when unreadable."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def cpu_seconds(pid: int) -> float:
    """User+system CPU seconds of a live process (``/proc/PID/stat``); 0.0 when unreadable."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def measured_pid(proc: subprocess.Popen[bytes]) -> int:
    """The scheduler's pid: the child itself, or its child when a profiler wraps it."""
    try:
        with open(f"/proc/{proc.pid}/task/{proc.pid}/children") as f:
            children = [int(p) for p in f.read().split()]
    except OSError:
        children = []
    with open(f"/proc/{proc.pid}/cmdline", "rb") as f:
        cmdline = f.read()
    if b"py-spy" in cmdline and children:
        return children[0]
    return proc.pid


async def wait_ready(
    port: int, proc: subprocess.Popen[bytes], deadline: float, ready_path: str = "/readyz"
) -> float:
    """Poll ``127.0.0.1:port/ready_path`` until it answers 200; when it did
    (``perf_counter``). RuntimeError when the process exits or ``deadline`` passes first."""
    url = f"http://127.0.0.1:{port}{ready_path}"
    async with aiohttp.ClientSession() as session:
        while time.perf_counter() < deadline:
            if proc.poll() is not None:
                raise RuntimeError(f"scheduler exited with {proc.returncode} before ready")
            with contextlib.suppress(aiohttp.ClientError, OSError):
                async with session.get(url) as resp:
                    if resp.status == 200:
                        return time.perf_counter()
            await asyncio.sleep(0.01)
    raise RuntimeError("scheduler not ready in time")


def parse_metrics(text: str) -> Metrics:
    """Prometheus text → name → [(labels, value)] (enough of the format for our own output)."""
    out: Metrics = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        head, _, value = line.rpartition(" ")
        name, _, rest = head.partition("{")
        labels: dict[str, str] = {}
        if rest:
            for part in rest.rstrip("}").split('",'):
                if "=" in part:
                    k, _, v = part.partition("=")
                    labels[k.strip()] = v.strip().strip('"')
        try:
            out.setdefault(name, []).append((labels, float(value)))
        except ValueError:
            continue
    return out


def metric_sum(metrics: Metrics, name: str, **match: str) -> float:
    return sum(
        v
        for labels, v in metrics.get(name, [])
        if all(labels.get(k) == want for k, want in match.items())
    )


def by_label(metrics: Metrics, name: str, label: str) -> dict[str, int]:
    """The non-zero totals of counter ``name`` per value of ``label``."""
    out: dict[str, int] = {}
    for labels, v in metrics.get(name, []):
        if v and label in labels:
            out[labels[label]] = out.get(labels[label], 0) + int(v)
    return out


def histogram_quantile(metrics: Metrics, name: str, q: float) -> float | None:
    """Prometheus' ``histogram_quantile`` over every label set of ``name`` summed together
    (linear interpolation inside the bucket); None when the histogram is empty."""
    buckets: dict[float, float] = {}
    for labels, v in metrics.get(name + "_bucket", []):
        le = float(labels["le"])
        buckets[le] = buckets.get(le, 0.0) + v
    if not buckets:
        return None
    bounds = sorted(buckets)
    total = buckets[bounds[-1]]
    if total <= 0:
        return None
    rank = q * total
    lower, below = 0.0, 0.0
    for le in bounds:
        count = buckets[le]
        if count >= rank:
            if le == float("inf"):
                return lower
            inside = count - below
            return lower + (le - lower) * ((rank - below) / inside if inside else 0.0)
        lower, below = le, count
    return lower
