"""``simulate`` decides with the whole snapshot: Namespaces, Services and pod controllers.

In process (``snapshot_from_documents`` + ``simulate``), batching off, a fixed seed.
"""

from __future__ import annotations

from typing import Any

import pytest

from scheduler.app.simulate import simulate
from scheduler.app.snapshot_file import snapshot_from_documents
from scheduler.batching.signature import BatchingMode
from scheduler.framework.config import SchedulerConfig, default_config, load_config
from tests.builders import make_node, make_pod

ZONE = "topology.kubernetes.io/zone"


def _place(docs: list[Any], config: SchedulerConfig | None = None) -> dict[str, str | None]:
    config = config or default_config()
    names = {p.scheduler_name for p in config.profiles}
    report = simulate(snapshot_from_documents(docs, names), config, mode=BatchingMode.OFF, seed=0)
    return {p["pod"]: p["node"] for p in report["placements"]}


# -- namespaceSelector ------------------------------------------------------------------------


def _namespace(name: str, **labels: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": labels}}


def _needs_db(namespace_selector: dict[str, Any]) -> dict[str, Any]:
    """A pod that must run beside an ``app=db`` pod of the namespaces the selector picks."""
    term = {
        "labelSelector": {"matchLabels": {"app": "db"}},
        "namespaceSelector": namespace_selector,
        "topologyKey": "kubernetes.io/hostname",
    }
    affinity = {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}
    return make_pod("client", affinity=affinity)


BLUE = {"matchLabels": {"team": "blue"}}
NAMED_DATA = {"matchLabels": {"kubernetes.io/metadata.name": "data"}}


@pytest.mark.parametrize(
    ("namespaces", "selector", "node"),
    [
        pytest.param([_namespace("data", team="blue")], BLUE, "n2", id="label-matches"),
        pytest.param([_namespace("data", team="red")], BLUE, None, id="label-differs"),
        pytest.param([], BLUE, None, id="namespace-unlabelled"),
        pytest.param([], NAMED_DATA, "n2", id="api-server-name-label"),
    ],
)
def test_namespace_selector_reads_namespace_documents(
    namespaces: list[dict[str, Any]], selector: dict[str, Any], node: str | None
) -> None:
    """Pod affinity's namespaceSelector matches the labels of the Namespace documents."""
    docs = [
        *namespaces,
        make_node("n1"),
        make_node("n2"),
        make_pod("db", namespace="data", labels={"app": "db"}, node_name="n2"),
        _needs_db(selector),
    ]
    assert _place(docs) == {"default/client": node}


# -- default topology spreading -----------------------------------------------------------------

# Bin-packing scores make the spreading visible: without it, identical pods stack on one node.
# Pods ask for the same share of CPU and memory, so NodeResourcesBalancedAllocation is even.
PACKING = {
    "name": "NodeResourcesFit",
    "args": {
        "scoringStrategy": {
            "type": "MostAllocated",
            "resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}],
        }
    },
}


def _config(*profiles: dict[str, Any]) -> SchedulerConfig:
    return load_config(
        {
            "apiVersion": "kubescheduler.config.k8s.io/v1",
            "kind": "KubeSchedulerConfiguration",
            "profiles": list(profiles),
        }
    )


def _replica(index: int) -> dict[str, Any]:
    pod = make_pod(f"web-{index}", cpu="1", memory="8Gi", labels={"app": "web"})
    pod["metadata"]["ownerReferences"] = [
        {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web", "controller": True}
    ]
    return pod


SERVICE = {
    "apiVersion": "v1",
    "kind": "Service",
    "metadata": {"name": "web", "namespace": "default"},
    "spec": {"selector": {"app": "web"}},
}
REPLICA_SET = {
    "apiVersion": "apps/v1",
    "kind": "ReplicaSet",
    "metadata": {"name": "web", "namespace": "default"},
    "spec": {"replicas": 4, "selector": {"matchLabels": {"app": "web"}}},
}


@pytest.mark.parametrize(
    ("workloads", "distinct_nodes"),
    [
        # System defaults (hostname maxSkew 3, zone maxSkew 5, ScheduleAnyway), weight 2, beat
        # MostAllocated's weight 1 at every step: by kube's arithmetic an empty node of the
        # emptier zone gets 68, 46, 38 more spreading points than the best occupied node for
        # the 2nd, 3rd, 4th replica, against 25 packing points the other way.
        pytest.param([SERVICE, REPLICA_SET], 4, id="service-and-replicaset-spread"),
        pytest.param([SERVICE], 4, id="service-alone-spreads"),
        pytest.param([REPLICA_SET], 4, id="replicaset-alone-spreads"),
        pytest.param([], 1, id="nothing-selects-them-so-they-stack"),
    ],
)
def test_default_spreading_follows_the_services_and_controllers_in_the_file(
    workloads: list[dict[str, Any]], distinct_nodes: int
) -> None:
    """4 replicas on 4 equal nodes of 2 zones: spread when the file says what selects them."""
    nodes = [make_node(f"n{i}", labels={ZONE: f"zone-{i % 2}"}) for i in range(4)]
    replicas = [_replica(i) for i in range(4)]
    placed = _place([*workloads, *nodes, *replicas], _config({"pluginConfig": [PACKING]}))
    assert None not in placed.values(), placed
    assert len(set(placed.values())) == distinct_nodes, placed
    if distinct_nodes > 1:  # the zone constraint too: the 2nd replica goes to the other zone
        zone = {f"n{i}": i % 2 for i in range(4)}
        assert zone[placed["default/web-0"] or ""] != zone[placed["default/web-1"] or ""], placed
