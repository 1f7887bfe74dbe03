"""The public plugin API (docs/plugins.md) is pinned: the entry-point group, the factory
call, and each extension point's method signature; changing one is a deliberate change here
and in the doc, since out-of-tree plugins are written against them."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest

import scheduler.framework as framework
from scheduler.app.plugin_loading import ENTRY_POINT_GROUP
from scheduler.framework import interfaces

DOC = Path(__file__).resolve().parents[3] / "docs" / "plugins.md"

SIGNATURES = {
    "PreFilterPlugin": {"pre_filter": ["self", "state", "pod", "snapshot"]},
    "FilterPlugin": {"filter": ["self", "state", "pod", "node_info"]},
    "PreScorePlugin": {"pre_score": ["self", "state", "pod", "nodes"]},
    "ScorePlugin": {"score": ["self", "state", "pod", "node_info"]},
    "NormalizeScorePlugin": {"normalize_score": ["self", "state", "pod", "nodes", "scores"]},
    "SignPlugin": {"sign_pod": ["self", "pod"]},
    "EnqueueExtensions": {"events_to_register": ["self"]},
    "PreEnqueuePlugin": {"pre_enqueue": ["self", "pod"]},
    "ReservePlugin": {
        "reserve": ["self", "state", "pod", "node_name"],
        "unreserve": ["self", "state", "pod", "node_name"],
    },
    "PermitPlugin": {"permit": ["self", "state", "pod", "node_name"]},
    "PreBindPlugin": {
        "pre_bind_pre_flight": ["self", "state", "pod", "node_name"],
        "pre_bind": ["self", "state", "pod", "node_name"],
    },
    "PostBindPlugin": {"post_bind": ["self", "state", "pod", "node_name"]},
}


@pytest.mark.parametrize("protocol", sorted(SIGNATURES))
def test_extension_point_signatures_are_pinned(protocol: str) -> None:
    cls = getattr(framework, protocol)
    for method, params in SIGNATURES[protocol].items():
        assert list(inspect.signature(getattr(cls, method)).parameters) == params
        assert f"`{method}(" in DOC.read_text()  # and the doc shows it


def test_the_entry_point_group_and_every_public_name_are_documented() -> None:
    text = DOC.read_text()
    assert ENTRY_POINT_GROUP == "batch_scheduler.plugins"
    assert f'"{ENTRY_POINT_GROUP}"' in text
    for protocol in SIGNATURES:
        assert protocol in framework.__all__
        assert isinstance(getattr(interfaces, protocol), type)


def test_in_tree_plugins_keep_the_factory_call() -> None:
    """``factory(args, handle)``, as out-of-tree factories are called."""
    from scheduler.plugins import in_tree_registry

    for name, factory in in_tree_registry().items():
        params = list(inspect.signature(factory).parameters)
        assert params[:2] == ["args", "handle"], name
