"""Example out-of-tree plugins for batch-scheduler (see docs/plugins.md).

Plugins are synchronous and do no I/O; they read the pod and the node they are given and
answer with a Status or a score.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scheduler.framework import (
    MAX_NODE_SCORE,
    SUCCESS,
    ClusterEvent,
    Code,
    CycleState,
    Handle,
    PluginArgs,
    Status,
)

if TYPE_CHECKING:
    from collections.abc import Hashable

    from scheduler.cache.node_info import NodeInfo
    from scheduler.model.pod import Pod

DRAINING = "node(s) are being drained"
DEFAULT_LABEL = "example.io/draining"
PREFERRED_LABEL = "example.io/preferred"


class DrainGuard:
    """Filter + Sign: nodes labelled ``<label>: "true"`` are not for new pods."""

    name = "DrainGuard"

    def __init__(self, args: PluginArgs, handle: Handle) -> None:
        unknown = set(args) - {"label"}
        if unknown:
            raise ValueError(f"unknown field(s) {sorted(unknown)}")
        label = args.get("label", DEFAULT_LABEL)
        if not isinstance(label, str) or not label:
            raise ValueError(f"label: must be a non-empty string, got {label!r}")
        self.label = label
        self._reject = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (DRAINING,))

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        node = node_info.node
        if node is not None and node.labels.get(self.label) == "true":
            return self._reject
        return SUCCESS

    def sign_pod(self, pod: Pod) -> Hashable | None:
        # The verdict reads no pod field: every pod gets the same fragment.
        return ("DrainGuard", self.label)

    def events_to_register(self) -> tuple[ClusterEvent, ...]:
        # A node whose label changes (or a new node) may let a rejected pod in.
        return (ClusterEvent.NODE_ADD, ClusterEvent.NODE_UPDATE)


class PreferLabeled:
    """Score only, and no ``sign_pod``: a profile that enables it does not batch."""

    name = "PreferLabeled"

    def __init__(self, args: PluginArgs, handle: Handle) -> None:
        if args:
            raise ValueError(f"takes no args, got {sorted(args)}")

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        node = node_info.node
        return MAX_NODE_SCORE if node is not None and PREFERRED_LABEL in node.labels else 0
