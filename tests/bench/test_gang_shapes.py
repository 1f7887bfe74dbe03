"""bench.gang: the shapes' objects come from kube's gang templates, scaled as documented,
and an infeasible gang is rejected with at most two full passes when its members share a
signature (counted in-process, seconds)."""

from __future__ import annotations

import dataclasses

import pytest

from bench.gang import shapes, work
from bench.scheduler_perf.suite import SuiteError


@pytest.fixture(autouse=True)
def _kube_module() -> None:
    try:
        shapes.gang_selected()
    except SuiteError as exc:
        pytest.skip(f"kube's module is not in the Go module cache: {exc}")


def shape(name: str, nodes: int, labels: str = "pod") -> shapes.Shape:
    return dataclasses.replace(shapes.SHAPES[name].scaled(nodes), labels=labels)


def test_gang_objects_are_kubes_templates() -> None:
    """Pod i names gang i / size; the PodGroup is a gang whose minCount is its size."""
    gangs = shape("gangs-3x1000", 5000)
    group = shapes.pod_group(gangs, 2)
    assert group["metadata"]["name"] == "gang-2"
    assert group["spec"]["schedulingPolicy"] == {"gang": {"minCount": 1000}}
    pod = shapes.gang_pod(gangs, 2500, scheduler_name="s")
    assert pod["metadata"]["name"] == "test-gang-scheduling-2500"
    assert pod["spec"]["schedulingGroup"] == {"podGroupName": "gang-2"}
    assert pod["spec"]["schedulerName"] == "s"
    requests = pod["spec"]["containers"][0]["resources"]["requests"]
    assert requests == {"cpu": "100m", "memory": "100Mi"}


@pytest.mark.parametrize(
    ("labels", "index", "label"),
    [
        pytest.param("pod", 2500, "signature-label-2500", id="per-pod-as-kubes-runner"),
        pytest.param("gang", 2500, "signature-label-2", id="per-gang-members-alike"),
    ],
)
def test_signature_labels(labels: str, index: int, label: str) -> None:
    """kube's runner labels every pod apart; labels=gang gives a gang's members one."""
    pod = shapes.gang_pod(shape("gangs-3x1000", 5000, labels), index, scheduler_name="s")
    assert pod["metadata"]["labels"]["signature"] == label


def test_plain_pods_are_the_gang_pods_without_a_group() -> None:
    """Same requests; no schedulingGroup; named apart; labels=gang: runs of 3."""
    plain = shape("plain-3000", 5000, "gang")
    pod = shapes.plain_pod(plain, 7, scheduler_name="s")
    assert "schedulingGroup" not in pod["spec"]
    assert pod["metadata"]["name"] == "test-plain-7"
    assert pod["metadata"]["labels"]["signature"] == "signature-label-2"
    assert pod["spec"]["containers"][0]["resources"]["requests"]["cpu"] == "100m"


def test_infeasible_gang_fits_half_its_members() -> None:
    """3 CPU members select the pool, a tenth of the nodes: half the gang fits."""
    infeasible = shape("infeasible", 5000)
    assert (infeasible.pool, infeasible.gang_size, infeasible.plain) == (500, 1000, 3000)
    pod = shapes.gang_pod(infeasible, 0, scheduler_name="s")
    assert pod["spec"]["nodeSelector"] == {shapes.POOL_LABEL: "true"}
    assert pod["spec"]["containers"][0]["resources"]["requests"]["cpu"] == "3"
    pooled = [
        shapes.POOL_LABEL in shapes.node(infeasible, i, scheduler_run="x")["metadata"]["labels"]
        for i in range(infeasible.nodes)
    ]
    assert sum(pooled) == 500
    assert shape("infeasible", 5000).expected == (shapes.PLAIN_NS, 3000)


@pytest.mark.parametrize(
    ("name", "nodes", "gangs", "size", "plain"),
    [
        pytest.param("gangs-3x1000", 500, 3, 100, 0, id="few-large-gangs-shrink-their-size"),
        pytest.param("gangs-1000x3", 500, 100, 3, 0, id="many-small-gangs-shrink-their-count"),
        pytest.param("plain-3000", 500, 0, 0, 300, id="plain-pods-scale"),
        pytest.param("infeasible", 200, 1, 40, 120, id="infeasible-gang-twice-its-pool"),
    ],
)
def test_scaled(name: str, nodes: int, gangs: int, size: int, plain: int) -> None:
    """--nodes scales each shape as the shapes module says."""
    scaled = shapes.SHAPES[name].scaled(nodes)
    assert (scaled.nodes, scaled.gangs, scaled.gang_size, scaled.plain) == (
        nodes,
        gangs,
        size,
        plain,
    )


def test_nodes_are_kubes_base_node_named_for_the_run() -> None:
    """4 CPU, 32Gi, 110 pods, Ready; the hostname label is the name."""
    node = shapes.node(shape("gangs-3x1000", 5000), 7, scheduler_run="ours")
    assert node["metadata"]["name"] == "node-ours-00007"
    assert node["metadata"]["labels"] == {"kubernetes.io/hostname": "node-ours-00007"}
    assert node["status"]["allocatable"] == {"pods": "110", "cpu": "4", "memory": "32Gi"}


@pytest.mark.parametrize(
    ("labels", "full_passes"),
    [
        pytest.param("gang", 2, id="members-alike-one-pass-to-place-one-to-fail"),
        pytest.param("pod", 21, id="members-apart-a-pass-each-until-minCount-is-out-of-reach"),
    ],
)
def test_infeasible_gang_rejection_full_passes(labels: str, full_passes: int) -> None:
    """At 200 nodes (pool 20, 40 members): members alike take one full pass that finds
    the pool, hints for the rest of it, and one full pass that fails; members apart take a
    full pass each until the 21st fails. Nothing is placed, every attempt alike."""
    found = work.infeasible_work(shape("infeasible", 200, labels), attempts=2)
    for attempt in found["attempts"]:
        assert attempt["placed"] == 0
        assert attempt["decisions"].get("full") == full_passes
        assert sum(attempt["decisions"].values()) == 21
