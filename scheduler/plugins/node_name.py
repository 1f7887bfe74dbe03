"""NodeName: a pod that names its node (``spec.nodeName``) fits only there.

Port of kube-scheduler's plugins/nodename. Our pending pods normally have no nodeName (a
pod with one is already assigned), but the check is kept so a full pass on such a pod gives
kube's answer. Neighbours: framework.interfaces (the protocols), signature_fragments (signer
key).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from scheduler.framework import status as st
from scheduler.framework.events import ClusterEvent
from scheduler.plugins import names, plugin_args, signature_fragments

if TYPE_CHECKING:
    from collections.abc import Hashable

    from scheduler.cache.node_info import NodeInfo
    from scheduler.framework.cycle_state import CycleState
    from scheduler.framework.interfaces import Handle, PluginArgs
    from scheduler.model.pod import Pod

ERR_REASON: Final = "node(s) didn't match the requested node name"
_REJECT: Final = st.unresolvable(ERR_REASON)


_EVENTS: Final = (ClusterEvent.NODE_ADD,)
"""The cluster events that may undo a rejection (see :meth:`events_to_register`)."""


class NodeName:
    """Filter + Sign. Takes no args."""

    name: str = names.NODE_NAME

    def __init__(self, args: PluginArgs, handle: Handle) -> None:
        plugin_args.check_fields(args, "NodeNameArgs", ())

    def events_to_register(self) -> tuple[ClusterEvent, ...]:
        """kube: Node/Add (only the named node's arrival helps)."""
        return _EVENTS

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> st.Status:
        wanted = pod.node_name
        if not wanted or wanted == node_info.name:
            return st.SUCCESS
        return _REJECT

    def sign_pod(self, pod: Pod) -> Hashable | None:
        return (signature_fragments.NODE_NAME_SIGNER, pod.node_name)
