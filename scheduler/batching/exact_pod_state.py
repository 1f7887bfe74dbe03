"""The exact batch's part for plugins whose PreFilter state is each pod's own.

DynamicResources keeps, in PreFilter's state, the pod's claims and an allocator for them:
Reserve allocates *those* claims. The exact batch (batching/exact.py) shares one state
between the pods of a signature, so such a plugin (``ExactPodStatePlugin``) writes each
pod's own part into a clone of it (:func:`pod_state`) and says whether the pod gets the
shared pod's verdict on every node. Its verdicts also move with objects other than the
pods on a node (the devices allocations take), so before each pod the exact batch asks
its feeds which nodes to recompute (:func:`changed_nodes`).

Neighbours: ``exact`` (the caller), ``framework.interfaces`` (the protocols).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Sequence

    from scheduler.framework.cycle_state import CycleState
    from scheduler.framework.interfaces import ExactNodeChanges, ExactPodStatePlugin
    from scheduler.model.pod import Pod


def changed_nodes(feeds: Sequence[ExactNodeChanges]) -> list[str] | None:
    """The names of the nodes whose verdicts moved since the last call, from every feed;
    None: one cannot tell, the state must be rebuilt."""
    names: list[str] = []
    for feed in feeds:
        moved = feed.catch_up()
        if moved is None:
            return None
        names.extend(moved)
    return names


def pod_state(
    shared: CycleState, plugins: Sequence[ExactPodStatePlugin], pod: Pod
) -> CycleState | None:
    """The state to recheck and reserve ``pod`` with: the shared one (no such plugin), or a
    clone with the pod's own part from each plugin — the pod that built the state too, whose
    claims may have changed since; None: the pod is not equivalent to the shared one (its
    claims changed since it was signed)."""
    if not plugins:
        return shared
    state = shared.clone()
    for plugin in plugins:
        if not plugin.exact_pod_state(shared, state, pod):
            return None
    return state
