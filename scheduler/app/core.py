"""Build the scheduling core (cache, profiles, queue, Scheduler) from a configuration.

Shared by ``run`` (against a cluster), ``simulate`` (offline) and the benchmarks, so that
all three decide with exactly the same parts.
"""

from __future__ import annotations

import random
from typing import TYPE_CHECKING

from scheduler.app.plugin_loading import PluginRegistry
from scheduler.cache.cluster_state import ClusterState
from scheduler.cycle.schedule_one import BatchingSettings, Scheduler
from scheduler.framework.profile import Profile, build_profile
from scheduler.metrics.registry import Metrics
from scheduler.queueing.scheduling_queue import SchedulingQueue

if TYPE_CHECKING:
    from collections.abc import Mapping

    from scheduler.clock import Clock
    from scheduler.cycle.ports import BindDispatcher, GroupReporter, Preemptor, Reporter
    from scheduler.framework.config import SchedulerConfig
    from scheduler.framework.feature_gates import FeatureGates
    from scheduler.framework.profile import PluginFactory


def build_scheduler(
    config: SchedulerConfig,
    *,
    clock: Clock,
    binder: BindDispatcher,
    reporter: Reporter,
    batching: BatchingSettings,
    metrics: Metrics | None = None,
    seed: int | None = None,
    max_group: int = 256,
    preemptor: Preemptor | None = None,
    registry: Mapping[str, PluginFactory] | None = None,
    gates: FeatureGates | None = None,
    group_reporter: GroupReporter | None = None,
) -> Scheduler:
    """A Scheduler with a fresh cache and queue; raises ConfigError for bad plugin args.

    ``preemptor`` carries out what DefaultPreemption decides (``kube.preemption`` against a
    cluster); None evicts nothing, though nominations are still kept in memory. ``metrics``
    None: a registry of its own (simulate, explain, tests), so counts are never optional.
    ``registry`` None: the in-tree plugins only (``app.plugin_loading.load_registry`` adds
    the out-of-tree ones). ``gates``: the feature gates (the configuration was loaded
    under the same ones); ``group_reporter`` writes PodGroup conditions (None: nowhere)."""
    cluster = ClusterState()
    rng = random.Random(seed)
    if registry is None:
        registry = PluginRegistry()
    profiles: dict[str, Profile] = {}
    for profile_config in config.profiles:
        profiles[profile_config.scheduler_name] = build_profile(
            profile_config,
            registry=registry,
            snapshot=cluster.snapshot,
            default_percentage=config.percentage_of_nodes_to_score,
            rng=random.Random(rng.random()),
        )
    queue = SchedulingQueue(
        clock=clock,
        initial_backoff=config.pod_initial_backoff_seconds,
        max_backoff=config.pod_max_backoff_seconds,
        max_unschedulable_seconds=config.pod_max_in_unschedulable_pods_seconds,
        max_group=max_group,
    )
    return Scheduler(
        cluster=cluster,
        queue=queue,
        profiles=profiles,
        clock=clock,
        binder=binder,
        reporter=reporter,
        metrics=metrics or Metrics(),
        batching=batching,
        rng=random.Random(rng.random()),
        preemptor=preemptor,
        gates=gates,
        group_reporter=group_reporter,
    )
