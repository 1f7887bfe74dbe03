"""NodeResourcesBalancedAllocation: scores, best-effort skip, args, signature.

Cases ported in our own words from kube-scheduler's noderesources balanced_allocation_test.go.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as hst

from scheduler.cache.node_info import NodeInfo
from scheduler.framework import status as st
from scheduler.framework.cycle_state import CycleState
from scheduler.model.parse import node_from_raw, pod_from_raw
from scheduler.plugins import resource_allocation
from scheduler.plugins.balanced_allocation import NodeResourcesBalancedAllocation
from scheduler.plugins.score_math import go_div
from tests.builders import make_container, make_node, make_pod

if TYPE_CHECKING:
    from scheduler.model.pod import Pod


def pod(cpu: str | None = None, memory: str | None = None, **kw: Any) -> Pod:
    return pod_from_raw(make_pod(kw.pop("name", "p"), cpu=cpu, memory=memory, **kw))


def node_info(cpu: str, memory: str, *existing: dict[str, Any], **kw: Any) -> NodeInfo:
    info = NodeInfo(node_from_raw(make_node("n1", cpu=cpu, memory=memory, **kw)))
    for i, spec in enumerate(existing):
        info.add_pod(pod_from_raw(make_pod(f"e{i}", node_name="n1", **spec)))
    return info


def plugin(args: dict[str, Any] | None = None) -> NodeResourcesBalancedAllocation:
    return NodeResourcesBalancedAllocation(args or {}, None)  # type: ignore[arg-type]


CASES = [
    pytest.param(
        {},
        pod("3000m", "5000"),
        [node_info("4000m", "10000"), node_info("6000m", "10000")],
        [68, 75],
        id="differently-sized-nodes-std-of-two-fractions",
    ),
    pytest.param(
        {},
        pod("3000m", "5000"),
        [
            node_info("10000m", "20000", {"cpu": "3000m", "memory": "0"}),
            node_info("10000m", "50000", {"cpu": "3000m", "memory": "5000"}),
        ],
        [73, 70],
        id="existing-pods-add-their-requests",
    ),
    pytest.param(
        {},
        pod("1000m"),
        [node_info("4000m", "10000", {"cpu": "2000m"})],
        [68],
        id="plain-requests-not-non-zero-defaults",
    ),
    pytest.param(
        {},
        pod("6000m", "5000"),
        [node_info("4000m", "10000")],
        [62],
        id="fraction-above-one-is-capped",
    ),
    pytest.param(
        {
            "resources": [
                {"name": "cpu", "weight": 1},
                {"name": "memory", "weight": 1},
                {"name": "example.com/gpu", "weight": 1},
            ]
        },
        pod(containers=[make_container(cpu="6", memory="5", requests={"example.com/gpu": "2"})]),
        [node_info("10", "10", extra={"example.com/gpu": "10"})],
        [66],
        id="three-resources-population-standard-deviation",
    ),
    pytest.param(
        {
            "resources": [
                {"name": "cpu", "weight": 1},
                {"name": "memory", "weight": 1},
                {"name": "example.com/gpu", "weight": 1},
            ]
        },
        pod("3000m", "5000"),
        [node_info("4000m", "10000", extra={"example.com/gpu": "4"})],
        [68],
        id="extended-resource-not-requested-is-left-out",
    ),
]


@pytest.mark.parametrize(("args", "p", "infos", "want"), CASES)
def test_score(args: dict[str, Any], p: Pod, infos: list[NodeInfo], want: list[int]) -> None:
    """Scores equal kube v1.37's: balance b = int((1 - std) * 100) with and without the pod,
    score 50 + (50 + b_with - b_without) // 2 (e.g. .75/.5 of an empty node: 50 + 37 // 2)."""
    pl = plugin(args)
    state = CycleState()
    assert pl.pre_score(state, p, infos) is st.SUCCESS
    assert [pl.score(state, p, info) for info in infos] == want


def test_best_effort_pod_skips_scoring() -> None:
    """A pod requesting none of the resources is skipped (kubernetes#129138)."""
    pl = plugin()
    infos = [node_info("4", "10Gi")]
    assert pl.pre_score(CycleState(), pod(), infos).is_skip
    assert pl.score(CycleState(), pod(), infos[0]) == 0


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        pytest.param(
            {"resources": [{"name": "cpu", "weight": 2}]},
            "resources[0].weight: must be 1",
            id="weight-other-than-one",
        ),
        pytest.param(
            {"resources": [{"name": "cpu"}, {"name": "cpu"}]},
            "resources[1].name: duplicate",
            id="duplicate-resource",
        ),
        pytest.param({"resource": []}, 'unknown field "resource"', id="typo-field"),
    ],
)
def test_args_rejected(args: dict[str, Any], fragment: str) -> None:
    """Bad args raise ValueError naming the field."""
    with pytest.raises(ValueError, match="NodeResourcesBalancedAllocationArgs") as info:
        plugin(args)
    assert fragment in str(info.value)


def test_sign_pod() -> None:
    """Equal requests sign equal; a changed request signs differently."""
    pl = plugin()
    a = pl.sign_pod(pod("1", "1Gi", name="a"))
    assert a == pl.sign_pod(pod("1", "1Gi", name="b"))
    assert a != pl.sign_pod(pod("1", "2Gi", name="c"))
    assert NodeResourcesBalancedAllocation.name == "NodeResourcesBalancedAllocation"


@settings(max_examples=500, deadline=None)
@given(
    cpu_cap=hst.sampled_from([0, 1, 1000, 3999, 4000, 96000]),
    memory_cap=hst.sampled_from([0, 1, 2**30, 32 * 2**30, 10**12]),
    pod_cpu=hst.integers(0, 8000),
    pod_memory=hst.integers(0, 2**36),
    used_cpu=hst.integers(0, 200000),
    used_memory=hst.integers(0, 2**41),
)
def test_unrolled_pair_equals_the_general_balance(
    cpu_cap: int, memory_cap: int, pod_cpu: int, pod_memory: int, used_cpu: int, used_memory: int
) -> None:
    """The cpu/memory fast path every full pass takes gives the score of the general one
    (any resource list: balanced_resource_scorer with and without the pod)."""
    caps = [cpu_cap, memory_cap]
    with_pod = [used_cpu + pod_cpu, used_memory + pod_memory]
    general = 50 + go_div(
        50
        + resource_allocation.balanced_resource_scorer(with_pod, caps)
        - resource_allocation.balanced_resource_scorer([used_cpu, used_memory], caps),
        2,
    )
    fast = resource_allocation.balanced_pair_change(
        with_pod[0], cpu_cap, with_pod[1], memory_cap, pod_cpu, pod_memory
    )
    assert fast == general
