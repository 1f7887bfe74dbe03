"""NodeUnschedulable: a cordoned node (``spec.unschedulable``) takes only pods that tolerate
the ``node.kubernetes.io/unschedulable:NoSchedule`` taint.

Port of kube-scheduler's plugins/nodeunschedulable. Neighbours: model.taints (matching
rules), signature_fragments (the tolerations fragment it shares with TaintToleration).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from scheduler.framework import status as st
from scheduler.framework.events import ClusterEvent
from scheduler.model.taints import Effect, Taint, tolerated
from scheduler.plugins import names, plugin_args, signature_fragments

if TYPE_CHECKING:
    from collections.abc import Hashable

    from scheduler.cache.node_info import NodeInfo
    from scheduler.framework.cycle_state import CycleState
    from scheduler.framework.interfaces import Handle, PluginArgs
    from scheduler.model.pod import Pod

ERR_REASON: Final = "node(s) were unschedulable"
UNSCHEDULABLE_TAINT: Final = Taint("node.kubernetes.io/unschedulable", "", Effect.NO_SCHEDULE)
"""The taint whose toleration also tolerates ``spec.unschedulable`` (kube's rule)."""
_REJECT: Final = st.unresolvable(ERR_REASON)


_EVENTS: Final = (ClusterEvent.NODE_ADD, ClusterEvent.NODE_UPDATE)
"""The cluster events that may undo a rejection (see :meth:`events_to_register`)."""


class NodeUnschedulable:
    """Filter + Sign. Takes no args."""

    name: str = names.NODE_UNSCHEDULABLE

    def __init__(self, args: PluginArgs, handle: Handle) -> None:
        plugin_args.check_fields(args, "NodeUnschedulableArgs", ())

    def events_to_register(self) -> tuple[ClusterEvent, ...]:
        """kube: Node/Add|UpdateNodeTaint (``spec.unschedulable`` reads as a taint there)."""
        return _EVENTS

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> st.Status:
        node = node_info.node
        if node is None or not node.unschedulable:
            return st.SUCCESS
        if tolerated(UNSCHEDULABLE_TAINT, pod.tolerations):
            return st.SUCCESS
        return _REJECT

    def sign_pod(self, pod: Pod) -> Hashable | None:
        return signature_fragments.tolerations_fragment(pod)
