"""Closed sets of metric label values, as `StrEnum`s.

A label value typed as an enum cannot be misspelt at a call site, and a closed
set keeps series cardinality bounded. Members are `str`, so they go straight
into ``collector.labels(...)`` and compare equal to the plain string.

Where kube-scheduler has the same label, the values are byte-for-byte its
values (kubernetes/kubernetes ``pkg/scheduler/metrics/metrics.go`` and, for the
KEP-5598 batching values, ``pkg/scheduler/framework/runtime/batch.go``), so
dashboards and alerts written for kube-scheduler work unchanged. Values that
are ours are marked as such.

A leaf module: it imports nothing else from ``scheduler``.
"""

from __future__ import annotations

from enum import StrEnum, unique

__all__ = [
    "BatchAttempt",
    "BatchFlushReason",
    "BindResult",
    "DecisionPath",
    "DivergenceKind",
    "ExactOutcome",
    "ExtensionPoint",
    "Hinted",
    "QueueName",
    "Result",
]


@unique
class Result(StrEnum):
    """``result`` of scheduler_schedule_attempts_total and the attempt duration (kube)."""

    SCHEDULED = "scheduled"
    UNSCHEDULABLE = "unschedulable"  # no feasible node: the pod's problem
    ERROR = "error"  # an internal scheduler problem


@unique
class QueueName(StrEnum):
    """``queue`` of scheduler_pending_pods and scheduler_queue_incoming_pods_total (kube)."""

    ACTIVE = "active"
    BACKOFF = "backoff"
    UNSCHEDULABLE = "unschedulable"
    GATED = "gated"  # has scheduling gates; never attempted
    INCOMPLETE = "incomplete"  # a member whose PodGroup the queue does not know yet
    PENDING = "pending"  # a member that came while its group was in flight


@unique
class ExtensionPoint(StrEnum):
    """``extension_point`` of scheduler_framework_extension_point_duration_seconds (kube).

    kube names normalization ``ScoreExtensionNormalize`` in this label, so
    NORMALIZE_SCORE carries that value rather than the method's name.
    """

    PRE_FILTER = "PreFilter"
    FILTER = "Filter"
    PRE_SCORE = "PreScore"
    SCORE = "Score"
    NORMALIZE_SCORE = "ScoreExtensionNormalize"
    POST_FILTER = "PostFilter"
    BIND = "Bind"
    SIGN = "Sign"  # KEP-5598's SignPod


@unique
class BatchAttempt(StrEnum):
    """``result`` of scheduler_batch_attempts_total (kube, KEP-5598).

    As kube records them: ``no_hint`` when GetNodeHint gives none (whatever the cycle's
    outcome), ``hint_used``/``hint_not_used`` only when a node is chosen.
    """

    HINT_USED = "hint_used"  # the hinted node was chosen: a batched placement
    HINT_NOT_USED = "hint_not_used"  # a hint was given, a full pass chose another node
    NO_HINT = "no_hint"  # no (usable) batch state: full pass


@unique
class Hinted(StrEnum):
    """``hinted`` of scheduler_get_node_hint_duration_seconds (kube, KEP-5598)."""

    HINT = "hint"
    NO_HINT = "no_hint"


@unique
class BatchFlushReason(StrEnum):
    """``reason`` of scheduler_batch_cache_flushed_total: why batch state was dropped.

    The first group is kube's (``pkg/scheduler/metrics/metrics.go``, BatchFlush*) that our
    cycle can reach, with kube's precedence (``runtime/batch.go``); the last is ours. kube's
    ``pod_failed`` is left out: kube sets the last cycle only when a pod is placed, so a
    failed cycle shows as ``pod_skipped`` at the next pod, and ours does the same. An empty
    list at hint time is no flush (kube: no state, plain ``no_hint``).
    """

    # kube, in the order GetNodeHint checks them
    POD_SKIPPED = "pod_skipped"  # cycle != last placed cycle + 1: another pod ran, or failed
    POD_NOMINATED = "pod_nominated"  # the pod has a nominated node
    POD_INCOMPATIBLE = "pod_incompatible"  # signature differs or pod unsignable
    EXPIRED = "expired"  # state older than maxBatchAge
    NODE_MISSING = "node_missing"  # the node chosen last is gone from the snapshot
    PRESCORE_ERROR = "prescore_error"  # rescoring the last node: PreScore failed
    RESCORE_ERROR = "rescore_error"  # rescoring: Score failed (ours return ints: unreachable)
    NORMALIZE_ERROR = "normalize_error"  # rescoring: NormalizeScore failed or out of range
    # kube, from StoreScheduleResults (empty_list wins over pod_not_batchable)
    EMPTY_LIST = "empty_list"  # the full pass left no other feasible node to keep
    POD_NOT_BATCHABLE = "pod_not_batchable"  # the placed pod has no signature: nothing kept
    # ours
    BIND_FAILED = "bind_failed"  # an async bind to a node in the state failed


@unique
class DecisionPath(StrEnum):
    """``path`` of batch_scheduler_decision_duration_seconds (ours) and of the decision log.

    How a cycle found its node: the batch's hint (``rescore`` when the hint came after
    rescoring the node chosen before it, a state that serves many pods per node), or a
    full pass (also when a hint failed its recheck).
    """

    HINT = "hint"
    RESCORE = "rescore"
    EXACT = "exact"  # the exact batch: spread and self-affinity pods (batching/exact.py)
    FULL = "full"


@unique
class DivergenceKind(StrEnum):
    """``kind`` of batch_scheduler_batch_divergence_total (ours).

    How a batched placement differed from the one a full pass would have made,
    wherever the scheduler compares the two.
    """

    HINT_INFEASIBLE = "hint_infeasible"  # the hint failed a Filter plugin
    LOWER_SCORE = "lower_score"  # feasible, but a full pass found a better node
    EXACT_MISMATCH = "exact_mismatch"  # the exact path and a full pass chose differently


@unique
class ExactOutcome(StrEnum):
    """``outcome`` of batch_scheduler_exact_batch_total (ours, batching/exact.py)."""

    PLACED = "placed"  # the exact path chose the node
    BUILT = "built"  # a state was counted for the signature (then the pod was placed)
    NO_STATE = "no_state"  # first pod of its signature: a full pass, a state for the next
    NOMINATED_PODS = "nominated_pods"  # pods are nominated to nodes: filtered twice there
    NO_FEASIBLE_NODE = "no_feasible_node"  # the full pass writes the Diagnosis
    REFUSED = "refused"  # the state cannot be built (PreFilter narrowed or rejected, ...)
    DROPPED = "dropped"  # a change the state cannot follow (a node, a namespace, a new key)
    RECHECK_FAILED = "recheck_failed"  # the chosen node failed a Filter: a bug, counted
    SCORE_RANGE = "score_range"  # a score outside 0..100: the full pass reports the error
    POD_STATE_DIFFERS = "pod_state_differs"  # the pod's own claims are not the signature's


@unique
class BindResult(StrEnum):
    """``result`` of batch_scheduler_binds_total (ours)."""

    SUCCESS = "success"
    CONFLICT = "conflict"  # 409: already bound or changed under us
    ERROR = "error"  # any other API failure
