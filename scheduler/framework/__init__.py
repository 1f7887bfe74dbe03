"""The plugin contract and the runner (kube-scheduler's framework and runtime).

The names below are the plugin-author surface: protocols for the extension points we run
(PreEnqueue through PostBind), Status and Code, CycleState with typed keys, the score bounds,
the cluster events a plugin declares for requeueing, the node-local promise that keeps the
exact batch, the pods waiting at Permit and the keys
of the ports a Handle lends. A test pins ``__all__``.
"""

from scheduler.framework.cycle_state import CycleState, StateKey
from scheduler.framework.events import ClusterEvent
from scheduler.framework.interfaces import (
    MAX_NODE_SCORE,
    MIN_NODE_SCORE,
    EnqueueExtensions,
    FilterPlugin,
    Handle,
    NodeLocalPlugin,
    NormalizeScorePlugin,
    PermitPlugin,
    Plugin,
    PluginArgs,
    PostBindPlugin,
    PreBindPlugin,
    PreEnqueuePlugin,
    PreFilterPlugin,
    PreScorePlugin,
    ReservePlugin,
    ScorePlugin,
    ServiceKey,
    SignPlugin,
    WaitingPod,
)
from scheduler.framework.status import SKIP, SUCCESS, Code, Status

__all__ = [
    "MAX_NODE_SCORE",
    "MIN_NODE_SCORE",
    "SKIP",
    "SUCCESS",
    "ClusterEvent",
    "Code",
    "CycleState",
    "EnqueueExtensions",
    "FilterPlugin",
    "Handle",
    "NodeLocalPlugin",
    "NormalizeScorePlugin",
    "PermitPlugin",
    "Plugin",
    "PluginArgs",
    "PostBindPlugin",
    "PreBindPlugin",
    "PreEnqueuePlugin",
    "PreFilterPlugin",
    "PreScorePlugin",
    "ReservePlugin",
    "ScorePlugin",
    "ServiceKey",
    "SignPlugin",
    "StateKey",
    "Status",
    "WaitingPod",
]
