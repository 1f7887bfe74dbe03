"""SchedulerSettings: everything ``run`` needs to know that is not the scheduler configuration.

The KubeSchedulerConfiguration file (``app.config_file`` → ``framework.config``) describes
*how to decide* (profiles, plugins, backoff, leader-election timings); these settings
describe *the process*: where the cluster is, which batching mode, how binds and reports are
written, how metrics are served (HTTPS as kube-scheduler serves them, or plain HTTP for local
use). The CLI builds them from flags (``cli.main``, whose defaults are read from these
dataclasses), the demo and the end-to-end tests build them directly, and ``app.runtime``
consumes them. Logging is configured by the CLI before any of
this runs (``logs.setup``).

Plain frozen dataclasses with attribute docstrings (kopf's settings style): every field has
a default a human can run with, units are in the docstring; each nested options class lives
beside the code it configures and is the one source of its defaults.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from scheduler.cycle.schedule_one import BatchingSettings
from scheduler.framework.feature_gates import FeatureGates
from scheduler.kube.binder import BinderOptions
from scheduler.kube.controller.settings import ControllerOptions
from scheduler.kube.reporter import ReporterOptions

if TYPE_CHECKING:
    from pathlib import Path


class SettingsError(ValueError):
    """A setting we cannot run with; ``field`` names it (a flag or a settings path)."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


@dataclass(frozen=True, slots=True)
class SchedulerSettings:
    """The whole process: see the module docstring."""

    kubeconfig: Path | None = None
    """The kubeconfig to use; None: the configuration's ``clientConnection.kubeconfig``, else
    in-cluster, ``$KUBECONFIG``, then ``~/.kube/config``."""
    batching: BatchingSettings = field(default_factory=BatchingSettings)
    """Opportunistic batching (KEP-5598): mode, max batch age, verification."""
    binder: BinderOptions = field(default_factory=BinderOptions)
    """Bind concurrency, timeout and retries."""
    reporter: ReporterOptions = field(default_factory=ReporterOptions)
    """Event and condition writing: queue size, writers, de-duplication window, retries."""
    secure_port: int = 10259
    """kube-scheduler's ``--secure-port``: HTTPS for /metrics (delegated authentication and
    authorization), /healthz, /readyz, /livez and /configz; 0: no HTTPS at all."""
    bind_address: str = "0.0.0.0"
    """kube-scheduler's ``--bind-address``: the IP address the secure port listens on
    (``0.0.0.0`` or ``::``: every interface)."""
    tls_cert_file: Path | None = None
    """kube-scheduler's ``--tls-cert-file``: the serving certificate (PEM, intermediates after
    it); None: a self-signed one for ``localhost``/``127.0.0.1``, made at start."""
    tls_private_key_file: Path | None = None
    """kube-scheduler's ``--tls-private-key-file``: the key of ``tls_cert_file``."""
    authentication_kubeconfig: Path | None = None
    """kube-scheduler's ``--authentication-kubeconfig``: where TokenReviews are created; None:
    the in-cluster service account if there is one, else every token is anonymous."""
    authorization_kubeconfig: Path | None = None
    """kube-scheduler's ``--authorization-kubeconfig``: where SubjectAccessReviews are
    created; None: the in-cluster service account if there is one, else only the always
    allowed paths (/healthz, /readyz, /livez) are served."""
    metrics_addr: str = ""
    """``--metrics-addr HOST:PORT``: the same endpoints over plain HTTP with no authentication,
    for local use (the demo, tests, a port-forward); port 0 picks a free one; empty: off.
    kube-scheduler has no plain-HTTP port."""
    leader_elect: bool | None = None
    """Lease-based leader election; None: as the configuration file says (default off)."""
    identity: str | None = None
    """This replica's Lease holder identity; None: hostname plus a random suffix."""
    shutdown_timeout: float = 10.0
    """Seconds the graceful shutdown waits for binds and events in flight before it forgets
    them (binds) or drops them (events)."""
    controller: ControllerOptions = field(default_factory=ControllerOptions)
    """The watch: kopf's settings and the safety-net LIST interval."""
    feature_gates: FeatureGates = field(default_factory=FeatureGates)
    """kube-scheduler's ``--feature-gates``: GenericWorkload (PodGroups, gang scheduling)
    and OpportunisticBatching act here; the others are accepted (framework.feature_gates)."""

    def validate(self) -> None:
        """Raise SettingsError naming the field of the first value we cannot run with."""
        if not 0.0 <= self.batching.verify_ratio <= 1.0:
            raise SettingsError("batching.verify_ratio", "must be between 0 and 1")
        if self.batching.max_batch_age < 0:
            raise SettingsError("batching.max_batch_age", "must be >= 0")
        if self.binder.concurrency < 1:
            raise SettingsError("binder.concurrency", "must be >= 1")
        if self.reporter.workers < 1:
            raise SettingsError("reporter.workers", "must be >= 1")
        if self.shutdown_timeout < 0:
            raise SettingsError("shutdown_timeout", "must be >= 0")
        if self.controller.resync_interval < 0:
            raise SettingsError("controller.resync_interval", "must be >= 0")
        if not 0 <= self.secure_port <= 65535:
            raise SettingsError("secure_port", f"must be 0..65535, got {self.secure_port}")
        try:
            ipaddress.ip_address(self.bind_address)
        except ValueError:
            raise SettingsError(
                "bind_address", f"must be an IP address, got {self.bind_address!r}"
            ) from None
        if (self.tls_cert_file is None) != (self.tls_private_key_file is None):
            raise SettingsError(
                "tls_cert_file", "tls_cert_file and tls_private_key_file go together"
            )
        if self.metrics_addr:
            parse_address(self.metrics_addr, field="metrics_addr")


def parse_address(value: str, *, field: str) -> tuple[str, int]:
    """``HOST:PORT`` (``[v6]:PORT`` too) → (host, port); SettingsError naming ``field``."""
    host, sep, port_text = value.rpartition(":")
    if not sep or not port_text.isdigit():
        raise SettingsError(field, f"must be HOST:PORT, got {value!r}")
    port = int(port_text)
    if port > 65535:
        raise SettingsError(field, f"port must be 0..65535, got {port}")
    host = host.strip("[]") or "0.0.0.0"  # ":8080" listens everywhere, as Go does
    return host, port
