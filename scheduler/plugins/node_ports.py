"""NodePorts: a pod that wants host ports fits only where none of them is taken.

Port of kube-scheduler's plugins/nodeports with the conflict rule of its HostPortInfo:
two ports conflict when protocol and port are equal and either host IP is the wildcard
``0.0.0.0`` or the IPs are equal. NodeInfo.used_ports counts ports in use, keyed by
HostPort (IP and protocol already defaulted by the model). Neighbours: model.pod
(HostPort), cache.node_info (used_ports), signature_fragments (signer key).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from scheduler.framework import status as st
from scheduler.framework.cycle_state import StateKey
from scheduler.framework.events import ClusterEvent
from scheduler.model.pod import HostPort
from scheduler.plugins import names, plugin_args, signature_fragments

if TYPE_CHECKING:
    from collections.abc import Hashable

    from scheduler.cache.node_info import NodeInfo
    from scheduler.cache.snapshot import Snapshot
    from scheduler.framework.cycle_state import CycleState
    from scheduler.framework.interfaces import Handle, PluginArgs
    from scheduler.model.pod import Pod

ERR_REASON: Final = "node(s) didn't have free ports for the requested pod ports"
_REJECT: Final = st.unschedulable(ERR_REASON)
WILDCARD_IP: Final = "0.0.0.0"


@dataclass(frozen=True, slots=True)
class _WantedPorts:
    """Precomputed per pod so Filter allocates nothing per node."""

    wildcard: frozenset[tuple[str, int]]
    """(protocol, port) wanted on 0.0.0.0: any used IP with the same pair conflicts."""
    exact: tuple[HostPort, ...]
    """For a specific IP: the used keys that conflict (the same IP, and the wildcard)."""


_PRE_FILTER_KEY: Final[StateKey[_WantedPorts]] = StateKey("PreFilter" + names.NODE_PORTS)


def _wanted(pod: Pod) -> _WantedPorts:
    wildcard: set[tuple[str, int]] = set()
    exact: list[HostPort] = []
    for hp in pod.host_ports:
        if hp.port <= 0:
            continue
        if hp.host_ip == WILDCARD_IP:
            wildcard.add((hp.protocol, hp.port))
        else:
            exact.append(hp)
            exact.append(HostPort(WILDCARD_IP, hp.protocol, hp.port))
    return _WantedPorts(frozenset(wildcard), tuple(exact))


def fits(wanted: _WantedPorts, used: dict[HostPort, int]) -> bool:
    if not used:
        return True
    for key in wanted.exact:
        if key in used:
            return False
    if wanted.wildcard:
        for hp in used:
            if (hp.protocol, hp.port) in wanted.wildcard:
                return False
    return True


_EVENTS: Final = (ClusterEvent.NODE_ADD, ClusterEvent.ASSIGNED_POD_DELETE)
"""The cluster events that may undo a rejection (see :meth:`events_to_register`)."""


class NodePorts:
    """PreFilter (Skip when the pod wants no host port), Filter, Sign. Takes no args."""

    name: str = names.NODE_PORTS

    def __init__(self, args: PluginArgs, handle: Handle) -> None:
        plugin_args.check_fields(args, "NodePortsArgs", ())

    def events_to_register(self) -> tuple[ClusterEvent, ...]:
        """kube: Node/Add, AssignedPod/Delete (frees its ports; ports are immutable,
        so no update helps)."""
        return _EVENTS

    def pre_filter(
        self, state: CycleState, pod: Pod, snapshot: Snapshot
    ) -> tuple[frozenset[str] | None, st.Status]:
        if not pod.host_ports:
            return None, st.SKIP
        state.write(_PRE_FILTER_KEY, _wanted(pod))
        return None, st.SUCCESS

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> st.Status:
        wanted = state.read(_PRE_FILTER_KEY)
        if wanted is None:  # PreFilter skipped or not run (recheck on a fresh state)
            if not pod.host_ports:
                return st.SUCCESS
            wanted = _wanted(pod)
        return st.SUCCESS if fits(wanted, node_info.used_ports) else _REJECT

    def sign_pod(self, pod: Pod) -> Hashable | None:
        ports = sorted({(hp.host_ip, hp.protocol, hp.port) for hp in pod.host_ports})
        return (signature_fragments.HOST_PORTS_SIGNER, tuple(ports))
