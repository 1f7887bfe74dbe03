"""Dry-run pieces shared by the nominated pods' two passes and preemption: a detached copy of
one node, and the PreFilter extensions that keep a cloned CycleState in step with it.

kube's RunFilterPluginsWithNominatedPods: on a node with pods nominated to it at a priority
at least the pod's, Filter runs twice, once with those pods placed there and once without,
and the node fits only if both pass, so a pod waiting for its victims to leave keeps its
room. Pass one places the nominated pods on a copy of the NodeInfo and tells the PreFilter
extensions (``add_pod``) about each, on a clone of the cycle's state: PreFilter is never run
again, and neither the live NodeInfo nor the pod index nor the original state is touched.

The copy is detached (no pod index): it holds exactly the node's pods and nothing else sees
it, as kube's NodeInfo.Snapshot(). Plugins that read other nodes do so through their
PreFilter state, which the extensions keep current.

Neighbours: ``framework.profile`` (the runner that holds these as Handle methods),
``framework.preemption`` (the victims' dry run).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scheduler.cache.node_info import NodeInfo
from scheduler.framework import status as st

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from scheduler.framework.cycle_state import CycleState
    from scheduler.framework.interfaces import NominatedPods, PreFilterExtensions
    from scheduler.model.pod import Pod


def detached_copy(info: NodeInfo) -> NodeInfo:
    """The node and its pods in their order, accounted afresh and in no pod index."""
    copy = NodeInfo(info.node)
    for pod in info.pods.values():
        copy.add_pod(pod)
    return copy


def run_add_pod(
    plugins: Sequence[PreFilterExtensions],
    state: CycleState,
    pod: Pod,
    to_add: Pod,
    node_info: NodeInfo,
) -> st.Status:
    """Every extension's ``add_pod`` whose PreFilter did not Skip (kube's
    RunPreFilterExtensionAddPod); a failure is an Error naming the plugin."""
    return _run_extensions(
        plugins, state, "AddPod", lambda p: p.add_pod(state, pod, to_add, node_info)
    )


def run_remove_pod(
    plugins: Sequence[PreFilterExtensions],
    state: CycleState,
    pod: Pod,
    to_remove: Pod,
    node_info: NodeInfo,
) -> st.Status:
    """Every extension's ``remove_pod`` whose PreFilter did not Skip (kube's
    RunPreFilterExtensionRemovePod); a failure is an Error naming the plugin."""
    return _run_extensions(
        plugins, state, "RemovePod", lambda p: p.remove_pod(state, pod, to_remove, node_info)
    )


def _run_extensions(
    plugins: Sequence[PreFilterExtensions],
    state: CycleState,
    what: str,
    call: Callable[[PreFilterExtensions], st.Status],
) -> st.Status:
    skip = state.skip_filter_plugins
    for plugin in plugins:
        if plugin.name in skip:
            continue
        status = call(plugin)
        if not status.is_success:
            message = status.message()
            return st.error(f'running {what} on PreFilter plugin "{plugin.name}": {message}')
    return st.SUCCESS


def nominated_on(nominator: NominatedPods | None, pod: Pod, node_info: NodeInfo) -> list[Pod]:
    """Pods nominated to the node that ``pod`` must leave room for (kube's
    addGEQPriorityNominatedPods: priority at least the pod's, not the pod itself, not
    already placed there)."""
    if nominator is None:
        return []
    return [
        other
        for other in nominator.nominated_pods_for_node(node_info.name)
        if other.priority >= pod.priority
        and other.uid != pod.uid
        and other.uid not in node_info.pods
    ]


def filter_with_nominated_pods(
    state: CycleState,
    pod: Pod,
    node_info: NodeInfo,
    *,
    nominator: NominatedPods | None,
    extensions: Sequence[PreFilterExtensions],
    run_filters: Callable[[CycleState, Pod, NodeInfo], st.Status],
) -> st.Status:
    """Filter ``pod`` on ``node_info`` with and without the nominated pods: both must pass.
    ``state`` holds the pod's PreFilter results and is left as it was."""
    nominated = nominated_on(nominator, pod, node_info)
    if nominated:
        copy = detached_copy(node_info)
        with_them = state.clone()
        for other in nominated:
            placed = other.with_node_name(node_info.name)
            copy.add_pod(placed)
            status = run_add_pod(extensions, with_them, pod, placed, copy)
            if not status.is_success:
                return status
        status = run_filters(with_them, pod, copy)
        if not status.is_success:
            return status
    return run_filters(state, pod, node_info)
