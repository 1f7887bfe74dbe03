"""What ``run`` does with a loaded configuration: the flags kube-scheduler lays over the
file (``with_flags``), and the notes it logs about fields accepted without the effect they
have in kube-scheduler (``notes``).

framework.config reads the document; framework.config_component its component sections.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from scheduler.framework.config_component import (
    ELECTION_PATHS,
    JSON_CONTENT,
    KUBE_LEASE,
    check_election,
    check_lock,
)
from scheduler.framework.config_values import WITHOUT_EFFECT, as_duration, as_str

if TYPE_CHECKING:
    from scheduler.framework.config import SchedulerConfig


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
    paths = dict(ELECTION_PATHS)

    def duration(name: str, current: float) -> float:
        if name not in given:
            return current
        paths[name] = LEADER_ELECTION_FLAGS[name]
        return as_duration(given[name], paths[name])

    def text(name: str, current: str) -> str:
        return as_str(given[name], LEADER_ELECTION_FLAGS[name]) if name in given else current

    if "resource_lock" in given:
        check_lock(given["resource_lock"], LEADER_ELECTION_FLAGS["resource_lock"])
    old = config.leader_election
    merged = replace(
        old,
        lease_duration=duration("lease_duration", old.lease_duration),
        renew_deadline=duration("renew_deadline", old.renew_deadline),
        retry_period=duration("retry_period", old.retry_period),
        resource_name=text("resource_name", old.resource_name),
        resource_namespace=text("resource_namespace", old.resource_namespace),
    )
    check_election(merged, paths)
    return replace(config, leader_election=merged)
