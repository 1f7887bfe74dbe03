"""What the queue holds: a pending pod of ours and its queueing state (kube's
QueuedPodInfo), and the pools an entity — a pod, or a pod group (queueing/queued_group.py)
— waits in.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from scheduler.batching.signature import Signature
    from scheduler.model.pod import Pod


class Pool(StrEnum):
    ACTIVE = "active"
    BACKOFF = "backoff"
    UNSCHEDULABLE = "unschedulable"


@dataclass(slots=True)
class QueuedPodInfo:
    pod: Pod
    signature: Signature | None
    refused_by: str = ""
    """Why the pod has no signature (a plugin name or a pod-level rule)."""
    signed_generation: int = 0
    """``IdentityLabels.generation`` its signature was made under: a pod out of the queue
    when a term came to read one of its labels is signed again before its next decision."""
    timestamp: float = 0.0
    """When it last entered the active pool (queue order)."""
    initial_attempt: float | None = None
    """When it was first popped (scheduling SLI starts at the first attempt)."""
    attempts: int = 0
    seq: int = 0
    pool: Pool = Pool.ACTIVE
    unschedulable_plugins: frozenset[str] = frozenset()
    """The plugins that rejected it in its last attempt (they choose the events that wake it)."""
    failed_at: float = 0.0
    """When its last attempt failed: backoff runs from there (kube's podInfo.Timestamp)."""
    pool_since: float = 0.0
