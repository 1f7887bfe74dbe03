"""NodeResourcesFit: filter reasons and codes, the three scoring strategies, args, signature.

Cases ported in our own words from kube-scheduler's noderesources fit_test.go,
least_allocated_test.go, most_allocated_test.go and requested_to_capacity_ratio_test.go.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from scheduler.cache.node_info import NodeInfo
from scheduler.framework import status as st
from scheduler.framework.cycle_state import CycleState
from scheduler.model import parse_common
from scheduler.model.parse import node_from_raw, pod_from_raw
from scheduler.plugins import names
from scheduler.plugins.node_resources_fit import NodeResourcesFit, is_extended_resource_name
from tests.builders import make_container, make_node, make_pod

if TYPE_CHECKING:
    from scheduler.model.pod import Pod

U = st.Code.UNSCHEDULABLE
UU = st.Code.UNSCHEDULABLE_AND_UNRESOLVABLE


def pod(cpu: str | None = None, memory: str | None = None, **kw: Any) -> Pod:
    return pod_from_raw(make_pod(kw.pop("name", "p"), cpu=cpu, memory=memory, **kw))


def containers_pod(*reqs: tuple[str, str]) -> Pod:
    """One container per (cpu, memory) pair, as kube tests chain Req(...)."""
    cs = [make_container(f"c{i}", cpu=c, memory=m) for i, (c, m) in enumerate(reqs)]
    return pod_from_raw(make_pod("p", containers=cs))


def node_info(cpu: str, memory: str, *existing: dict[str, Any], **kw: Any) -> NodeInfo:
    info = NodeInfo(node_from_raw(make_node("n1", cpu=cpu, memory=memory, **kw)))
    for i, spec in enumerate(existing):
        info.add_pod(pod_from_raw(make_pod(f"e{i}", node_name="n1", **spec)))
    return info


def run_filter(plugin: NodeResourcesFit, p: Pod, info: NodeInfo) -> st.Status:
    state = CycleState()
    _, status = plugin.pre_filter(state, p, None)  # type: ignore[arg-type]
    assert status.is_success
    return plugin.filter(state, p, info)


FILTER_CASES = [
    pytest.param(
        pod(),
        node_info("10", "20", {"cpu": "10", "memory": "20"}),
        {},
        None,
        id="no-requests-fit-a-full-node",
    ),
    pytest.param(
        pod("1", "1"),
        node_info("10", "20", {"cpu": "10", "memory": "20"}),
        {},
        (U, ("Insufficient cpu", "Insufficient memory")),
        id="all-insufficient-reasons-in-one-status",
    ),
    pytest.param(
        pod("1", "1"),
        node_info("10", "20", {"cpu": "5", "memory": "5"}),
        {},
        None,
        id="fits-in-the-free-part",
    ),
    pytest.param(
        pod("3", "1"),
        node_info("10", "20", {"cpu": "8", "memory": "19"}),
        {},
        (U, ("Insufficient cpu",)),
        id="cpu-only-insufficient",
    ),
    pytest.param(
        pod_from_raw(
            make_pod(
                "p",
                containers=[make_container(cpu="1", memory="1")],
                init_containers=[make_container("i", cpu="3", memory="1")],
            )
        ),
        node_info("10", "20", {"cpu": "8", "memory": "19"}),
        {},
        (U, ("Insufficient cpu",)),
        id="init-container-request-counts",
    ),
    pytest.param(
        pod("11", "1"),
        node_info("10", "20"),
        {},
        (UU, ("Insufficient cpu",)),
        id="request-above-allocatable-is-unresolvable",
    ),
    pytest.param(
        pod("1", "1"),
        node_info("10", "20", {"cpu": "1"}, pods="1"),
        {},
        (U, ("Too many pods",)),
        id="pod-count-limit",
    ),
    pytest.param(
        pod("10", "1"),
        node_info("10", "20", {"cpu": "1"}, pods="1"),
        {},
        (U, ("Too many pods", "Insufficient cpu")),
        id="too-many-pods-first-then-resources",
    ),
    pytest.param(
        pod(containers=[make_container(requests={"example.com/foo": "2"})]),
        node_info(
            "10",
            "20",
            {"containers": [make_container(requests={"example.com/foo": "4"})]},
            extra={"example.com/foo": "5"},
        ),
        {},
        (U, ("Insufficient example.com/foo",)),
        id="extended-resource-insufficient",
    ),
    pytest.param(
        pod(containers=[make_container(requests={"example.com/foo": "6"})]),
        node_info("10", "20", extra={"example.com/foo": "5"}),
        {},
        (UU, ("Insufficient example.com/foo",)),
        id="extended-resource-above-allocatable-unresolvable",
    ),
    pytest.param(
        pod(containers=[make_container(requests={"example.com/foo": "2"})]),
        node_info("10", "20"),
        {"ignoredResources": ["example.com/foo"]},
        None,
        id="ignored-extended-resource-not-checked",
    ),
    pytest.param(
        pod(containers=[make_container(requests={"example.com/foo": "2"})]),
        node_info("10", "20"),
        {"ignoredResourceGroups": ["example.com"]},
        None,
        id="ignored-resource-group-not-checked",
    ),
    pytest.param(
        pod(containers=[make_container(requests={"hugepages-2Mi": "4Mi"})]),
        node_info("10", "20", extra={"hugepages-2Mi": "2Mi"}),
        {"ignoredResourceGroups": ["hugepages-2Mi"]},
        (UU, ("Insufficient hugepages-2Mi",)),
        id="hugepages-are-not-extended-so-never-ignored",
    ),
    pytest.param(
        pod(containers=[make_container(requests={"ephemeral-storage": "10"})]),
        node_info(
            "10",
            "20",
            {"containers": [make_container(requests={"ephemeral-storage": "15"})]},
            ephemeral="20",
        ),
        {},
        (U, ("Insufficient ephemeral-storage",)),
        id="ephemeral-storage-insufficient",
    ),
]


@pytest.mark.parametrize(("p", "info", "args", "want"), FILTER_CASES)
def test_filter(
    p: Pod, info: NodeInfo, args: dict[str, Any], want: tuple[st.Code, tuple[str, ...]] | None
) -> None:
    """Filter returns kube's reasons, all at once, and Unresolvable past allocatable."""
    status = run_filter(NodeResourcesFit(args, None), p, info)  # type: ignore[arg-type]
    if want is None:
        assert status is st.SUCCESS
    else:
        assert (status.code, status.reasons) == want


def test_filter_without_pre_filter_state() -> None:
    """A recheck on a fresh CycleState computes the request itself."""
    plugin = NodeResourcesFit({}, None)  # type: ignore[arg-type]
    status = plugin.filter(CycleState(), pod("3"), node_info("10", "20", {"cpu": "8"}))
    assert status.reasons == ("Insufficient cpu",)


def scores(plugin: NodeResourcesFit, p: Pod, infos: list[NodeInfo]) -> list[int]:
    state = CycleState()
    assert plugin.pre_score(state, p, infos).is_success
    return [plugin.score(state, p, info) for info in infos]


REQ_3000_5000 = containers_pod(("1000m", "2000"), ("2000m", "3000"))

SCORE_CASES = [
    pytest.param(
        {},
        pod(),
        [node_info("4000m", "1000Mi"), node_info("4000m", "10000")],
        [88, 48],
        id="least-container-without-requests-counts-100m-and-200Mi",
    ),
    pytest.param(
        {},
        REQ_3000_5000,
        [node_info("4000m", "10000"), node_info("6000m", "10000")],
        [37, 50],
        id="least-differently-sized-nodes",
    ),
    pytest.param(
        {},
        REQ_3000_5000,
        [
            node_info("10000m", "20000", {"cpu": "3000m", "memory": "0"}),
            node_info("10000m", "50000", {"cpu": "3000m", "memory": "5000"}),
        ],
        [57, 60],
        id="least-with-existing-pods",
    ),
    pytest.param(
        {},
        pod("3000m", "0"),
        [
            node_info("4000m", "10000", {"cpu": "3000m", "memory": "0"}),
            node_info("4000m", "10000", {"cpu": "3000m", "memory": "5000"}),
        ],
        [50, 25],
        id="least-requests-above-capacity-score-zero",
    ),
    pytest.param(
        {
            "scoringStrategy": {
                "type": "LeastAllocated",
                "resources": [{"name": "memory", "weight": 2}, {"name": "cpu", "weight": 1}],
            }
        },
        REQ_3000_5000,
        [node_info("4000m", "10000"), node_info("6000m", "10000")],
        [41, 50],
        id="least-weighted-resources",
    ),
    pytest.param(
        {
            "scoringStrategy": {
                "type": "LeastAllocated",
                "resources": [
                    {"name": "cpu", "weight": 1},
                    {"name": "memory", "weight": 1},
                    {"name": "example.com/foo", "weight": 1},
                ],
            }
        },
        REQ_3000_5000,
        [node_info("6000m", "10000"), node_info("6000m", "10000", extra={"example.com/foo": "4"})],
        [50, 50],
        id="least-extended-resource-not-requested-is-left-out",
    ),
    pytest.param(
        {
            "scoringStrategy": {
                "type": "LeastAllocated",
                "resources": [
                    {"name": "cpu", "weight": 1},
                    {"name": "memory", "weight": 1},
                    {"name": "example.com/foo", "weight": 1},
                ],
            }
        },
        pod(
            containers=[
                make_container(cpu="3000m", memory="5000", requests={"example.com/foo": "2"})
            ]
        ),
        [
            node_info("6000m", "10000", extra={"example.com/foo": "4"}),
            node_info("6000m", "10000", extra={"example.com/foo": "10"}),
        ],
        [50, 60],
        id="least-extended-resource-requested-is-scored",
    ),
    pytest.param(
        {"scoringStrategy": {"type": "MostAllocated"}},
        REQ_3000_5000,
        [node_info("4000m", "10000"), node_info("6000m", "10000")],
        [62, 50],
        id="most-differently-sized-nodes",
    ),
    pytest.param(
        {"scoringStrategy": {"type": "MostAllocated"}},
        REQ_3000_5000,
        [
            node_info("10000m", "20000", {"cpu": "3000m", "memory": "0"}),
            node_info("10000m", "20000", {"cpu": "3000m", "memory": "5000"}),
        ],
        [42, 55],
        id="most-with-existing-pods",
    ),
    pytest.param(
        {"scoringStrategy": {"type": "MostAllocated"}},
        pod("5000m", "0"),
        [node_info("4000m", "10000")],
        [50],
        id="most-requested-above-capacity-is-capped",
    ),
    pytest.param(
        {
            "scoringStrategy": {
                "type": "RequestedToCapacityRatio",
                "requestedToCapacityRatio": {
                    "shape": [{"utilization": 0, "score": 0}, {"utilization": 100, "score": 10}]
                },
            }
        },
        REQ_3000_5000,
        [node_info("4000m", "10000"), node_info("6000m", "10000")],
        [63, 50],
        id="ratio-bin-packing-rounds-half-away-from-zero",
    ),
    pytest.param(
        {
            "scoringStrategy": {
                "type": "RequestedToCapacityRatio",
                "requestedToCapacityRatio": {
                    "shape": [{"utilization": 0, "score": 10}, {"utilization": 100, "score": 0}]
                },
            }
        },
        REQ_3000_5000,
        [node_info("4000m", "10000"), node_info("10000m", "10000")],
        [38, 60],
        id="ratio-spreading-shape",
    ),
    pytest.param(
        {
            "scoringStrategy": {
                "type": "RequestedToCapacityRatio",
                "requestedToCapacityRatio": {
                    "shape": [{"utilization": 0, "score": 0}, {"utilization": 100, "score": 10}]
                },
            }
        },
        pod("2000m", "0"),
        [node_info("4000m", "10000")],
        [50],
        id="ratio-resource-scoring-zero-carries-no-weight",
    ),
]


@pytest.mark.parametrize(("args", "p", "infos", "want"), SCORE_CASES)
def test_score(args: dict[str, Any], p: Pod, infos: list[NodeInfo], want: list[int]) -> None:
    """Scores equal kube's integers for each strategy."""
    assert scores(NodeResourcesFit(args, None), p, infos) == want  # type: ignore[arg-type]


ARG_ERRORS = [
    pytest.param(
        {"scoringStrategy": {"type": "X"}},
        'scoringStrategy.type: unknown value "X"',
        id="unknown-strategy",
    ),
    pytest.param(
        {"scoringStrategy": {}},
        'scoringStrategy.type: unknown value ""',
        id="strategy-without-type",
    ),
    pytest.param(
        {
            "scoringStrategy": {
                "type": "LeastAllocated",
                "resources": [{"name": "cpu", "weight": 101}],
            }
        },
        "scoringStrategy.resources[0].weight",
        id="weight-above-100",
    ),
    pytest.param(
        {
            "scoringStrategy": {
                "type": "LeastAllocated",
                "resources": [{"name": "cpu", "weight": -1}],
            }
        },
        "scoringStrategy.resources[0].weight",
        id="negative-weight",
    ),
    pytest.param(
        {"scoringStrategy": {"type": "RequestedToCapacityRatio"}},
        "scoringStrategy.requestedToCapacityRatio: required",
        id="ratio-without-shape",
    ),
    pytest.param(
        {
            "scoringStrategy": {
                "type": "RequestedToCapacityRatio",
                "requestedToCapacityRatio": {"shape": []},
            }
        },
        "shape: at least one point",
        id="empty-shape",
    ),
    pytest.param(
        {
            "scoringStrategy": {
                "type": "RequestedToCapacityRatio",
                "requestedToCapacityRatio": {
                    "shape": [{"utilization": 50, "score": 1}, {"utilization": 50, "score": 2}]
                },
            }
        },
        "shape[1].utilization: values must be sorted",
        id="shape-not-increasing",
    ),
    pytest.param(
        {
            "scoringStrategy": {
                "type": "RequestedToCapacityRatio",
                "requestedToCapacityRatio": {"shape": [{"utilization": 101, "score": 1}]},
            }
        },
        "shape[0].utilization",
        id="utilization-above-100",
    ),
    pytest.param(
        {
            "scoringStrategy": {
                "type": "RequestedToCapacityRatio",
                "requestedToCapacityRatio": {"shape": [{"utilization": 10, "score": 11}]},
            }
        },
        "shape[0].score",
        id="shape-score-above-10",
    ),
    pytest.param(
        {"ignoredResourceGroups": ["example.com/foo"]},
        "ignoredResourceGroups[0]: resource group name can't contain '/'",
        id="group-with-slash",
    ),
    pytest.param(
        {"ignoredResources": ["not a name"]}, "ignoredResources[0]", id="bad-ignored-name"
    ),
    pytest.param({"scoringStrategie": {}}, 'unknown field "scoringStrategie"', id="typo-field"),
]


@pytest.mark.parametrize(("args", "fragment"), ARG_ERRORS)
def test_args_rejected(args: dict[str, Any], fragment: str) -> None:
    """Bad args raise ValueError naming NodeResourcesFitArgs and the field."""
    with pytest.raises(ValueError, match="NodeResourcesFitArgs") as info:
        NodeResourcesFit(args, None)  # type: ignore[arg-type]
    assert fragment in str(info.value)


def test_default_args_are_least_allocated_cpu_memory() -> None:
    """No args: LeastAllocated over cpu and memory with weight 1; weight 0 means 1."""
    plugin = NodeResourcesFit(
        {"scoringStrategy": {"type": "MostAllocated", "resources": [{"name": "cpu"}]}},
        None,  # type: ignore[arg-type]
    )
    assert [(r.name, r.weight) for r in plugin.args.resources] == [("cpu", 1)]
    default = NodeResourcesFit({}, None).args  # type: ignore[arg-type]
    assert (default.strategy, [(r.name, r.weight) for r in default.resources]) == (
        "LeastAllocated",
        [("cpu", 1), ("memory", 1)],
    )
    assert NodeResourcesFit.name == names.NODE_RESOURCES_FIT == "NodeResourcesFit"


def test_sign_pod() -> None:
    """Equal requests sign equal; a changed request or non-zero default signs differently."""
    plugin = NodeResourcesFit({}, None)  # type: ignore[arg-type]
    a = plugin.sign_pod(pod("1", "1Gi", name="a"))
    assert a == plugin.sign_pod(pod("1", "1Gi", name="b", labels={"x": "y"}))
    assert a != plugin.sign_pod(pod("2", "1Gi", name="c"))
    assert plugin.sign_pod(pod(name="d")) != plugin.sign_pod(pod("0", "0", name="e"))
    hash(a)


@pytest.mark.parametrize(
    ("name", "scalar", "extended"),
    [
        pytest.param("example.com/gpu", True, True, id="domain-prefixed-is-extended"),
        pytest.param("hugepages-2Mi", True, False, id="hugepages-is-scalar-not-extended"),
        pytest.param("kubernetes.io/foo", True, False, id="prefixed-native-is-scalar"),
        pytest.param("cpu", False, False, id="cpu-is-neither"),
        pytest.param("pods", False, False, id="pods-is-neither"),
        pytest.param("requests.example.com/gpu", False, False, id="quota-name-is-neither"),
        pytest.param("example.com/gpu\n", False, False, id="trailing-newline-is-invalid"),
        pytest.param("Example.com/gpu", False, False, id="upper-case-domain-is-invalid"),
    ],
)
def test_resource_name_kinds(name: str, scalar: bool, extended: bool) -> None:
    """Resource names are classified as kube's v1helper does (Go's ``$`` ends the text: a
    trailing newline is not a valid name)."""
    assert parse_common.is_scalar_resource_name(name) is scalar
    assert is_extended_resource_name(name) is extended
