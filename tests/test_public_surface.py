"""The plugin-author surface of ``scheduler.framework`` is pinned (httpx's ``__all__`` test)."""

from __future__ import annotations

import scheduler.framework as framework

EXPECTED = {
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
}


def test_framework_all_is_pinned() -> None:
    """Adding or removing a public name is a deliberate change to this test."""
    assert set(framework.__all__) == EXPECTED


def test_every_public_name_resolves() -> None:
    """Each name in ``__all__`` exists on the package."""
    assert all(hasattr(framework, name) for name in framework.__all__)
