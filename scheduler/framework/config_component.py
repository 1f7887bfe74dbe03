"""The component-level sections of KubeSchedulerConfiguration: ``leaderElection`` and
``clientConnection`` (componentbase's types), the leader-election flags laid over them, and
the notes ``run`` logs about fields accepted without the effect they have in kube-scheduler.

The profiles, plugins and the document itself are read by ``framework.config``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from scheduler.framework.config_values import (
    WITHOUT_EFFECT,
    ConfigError,
    as_bool,
    as_duration,
    as_int,
    as_mapping,
    as_str,
    as_str_or_empty,
    check_known,
)

if TYPE_CHECKING:
    from collections.abc import Mapping

    from scheduler.framework.config import SchedulerConfig

DEFAULT_SCHEDULER_NAME = "batch-scheduler"
MAX_LEASE_SECONDS = 2**31 - 1
"""A Lease's ``spec.leaseDurationSeconds`` is an int32."""
JITTER_FACTOR = 1.2
"""client-go's leader election: ``renewDeadline`` must exceed ``retryPeriod`` times this."""
MAX_INT32 = 2**31 - 1

JSON_CONTENT = "application/json"
PROTOBUF_CONTENT = "application/vnd.kubernetes.protobuf"
KUBE_DEFAULT_QPS = 50.0
"""kube-scheduler's ``clientConnection.qps`` when it is 0 (its defaulting)."""
KUBE_DEFAULT_BURST = 100
"""kube-scheduler's ``clientConnection.burst`` when it is 0 (its defaulting)."""
KUBE_LEASE = ("kube-system", "kube-scheduler")
"""kube-scheduler's own Lease (namespace, name): the default of a copied configuration."""


@dataclass(frozen=True, slots=True)
class LeaderElectionConfig:
    leader_elect: bool = False
    lease_duration: float = 15.0
    renew_deadline: float = 10.0
    retry_period: float = 2.0
    resource_name: str = DEFAULT_SCHEDULER_NAME
    resource_namespace: str = "kube-system"


@dataclass(frozen=True, slots=True)
class ClientConnectionConfig:
    """``clientConnection``: how the API client talks to the API server."""

    kubeconfig: str = ""
    """The kubeconfig file, when ``--kubeconfig`` is not given; empty: the client's default
    search (in-cluster, ``$KUBECONFIG``, ``~/.kube/config``)."""
    accept_content_types: str = ""
    """As given (we always ask for JSON: :func:`notes` says so when this asks otherwise)."""
    content_type: str = JSON_CONTENT
    """As given; requests are always JSON (protobuf is accepted with a note)."""
    qps: float | None = None
    """Requests per second of the client-side token bucket; None: no client-side limit (our
    default when the field is absent; kube-scheduler's is 50)."""
    burst: int = KUBE_DEFAULT_BURST
    """The token bucket's size (requests that may go at once after a quiet spell)."""


@dataclass(frozen=True, slots=True)
class ConfigNote:
    """A field accepted as kube-scheduler accepts it but not acted on as it would be."""

    path: str
    message: str
    warning: bool = False
    """True: the field as given may surprise (log a warning, not an info line)."""


def notes(config: SchedulerConfig) -> tuple[ConfigNote, ...]:
    """What ``run`` should say about fields it accepts without acting on them as kube does."""
    out: list[ConfigNote] = []
    connection = config.client_connection
    if connection.content_type != JSON_CONTENT:
        out.append(
            ConfigNote(
                "clientConnection.contentType",
                f"{connection.content_type} is accepted, but requests are sent as JSON",
            )
        )
    if connection.accept_content_types not in ("", JSON_CONTENT):
        out.append(
            ConfigNote(
                "clientConnection.acceptContentTypes",
                f"{connection.accept_content_types} is accepted, but responses are asked for "
                "as JSON",
            )
        )
    if config.enable_profiling:
        out.append(
            ConfigNote(
                "enableProfiling",
                "has no effect: there is no /debug/pprof (profile the process with py-spy)",
            )
        )
    if config.enable_contention_profiling:
        out.append(ConfigNote("enableContentionProfiling", "has no effect: no /debug/pprof"))
    if config.delay_cache_until_active:
        out.append(
            ConfigNote(
                "delayCacheUntilActive",
                "has no effect: every replica fills its cache at once, so a new leader "
                "schedules without a LIST first",
            )
        )
    out.extend(
        ConfigNote(
            f"profiles[{i}].plugins",
            f"{name} is enabled but not implemented here, so it has no effect: "
            f"{WITHOUT_EFFECT[name]}",
            warning=True,
        )
        for i, profile in enumerate(config.profiles)
        for name in profile.without_effect
    )
    election = config.leader_election
    lease = (election.resource_namespace, election.resource_name)
    if election.leader_elect and lease == KUBE_LEASE:
        out.append(
            ConfigNote(
                "leaderElection.resourceName",
                "is kube-scheduler's own Lease (kube-system/kube-scheduler): this scheduler and "
                "kube-scheduler will take turns leading, never both at once",
                warning=True,
            )
        )
    return tuple(out)


LEADER_ELECTION_FLAGS = {
    "lease_duration": "--leader-elect-lease-duration",
    "renew_deadline": "--leader-elect-renew-deadline",
    "retry_period": "--leader-elect-retry-period",
    "resource_lock": "--leader-elect-resource-lock",
    "resource_name": "--leader-elect-resource-name",
    "resource_namespace": "--leader-elect-resource-namespace",
}
"""The leader-election flags kube-scheduler lays over the file's ``leaderElection``."""
_ELECTION_PATHS = {
    "lease_duration": "leaderElection.leaseDuration",
    "renew_deadline": "leaderElection.renewDeadline",
    "retry_period": "leaderElection.retryPeriod",
}


def with_flags(
    config: SchedulerConfig,
    *,
    pod_max_in_unschedulable_pods_duration: str | None = None,
    **election: str | None,
) -> SchedulerConfig:
    """The configuration with the flags given laid over it, as kube-scheduler's
    ``ApplyLeaderElectionTo`` does (a flag wins over the file), validated again.

    ``election`` takes the keys of :data:`LEADER_ELECTION_FLAGS` (Go durations such as
    ``15s`` for the three timings); a ConfigError names the flag when a flag is to blame.
    """
    if pod_max_in_unschedulable_pods_duration is not None:
        config = replace(
            config,
            pod_max_in_unschedulable_pods_seconds=as_duration(
                pod_max_in_unschedulable_pods_duration, "--pod-max-in-unschedulable-pods-duration"
            ),
        )
    unknown = set(election) - set(LEADER_ELECTION_FLAGS)
    if unknown:
        raise TypeError(f"with_flags: unknown leader-election flags {sorted(unknown)}")
    given = {name: value for name, value in election.items() if value is not None}
    if not given:
        return config
    paths = dict(_ELECTION_PATHS)

    def duration(name: str, current: float) -> float:
        if name not in given:
            return current
        paths[name] = LEADER_ELECTION_FLAGS[name]
        return as_duration(given[name], paths[name])

    def text(name: str, current: str) -> str:
        return as_str(given[name], LEADER_ELECTION_FLAGS[name]) if name in given else current

    if "resource_lock" in given:
        _check_lock(given["resource_lock"], LEADER_ELECTION_FLAGS["resource_lock"])
    old = config.leader_election
    merged = replace(
        old,
        lease_duration=duration("lease_duration", old.lease_duration),
        renew_deadline=duration("renew_deadline", old.renew_deadline),
        retry_period=duration("retry_period", old.retry_period),
        resource_name=text("resource_name", old.resource_name),
        resource_namespace=text("resource_namespace", old.resource_namespace),
    )
    _check_election(merged, paths)
    return replace(config, leader_election=merged)


def client_connection(raw: object) -> ClientConnectionConfig:
    path = "clientConnection"
    doc = as_mapping(raw or {}, path)
    check_known(doc, path, {"kubeconfig", "acceptContentTypes", "contentType", "qps", "burst"})
    content_type = as_str_or_empty(doc.get("contentType", ""), f"{path}.contentType")
    if content_type not in ("", JSON_CONTENT, PROTOBUF_CONTENT):
        raise ConfigError(
            f"{path}.contentType",
            f"must be {JSON_CONTENT!r} or {PROTOBUF_CONTENT!r}, got {content_type!r}",
        )
    qps: float | None = None
    if "qps" in doc:
        raw_qps = doc["qps"]
        if isinstance(raw_qps, bool) or not isinstance(raw_qps, (int, float)):
            raise ConfigError(f"{path}.qps", f"must be a number, got {raw_qps!r}")
        if not math.isfinite(raw_qps):
            raise ConfigError(f"{path}.qps", f"must be a finite number, got {raw_qps!r}")
        # kube-scheduler's defaulting turns 0 into 50; client-go sets no limiter below 0.
        qps = KUBE_DEFAULT_QPS if raw_qps == 0 else float(raw_qps) if raw_qps > 0 else None
    burst = as_int(doc.get("burst", 0), f"{path}.burst", 0, MAX_INT32) or KUBE_DEFAULT_BURST
    return ClientConnectionConfig(
        kubeconfig=as_str_or_empty(doc.get("kubeconfig", ""), f"{path}.kubeconfig"),
        accept_content_types=as_str_or_empty(
            doc.get("acceptContentTypes", ""), f"{path}.acceptContentTypes"
        ),
        content_type=content_type or JSON_CONTENT,
        qps=qps,
        burst=burst,
    )


def leader_election(raw: object, default_name: str) -> LeaderElectionConfig:
    path = "leaderElection"
    doc = as_mapping(raw or {}, path)
    check_known(
        doc,
        path,
        {
            "leaderElect",
            "leaseDuration",
            "renewDeadline",
            "retryPeriod",
            "resourceLock",
            "resourceName",
            "resourceNamespace",
        },
    )
    _check_lock(doc.get("resourceLock", "leases"), f"{path}.resourceLock")
    elect = as_bool(doc.get("leaderElect", False), f"{path}.leaderElect")
    config = LeaderElectionConfig(
        leader_elect=elect,
        lease_duration=as_duration(doc.get("leaseDuration", "15s"), f"{path}.leaseDuration"),
        renew_deadline=as_duration(doc.get("renewDeadline", "10s"), f"{path}.renewDeadline"),
        retry_period=as_duration(doc.get("retryPeriod", "2s"), f"{path}.retryPeriod"),
        resource_name=as_str(doc.get("resourceName", default_name), f"{path}.resourceName"),
        resource_namespace=as_str(
            doc.get("resourceNamespace", "kube-system"), f"{path}.resourceNamespace"
        ),
    )
    _check_election(config, _ELECTION_PATHS)
    return config


def _check_lock(lock: object, path: str) -> None:
    if lock != "leases":
        raise ConfigError(path, f"only 'leases' is supported, got {lock!r}")


def _check_election(config: LeaderElectionConfig, paths: Mapping[str, str]) -> None:
    """componentbase's ValidateLeaderElectionConfiguration, client-go's NewLeaderElector, and
    the Lease API (leaseDurationSeconds is an int32, rounded up from the duration); ``paths``
    names each timing (a config path, or the flag that set it)."""
    lease, renew = paths["lease_duration"], paths["renew_deadline"]
    if math.ceil(config.lease_duration) > MAX_LEASE_SECONDS:
        raise ConfigError(
            lease,
            f"must be at most {MAX_LEASE_SECONDS}s (a Lease's leaseDurationSeconds is an int32)",
        )
    if config.lease_duration <= config.renew_deadline:
        raise ConfigError(
            lease,
            f"must be greater than the renew deadline ({config.renew_deadline:g}s, {renew})",
        )
    if config.renew_deadline <= JITTER_FACTOR * config.retry_period:
        raise ConfigError(
            renew,
            f"must be greater than the retry period times {JITTER_FACTOR} "
            f"({config.retry_period:g}s, {paths['retry_period']})",
        )
