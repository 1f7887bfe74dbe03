"""SchedulerSettings: everything ``run`` needs to know that is not the scheduler configuration.

The KubeSchedulerConfiguration file (``app.config_file`` → ``framework.config``) describes
*how to decide* (profiles, plugins, backoff, leader-election timings); these settings
describe *the process*: where the cluster is, which batching mode, how many binds at once,
where to serve metrics, how to log. The CLI builds them from flags (``cli.main``), the demo
and the end-to-end tests build them directly, and ``app.runtime`` consumes them.

Plain frozen dataclasses with attribute docstrings (kopf's settings style): every field has
a default a human can run with, units are in the docstring.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from scheduler.batching.signature import BatchingMode
from scheduler.framework.config import DEFAULT_SCHEDULER_NAME
from scheduler.kube.controller.settings import ControllerOptions

if TYPE_CHECKING:
    from pathlib import Path

LogFormat = Literal["json", "console"]


class SettingsError(ValueError):
    """A setting we cannot run with; ``field`` names it (a flag or a settings path)."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


@dataclass(frozen=True, slots=True)
class BatchingOptions:
    """Opportunistic batching (KEP-5598) for this process."""

    mode: BatchingMode = BatchingMode.ANNOTATED
    """``annotated``: only pods annotated ``batch-scheduler.io/batching: "true"``; ``all``:
    every pod unless annotated ``"false"``; ``off``: every pod gets a full pass."""
    max_batch_age: float = 0.5
    """Seconds a batch state may be reused (KEP ``maxBatchAge``). Longer means more hints and
    more staleness in scores (feasibility is always rechecked)."""
    verify_ratio: float = 0.0
    """Fraction (0..1) of hinted pods that also get a full pass, to count divergences in
    ``batch_scheduler_batch_divergence_total``. Costs one full pass per verified pod."""


@dataclass(frozen=True, slots=True)
class LoggingOptions:
    format: LogFormat = "json"
    """``json`` (one object per line, for collectors) or ``console`` (for people)."""
    level: str = "info"
    """A stdlib level name: debug, info, warning, error, critical; applies to kopf too."""


@dataclass(frozen=True, slots=True)
class SchedulerSettings:
    """The whole process: see the module docstring."""

    kubeconfig: Path | None = None
    """The kubeconfig to use; None: ``$KUBECONFIG``, ``~/.kube/config``, then in-cluster."""
    config_file: Path | None = None
    """A KubeSchedulerConfiguration file; None: every default (one profile)."""
    scheduler_name: str = DEFAULT_SCHEDULER_NAME
    """The ``spec.schedulerName`` of the default profile (profiles in the file name their own)."""
    batching: BatchingOptions = field(default_factory=BatchingOptions)
    bind_concurrency: int = 16
    """Bind calls in flight at once. More hides API latency; too many trips API priority and
    fairness (429s, retried with backoff)."""
    metrics_addr: str = "127.0.0.1:10259"
    """``HOST:PORT`` of /metrics, /healthz and /readyz; port 0 picks a free one; empty: off."""
    leader_elect: bool | None = None
    """Lease-based leader election; None: as the configuration file says (default off)."""
    identity: str | None = None
    """This replica's Lease holder identity; None: hostname plus a random suffix."""
    shutdown_timeout: float = 10.0
    """Seconds the graceful shutdown waits for binds and events in flight before it forgets
    them (binds) or drops them (events)."""
    controller: ControllerOptions = field(default_factory=ControllerOptions)
    logging: LoggingOptions = field(default_factory=LoggingOptions)

    def validate(self) -> None:
        """Raise SettingsError naming the field of the first value we cannot run with."""
        if not 0.0 <= self.batching.verify_ratio <= 1.0:
            raise SettingsError("batching.verify_ratio", "must be between 0 and 1")
        if self.batching.max_batch_age < 0:
            raise SettingsError("batching.max_batch_age", "must be >= 0")
        if self.bind_concurrency < 1:
            raise SettingsError("bind_concurrency", "must be >= 1")
        if self.shutdown_timeout < 0:
            raise SettingsError("shutdown_timeout", "must be >= 0")
        if self.controller.resync_interval < 0:
            raise SettingsError("controller.resync_interval", "must be >= 0")
        if self.logging.format not in ("json", "console"):
            raise SettingsError("logging.format", "must be json or console")
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
