"""Permit in the cycle, with the example package's Gang plugin (examples/plugins): a pod told
to wait keeps its assumption and is bound only once its gang is complete; a rejected or
timed-out one is unreserved, forgotten and requeued as unschedulable with kube's message;
a wait ends the batch state."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from scheduler.app.core import build_scheduler
from scheduler.app.explain import explain
from scheduler.app.local_binder import LocalBinder, attempt_queued
from scheduler.app.simulate import simulate
from scheduler.app.snapshot_file import snapshot_from_documents
from scheduler.batching.signature import BatchingMode
from scheduler.clock import FakeClock
from scheduler.cycle.eventhandlers import EventHandlers
from scheduler.cycle.schedule_one import BatchingSettings
from scheduler.framework.config import SchedulerConfig, load_config
from scheduler.model.parse import node_from_raw, pod_from_raw
from scheduler.plugins import in_tree_registry
from scheduler.queueing.queued_pod import Pool
from tests.builders import make_node, make_pod
from tests.example_plugins import ensure_installed
from tests.harness import RecordingReporter

if TYPE_CHECKING:
    from scheduler.cycle.schedule_one import Scheduler

ensure_installed()
from gang import GANG_LABEL, SIZE_ANNOTATION, Gang  # noqa: E402  (installed just above)


def _scheduler(timeout: float = 30.0) -> tuple[Scheduler, RecordingReporter]:
    config = load_config(
        {
            "apiVersion": "kubescheduler.config.k8s.io/v1",
            "kind": "KubeSchedulerConfiguration",
            "profiles": [
                {
                    "schedulerName": "batch-scheduler",
                    "plugins": {"multiPoint": {"enabled": [{"name": "Gang"}]}},
                    "pluginConfig": [{"name": "Gang", "args": {"timeoutSeconds": timeout}}],
                }
            ],
        },
        plugin_names={"Gang"},
    )
    binder, reporter = LocalBinder(), RecordingReporter()
    scheduler = build_scheduler(
        config,
        clock=FakeClock(),
        binder=binder,
        reporter=reporter,
        batching=BatchingSettings(mode=BatchingMode.ALL),
        registry={**in_tree_registry(), "Gang": Gang},
        seed=0,
    )
    binder.scheduler = scheduler
    handlers = EventHandlers(scheduler)
    for i in range(3):
        handlers.on_node(node_from_raw(make_node(f"n{i}", cpu="4")))
    return scheduler, reporter


def _member(name: str, size: int, gang: str = "g") -> Any:
    return pod_from_raw(
        make_pod(name, cpu="1", labels={GANG_LABEL: gang}, annotations={SIZE_ANNOTATION: str(size)})
    )


def test_a_waiting_pod_holds_its_node_until_its_gang_is_complete() -> None:
    scheduler, reporter = _scheduler()
    profile = scheduler.profiles["batch-scheduler"]
    first = _member("a", 2)
    scheduler.enqueue(first)
    list(attempt_queued(scheduler))
    assert reporter.bound == []
    assert scheduler.cluster.is_assumed(first.uid)  # its resources stay taken
    held = profile.get_waiting_pod(first.uid)
    assert held is not None
    assert held.pending_plugins() == ["Gang"]
    scheduler.enqueue(_member("b", 2))
    list(attempt_queued(scheduler))
    assert sorted(key for key, _ in reporter.bound) == ["default/a", "default/b"]
    assert profile.get_waiting_pod(first.uid) is None
    assert _waits(scheduler, "Success") == 1


def test_a_rejected_waiting_pod_is_unreserved_and_unschedulable() -> None:
    scheduler, reporter = _scheduler()
    pod = _member("a", 3)
    scheduler.enqueue(pod)
    list(attempt_queued(scheduler))
    assert scheduler.reject_waiting_pod(pod.uid)
    scheduler.binding.run_decided()
    assert not scheduler.cluster.is_assumed(pod.uid)
    assert scheduler.queue.pending()[Pool.UNSCHEDULABLE] == 1
    assert reporter.unschedulable_messages["default/a"] == "0/1 nodes are available: 1 removed."


def test_a_bad_gang_size_is_rejected_naming_pod_and_annotation() -> None:
    scheduler, reporter = _scheduler()
    scheduler.enqueue(_member("a", 0))
    list(attempt_queued(scheduler))
    message = reporter.unschedulable_messages["default/a"]
    assert "pod default/a: annotation example.io/gang-size: must be a positive integer" in message
    assert not scheduler.cluster.is_assumed(_member("a", 0).uid)


def test_a_wait_ends_the_batch_state() -> None:
    scheduler, _ = _scheduler()
    batch = scheduler.batches["batch-scheduler"]
    scheduler.enqueue(pod_from_raw(make_pod("plain", cpu="1")))
    list(attempt_queued(scheduler))
    assert batch.state is not None  # a full pass left its ranking
    scheduler.enqueue(_member("a", 2))
    list(attempt_queued(scheduler))
    assert batch.state is None


async def test_an_incomplete_gang_times_out_with_kubes_message() -> None:
    scheduler, reporter = _scheduler(timeout=0.05)
    pod = _member("a", 2)
    scheduler.enqueue(pod)
    list(attempt_queued(scheduler))
    await asyncio.sleep(0.2)
    assert not scheduler.cluster.is_assumed(pod.uid)
    assert reporter.unschedulable_messages["default/a"] == (
        "0/1 nodes are available: 1 rejected due to timeout after waiting 50ms at plugin Gang."
    )
    assert _waits(scheduler, "Unschedulable") == 1


def _waits(scheduler: Scheduler, result: str) -> float | None:
    """How many waits at Permit ended with ``result`` (scheduler_permit_wait_duration_seconds)."""
    return scheduler.metrics.registry.get_sample_value(
        "scheduler_permit_wait_duration_seconds_count", {"result": result}
    )


def _gang_config() -> SchedulerConfig:
    """One profile with Gang enabled, as simulate and explain load it."""
    return load_config(
        {
            "apiVersion": "kubescheduler.config.k8s.io/v1",
            "kind": "KubeSchedulerConfiguration",
            "profiles": [{"plugins": {"multiPoint": {"enabled": [{"name": "Gang"}]}}}],
        },
        default_scheduler_name="batch-scheduler",
        plugin_names={"Gang"},
    )


def test_simulate_places_a_complete_gang_and_times_out_an_incomplete_one() -> None:
    """Offline no timer runs: a pod still held when the run ends gets the timeout's reason."""
    docs: list[object] = [make_node("n0", cpu="4")]
    for name, gang, size in (("a-0", "a", 2), ("a-1", "a", 2), ("b-0", "b", 3)):
        labels, notes = {GANG_LABEL: gang}, {SIZE_ANNOTATION: str(size)}
        docs.append(make_pod(name, cpu="1", labels=labels, annotations=notes))
    config = _gang_config()
    report = simulate(
        snapshot_from_documents(docs, {"batch-scheduler"}),
        config,
        mode=BatchingMode.OFF,
        registry={**in_tree_registry(), "Gang": Gang},
    )
    rows = {row["pod"]: (row["node"], row["reason"]) for row in report["placements"]}
    assert rows == {
        "default/a-0": ("n0", None),
        "default/a-1": ("n0", None),
        "default/b-0": (
            None,
            "0/1 nodes are available: 1 rejected due to timeout after waiting 30s at plugin Gang.",
        ),
    }


def test_explain_lists_the_points_around_the_bind_and_says_gang_is_not_run() -> None:
    docs: list[object] = [make_node("n0", cpu="4")]
    notes = {SIZE_ANNOTATION: "2"}
    docs.append(make_pod("a-0", cpu="1", labels={GANG_LABEL: "a"}, annotations=notes))
    config = _gang_config()
    report = explain(
        snapshot_from_documents(docs, {"batch-scheduler"}),
        config,
        "default/a-0",
        registry={**in_tree_registry(), "Gang": Gang},
    )
    assert report["binding_points"] == {
        "pre_enqueue": ["SchedulingGates", "DynamicResources"],
        "reserve": ["VolumeBinding", "DynamicResources"],
        "permit": ["Gang"],
        "pre_bind": ["VolumeBinding", "DynamicResources"],
        "post_bind": [],
    }
    assert any("not run here: Reserve, Permit and PreBind of Gang" in n for n in report["notes"])
