"""Metrics: every collector exposed under kube's name and labels; instances are isolated."""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum

import pytest
from prometheus_client.parser import text_string_to_metric_families
from prometheus_client.samples import Sample

from scheduler.metrics import labels as L
from scheduler.metrics import registry as metrics

Use = Callable[[metrics.Metrics], None]

# (family name as parsed, type, label names, one use of the collector)
COLLECTORS: list[tuple[str, str, set[str], Use]] = [
    (
        "scheduler_podgroup_schedule_attempts",
        "counter",
        {"result", "profile"},
        lambda m: m.podgroup_schedule_attempts.labels(result="scheduled", profile="p").inc(),
    ),
    (
        "scheduler_podgroup_scheduling_attempt_duration_seconds",
        "histogram",
        {"result", "profile"},
        lambda m: m.podgroup_attempt_duration.labels(result="unschedulable", profile="p").observe(
            0.01
        ),
    ),
    (
        "scheduler_podgroup_scheduling_algorithm_duration_seconds",
        "histogram",
        set(),
        lambda m: m.podgroup_algorithm_duration.observe(0.01),
    ),
    (
        "scheduler_workload_preemption_attempts",
        "counter",
        {"result"},
        lambda m: m.workload_preemption_attempts.labels(result="Unschedulable").inc(),
    ),
    (
        "scheduler_schedule_attempts",
        "counter",
        {"result", "profile"},
        lambda m: m.schedule_attempts.labels(result=L.Result.SCHEDULED, profile="p").inc(),
    ),
    (
        "scheduler_scheduling_attempt_duration_seconds",
        "histogram",
        {"result", "profile"},
        lambda m: m.scheduling_attempt_duration.labels(result=L.Result.ERROR, profile="p").observe(
            0.01
        ),
    ),
    (
        "scheduler_pod_scheduling_sli_duration_seconds",
        "histogram",
        {"attempts"},
        lambda m: m.pod_scheduling_sli_duration.labels(attempts="1").observe(0.5),
    ),
    (
        "scheduler_pending_pods",
        "gauge",
        {"queue"},
        lambda m: m.pending_pods.labels(queue=L.QueueName.ACTIVE).set(3),
    ),
    (
        "scheduler_pod_scheduling_attempts",
        "histogram",
        set(),
        lambda m: m.pod_scheduling_attempts.observe(2),
    ),
    (
        "scheduler_plugin_execution_duration_seconds",
        "histogram",
        {"plugin", "extension_point", "status"},
        lambda m: m.plugin_execution_duration.labels(
            plugin="NodeResourcesFit", extension_point=L.ExtensionPoint.FILTER, status="Success"
        ).observe(1e-5),
    ),
    (
        "scheduler_permit_wait_duration_seconds",
        "histogram",
        {"result"},
        lambda m: m.permit_wait_duration.labels(result="Success").observe(0.01),
    ),
    (
        "scheduler_cache_size",
        "gauge",
        {"type"},
        lambda m: m.cache_size.labels(type="nodes").set(3),
    ),
    (
        "scheduler_framework_extension_point_duration_seconds",
        "histogram",
        {"extension_point", "status", "profile"},
        lambda m: m.framework_extension_point_duration.labels(
            extension_point=L.ExtensionPoint.FILTER, status="Success", profile="p"
        ).observe(0.001),
    ),
    (
        "scheduler_queue_incoming_pods",
        "counter",
        {"queue", "event"},
        lambda m: m.queue_incoming_pods.labels(queue=L.QueueName.BACKOFF, event="PodAdd").inc(),
    ),
    (
        "scheduler_unschedulable_pods",
        "gauge",
        {"plugin", "profile"},
        lambda m: m.unschedulable_pods.labels(plugin="NodeResourcesFit", profile="p").inc(),
    ),
    (
        "scheduler_preemption_attempts",
        "counter",
        set(),
        lambda m: m.preemption_attempts.inc(),
    ),
    (
        "scheduler_preemption_victims",
        "histogram",
        set(),
        lambda m: m.preemption_victims.observe(2),
    ),
    (
        "scheduler_batch_attempts",
        "counter",
        {"profile", "result"},
        lambda m: m.batch_attempts.labels(profile="p", result=L.BatchAttempt.HINT_USED).inc(),
    ),
    (
        "scheduler_batch_cache_flushed",
        "counter",
        {"profile", "reason"},
        lambda m: m.batch_cache_flushed.labels(
            profile="p", reason=L.BatchFlushReason.EXPIRED
        ).inc(),
    ),
    (
        "scheduler_get_node_hint_duration_seconds",
        "histogram",
        {"hinted", "profile"},
        lambda m: m.get_node_hint_duration.labels(hinted=L.Hinted.HINT, profile="p").observe(1e-5),
    ),
    (
        "scheduler_store_schedule_results_duration_seconds",
        "histogram",
        {"profile"},
        lambda m: m.store_schedule_results_duration.labels(profile="p").observe(1e-5),
    ),
    (
        "scheduler_batch_rescore_attempts",
        "counter",
        {"profile"},
        lambda m: m.batch_rescore_attempts.labels(profile="p").inc(),
    ),
    (
        "scheduler_batch_rescore_duration_seconds",
        "histogram",
        {"profile"},
        lambda m: m.batch_rescore_duration.labels(profile="p").observe(1e-5),
    ),
    (
        "batch_scheduler_batch_divergence",
        "counter",
        {"kind"},
        lambda m: m.batch_divergence.labels(kind=L.DivergenceKind.LOWER_SCORE).inc(),
    ),
    ("batch_scheduler_batch_verified", "counter", set(), lambda m: m.batch_verified.inc()),
    (
        "batch_scheduler_exact_batch",
        "counter",
        {"profile", "outcome"},
        lambda m: m.exact_batch.labels(profile="p", outcome=L.ExactOutcome.PLACED).inc(),
    ),
    (
        "batch_scheduler_unsignable_pods",
        "counter",
        {"plugin"},
        lambda m: m.unsignable_pods.labels(plugin="PodTopologySpread").inc(),
    ),
    (
        "batch_scheduler_default_spreading_unsignable_pods",
        "gauge",
        set(),
        lambda m: m.default_spreading_unsignable.set(1),
    ),
    (
        "batch_scheduler_batching_disabled",
        "gauge",
        {"profile", "plugin"},
        lambda m: m.batching_disabled.labels(profile="p", plugin="X").set(1),
    ),
    (
        "batch_scheduler_binds",
        "counter",
        {"result"},
        lambda m: m.binds.labels(result=L.BindResult.CONFLICT).inc(),
    ),
    (
        "batch_scheduler_decision_duration_seconds",
        "histogram",
        {"path"},
        lambda m: m.decision_duration.labels(path="hint").observe(0.00002),
    ),
    (
        "batch_scheduler_bind_duration_seconds",
        "histogram",
        set(),
        lambda m: m.bind_duration.observe(0.02),
    ),
    ("batch_scheduler_is_leader", "gauge", set(), lambda m: m.is_leader.set(1)),
    ("batch_scheduler_cache_nodes", "gauge", set(), lambda m: m.cache_nodes.set(5)),
    ("batch_scheduler_cache_pods", "gauge", set(), lambda m: m.cache_pods.set(7)),
    ("batch_scheduler_asyncio_tasks", "gauge", set(), lambda m: m.asyncio_tasks.set(9)),
    ("batch_scheduler_group_size", "histogram", set(), lambda m: m.group_size.observe(16)),
    ("batch_scheduler_events_dropped", "counter", set(), lambda m: m.events_dropped.inc()),
    ("batch_scheduler_report_queue", "gauge", set(), lambda m: m.report_queue.set(3)),
    (
        "batch_scheduler_reports_deduplicated",
        "counter",
        set(),
        lambda m: m.reports_deduplicated.inc(),
    ),
    ("batch_scheduler_report_retries", "counter", set(), lambda m: m.report_retries.inc()),
    ("batch_scheduler_report_failures", "counter", set(), lambda m: m.report_failures.inc()),
    (
        "batch_scheduler_report_delay_seconds",
        "histogram",
        {"kind", "reason"},
        lambda m: m.report_delay.labels(kind="condition", reason="FailedScheduling").observe(0.2),
    ),
    (
        "batch_scheduler_bad_objects",
        "counter",
        {"kind"},
        lambda m: m.bad_objects.labels(kind="Pod").inc(),
    ),
    (
        "batch_scheduler_cache_repairs",
        "counter",
        {"kind"},
        lambda m: m.cache_repairs.labels(kind="node").inc(),
    ),
]


def _families(m: metrics.Metrics) -> dict[str, tuple[str, list[Sample]]]:
    text = m.render().decode()
    return {f.name: (f.type, f.samples) for f in text_string_to_metric_families(text)}


def _value(m: metrics.Metrics, sample_name: str, **label_values: str) -> float | None:
    for _, samples in _families(m).values():
        for s in samples:
            if s.name == sample_name and s.labels == label_values:
                return s.value
    return None


@pytest.mark.parametrize(
    ("family", "kind", "label_names", "use"),
    [pytest.param(*c, id=c[0]) for c in COLLECTORS],
)
def test_collector_is_exposed_with_name_type_and_labels(
    family: str, kind: str, label_names: set[str], use: Use
) -> None:
    """After one use, the collector renders under its name, type and label names."""
    m = metrics.Metrics()
    use(m)
    families = _families(m)
    assert family in families
    got_kind, samples = families[family]
    assert got_kind == kind
    assert samples
    for sample in samples:
        assert set(sample.labels) - {"le"} == label_names
        assert not sample.name.endswith("_created")


def test_the_table_covers_every_registered_collector() -> None:
    """No collector is declared without a row in COLLECTORS (and none is missing)."""
    registered = {family.name for family in metrics.Metrics().registry.collect()}
    registered = {name for name in registered if not name.startswith("process_")}  # the library's
    assert registered == {c[0] for c in COLLECTORS}


@pytest.mark.parametrize(
    ("family", "bounds"),
    [
        pytest.param(
            "scheduler_scheduling_attempt_duration_seconds",
            [0.001 * 2**i for i in range(15)],
            id="attempt-1ms-x2-15",
        ),
        pytest.param(
            "scheduler_pod_scheduling_sli_duration_seconds",
            [0.01 * 2**i for i in range(20)],
            id="sli-10ms-x2-20",
        ),
        pytest.param(
            "scheduler_framework_extension_point_duration_seconds",
            [0.0001 * 2**i for i in range(12)],
            id="extension-point-0.1ms-x2-12",
        ),
        pytest.param(
            "scheduler_get_node_hint_duration_seconds",
            [0.00001 * 2**i for i in range(12)],
            id="hint-10us-x2-12",
        ),
        pytest.param(
            "batch_scheduler_group_size",
            [1, 2, 4, 8, 16, 32, 64, 128, 256],
            id="group-size-1-to-256",
        ),
    ],
)
def test_histogram_buckets_match_kube(family: str, bounds: list[float]) -> None:
    """Histogram upper bounds are kube's exponential buckets plus +Inf."""
    m = metrics.Metrics()
    use = next(c[3] for c in COLLECTORS if c[0] == family)
    use(m)
    _, samples = _families(m)[family]
    les = [float(s.labels["le"]) for s in samples if s.name == family + "_bucket"]
    assert les == pytest.approx([*bounds, float("inf")])


def test_two_instances_share_no_state() -> None:
    """Counts recorded on one Metrics never show in another; both register the same names."""
    a, b = metrics.Metrics(), metrics.Metrics()
    assert a.registry is not b.registry
    a.batch_attempts.labels(profile="p", result=L.BatchAttempt.NO_HINT).inc(2)
    a.is_leader.set(1)
    sample = "scheduler_batch_attempts_total"
    assert _value(a, sample, profile="p", result="no_hint") == 2
    assert _value(b, sample, profile="p", result="no_hint") is None
    assert _value(b, "batch_scheduler_is_leader") == 0


def test_observe_attempt_counts_and_times() -> None:
    """observe_attempt bumps the attempts counter and the duration histogram together."""
    m = metrics.Metrics()
    m.observe_attempt(L.Result.UNSCHEDULABLE, "default", 0.003)
    m.observe_attempt(L.Result.UNSCHEDULABLE, "default", 0.005)
    labels = {"result": "unschedulable", "profile": "default"}
    assert _value(m, "scheduler_schedule_attempts_total", **labels) == 2
    assert _value(m, "scheduler_scheduling_attempt_duration_seconds_count", **labels) == 2
    assert _value(
        m, "scheduler_scheduling_attempt_duration_seconds_sum", **labels
    ) == pytest.approx(0.008)


def test_render_is_prometheus_text_without_created_series() -> None:
    """render() is text exposition matching CONTENT_TYPE, with kube's HELP text and no _created."""
    m = metrics.Metrics()
    m.schedule_attempts.labels(result="scheduled", profile="p").inc()
    text = m.render().decode()
    assert metrics.CONTENT_TYPE.startswith("text/plain")
    assert "# TYPE scheduler_schedule_attempts_total counter" in text
    assert (
        "# HELP scheduler_batch_cache_flushed_total [ALPHA] Counts of cache flushes by reason."
        in text
    )
    assert "_created" not in text


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        pytest.param((1, 2, 3), (1, 2, 4), id="powers-of-two"),
        pytest.param((0.5, 3, 2), (0.5, 1.5), id="fractional-start"),
    ],
)
def test_exponential_buckets(args: tuple[float, float, int], expected: tuple[float, ...]) -> None:
    """exponential_buckets mirrors Go's metrics.ExponentialBuckets."""
    assert metrics.exponential_buckets(*args) == pytest.approx(expected)


@pytest.mark.parametrize(
    "args",
    [
        pytest.param((0, 2, 3), id="zero-start"),
        pytest.param((1, 1, 3), id="factor-one"),
        pytest.param((1, 2, 0), id="no-buckets"),
    ],
)
def test_exponential_buckets_refuses_bad_arguments(args: tuple[float, float, int]) -> None:
    """Degenerate bucket specs raise ValueError instead of a broken histogram."""
    with pytest.raises(ValueError):
        metrics.exponential_buckets(*args)


@pytest.mark.parametrize(
    ("enum", "values"),
    [
        pytest.param(L.Result, {"scheduled", "unschedulable", "error"}, id="result"),
        pytest.param(
            L.QueueName,
            {"active", "backoff", "unschedulable", "gated", "incomplete", "pending"},
            id="queue",
        ),
        pytest.param(
            L.ExtensionPoint,
            {
                "PreFilter",
                "Filter",
                "PostFilter",
                "PreScore",
                "Score",
                "ScoreExtensionNormalize",
                "Bind",
                "Sign",
            },
            id="extension-point",
        ),
        pytest.param(L.BatchAttempt, {"hint_used", "hint_not_used", "no_hint"}, id="batch-attempt"),
        pytest.param(L.Hinted, {"hint", "no_hint"}, id="hinted"),
        pytest.param(
            L.BatchFlushReason,
            {
                "pod_skipped",
                "pod_nominated",
                "pod_incompatible",
                "pod_not_batchable",
                "expired",
                "node_missing",
                "empty_list",
                "prescore_error",
                "rescore_error",
                "normalize_error",
                "bind_failed",
            },
            id="batch-flush-reason",
        ),
        pytest.param(
            L.DivergenceKind,
            {"hint_infeasible", "lower_score", "exact_mismatch"},
            id="divergence",
        ),
        pytest.param(
            L.ExactOutcome,
            {
                "placed",
                "built",
                "no_state",
                "nominated_pods",
                "no_feasible_node",
                "refused",
                "dropped",
                "recheck_failed",
                "score_range",
                "pod_state_differs",
            },
            id="exact-outcome",
        ),
        pytest.param(L.BindResult, {"success", "conflict", "error"}, id="bind-result"),
    ],
)
def test_label_values_are_exactly_the_documented_set(enum: type[StrEnum], values: set[str]) -> None:
    """Each label enum holds exactly its documented (mostly kube's) string values."""
    assert {str(member) for member in enum} == values


def test_enum_members_render_as_their_value() -> None:
    """A StrEnum label value is exposed as the plain string, not the member name."""
    m = metrics.Metrics()
    m.batch_cache_flushed.labels(profile="p", reason=L.BatchFlushReason.POD_NOT_BATCHABLE).inc()
    sample = "scheduler_batch_cache_flushed_total"
    assert _value(m, sample, profile="p", reason="pod_not_batchable") == 1


def test_by_label_and_total_read_counters_and_histograms() -> None:
    """The read side reports use: counters by label, histogram counts and sums, filters."""
    m = metrics.Metrics()
    m.schedule_attempts.labels(result="scheduled", profile="a").inc(3)
    m.schedule_attempts.labels(result="scheduled", profile="b").inc()
    m.schedule_attempts.labels(result="error", profile="a").inc()
    m.decision_duration.labels(path="hint").observe(0.5)
    m.decision_duration.labels(path="hint").observe(0.25)
    m.decision_duration.labels(path="full").observe(1.0)
    assert m.by_label(m.schedule_attempts, "result") == {"scheduled": 4.0, "error": 1.0}
    assert m.by_label(m.schedule_attempts, "result", profile="a") == {
        "scheduled": 3.0,
        "error": 1.0,
    }
    assert m.by_label(m.decision_duration, "path") == {"hint": 2.0, "full": 1.0}
    assert m.by_label(m.decision_duration, "path", field="sum") == {"hint": 0.75, "full": 1.0}
    assert m.total(m.schedule_attempts) == 5.0
    assert m.total(m.batch_verified) == 0.0
