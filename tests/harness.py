"""Real parts, assembled small: a cluster, a profile and a Scheduler for unit and property tests."""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

from scheduler.app.core import build_scheduler
from scheduler.app.local_binder import LocalBinder, attempt_queued
from scheduler.batching.signature import BatchingMode
from scheduler.cache.cluster_state import ClusterState
from scheduler.clock import FakeClock
from scheduler.cycle.eventhandlers import EventHandlers
from scheduler.cycle.ports import Preemptor
from scheduler.cycle.schedule_one import BatchingSettings, Scheduler
from scheduler.framework.config import SchedulerConfig, default_config, load_config
from scheduler.framework.feature_gates import FeatureGates
from scheduler.framework.profile import Profile, build_profile
from scheduler.model.node import Node
from scheduler.model.parse import node_from_raw, pod_from_raw
from scheduler.model.pod import Pod
from scheduler.model.pod_groups import GroupCondition, PodGroup
from scheduler.plugins import in_tree_registry

Raw = dict[str, Any]


def pods(*raws: Raw) -> list[Pod]:
    return [pod_from_raw(r) for r in raws]


def nodes(*raws: Raw) -> list[Node]:
    return [node_from_raw(r) for r in raws]


def cluster_of(node_raws: list[Raw], assigned: list[Raw] | None = None) -> ClusterState:
    cluster = ClusterState()
    for raw in node_raws:
        cluster.add_node(node_from_raw(raw))
    for raw in assigned or []:
        cluster.add_pod(pod_from_raw(raw))
    return cluster


def profile_for(
    cluster: ClusterState,
    config: SchedulerConfig | None = None,
    *,
    seed: int = 0,
) -> Profile:
    config = config or default_config()
    return build_profile(
        config.profiles[0],
        registry=in_tree_registry(),
        snapshot=cluster.snapshot,
        default_percentage=config.percentage_of_nodes_to_score,
        rng=random.Random(seed),
    )


def config_with(**top: Any) -> SchedulerConfig:
    doc = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}
    doc.update(top)
    return load_config(doc)


@dataclass
class RecordingReporter:
    """An in-memory Reporter."""

    bound: list[tuple[str, str]] = field(default_factory=list)
    unschedulable_messages: dict[str, str] = field(default_factory=dict)
    failures: dict[str, str] = field(default_factory=dict)
    group_conditions: dict[str, GroupCondition] = field(default_factory=dict)

    def scheduled(self, pod: Pod, node: str) -> None:
        self.bound.append((pod.key, node))

    def unschedulable(self, pod: Pod, message: str) -> None:
        self.unschedulable_messages[pod.key] = message

    def failed(self, pod: Pod, message: str) -> None:
        self.failures[pod.key] = message

    def pod_group_condition(
        self, pod_group: PodGroup, condition_type: str, condition: GroupCondition
    ) -> None:
        self.group_conditions[pod_group.key] = condition


def scheduler_for(
    node_raws: list[Raw],
    *,
    mode: BatchingMode = BatchingMode.ALL,
    config: SchedulerConfig | None = None,
    auto_bind: bool = True,
    seed: int = 0,
    clock: FakeClock | None = None,
    max_batch_age: float | None = None,
    fast_rescore: bool = True,
    verify_ratio: float = 0.0,
    gates: FeatureGates | None = None,
    preemptor: Preemptor | None = None,
) -> tuple[Scheduler, LocalBinder, RecordingReporter]:
    """A scheduler over ``node_raws`` with an in-memory binder; batching options left out
    keep BatchingSettings' defaults."""
    defaults = BatchingSettings()
    binder = LocalBinder(auto=auto_bind)
    reporter = RecordingReporter()
    scheduler = build_scheduler(
        config or default_config(gates=gates),
        clock=clock or FakeClock(),
        binder=binder,
        reporter=reporter,
        batching=BatchingSettings(
            mode=mode,
            max_batch_age=defaults.max_batch_age if max_batch_age is None else max_batch_age,
            fast_rescore=fast_rescore,
            verify_ratio=verify_ratio,
        ),
        seed=seed,
        gates=gates,
        group_reporter=reporter,
        preemptor=preemptor,
    )
    binder.scheduler = scheduler
    handlers = EventHandlers(scheduler)  # the watch's way in
    for raw in node_raws:
        handlers.on_node(node_from_raw(raw))
    return scheduler, binder, reporter


def drain(scheduler: Scheduler) -> dict[str, str | None]:
    """Pop and schedule everything queued once; pod key → node (None: not placed)."""
    return {pod.key: node for pod, node in attempt_queued(scheduler)}
