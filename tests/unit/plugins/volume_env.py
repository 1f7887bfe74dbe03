"""A small cluster for the volume plugin tables: nodes (with pods), storage objects, a handle."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from scheduler.cache.node_info import NodeInfo
from scheduler.cache.snapshot import Snapshot
from scheduler.framework import status as st
from scheduler.framework.cycle_state import CycleState
from scheduler.model import parse
from scheduler.model.parse_volumes import (
    csi_node_from_raw,
    pv_from_raw,
    pvc_from_raw,
    storage_class_from_raw,
)
from tests.volume_builders import IMMEDIATE, WAIT, make_storage_class

if TYPE_CHECKING:
    from collections.abc import Iterable

    from scheduler.model.pod import Pod

Raw = dict[str, Any]


@dataclass
class FakeHandle:
    snapshot: Snapshot
    scheduler_name: str = "batch-scheduler"
    nominator: None = None


@dataclass
class Outcome:
    pre_filter: st.Status
    filters: list[st.Status] = field(default_factory=list)
    state: CycleState = field(default_factory=CycleState)


class Env:
    def __init__(
        self,
        nodes: Iterable[Raw],
        *,
        pods: Iterable[Raw] = (),
        pvs: Iterable[Raw] = (),
        pvcs: Iterable[Raw] = (),
        classes: Iterable[Raw] | None = None,
        csi_nodes: Iterable[Raw] = (),
    ) -> None:
        infos = [NodeInfo(parse.node_from_raw(n)) for n in nodes]
        self.snapshot = Snapshot.of(infos)
        by_name = {info.name: info for info in infos}
        for raw in pods:
            pod = parse.pod_from_raw(raw)
            by_name[pod.node_name].add_pod(pod)
        volumes = self.snapshot.volumes
        if classes is None:
            classes = [make_storage_class(WAIT), make_storage_class(IMMEDIATE, "Immediate")]
        for raw in classes:
            volumes.set_storage_class(storage_class_from_raw(raw))
        for raw in pvs:
            volumes.set_pv(pv_from_raw(raw))
        for raw in pvcs:
            volumes.set_pvc(pvc_from_raw(raw))
        for raw in csi_nodes:
            volumes.set_csi_node(csi_node_from_raw(raw))
        self.handle = FakeHandle(self.snapshot)

    def run(self, plugin: Any, pod: Pod | Raw) -> Outcome:
        """PreFilter, then (unless it skipped or failed) Filter on every node in order."""
        parsed = pod if not isinstance(pod, dict) else parse.pod_from_raw(pod)
        state = CycleState()
        _, status = plugin.pre_filter(state, parsed, self.snapshot)
        outcome = Outcome(status, state=state)
        if status.is_success:
            outcome.filters = [
                plugin.filter(state, parsed, info) for info in self.snapshot.node_infos
            ]
        return outcome
