"""Preemption's dry run runs PreFilter once, not per victim and node (review finding 1), and
leaves the cluster exactly as it was, pod order included (finding 7)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from scheduler.cache.cluster_state import ClusterState
from scheduler.framework import preemption
from scheduler.framework.cycle_state import CycleState
from scheduler.framework.diagnosis import FitError
from scheduler.model.parse import node_from_raw, pod_from_raw
from tests.builders import make_node, make_pod
from tests.harness import profile_for

NODES = 6
PODS_PER_NODE = 4
SPREAD = [
    {
        "maxSkew": 1,
        "topologyKey": "zone",
        "whenUnsatisfiable": "DoNotSchedule",
        "labelSelector": {"matchLabels": {"app": "web"}},
    }
]


def test_pre_filter_runs_once_per_dry_run(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every node full of low-priority pods: the dry run finds a candidate on each node
    with one PreFilter call per plugin, and every node keeps its pods in their order."""
    cluster = ClusterState()
    for n in range(NODES):
        raw = make_node(f"n{n}", cpu="4", labels={"zone": f"z{n % 3}"})
        cluster.add_node(node_from_raw(raw))
        for p in range(PODS_PER_NODE):
            cluster.add_pod(
                pod_from_raw(
                    make_pod(
                        f"p{n}-{p}",
                        cpu="1",
                        node_name=f"n{n}",
                        labels={"app": "web"},
                        uid=f"p{n}-{p}",
                    )
                )
            )
    profile = profile_for(cluster)
    calls: dict[str, int] = {}
    for plugin in profile.pre_filter_plugins:

        def counted(
            *args: Any, _run: Callable[..., Any] = plugin.pre_filter, _name: str = plugin.name
        ) -> Any:
            calls[_name] = calls.get(_name, 0) + 1
            return _run(*args)

        monkeypatch.setattr(plugin, "pre_filter", counted)
    raw = make_pod("big", cpu="2", priority=1000, labels={"app": "web"})
    raw["spec"]["topologySpreadConstraints"] = SPREAD
    preemptor = pod_from_raw(raw)
    outcome = profile.schedule(CycleState(), preemptor)
    assert isinstance(outcome, FitError)
    before = [(info.name, list(info.pods)) for info in cluster.snapshot.node_infos]
    calls.clear()
    candidates, statuses = preemption.dry_run(
        profile,
        preemptor,
        cluster.snapshot.node_infos,
        [],
        offset=0,
        num_candidates=NODES,
    )
    assert statuses == {}
    assert len(candidates) == NODES
    assert all(len(c.victims) == 2 for c in candidates)
    assert "PodTopologySpread" in calls
    assert set(calls.values()) == {1}
    assert [(info.name, list(info.pods)) for info in cluster.snapshot.node_infos] == before
