"""TaintToleration: NoSchedule/NoExecute taints fence nodes off; PreferNoSchedule taints
make them less attractive.

Port of kube-scheduler's plugins/tainttoleration (v1.35). Filter rejects a node with the
first untolerated NoSchedule/NoExecute taint. Since v1.35 (kubernetes#134740, also in
1.34.2) the reason no longer names the taint: taint keys and values may be sensitive, so
kube prints the generic "node(s) had untolerated taint(s)". Score counts the
PreferNoSchedule taints the pod does not tolerate, considering only tolerations whose
effect is PreferNoSchedule or empty; NormalizeScore reverses it (fewest wins).
Neighbours: model.taints (matching rules), score_math (normalization), signature_fragments
(tolerations fragment).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from scheduler.framework import status as st
from scheduler.framework.cycle_state import StateKey
from scheduler.framework.events import ClusterEvent
from scheduler.framework.interfaces import MAX_NODE_SCORE
from scheduler.model.taints import Effect, Toleration
from scheduler.plugins import names, plugin_args, score_math, signature_fragments

if TYPE_CHECKING:
    from collections.abc import Hashable, Sequence

    from scheduler.cache.node_info import NodeInfo
    from scheduler.framework.cycle_state import CycleState
    from scheduler.framework.interfaces import Handle, PluginArgs
    from scheduler.model.pod import Pod

ERR_REASON: Final = "node(s) had untolerated taint(s)"
_REJECT: Final = st.unresolvable(ERR_REASON)
_FENCING: Final = (Effect.NO_SCHEDULE, Effect.NO_EXECUTE)

_PRE_SCORE_KEY: Final[StateKey[tuple[Toleration, ...]]] = StateKey(
    "PreScore" + names.TAINT_TOLERATION
)
"""The pod's tolerations that can tolerate a PreferNoSchedule taint."""


def _prefer_no_schedule_tolerations(pod: Pod) -> tuple[Toleration, ...]:
    # An empty effect tolerates every effect, PreferNoSchedule included.
    return tuple(
        t for t in pod.tolerations if t.effect is None or t.effect == Effect.PREFER_NO_SCHEDULE
    )


_EVENTS: Final = (ClusterEvent.NODE_ADD, ClusterEvent.NODE_UPDATE)
"""The cluster events that may undo a rejection (see :meth:`events_to_register`)."""


class TaintToleration:
    """Filter, PreScore, Score, NormalizeScore (reversed), Sign. Takes no args."""

    name: str = names.TAINT_TOLERATION

    def __init__(self, args: PluginArgs, handle: Handle) -> None:
        plugin_args.check_fields(args, "TaintTolerationArgs", ())

    def events_to_register(self) -> tuple[ClusterEvent, ...]:
        """kube: Node/Add|UpdateNodeTaint."""
        return _EVENTS

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> st.Status:
        node = node_info.node
        if node is None or not node.taints:
            return st.SUCCESS
        tolerations = pod.tolerations
        for taint in node.taints:
            if taint.effect not in _FENCING:
                continue
            if not any(t.tolerates(taint) for t in tolerations):
                return _REJECT
        return st.SUCCESS

    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> st.Status:
        state.write(_PRE_SCORE_KEY, _prefer_no_schedule_tolerations(pod))
        return st.SUCCESS

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        node = node_info.node
        if node is None or not node.taints:
            return 0
        tolerations = state.read(_PRE_SCORE_KEY)
        if tolerations is None:  # PreScore did not run (e.g. a lone rescore)
            tolerations = _prefer_no_schedule_tolerations(pod)
        count = 0
        for taint in node.taints:
            if taint.effect == Effect.PREFER_NO_SCHEDULE and not any(
                t.tolerates(taint) for t in tolerations
            ):
                count += 1
        return count

    def normalize_score(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo], scores: list[int]
    ) -> st.Status:
        score_math.default_normalize_score(MAX_NODE_SCORE, True, scores)
        return st.SUCCESS

    def sign_pod(self, pod: Pod) -> Hashable | None:
        return signature_fragments.tolerations_fragment(pod)
