"""SchedulingGates: a pod with ``spec.schedulingGates`` is not queued until they are all
removed (kube's plugins/schedulinggates, PreEnqueue).

Its rejection keeps the pod out of every pool (gated, ``scheduler_pending_pods{queue=
"gated"}``); the update that removes the last gate queues it. It registers no cluster event:
only a change of the pod itself can ungate it, as kube's TargetPod/UpdatePodSchedulingGates
Eliminated.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scheduler.framework import status as st
from scheduler.plugins import names, plugin_args

if TYPE_CHECKING:
    from scheduler.framework.interfaces import Handle, PluginArgs
    from scheduler.model.pod import Pod


class SchedulingGates:
    """PreEnqueue; see the module docstring. No args."""

    name: str = names.SCHEDULING_GATES

    def __init__(self, args: PluginArgs, handle: Handle) -> None:
        plugin_args.check_fields(args, "SchedulingGatesArgs", ())

    def pre_enqueue(self, pod: Pod) -> st.Status:
        if not pod.scheduling_gates:
            return st.SUCCESS
        # kube's message, gates as Go prints a []string
        return st.unresolvable(f"waiting for scheduling gates: [{' '.join(pod.scheduling_gates)}]")
