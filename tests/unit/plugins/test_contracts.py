"""Contracts every in-tree plugin keeps (Go's ``var _ X = &Y{}``, as tests)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from scheduler.cache.cluster_state import ClusterState
from scheduler.framework import config
from scheduler.framework.interfaces import (
    FilterPlugin,
    PostFilterPlugin,
    PreEnqueuePlugin,
    ScorePlugin,
    SignPlugin,
)
from scheduler.framework.profile import Profile
from scheduler.plugins import in_tree_registry, names

PLUGIN_DIR = Path(__file__).resolve().parents[3] / "scheduler" / "plugins"
REGISTRY = in_tree_registry()


def _profile() -> Profile:
    return Profile(
        scheduler_name="contracts",
        plugins=(),
        registry=REGISTRY,
        plugin_args={},
        snapshot=ClusterState().snapshot,
    )


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_registered_name_is_the_plugins_own(name: str) -> None:
    """The registry key is the plugin's name, byte for byte kube-scheduler's."""
    plugin = REGISTRY[name]({}, _profile())
    assert plugin.name == name
    assert name in names.IN_TREE + names.GATED


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_filtering_or_scoring_plugins_sign(name: str) -> None:
    """Every plugin that filters or scores implements Sign (KEP-5598); the others run only
    after a pass failed (PostFilter) or before the pod is queued (PreEnqueue) and need no
    signature."""
    plugin = REGISTRY[name]({}, _profile())
    if isinstance(plugin, FilterPlugin | ScorePlugin):
        assert isinstance(plugin, SignPlugin)
    elif isinstance(plugin, PreEnqueuePlugin):
        assert name in (names.SCHEDULING_GATES, names.GANG_SCHEDULING)
    else:
        assert isinstance(plugin, PostFilterPlugin)
        assert name == names.DEFAULT_PREEMPTION


def test_default_profile_spells_the_names_of_names_py() -> None:
    """framework.config sits below plugins and spells the default profile itself: it must be
    names.IN_TREE, in the same order."""
    assert tuple(name for name, _ in config.DEFAULT_PLUGINS) == names.IN_TREE
    assert tuple(name for _, name, _ in config.GATED_PLUGINS) == names.GATED
    assert names.PRIORITY_SORT in config.BUILT_IN


@pytest.mark.parametrize("path", sorted(PLUGIN_DIR.glob("*.py")), ids=lambda p: p.name)
def test_plugins_are_synchronous(path: Path) -> None:
    """Plugins contain no ``async def`` and no ``await``: they run inside an await-free cycle."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    offending = [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.AsyncFunctionDef | ast.Await | ast.AsyncFor | ast.AsyncWith)
    ]
    assert offending == []
