"""Which plugins the exact batch can serve (batching/exact_contracts.py): a plugin without a
contract keeps the profile off the exact path and is named as the reason its spread pods
are not batched; an out-of-tree plugin that promises to be node-local keeps the path."""

from __future__ import annotations

import random
from typing import TYPE_CHECKING

import pytest

from scheduler.batching.exact_contracts import exact_blockers
from scheduler.batching.signature import BatchingMode, Signer, is_exact
from scheduler.cache.cluster_state import ClusterState
from scheduler.framework import status as st
from scheduler.framework.config import PluginSpec, default_config
from scheduler.framework.profile import Profile
from scheduler.model.parse import pod_from_raw
from scheduler.plugins import in_tree_registry
from tests.builders import make_pod

if TYPE_CHECKING:
    from scheduler.cache.node_info import NodeInfo
    from scheduler.framework.cycle_state import CycleState
    from scheduler.model.pod import Pod

SPREAD = [
    {
        "maxSkew": 1,
        "topologyKey": "kubernetes.io/hostname",
        "whenUnsatisfiable": "DoNotSchedule",
        "labelSelector": {"matchLabels": {"app": "web"}},
    }
]


class _Custom:
    """An out-of-tree Filter, node-local or not as told."""

    name = "Custom"

    def __init__(self, node_local: bool | None) -> None:
        self._node_local = node_local

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> st.Status:
        return st.SUCCESS

    def sign_pod(self, pod: Pod) -> str:
        return ""


class _NodeLocal(_Custom):
    def exact_node_local(self) -> bool:
        return bool(self._node_local)


def _profile(custom: _Custom | None) -> Profile:
    specs = list(default_config().profiles[0].plugins)
    registry = dict(in_tree_registry())
    if custom is not None:
        specs.append(PluginSpec("Custom", 1, frozenset()))
        registry["Custom"] = lambda args, handle: custom
    return Profile(
        scheduler_name="batch-scheduler",
        plugins=specs,
        registry=registry,
        plugin_args={},
        snapshot=ClusterState().snapshot,
        rng=random.Random(0),
    )


@pytest.mark.parametrize(
    ("custom", "blockers"),
    [
        pytest.param(None, [], id="in-tree-profile"),
        pytest.param(_Custom(None), ["Custom"], id="out-of-tree-without-contract"),
        pytest.param(_NodeLocal(True), [], id="out-of-tree-node-local"),
        pytest.param(_NodeLocal(False), ["Custom"], id="out-of-tree-not-node-local"),
    ],
)
def test_exact_blockers(custom: _Custom | None, blockers: list[str]) -> None:
    """Only plugins with a contract leave the exact batch to a profile."""
    assert exact_blockers(_profile(custom)) == blockers


def test_the_blocking_plugin_is_named_as_the_reason_a_spread_pod_is_not_batched() -> None:
    """A spread pod of a profile with an out-of-tree plugin lacking the contract is refused
    by that plugin's name, not PodTopologySpread's (which only asks for the exact path)."""
    pod = pod_from_raw(make_pod("web-0", labels={"app": "web"}, topology_spread=SPREAD))
    blocked = Signer(_profile(_Custom(None)), BatchingMode.ALL)
    assert not blocked.exact
    assert blocked.sign(pod).refused_by == "Custom"
    kept = Signer(_profile(_NodeLocal(True)), BatchingMode.ALL).sign(pod)
    assert kept.signature is not None
    assert is_exact(kept.signature)
