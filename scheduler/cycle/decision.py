"""A decision: what the scheduling part of one cycle found (kube's schedulePod result), the
reservation it led to (the pod assumed and reserved on its node), and the debug line a
person can read about it, one per scheduling cycle.

``pod_decided`` says how the node was found (``path``: ``hint``, ``rescore``, ``exact`` or
``full``), which batch state the pod was placed from or started (None: it fits nowhere, or
its full pass left no state) and its signature, how many nodes were evaluated and found
feasible, the chosen node and the best three with their weighted totals (kube prints
plugin scores at its highest verbosity; this is the short form). A batch state's end is
logged by the batch (``batch_ended``: reason and size). ``batch-scheduler explain`` gives
the full breakdown for one pod on demand.

Built only when debug is enabled: at info level the cycle pays one level check, before it
calls here.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import TYPE_CHECKING

from scheduler import logs
from scheduler.framework.diagnosis import SchedulingError
from scheduler.framework.results import ScheduleResult

if TYPE_CHECKING:
    from scheduler.batching.batch import OpportunisticBatch
    from scheduler.batching.signature import Signature
    from scheduler.framework import status as st
    from scheduler.framework.cycle_state import CycleState
    from scheduler.framework.results import Outcome
    from scheduler.metrics.labels import DecisionPath
    from scheduler.model.pod import Pod
    from scheduler.queueing.queued_pod import QueuedPodInfo

log = logs.get_logger(__name__)

TOP = 3


@dataclass(frozen=True, slots=True)
class Decision:
    """What the scheduling part of one cycle found (kube's schedulePod result)."""

    outcome: Outcome
    path: DecisionPath
    state: CycleState
    """The CycleState PostFilter, and (cloned) Reserve and the binding cycle, continue with."""
    hinted: str | None
    """The node the batch hinted (None: no hint), used or not."""


@dataclass(frozen=True, slots=True)
class Reserved:
    """A pod assumed on ``node`` and reserved there, and how Reserve (or Permit) went."""

    pod: Pod
    """The assumed copy (``node_name`` set)."""
    node: str
    state: CycleState
    """The pod's own CycleState, which Reserve wrote and the binding cycle continues."""
    status: st.Status


def signature_digest(signature: Signature | None) -> str | None:
    """A short, stable name for a signature (the signature itself is long JSON)."""
    if signature is None:
        return None
    return hashlib.blake2b(signature, digest_size=6).hexdigest()


def log_decision(
    batch: OpportunisticBatch | None,
    info: QueuedPodInfo,
    cycle: int,
    decision: Decision,
    seconds: float,
) -> None:
    """``pod_decided`` at debug level (the caller checks the level); ``batch`` is the
    profile's, whose state the pod was placed from or started."""
    pod = info.pod
    outcome = decision.outcome
    fields: dict[str, object] = {
        "pod": pod.key,
        "cycle": cycle,
        "path": decision.path,
        # The batch state the pod was placed from or started (logged after the store).
        "batch": batch.batch_id
        if batch is not None and isinstance(outcome, ScheduleResult)
        else None,
        "signature": signature_digest(info.signature),
        "seconds": round(seconds, 6),
    }
    if isinstance(outcome, ScheduleResult):
        fields |= {
            "evaluated": outcome.evaluated,
            "feasible": outcome.feasible,
            "node": outcome.node.name,
        }
        scores = outcome.scores
        if scores is not None:
            chosen = outcome.chosen  # first among the nodes tied with it
            ranked = sorted(
                range(len(scores.nodes)), key=lambda i: (-scores.totals[i], i != chosen)
            )[:TOP]
            fields["top"] = [[scores.nodes[i].name, scores.totals[i]] for i in ranked]
        elif batch is not None and decision.hinted == outcome.node.name:
            fields["top"] = [[outcome.node.name, batch.hint_total]]
        else:
            fields["top"] = [[outcome.node.name, None]]  # the only feasible node: not scored
    elif isinstance(outcome, SchedulingError):
        fields |= {"node": None, "error": outcome.message}
    else:
        fields |= {
            "evaluated": outcome.num_all_nodes,
            "feasible": 0,
            "node": None,
            "unschedulable_plugins": sorted(outcome.diagnosis.unschedulable_plugins),
        }
    log.debug("pod_decided", **fields)
