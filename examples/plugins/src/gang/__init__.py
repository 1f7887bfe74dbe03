"""Gang: an example Permit plugin, a small co-scheduling (see docs/plugins.md).

The pods of a gang wait at Permit, each holding the node it was given (its resources stay
taken), until ``size`` of them are waiting; the last to arrive allows the others through the
Handle and all of them go on to bind. If the gang is not complete within ``timeoutSeconds``
the waiting pods are rejected (kube's "rejected due to timeout after waiting …" message) and
retried later.

A pod joins gang G with the label ``example.io/gang: G`` (gangs are per namespace) and says
how many pods the gang needs with the annotation ``example.io/gang-size: "N"``. Pods without
the label are not held. Like the plugin's other examples, it is synchronous and does no I/O.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scheduler.framework import SUCCESS, Code, Status

if TYPE_CHECKING:
    from scheduler.framework import CycleState, Handle, PluginArgs, WaitingPod
    from scheduler.model.pod import Pod

GANG_LABEL = "example.io/gang"
SIZE_ANNOTATION = "example.io/gang-size"
DEFAULT_TIMEOUT_SECONDS = 30.0


class Gang:
    """Permit; args: ``timeoutSeconds`` (a positive number, default 30)."""

    name = "Gang"

    def __init__(self, args: PluginArgs, handle: Handle) -> None:
        unknown = set(args) - {"timeoutSeconds"}
        if unknown:
            raise ValueError(f"GangArgs: unknown field(s) {sorted(unknown)}")
        timeout = args.get("timeoutSeconds", DEFAULT_TIMEOUT_SECONDS)
        if isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0:
            raise ValueError(f"GangArgs.timeoutSeconds: must be a positive number, got {timeout!r}")
        self.timeout = float(timeout)
        self._handle = handle

    def permit(self, state: CycleState, pod: Pod, node_name: str) -> tuple[Status, float]:
        group = pod.labels.get(GANG_LABEL)
        if not group:
            return SUCCESS, 0.0
        raw = pod.annotations.get(SIZE_ANNOTATION, "")
        size = int(raw) if raw.isdigit() else 0
        if size < 1:
            message = (
                f"pod {pod.key}: annotation {SIZE_ANNOTATION}: must be a positive integer, "
                f'got "{raw}"'
            )
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (message,)), 0.0
        waiting: list[WaitingPod] = []

        def collect(other: WaitingPod) -> None:
            peer = other.pod
            if (
                peer.uid != pod.uid
                and peer.namespace == pod.namespace
                and peer.labels.get(GANG_LABEL) == group
            ):
                waiting.append(other)

        self._handle.iterate_over_waiting_pods(collect)
        missing = size - 1 - len(waiting)
        if missing > 0:
            reason = f"waiting for {missing} more pod(s) of gang {pod.namespace}/{group}"
            return Status(Code.WAIT, (reason,)), self.timeout
        for other in waiting:
            other.allow(self.name)
        return SUCCESS, 0.0
