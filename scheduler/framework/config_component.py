"""The component-level sections of KubeSchedulerConfiguration: ``leaderElection`` and
``clientConnection`` (componentbase's types) and their checks.

The profiles, plugins and the document itself are read by ``framework.config``; the flags
``run`` lays over them and the notes it logs are ``framework.config_run``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from scheduler.framework.config_values import (
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
ELECTION_PATHS = {
    "lease_duration": "leaderElection.leaseDuration",
    "renew_deadline": "leaderElection.renewDeadline",
    "retry_period": "leaderElection.retryPeriod",
}
"""Where each leader-election timing comes from, for the errors that name it."""


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
    """As given (we always ask for JSON: ``config_run.notes`` says so when this asks
    otherwise)."""
    content_type: str = JSON_CONTENT
    """As given; requests are always JSON (protobuf is accepted with a note)."""
    qps: float | None = None
    """Requests per second of the client-side token bucket; None: no client-side limit (our
    default when the field is absent; kube-scheduler's is 50)."""
    burst: int = KUBE_DEFAULT_BURST
    """The token bucket's size (requests that may go at once after a quiet spell)."""


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
    check_lock(doc.get("resourceLock", "leases"), f"{path}.resourceLock")
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
    check_election(config, ELECTION_PATHS)
    return config


def check_lock(lock: object, path: str) -> None:
    if lock != "leases":
        raise ConfigError(path, f"only 'leases' is supported, got {lock!r}")


def check_election(config: LeaderElectionConfig, paths: Mapping[str, str]) -> None:
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
