"""kopf.OperatorSettings for a scheduler: watch pods and nodes, change nothing kopf-owned.

kopf is used here only as a robust list+watch engine (reconnects, 410 re-lists, per-object
workers). Everything that would make it act on the cluster by itself is switched off:

* no posting of kopf's own log records as Kubernetes Events (``posting.enabled``): our
  Events come from ``kube.reporter`` alone;
* no cluster scanning for CRDs and namespaces (``scanning.disabled``): pods and nodes are
  core resources that kopf still resolves through ``/api/v1`` discovery;
* peering is not used (``standalone`` is passed to ``kopf.operator``): peering pauses
  operators, it is not leader election, which ``kube.leader`` does with a Lease;
* finite watch timeouts, so a silently dead connection is noticed and re-established;
* LISTs in pages of ``LIST_CHUNK`` objects, not one response for the whole cluster;
* no diff-base (``persistence.diffbase_storage``): kopf builds a deep-copied "essence" of
  every object on every event to diff it for change handlers; we have only ``on.event``
  handlers, which never see a diff, and the copy was ~5 % of the scheduler's CPU under a
  burst of binds (py-spy, ``docs/performance.md``).

Neighbours: ``operator`` passes :func:`operator_settings` to ``kopf.operator``;
``app.settings`` embeds :class:`ControllerOptions` in the process settings.
"""

from __future__ import annotations

from dataclasses import dataclass

import kopf

from scheduler.kube.listing import LIST_CHUNK

ERROR_BACKOFFS = (0.5, 1, 2, 4, 8)
"""Seconds between kopf's retries of failed API calls (its default climbs to 21 s, which
would leave a scheduler blind for that long after a brief API outage)."""


class NoDiffBase(kopf.DiffBaseStorage):
    """A diff-base storage that keeps nothing: no essence built, fetched or stored."""

    def build(self, *, body: kopf.Body, extra_fields: object = None) -> None:  # type: ignore[override]
        return None

    def fetch(self, *, body: kopf.Body) -> None:
        return None

    def store(self, *, body: kopf.Body, patch: kopf.Patch, essence: object) -> None:
        return None


@dataclass(frozen=True, slots=True)
class ControllerOptions:
    """The watch side (kopf) and the cache reconciliation."""

    resync_interval: float = 60.0
    """Seconds between the safety net's full LISTs, which remove cached objects that both the
    watch and the re-list handling (``relist``) missed, and count them as repairs
    (``batch_scheduler_cache_repairs_total``). 0 disables the safety net; the re-list
    handling runs regardless."""
    watch_server_timeout: int = 300
    """Seconds the API server keeps one watch open (``timeoutSeconds``); kopf and the informers
then watch again."""
    watch_client_timeout: float = 330.0
    """Seconds the client waits on one watch before giving up; above the server timeout."""
    connect_timeout: float = 10.0
    """Seconds to establish a connection (watches and kopf's other requests)."""


def operator_settings(options: ControllerOptions) -> kopf.OperatorSettings:
    """kopf's settings with our choices applied (see the module docstring)."""
    settings = kopf.OperatorSettings()
    settings.posting.enabled = False
    settings.scanning.disabled = True
    settings.peering.standalone = True
    settings.peering.clusterwide = True
    settings.persistence.diffbase_storage = NoDiffBase()
    settings.watching.server_timeout = options.watch_server_timeout
    settings.watching.client_timeout = options.watch_client_timeout
    settings.watching.connect_timeout = options.connect_timeout
    settings.networking.connect_timeout = options.connect_timeout
    settings.networking.error_backoffs = ERROR_BACKOFFS
    # kopf's LIST in pages, as our own (``listing.LIST_CHUNK``): one response for a whole big
    # cluster is a memory peak the process keeps (its RSS does not shrink back).
    settings.watching.chunk_size = LIST_CHUNK
    # Per-object workers that idle exit quickly: a churning cluster has many short-lived pods.
    settings.queueing.idle_timeout = 1.0
    settings.queueing.exit_timeout = 1.0
    return settings
