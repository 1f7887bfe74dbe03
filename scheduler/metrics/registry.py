"""Prometheus metrics: one `Metrics` instance owns every collector.

Collectors live on an instance with its own `CollectorRegistry`, not in the
process-global default registry, so nothing happens at import time and two
schedulers (or two tests) in one process never share counts. The composition
root creates one `Metrics`, hands it to the layers that record, and serves
`Metrics.render` on ``/metrics`` with `CONTENT_TYPE`.

Names, help texts, label names and buckets are kube-scheduler's where a
counterpart exists (kubernetes/kubernetes ``pkg/scheduler/metrics/metrics.go``,
including KEP-5598's ``scheduler_batch_*`` family), so kube-scheduler dashboards
read this scheduler too. Metrics with no kube counterpart carry the
``batch_scheduler_`` prefix. Closed label-value sets are in
`scheduler.metrics.labels`.

`Metrics.render` leaves out prometheus_client's ``*_created`` samples: kube
does not expose them, and switching them off globally would touch process state.

A leaf package: it imports nothing else from ``scheduler``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, ProcessCollector
from prometheus_client.exposition import CONTENT_TYPE_LATEST, generate_latest
from prometheus_client.metrics_core import Metric

if TYPE_CHECKING:
    from collections.abc import Iterator

    from scheduler.metrics import labels

__all__ = ["CONTENT_TYPE", "Metrics", "exponential_buckets"]

#: The ``Content-Type`` of `Metrics.render`'s output.
CONTENT_TYPE: str = CONTENT_TYPE_LATEST


def exponential_buckets(start: float, factor: float, count: int) -> tuple[float, ...]:
    """``count`` upper bounds ``start * factor**i`` (Go's ``metrics.ExponentialBuckets``)."""
    if start <= 0 or factor <= 1 or count < 1:
        raise ValueError(f"exponential_buckets({start}, {factor}, {count}): bad arguments")
    return tuple(start * factor**i for i in range(count))


class Metrics:
    """Every collector of the scheduler, registered in `registry`.

    Record with the collectors directly, passing label values from
    `scheduler.metrics.labels` where the set is closed, e.g.
    ``metrics.batch_cache_flushed.labels(profile=p, reason=BatchFlushReason.EXPIRED).inc()``.
    """

    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        r = self.registry

        # --- kube-scheduler: scheduling attempts and queue ----------------------
        self.schedule_attempts = Counter(
            "scheduler_schedule_attempts_total",
            "Number of attempts to schedule pods, by the result. 'unschedulable' means a pod "
            "could not be scheduled, while 'error' means an internal scheduler problem.",
            ["result", "profile"],
            registry=r,
        )
        self.scheduling_attempt_duration = Histogram(
            "scheduler_scheduling_attempt_duration_seconds",
            "Scheduling attempt latency in seconds (scheduling algorithm + binding)",
            ["result", "profile"],
            buckets=exponential_buckets(0.001, 2, 15),
            registry=r,
        )
        self.pod_scheduling_sli_duration = Histogram(
            "scheduler_pod_scheduling_sli_duration_seconds",
            "E2e latency for a pod being scheduled, from the time the pod enters the scheduling "
            "queue and might involve multiple scheduling attempts.",
            ["attempts"],
            buckets=exponential_buckets(0.01, 2, 20),
            registry=r,
        )
        self.pod_scheduling_attempts = Histogram(
            "scheduler_pod_scheduling_attempts",
            "Number of attempts to successfully schedule a pod.",
            buckets=exponential_buckets(1, 2, 5),
            registry=r,
        )
        self.pending_pods = Gauge(
            "scheduler_pending_pods",
            "Number of pending pods, by the queue type. 'active' means number of pods in "
            "activeQ; 'backoff' means number of pods in backoffQ; 'unschedulable' means number "
            "of pods in unschedulablePods that the scheduler attempted to schedule and failed; "
            "'gated' is the number of unschedulable pods that the scheduler never attempted to "
            "schedule because they are gated; 'incomplete' means number of pods in "
            "incompletePodGroupPods; 'pending' means number of pods in pendingPodGroupPods.",
            ["queue"],
            registry=r,
        )
        self.framework_extension_point_duration = Histogram(
            "scheduler_framework_extension_point_duration_seconds",
            "Latency for running all plugins of a specific extension point.",
            ["extension_point", "status", "profile"],
            buckets=exponential_buckets(0.0001, 2, 12),
            registry=r,
        )
        self.permit_wait_duration = Histogram(
            "scheduler_permit_wait_duration_seconds",
            "[BETA] Duration of waiting on permit.",
            ["result"],
            buckets=exponential_buckets(0.001, 2, 15),
            registry=r,
        )
        # kube times each plugin call in a sample of cycles (pluginMetricsSamplePercent).
        self.plugin_execution_duration = Histogram(
            "scheduler_plugin_execution_duration_seconds",
            "[BETA] Duration for running a plugin at a specific extension point.",
            ["plugin", "extension_point", "status"],
            buckets=exponential_buckets(0.00001, 1.5, 20),
            registry=r,
        )
        self.cache_size = Gauge(
            "scheduler_cache_size",
            "[ALPHA] Number of nodes, pods, and assumed (bound) pods in the scheduler cache.",
            ["type"],
            registry=r,
        )
        self.preemption_attempts = Counter(
            "scheduler_preemption_attempts_total",
            "Total preemption attempts in the cluster till now",
            registry=r,
        )
        self.preemption_victims = Histogram(
            "scheduler_preemption_victims",
            "Number of selected preemption victims for preemption initiated by a single pod",
            # kube: #victims > 64 is rare, so [64, +Inf) is one bucket.
            buckets=exponential_buckets(1, 2, 7),
            registry=r,
        )
        self.queue_incoming_pods = Counter(
            "scheduler_queue_incoming_pods_total",
            "Number of pods added to scheduling queues by event and queue type.",
            ["queue", "event"],
            registry=r,
        )
        self.unschedulable_pods = Gauge(
            "scheduler_unschedulable_pods",
            "The number of unschedulable pods broken down by plugin name. A pod will increment "
            "the gauge for all plugins that caused it to not schedule and so this metric have "
            "meaning only when broken down by plugin.",
            ["plugin", "profile"],
            registry=r,
        )

        # --- kube-scheduler: pod groups (GenericWorkload) ---------------------------
        self.podgroup_schedule_attempts = Counter(
            "scheduler_podgroup_schedule_attempts_total",
            "Number of attempts to schedule pod group, by the result. 'unschedulable' means a "
            "pod group could not be scheduled, while 'error' means an internal scheduler "
            "problem.",
            ["result", "profile"],
            registry=r,
        )
        self.podgroup_attempt_duration = Histogram(
            "scheduler_podgroup_scheduling_attempt_duration_seconds",
            "Pod group scheduling attempt latency in seconds",
            ["result", "profile"],
            buckets=exponential_buckets(0.001, 2, 15),
            registry=r,
        )
        self.podgroup_algorithm_duration = Histogram(
            "scheduler_podgroup_scheduling_algorithm_duration_seconds",
            "Pod group scheduling algorithm latency in seconds",
            buckets=exponential_buckets(0.001, 2, 15),
            registry=r,
        )
        self.workload_preemption_attempts = Counter(
            "scheduler_workload_preemption_attempts_total",
            "Total preemption attempts initiated by workload (including pod groups) in the "
            "cluster till now.",
            ["result"],
            registry=r,
        )

        # process_* (CPU, RSS, open files, start time), as every kube component exposes.
        ProcessCollector(registry=r)

        # --- kube-scheduler: KEP-5598 opportunistic batching --------------------
        # kube's component-base prefixes HELP with the stability level: these are ALPHA.
        self.batch_attempts = Counter(
            "scheduler_batch_attempts_total",
            "[ALPHA] Counts of results when we attempt to use batching.",
            ["profile", "result"],
            registry=r,
        )
        self.batch_cache_flushed = Counter(
            "scheduler_batch_cache_flushed_total",
            "[ALPHA] Counts of cache flushes by reason.",
            ["profile", "reason"],
            registry=r,
        )
        self.get_node_hint_duration = Histogram(
            "scheduler_get_node_hint_duration_seconds",
            "[ALPHA] Latency for getting a node hint.",
            ["hinted", "profile"],
            buckets=exponential_buckets(0.00001, 2, 12),
            registry=r,
        )
        self.store_schedule_results_duration = Histogram(
            "scheduler_store_schedule_results_duration_seconds",
            "[ALPHA] Latency for storing scheduling results.",
            ["profile"],
            buckets=exponential_buckets(0.00001, 2, 12),
            registry=r,
        )
        self.batch_rescore_attempts = Counter(
            "scheduler_batch_rescore_attempts_total",
            "[ALPHA] Counts of rescore attempts during opportunistic batching.",
            ["profile"],
            registry=r,
        )
        self.batch_rescore_duration = Histogram(
            "scheduler_batch_rescore_duration_seconds",
            "[ALPHA] Latency for rescoring a node during opportunistic batching.",
            ["profile"],
            buckets=exponential_buckets(0.00001, 2, 12),
            registry=r,
        )

        # --- ours ----------------------------------------------------------------
        self.batch_divergence = Counter(
            "batch_scheduler_batch_divergence_total",
            "Batched placements that differ from what a full pass would choose, by kind.",
            ["kind"],
            registry=r,
        )
        self.batch_verified = Counter(
            "batch_scheduler_batch_verified_total",
            "Batched placements checked against a full pass (--batching-verify-ratio).",
            registry=r,
        )
        self.exact_batch = Counter(
            "batch_scheduler_exact_batch_total",
            "What the exact batch (spread and self-affinity pods, placed as a full pass "
            "would) did for a pod of its signatures: placed (the exact path chose the "
            "node), built (a state was counted for the signature first), or the reason a "
            "full pass ran instead (no_state, nominated_pods, no_feasible_node, refused, "
            "dropped, recheck_failed, score_range).",
            ["profile", "outcome"],
            registry=r,
        )
        self.unsignable_pods = Counter(
            "batch_scheduler_unsignable_pods_total",
            "Pods that could not be signed for batching, by the plugin that refused.",
            ["plugin"],
            registry=r,
        )
        self.default_spreading_unsignable = Gauge(
            "batch_scheduler_default_spreading_unsignable_pods",
            "Queued pods that only default topology spreading keeps from batching "
            "(PodTopologySpread defaultingType System, or List with defaultConstraints, and a "
            "Service or controller selecting the pod).",
            registry=r,
        )
        self.batching_disabled = Gauge(
            "batch_scheduler_batching_disabled",
            "1 when a profile cannot batch because the named plugin cannot sign pods.",
            ["profile", "plugin"],
            registry=r,
        )
        self.decision_duration = Histogram(
            "batch_scheduler_decision_duration_seconds",
            "Time one scheduling cycle spends deciding (hint and recheck, or the full pass), "
            "up to the assume, by path: hint, rescore, exact or full. Finer buckets than "
            "scheduler_scheduling_attempt_duration_seconds, whose first bucket is 1 ms.",
            ["path"],
            buckets=exponential_buckets(0.000002, 1.5, 30),
            registry=r,
        )
        self.binds = Counter(
            "batch_scheduler_binds_total",
            "Bind API calls by result: success, conflict (409) or error.",
            ["result"],
            registry=r,
        )
        self.bind_duration = Histogram(
            "batch_scheduler_bind_duration_seconds",
            "Latency of the bind API call in seconds.",
            buckets=exponential_buckets(0.001, 2, 15),
            registry=r,
        )
        self.is_leader = Gauge(
            "batch_scheduler_is_leader",
            "1 while this replica holds the leader lease, else 0.",
            registry=r,
        )
        self.cache_nodes = Gauge(
            "batch_scheduler_cache_nodes",
            "Number of nodes in the scheduler cache.",
            registry=r,
        )
        self.cache_pods = Gauge(
            "batch_scheduler_cache_pods",
            "Number of pods (assigned and assumed) in the scheduler cache.",
            registry=r,
        )
        self.asyncio_tasks = Gauge(
            "batch_scheduler_asyncio_tasks",
            "asyncio tasks alive in the process, counted at scrape time (leak detection).",
            registry=r,
        )
        self.group_size = Histogram(
            "batch_scheduler_group_size",
            "Pods scheduled as one same-signature run (popped one at a time from the queue).",
            buckets=exponential_buckets(1, 2, 9),  # 1, 2, 4, ..., 256
            registry=r,
        )
        self.events_dropped = Counter(
            "batch_scheduler_events_dropped_total",
            "Events (or, failing those, condition patches) dropped: the reporter's queue was full.",
            registry=r,
        )
        self.report_queue = Gauge(
            "batch_scheduler_report_queue",
            "Reports (condition patches and Events) waiting to be written, retries included, "
            "read at scrape time: a backlog that grows means the API server answers too slowly.",
            registry=r,
        )
        self.reports_deduplicated = Counter(
            "batch_scheduler_reports_deduplicated_total",
            "Reports (an Event and its condition) suppressed as repeats within the window.",
            registry=r,
        )
        self.report_retries = Counter(
            "batch_scheduler_report_retries_total",
            "Event posts and condition patches put back after a 429, 5xx or lost connection.",
            registry=r,
        )
        self.report_failures = Counter(
            "batch_scheduler_report_failures_total",
            "Event posts and condition patches given up (not retriable, or too many attempts).",
            registry=r,
        )
        self.report_delay = Histogram(
            "batch_scheduler_report_delay_seconds",
            "Seconds from a scheduling attempt's report to its write in the API (kind "
            "condition|event; reason Scheduled|FailedScheduling), queueing and retries after "
            "write faults included.",
            ["kind", "reason"],
            buckets=exponential_buckets(0.01, 2, 15),  # 10 ms .. about 164 s
            registry=r,
        )
        self.bad_objects = Counter(
            "batch_scheduler_bad_objects_total",
            "Objects rejected as malformed (and skipped), by kind.",
            ["kind"],
            registry=r,
        )
        self.cache_repairs = Counter(
            "batch_scheduler_cache_repairs_total",
            "Cached objects (kind: each watched kind, singular, e.g. node, pod, service) the "
            "periodic safety-net LIST removed: deleted in the API, yet missed by both the watch "
            "and the re-list handling. Should stay 0.",
            ["kind"],
            registry=r,
        )

    def observe_attempt(self, result: labels.Result, profile: str, seconds: float) -> None:
        """Record one scheduling attempt: count it and observe its duration."""
        self.schedule_attempts.labels(result=result, profile=profile).inc()
        self.scheduling_attempt_duration.labels(result=result, profile=profile).observe(seconds)

    def by_label(
        self, collector: Counter | Histogram, label: str, *, field: str = "", **where: str
    ) -> dict[str, float]:
        """The current values of ``collector`` summed per value of ``label``, over the
        samples whose labels match ``where``: a Counter's totals, a Histogram's
        observation counts (``field="sum"``: their sums). The one way reports (simulate,
        the demo, the run summary, bench) read counts: metrics are the only count."""
        suffix = "_" + (field or ("count" if isinstance(collector, Histogram) else "total"))
        values: dict[str, float] = {}
        for family in collector.collect():
            for sample in family.samples:
                if not sample.name.endswith(suffix):
                    continue
                if any(sample.labels.get(k) != v for k, v in where.items()):
                    continue
                key = sample.labels.get(label, "")
                values[key] = values.get(key, 0.0) + sample.value
        return values

    def total(self, collector: Counter | Histogram, *, field: str = "", **where: str) -> float:
        """``by_label`` summed over every label value."""
        return sum(self.by_label(collector, "", field=field, **where).values())

    def render(self) -> bytes:
        """The Prometheus text exposition of this instance's registry."""
        return generate_latest(_WithoutCreated(self.registry))


class _WithoutCreated:
    """A view of a registry whose counters and histograms lack ``*_created`` samples."""

    __slots__ = ("_registry",)

    def __init__(self, registry: CollectorRegistry) -> None:
        self._registry = registry

    def collect(self) -> Iterator[Metric]:
        for family in self._registry.collect():
            created = family.name + "_created"
            if not any(sample.name == created for sample in family.samples):
                yield family
                continue
            trimmed = Metric(family.name, family.documentation, family.type, family.unit)
            trimmed.samples = [s for s in family.samples if s.name != created]
            yield trimmed
