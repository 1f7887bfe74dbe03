"""ImageLocality: scaled image sizes, thresholds per container, signature.

Cases in our own words after kube-scheduler's image_locality_test.go; expected integers
worked by hand from kube's formula (size * nodes_with_image / all_nodes, clamped to
[23 MiB, 1000 MiB * containers], then * 100 / range, truncated).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from scheduler.cache.node_info import NodeInfo
from scheduler.cache.snapshot import Snapshot
from scheduler.framework.cycle_state import CycleState
from scheduler.model.parse import node_from_raw, pod_from_raw
from scheduler.plugins.image_locality import ImageLocality, calculate_priority
from tests.builders import make_container, make_node, make_pod

if TYPE_CHECKING:
    from scheduler.model.pod import Pod

MB = 1024 * 1024


class _Handle:
    def __init__(self, snapshot: Snapshot) -> None:
        self._snapshot = snapshot

    @property
    def snapshot(self) -> Snapshot:
        return self._snapshot


def pod(*images: str, init: tuple[str, ...] = (), name: str = "p") -> Pod:
    cs = [make_container(f"c{i}", image=im) for i, im in enumerate(images)]
    inits = [make_container(f"i{i}", image=im) for i, im in enumerate(init)]
    return pod_from_raw(make_pod(name, containers=cs, init_containers=inits or None))


def cluster(*nodes: list[tuple[list[str], int]]) -> tuple[ImageLocality, list[NodeInfo]]:
    infos = [
        NodeInfo(node_from_raw(make_node(f"n{i}", images=imgs))) for i, imgs in enumerate(nodes)
    ]
    return ImageLocality({}, _Handle(Snapshot.of(infos))), infos


A = "example.com/a:1"
B = "example.com/b:1"
CASES = [
    pytest.param(
        (pod(A), [([A], 250 * MB)], [([A], 250 * MB)], []),
        [14, 14, 0],
        id="image-on-two-of-three-nodes-is-scaled-by-spread",
    ),
    pytest.param(
        (pod(A, A), [([A], 250 * MB)], [([A], 250 * MB)], []),
        [15, 15, 0],
        id="same-image-twice-counts-twice-threshold-doubles",
    ),
    pytest.param(
        (pod(A), [([A], 10 * MB)], [([A], 10 * MB)], [([A], 10 * MB)]),
        [0, 0, 0],
        id="small-image-below-min-threshold",
    ),
    pytest.param(
        (pod(A), [([A], 2000 * MB)], [([A], 2000 * MB)], [([A], 2000 * MB)]),
        [100, 100, 100],
        id="huge-image-everywhere-clamped-to-max",
    ),
    pytest.param(
        (pod(B, init=(A,)), [([A], 300 * MB), ([B], 300 * MB)], [([B], 300 * MB)], []),
        [14, 8, 0],
        id="init-container-images-count",
    ),
    pytest.param(
        (pod("example.com/a"), [(["example.com/a:latest"], 500 * MB)], []),
        [23, 0],
        id="untagged-image-normalized-to-latest",
    ),
]


@pytest.mark.parametrize(("setup", "want"), CASES)
def test_score(setup: tuple[Pod, list[tuple[list[str], int]]], want: list[int]) -> None:
    """Scores equal kube's integers; no NormalizeScore."""
    p, *nodes = setup
    pl, infos = cluster(*nodes)
    assert [pl.score(CycleState(), p, info) for info in infos] == want
    assert not hasattr(pl, "normalize_score")


def test_calculate_priority_bounds() -> None:
    """Clamping and the linear map follow kube's calculatePriority."""
    assert calculate_priority(0, 1) == 0
    assert calculate_priority(23 * MB, 1) == 0
    assert calculate_priority(1000 * MB, 1) == 100
    assert calculate_priority(5000 * MB, 2) == 100
    assert calculate_priority(511 * MB, 1) == 49


def test_sign_pod() -> None:
    """Images sorted with repeats: order ignored, count and names matter."""
    pl = ImageLocality({}, None)  # type: ignore[arg-type]
    assert pl.sign_pod(pod(A, B, name="x")) == pl.sign_pod(pod(B, A, name="y"))
    assert pl.sign_pod(pod(A, B)) != pl.sign_pod(pod(A, A, B))
    assert pl.sign_pod(pod(A)) != pl.sign_pod(pod(B))
    assert ImageLocality.name == "ImageLocality"
