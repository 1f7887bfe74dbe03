"""Where each scheduler's CPU goes on the real API server, per pod and by stage.

``python -m bench.profile_real [--nodes 5000] [--scenario one-pod-per-node] [--config list]
[--schedulers ours-on,kube-on] [--out DIR]``

The same control plane, cluster and burst as ``bench.e2e --api real`` (:mod:`bench.real`),
one warm-up run, then each scheduler once with a sampling profiler over the burst: ours
under py-spy (100 Hz, the whole process), kube-scheduler under its own pprof
(``/debug/pprof/profile``, back-to-back 5 s slices, merged). Every sample is put in the
first stage of :data:`OURS` or :data:`KUBE` that one of its frames names, and a stage's
share of the samples times the run's CPU per pod gives its milliseconds per pod. The
profilers cost CPU of their own, so the run's pods/s are not the matrix's; the shares are
what this is for. Writes the raw profiles, ``profile.json`` and ``profile.md`` to ``--out``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import functools
import json
import re
import signal
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any

import aiohttp

from bench.configs import CONFIGS
from bench.real import SCHEDULERS, Cluster, run_one
from bench.scenarios import SCENARIOS
from controlplane.launcher import ControlPlane

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Iterable

    from bench.real import Process

RESULTS = Path(__file__).parent / "results" / "profile"
PPROF_SLICE_S = 5
IDLE_LEAVES = ("_worker (concurrent/futures/thread.py:",)
"""A pool thread blocked on its queue, which py-spy samples as running."""
LOOP_DISPATCH = "(asyncio/events.py:"
"""``Handle._run``: the event loop stepping a task or calling a callback."""
WATCH = "watch and dispatch (our reflectors and kopf; client-go's reflector and informers)"

# (stage, substrings of a frame that put a sample there), first match wins. The two lists
# name the same pipeline steps in each scheduler's own code.
OURS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("bind", ("scheduler/kube/binder.py",)),
    ("Scheduled Events", ("scheduler/kube/reporter.py",)),
    (
        "scheduling (queue, cycle, plugins, batching)",
        (
            "scheduler/cycle/loop.py",
            "scheduler/cycle/schedule_one.py",
            "scheduler/framework/",
            "scheduler/plugins/",
            "scheduler/batching/",
            "scheduler/queueing/",
        ),
    ),
    (
        "event handlers (parse, cache, queue)",
        (
            "scheduler/kube/controller/",
            "scheduler/cycle/eventhandlers.py",
            "scheduler/model/",
            "scheduler/cache/",
        ),
    ),
    (WATCH, ("scheduler/kube/intake/", "kopf/")),
    ("the rest of ours (metrics, logs, start-up)", ("scheduler/",)),
    ("HTTP, JSON and event loop", ("aiohttp/", "asyncio/", "json/", "yarl/", "multidict/")),
)
KUBE: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("bind", ("pkg/scheduler.(*Scheduler).runBindingCycle",)),
    ("Scheduled Events", ("k8s.io/client-go/tools/events", "k8s.io/client-go/tools/record")),
    ("scheduling (queue, cycle, plugins, batching)", ("pkg/scheduler.(*Scheduler).ScheduleOne",)),
    ("event handlers (parse, cache, queue)", ("client-go/tools/cache.(*processorListener)",)),
    (WATCH, ("k8s.io/client-go/tools/cache.", "k8s.io/apimachinery/pkg/watch.")),
    (
        "HTTP, JSON and event loop",
        ("golang.org/x/net/http2", "net/http.", "crypto/tls.", "internal/poll.", "net."),
    ),
    ("Go runtime (GC, goroutine scheduling)", ("runtime.",)),
)
OTHER = "other"


def stage_of(frames: Iterable[str], stages: tuple[tuple[str, tuple[str, ...]], ...]) -> str:
    """The first stage one of ``frames`` (root first) names (:data:`OURS`, :data:`KUBE`),
    else other. In Python only the event loop's frames count, from the task it steps on
    when there is one: every stack of ours starts in ``scheduler/__main__.py``."""
    frames = list(frames)
    for marker in ("(asyncio/", LOOP_DISPATCH):  # into the loop, then into its task
        for depth, frame in enumerate(frames):
            if marker in frame:
                # the dispatch itself, when the sample is in no deeper frame
                frames = frames[depth + (marker == LOOP_DISPATCH) :] or frames[depth:]
                break
    for stage, needles in stages:
        if any(needle in frame for frame in frames for needle in needles):
            return stage
    return OTHER


def pyspy_samples(text: str) -> list[tuple[list[str], int]]:
    """py-spy's raw output: one ``frame;frame;... count`` line per distinct stack, without
    the stacks of a thread waiting for work (:data:`IDLE_LEAVES`)."""
    samples = []
    for line in text.splitlines():
        stack, _, count = line.rpartition(" ")
        frames = stack.split(";")
        if stack and count.isdigit() and not frames[-1].startswith(IDLE_LEAVES):
            samples.append((frames, int(count)))
    return samples


_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0}
_FIRST = re.compile(r"^\s*([\d.]+)(ns|us|µs|ms|s)\s+(\S.*)$")
_SEPARATOR = "-----------+"


def pprof_samples(text: str) -> list[tuple[list[str], float]]:
    """``go tool pprof -traces``: blocks between separator lines, each with the sample's
    labels (skipped), then its value (CPU time) beside the leaf frame, then the callers."""
    samples: list[tuple[list[str], float]] = []
    frames: list[str] = []
    value: float | None = None
    for line in text.splitlines():
        if line.startswith(_SEPARATOR):
            if value is not None:
                samples.append((frames, value))
            frames, value = [], None
            continue
        first = _FIRST.match(line)
        if value is None and first:
            value = float(first.group(1)) * _UNITS[first.group(2)]
            frames.append(first.group(3))
        elif value is not None and line.strip():
            frames.append(line.strip())
    return samples


def shares(
    samples: list[tuple[list[str], Any]], stages: tuple[tuple[str, tuple[str, ...]], ...]
) -> dict[str, float]:
    """Each stage's share of the samples' total weight, in the order of ``stages``."""
    weight: Counter[str] = Counter()
    for frames, value in samples:
        weight[stage_of(frames, stages)] += value
    total = sum(weight.values()) or 1
    order = [stage for stage, _ in stages] + [OTHER]
    return {stage: weight[stage] / total for stage in order if weight[stage]}


def summarize_stages(
    path: Path, cpu_s: float, stages: tuple[tuple[str, tuple[str, ...]], ...]
) -> dict[str, Any]:
    """A py-spy raw file by ``stages``: their shares of the samples and their CPU seconds
    (share x ``cpu_s``; the gang and DRA benchmarks' ``--profile``)."""
    samples = pyspy_samples(path.read_text(errors="replace"))
    found = shares(samples, stages)
    return {
        "samples": sum(count for _, count in samples),
        "stages": {stage: round(share, 4) for stage, share in found.items()},
        "seconds": {stage: round(share * cpu_s, 3) for stage, share in found.items()},
    }


@contextlib.asynccontextmanager
async def pyspy(proc: Process, output: Path) -> AsyncIterator[None]:
    """py-spy over the process from entry to exit (SIGINT makes it write its output)."""
    cmd = [str(Path(sys.executable).parent / "py-spy"), "record", "--pid", str(proc.proc.pid)]
    cmd += ["--rate", "100", "--format", "raw", "--output", str(output)]
    spy = await asyncio.create_subprocess_exec(
        *cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    await asyncio.sleep(1)  # attached before the first create
    try:
        yield
    finally:
        spy.send_signal(signal.SIGINT)
        await asyncio.wait_for(spy.wait(), 60)


@contextlib.asynccontextmanager
async def pprof(proc: Process, output: Path) -> AsyncIterator[None]:
    """kube-scheduler's CPU profile in back-to-back slices until exit, each to a file."""
    assert proc.metrics_url is not None
    url = proc.metrics_url.removesuffix("/metrics") + "/debug/pprof/profile"
    done = asyncio.Event()
    profiles: list[bytes] = []

    async def slices() -> None:
        async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(ssl=False)) as session:
            while not done.is_set():
                async with session.get(url, params={"seconds": str(PPROF_SLICE_S)}) as r:
                    r.raise_for_status()
                    profiles.append(await r.read())

    task = asyncio.create_task(slices())
    await asyncio.sleep(0.5)
    try:
        yield
    finally:
        done.set()
        await task
        for index, data in enumerate(profiles):
            output.with_name(f"{output.name}.{index}.pb.gz").write_bytes(data)


def pprof_traces(output: Path) -> str:
    files = sorted(output.parent.glob(f"{output.name}.*.pb.gz"))
    cmd = ["go", "tool", "pprof", "-traces", *map(str, files)]
    return subprocess.run(cmd, capture_output=True, text=True, check=True).stdout


async def profile(
    nodes: int, scenario: str, config: str, schedulers: list[str], out: Path
) -> list[dict[str, Any]]:
    results = []
    workdir = Path(tempfile.mkdtemp(prefix=f"bench-profile-{nodes}-"))
    with ControlPlane.start(workdir / "cp", controller_manager=False) as cp:
        cluster = Cluster(cp, nodes, workdir)
        await cluster.setup()
        await run_one(cluster, SCENARIOS[scenario], schedulers[0], config, -1, 600.0)
        for scheduler in schedulers:
            output = _output(out, scenario, nodes, scheduler, config)
            kube = scheduler.startswith("kube-")
            profiler = functools.partial(pprof if kube else pyspy, output=output)
            record = await run_one(
                cluster, SCENARIOS[scenario], scheduler, config, 0, 600.0, during_burst=profiler
            )
            result = {
                **{k: record[k] for k in ("scenario", "nodes", "pods", "scheduler", "config")},
                **{k: record[k] for k in ("bound", "pods_per_s", "cpu_ms_per_pod")},
            }
            results.append(with_stages(result, out))
            print(json.dumps(results[-1]), flush=True)
    return results


def _output(out: Path, scenario: str, nodes: int, scheduler: str, config: str) -> Path:
    """The raw profile: py-spy's text, or the prefix of kube-scheduler's pprof slices."""
    name = f"{scenario}_{nodes}_{scheduler}_{config}"
    return out / (name if scheduler.startswith("kube-") else f"{name}.pyspy.txt")


def with_stages(result: dict[str, Any], out: Path) -> dict[str, Any]:
    """``result`` (one run's) with its stages read from its raw profile in ``out``."""
    keys = ("scenario", "nodes", "scheduler", "config")
    output = _output(out, *(result[k] for k in keys))
    if result["scheduler"].startswith("kube-"):
        split = shares(pprof_samples(pprof_traces(output)), KUBE)
    else:
        split = shares(pyspy_samples(output.read_text()), OURS)
    per_pod = result["cpu_ms_per_pod"]
    stages = {
        stage: {"share": round(share, 4), "ms_per_pod": round(share * per_pod, 3)}
        for stage, share in split.items()
    }
    return {**result, "stages": stages}


def markdown(results: list[dict[str, Any]]) -> str:
    rows = list(dict.fromkeys([stage for stage, _ in OURS + KUBE] + [OTHER]))
    first = results[0]
    lines = [
        f"CPU per pod by stage: {first['scenario']}, {first['nodes']} nodes, config "
        f"{first['config']}; ms per pod (share of the samples)",
        "",
        "| stage | "
        + " | ".join(f"{r['scheduler']} ({r['cpu_ms_per_pod']} ms/pod)" for r in results)
        + " |",
        "| --- |" + " --- |" * len(results),
    ]
    for stage in rows:
        got = [r["stages"].get(stage) for r in results]
        if any(got):
            cells = [f"{g['ms_per_pod']:.2f} ({g['share']:.0%})" if g else "—" for g in got]
            lines.append(f"| {stage} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.profile_real")
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--scenario", choices=sorted(SCENARIOS), default="one-pod-per-node")
    parser.add_argument("--config", choices=CONFIGS, default="list")
    parser.add_argument("--schedulers", default="ours-on,kube-on")
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument(
        "--reread", action="store_true", help="no runs: the stages again from --out's profiles"
    )
    a = parser.parse_args(argv)
    schedulers = [s for s in a.schedulers.split(",") if s]
    unknown = set(schedulers) - (set(SCHEDULERS) - {"ceiling"})
    if unknown:
        parser.error(f"unknown or unprofiled schedulers: {', '.join(sorted(unknown))}")
    a.out.mkdir(parents=True, exist_ok=True)
    if a.reread:
        old = json.loads((a.out / "profile.json").read_text())
        results = [with_stages(result, a.out) for result in old]
    else:
        results = asyncio.run(profile(a.nodes, a.scenario, a.config, schedulers, a.out))
    (a.out / "profile.json").write_text(json.dumps(results, indent=1) + "\n")
    text = markdown(results)
    (a.out / "profile.md").write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
