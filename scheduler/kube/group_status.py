"""GroupStatus: the ``PodGroupInitiallyScheduled`` condition written on PodGroups, as
kube-scheduler v1.37.2 writes it (``updatePodGroupCondition``), off the hot path.

Implements ``cycle.ports.GroupReporter``. The cycle decides that a condition changes
something (status, reason, message or observed generation; never a True taken back) and
calls ``pod_group_condition`` with the PodGroup as last known (its condition the one the
cycle decided against), which only enqueues; one writer task sends a strategic-merge patch
of ``podgroups/{name}/status`` holding what kube's two-way diff of the old status against
the new one holds (``PatchPodGroupStatus``, pkg/scheduler/util/utils.go:158-192): the
condition's ``type`` (its merge key) and the fields that changed, ``lastTransitionTime``
(the time of the decision) only when the status changes or the condition is new. A field
left out keeps the API's value. A 409 or a transient failure is retried a few times with
backoff (kube retries on conflict with ``retry.DefaultBackoff``); a PodGroup gone
meanwhile (404) is dropped quietly; any other failure is logged once, and the next attempt
of the group writes again.

Neighbours: ``client``/``errors`` for I/O, ``workers`` for the writer; independent of the
pod reporter (``reporter``), which it mirrors for pods.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from scheduler import logs
from scheduler.kube import errors, workers
from scheduler.kube.client import STRATEGIC_MERGE_PATCH
from scheduler.kube.timestamps import rfc3339

if TYPE_CHECKING:
    from scheduler.kube.client import ApiClient
    from scheduler.model.pod_groups import GroupCondition, PodGroup

__all__ = ["GroupStatus"]

log = logs.get_logger(__name__)

ATTEMPTS = 5
"""kube's retry.DefaultBackoff: 4 retries after the first try."""
BACKOFF = (0.01, 0.05, 0.25, 1.25)
"""Seconds before each retry (DefaultBackoff: 10 ms, factor 5)."""


@dataclass(frozen=True, slots=True)
class _Write:
    namespace: str
    name: str
    condition_type: str
    condition: GroupCondition
    old: GroupCondition | None
    """The condition the cycle decided against (None: the PodGroup has none)."""
    transition: str
    """``lastTransitionTime``: the time of the decision."""


class GroupStatus:
    """Writes PodGroup conditions; see the module docstring."""

    def __init__(self, client: ApiClient) -> None:
        self.client = client
        self._pool: workers.WorkerPool[_Write] = workers.WorkerPool(
            "pod-group-status", self._write, limit=1
        )
        self.written = 0

    def pod_group_condition(
        self, pod_group: PodGroup, condition_type: str, condition: GroupCondition
    ) -> None:
        write = _Write(
            pod_group.namespace,
            pod_group.name,
            condition_type,
            condition,
            pod_group.condition,
            rfc3339(),
        )
        self._pool.submit(write)

    async def drain(self, timeout: float) -> bool:  # noqa: ASYNC109 - the reporters' API
        return await self._pool.drain(timeout)

    async def stop(self) -> None:
        await self._pool.stop()

    async def _write(self, write: _Write) -> None:
        path = (
            f"/apis/scheduling.k8s.io/v1beta1/namespaces/{write.namespace}/podgroups/"
            f"{write.name}/status"
        )
        body = {"status": {"conditions": [_condition(write)]}}
        for attempt in range(ATTEMPTS):
            try:
                await self.client.request(
                    "PATCH", path, body=body, content_type=STRATEGIC_MERGE_PATCH
                )
                self.written += 1
                return
            except errors.NotFound:
                return  # the PodGroup is gone: nothing to tell
            except errors.ApiError as exc:
                retriable = isinstance(exc, (errors.Conflict, *errors.TRANSIENT))
                if not retriable or attempt == ATTEMPTS - 1:
                    log.warning(
                        "pod_group_condition_failed",
                        pod_group=f"{write.namespace}/{write.name}",
                        error=str(exc),
                    )
                    return
                await asyncio.sleep(BACKOFF[attempt])


def _condition(write: _Write) -> dict[str, Any]:
    """The patch's one list element: the merge key and what kube's diff holds."""
    new, old = write.condition, write.old
    fields: dict[str, Any] = {
        "status": new.status,
        "observedGeneration": new.observed_generation,
        "reason": new.reason,
        "message": new.message,
    }
    if old is not None:
        before = {
            "status": old.status,
            "observedGeneration": old.observed_generation,
            "reason": old.reason,
            "message": old.message,
        }
        fields = {name: value for name, value in fields.items() if before[name] != value}
    if old is None or "status" in fields:
        fields["lastTransitionTime"] = write.transition
    return {"type": write.condition_type, **fields}
