"""bench.profile_real's reading of the two profilers' outputs and its stages."""

from __future__ import annotations

import pytest

from bench import profile_real
from bench.profile_real import KUBE, OTHER, OURS, WATCH

LOOP = "HTTP, JSON and event loop"

MAIN = ";".join(
    [
        "<module> (scheduler/__main__.py:5)",
        "run (asyncio/runners.py:118)",
        "_run_once (asyncio/base_events.py:1922)",
        "_run (asyncio/events.py:84)",
    ]
)
KOPF = "process (kopf/_core/reactor/processing.py:40)"
PYSPY = "".join(
    ";".join(stack) + f" {count}\n"
    for stack, count in (
        ([MAIN, "_bind (scheduler/kube/binder.py:90)", "post (aiohttp/client.py:500)"], 3),
        (
            [
                MAIN,
                KOPF,
                "on_pod (scheduler/kube/controller/handlers.py:30)",
                "parse_pod (scheduler/model/parse_pod.py:12)",
            ],
            5,
        ),
        ([MAIN, KOPF, "loads (json/__init__.py:346)"], 2),
        (
            [
                "<module> (scheduler/__main__.py:5)",
                "_run_once (asyncio/base_events.py:1900)",
                "select (selectors.py:468)",
            ],
            1,
        ),
        (["_bootstrap (threading.py:1002)", "serve_forever (socketserver.py:233)"], 1),
        ([MAIN], 2),  # the loop calling a callback: its own cost
        (["_bootstrap (threading.py:1002)", "_worker (concurrent/futures/thread.py:81)"], 7),
    )
)

PPROF = """\
File: kube-scheduler
Type: cpu
Duration: 5s, Total samples = 60ms ( 1.20%)
-----------+-------------------------------------------------------
      10ms   runtime.memmove
             k8s.io/kubernetes/pkg/scheduler.(*Scheduler).runBindingCycle
             runtime.goexit
-----------+-------------------------------------------------------
   profile:  labelled
      20ms   k8s.io/apimachinery/pkg/runtime.Decode (inline)
             k8s.io/apimachinery/pkg/watch.(*StreamWatcher).receive
-----------+-------------------------------------------------------
      1.03s  runtime.scanobject
             runtime.gcBgMarkWorker
-----------+-------------------------------------------------------
"""


def test_pyspy_stacks_fall_into_the_first_stage_a_frame_names() -> None:
    samples = profile_real.pyspy_samples(PYSPY)
    assert [count for _, count in samples] == [3, 5, 2, 1, 1, 2]  # no idle pool thread
    assert [profile_real.stage_of(frames, OURS) for frames, _ in samples] == [
        "bind",
        "event handlers (parse, cache, queue)",
        WATCH,
        LOOP,
        OTHER,
        LOOP,
    ]
    assert profile_real.shares(samples, OURS) == pytest.approx(
        {
            "bind": 3 / 14,
            "event handlers (parse, cache, queue)": 5 / 14,
            WATCH: 2 / 14,
            LOOP: 3 / 14,
            OTHER: 1 / 14,
        }
    )


def test_pprof_traces_give_values_leaf_first_and_skip_labels() -> None:
    samples = profile_real.pprof_samples(PPROF)
    assert samples == [
        (
            [
                "runtime.memmove",
                "k8s.io/kubernetes/pkg/scheduler.(*Scheduler).runBindingCycle",
                "runtime.goexit",
            ],
            pytest.approx(0.01),
        ),
        (
            [
                "k8s.io/apimachinery/pkg/runtime.Decode (inline)",
                "k8s.io/apimachinery/pkg/watch.(*StreamWatcher).receive",
            ],
            pytest.approx(0.02),
        ),
        (["runtime.scanobject", "runtime.gcBgMarkWorker"], pytest.approx(1.03)),
    ]
    assert profile_real.shares(samples, KUBE) == pytest.approx(
        {
            "bind": 0.01 / 1.06,
            WATCH: 0.02 / 1.06,
            "Go runtime (GC, goroutine scheduling)": 1.03 / 1.06,
        }
    )


def test_the_table_puts_the_same_step_of_both_schedulers_in_one_row() -> None:
    results = [
        {
            "scenario": "one-pod-per-node",
            "nodes": 50,
            "config": "list",
            "scheduler": name,
            "cpu_ms_per_pod": 2.0,
            "stages": {
                WATCH: {"share": 0.5, "ms_per_pod": 1.0},
                "bind": {"share": 0.5, "ms_per_pod": 1.0},
            },
        }
        for name in ("ours-on", "kube-on")
    ]
    table = profile_real.markdown(results)
    assert "| bind | 1.00 (50%) | 1.00 (50%) |" in table
    assert f"| {WATCH} | 1.00 (50%) | 1.00 (50%) |" in table
