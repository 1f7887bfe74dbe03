"""The metrics added for kube-scheduler parity, as a scrape reads them: names, HELP, buckets
and labels as kube's, and the values the scheduler sets."""

from __future__ import annotations

import asyncio

from prometheus_client.parser import text_string_to_metric_families

from scheduler.cycle.eventhandlers import EventHandlers
from scheduler.cycle.loop import run_flushes
from scheduler.framework.feature_gates import parse_feature_gates
from scheduler.metrics.registry import Metrics
from scheduler.model.parse import pod_from_raw
from scheduler.model.parse_pod_groups import pod_group_from_raw
from tests.builders import make_node, make_pod, make_pod_group
from tests.harness import scheduler_for


def _families(metrics: Metrics) -> dict[str, object]:
    return {f.name: f for f in text_string_to_metric_families(metrics.render().decode())}


def test_kube_names_help_and_buckets() -> None:
    text = Metrics().render().decode()
    assert "# HELP scheduler_pod_scheduling_attempts Number of attempts to successfully " in text
    assert "# TYPE scheduler_pod_scheduling_attempts histogram" in text
    assert (
        "# HELP scheduler_plugin_execution_duration_seconds [BETA] Duration for running a "
        "plugin at a specific extension point." in text
    )
    assert "# HELP scheduler_cache_size [ALPHA] Number of nodes, pods, and assumed" in text
    metrics = Metrics()
    metrics.pod_scheduling_attempts.observe(3)
    metrics.plugin_execution_duration.labels(
        plugin="NodeResourcesFit", extension_point="Filter", status="Success"
    ).observe(0.0001)
    text = metrics.render().decode()
    for bound in ("1.0", "2.0", "4.0", "8.0", "16.0"):
        assert f'scheduler_pod_scheduling_attempts_bucket{{le="{bound}"}}' in text
    assert 'scheduler_pod_scheduling_attempts_bucket{le="2.0"} 0.0' in text
    assert 'scheduler_pod_scheduling_attempts_bucket{le="4.0"} 1.0' in text
    # ExponentialBuckets(0.00001, 1.5, 20): 20 bounds and +Inf.
    buckets = [
        line for line in text.splitlines() if "plugin_execution_duration_seconds_bucket" in line
    ]
    assert len(buckets) == 21
    assert 'le="1e-05"' in buckets[0]


def test_process_metrics_are_exposed() -> None:
    families = _families(Metrics())
    assert {
        "process_resident_memory_bytes",
        "process_cpu_seconds",
        "process_start_time_seconds",
    } <= (set(families))


async def test_gated_pods_and_cache_sizes_are_set_by_the_flush() -> None:
    scheduler, _, _ = scheduler_for([make_node("n1"), make_node("n2")], auto_bind=False)
    handlers = EventHandlers(scheduler)
    for name in ("g1", "g2"):
        gated = make_pod(name, cpu="100m")
        gated["spec"]["schedulingGates"] = [{"name": "quota"}]
        handlers.on_pod(pod_from_raw(gated))
    handlers.on_pod(pod_from_raw(make_pod("free", cpu="100m")))
    flushes = asyncio.create_task(run_flushes(scheduler, interval=0.01))
    await asyncio.sleep(0.05)
    text = scheduler.metrics.render().decode()
    assert 'scheduler_pending_pods{queue="gated"} 2.0' in text
    assert 'scheduler_pending_pods{queue="active"} 1.0' in text
    assert 'scheduler_cache_size{type="nodes"} 2.0' in text
    assert 'scheduler_cache_size{type="assumed_pods"} 0.0' in text
    # Ungating one: it leaves the gated count for the active pool.
    handlers.on_pod(pod_from_raw(make_pod("g1", cpu="100m")))
    await asyncio.sleep(0.05)
    flushes.cancel()
    text = scheduler.metrics.render().decode()
    assert 'scheduler_pending_pods{queue="gated"} 1.0' in text
    assert 'scheduler_pending_pods{queue="active"} 2.0' in text


def test_a_bound_pod_observes_its_attempts() -> None:
    scheduler, _, _ = scheduler_for([make_node("n1")])
    handlers = EventHandlers(scheduler)
    handlers.on_pod(pod_from_raw(make_pod("a", cpu="100m")))
    run = scheduler.queue.try_pop()
    assert run is not None
    for info in run:
        scheduler.schedule_one(info)
    assert scheduler.metrics.total(scheduler.metrics.pod_scheduling_attempts) == 1
    assert scheduler.metrics.total(scheduler.metrics.pod_scheduling_attempts, field="sum") == 1


def _bind_all(sample: float, count: int = 6) -> tuple[dict[str, float], list[str]]:
    scheduler, _, _ = scheduler_for([make_node(f"n{i}") for i in range(4)], seed=3)
    for profile in scheduler.profiles.values():
        profile.timing.plugin_sample = sample
    handlers = EventHandlers(scheduler)
    for i in range(count):
        handlers.on_pod(pod_from_raw(make_pod(f"p{i}", cpu="100m")))
    while (run := scheduler.queue.try_pop()) is not None:
        for info in run:
            scheduler.schedule_one(info)
    metrics = scheduler.metrics
    points = metrics.by_label(metrics.plugin_execution_duration, "extension_point")
    nodes = []
    for i in range(count):
        pod = scheduler.cluster.get_pod(pod_from_raw(make_pod(f"p{i}", cpu="100m")).uid)
        nodes.append(pod.node_name if pod is not None else "")
    return points, nodes


def test_plugin_calls_are_timed_in_sampled_cycles_only() -> None:
    """kube's pluginMetricsSamplePercent (10 %): here every cycle, or none; the draw never
    touches the tie-breaking source, so the placements do not change."""
    timed, placed = _bind_all(1.0)
    untimed, placed_untimed = _bind_all(0.0)
    assert timed.get("PreFilter", 0) >= 6  # every PreFilter plugin, every cycle
    assert timed.get("PreScore", 0) >= 6
    assert untimed == {}
    assert placed == placed_untimed


async def test_group_members_waiting_aside_are_counted_as_kube_counts_them() -> None:
    """Members whose PodGroup does not exist yet count as queue="incomplete" (kube's
    incompletePodGroupPods); once it exists they join the group and leave that count."""
    gates = parse_feature_gates("GenericWorkload=true")
    scheduler, _, _ = scheduler_for([make_node("n1")], auto_bind=False, gates=gates)
    handlers = EventHandlers(scheduler)
    for name in ("m1", "m2"):
        handlers.on_pod(pod_from_raw(make_pod(name, cpu="100m", pod_group="pg1")))
    flushes = asyncio.create_task(run_flushes(scheduler, interval=0.01))
    await asyncio.sleep(0.05)
    text = scheduler.metrics.render().decode()
    assert 'scheduler_pending_pods{queue="incomplete"} 2.0' in text
    assert 'scheduler_pending_pods{queue="pending"} 0.0' in text
    handlers.on_object(pod_group_from_raw(make_pod_group("pg1", min_count=3)), None)
    await asyncio.sleep(0.05)
    flushes.cancel()
    text = scheduler.metrics.render().decode()
    assert 'scheduler_pending_pods{queue="incomplete"} 0.0' in text
    assert 'scheduler_pending_pods{queue="gated"} 2.0' in text  # 2 of minCount 3: held
