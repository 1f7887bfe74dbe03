"""bench.scheduler_perf.suite and .ops read kube's workload files from the pinned module
and put the workload params in as kube's runner does."""

from __future__ import annotations

import pytest

from bench.scheduler_perf import decode, ops
from bench.scheduler_perf.gotemplate import Template
from bench.scheduler_perf.suite import (
    ParamValue,
    Selected,
    SuiteError,
    TestCase,
    enabled,
    load_suite,
    parse_param,
    select,
    suite_root,
)


@pytest.fixture(scope="module")
def suite() -> list[TestCase]:
    try:
        return load_suite()
    except SuiteError as exc:
        pytest.skip(f"kube's module is not in the Go module cache: {exc}")


def one(suite: list[TestCase], test_id: str, **overrides: ParamValue) -> Selected:
    (chosen,) = select(suite, labels=(), test=f"^{test_id}$", overrides=overrides)
    return chosen


def test_every_topic_file_loads_with_its_performance_workloads(suite: list[TestCase]) -> None:
    """All topics load; batching/ has its twelve performance workloads of KEP-5598."""
    topics = {case.topic for case in suite}
    assert {"misc", "batching", "affinity", "topology_spreading", "default_preemption"} <= topics
    performance = select(suite)
    assert len(performance) > 100
    batching = [s for s in performance if s.case.topic == "batching"]
    assert len(batching) == 12
    assert {s.feature_gates["OpportunisticBatching"] for s in batching} == {True, False}


def test_every_template_in_the_module_parses() -> None:
    """Each YAML file under scheduler_perf/ parses as a template of the supported subset."""
    try:
        root = suite_root()
    except SuiteError as exc:
        pytest.skip(str(exc))
    files = sorted(root.rglob("*.yaml"))
    assert len(files) > 100
    for path in files:
        Template.parse(path.read_text(), name=str(path))


@pytest.mark.parametrize(
    ("filters", "labels", "want"),
    [
        pytest.param(["performance"], ["performance"], True, id="required-label-present"),
        pytest.param(["+performance"], ["short"], False, id="plus-label-missing"),
        pytest.param(["performance", "-short"], ["performance", "short"], False, id="minus"),
        pytest.param(["", "performance"], ["performance"], True, id="empty-filter-ignored"),
        pytest.param([], [], True, id="no-filter-enables-all"),
    ],
)
def test_label_filter_is_kubes(filters: list[str], labels: list[str], want: bool) -> None:
    """Labels select as -perf-scheduling-label-filter does."""
    assert enabled(filters, labels) is want


def test_schedulingbasic_ops_carry_the_workload_params(suite: list[TestCase]) -> None:
    """countParam $initNodes etc. become counts; the measured pods collect metrics."""
    selected = one(suite, "SchedulingBasic/5000Nodes_10000Pods")
    resolved, params = decode.resolve(selected)
    nodes, init, measured = resolved
    assert isinstance(nodes, ops.CreateNodes)
    assert (nodes.count, nodes.node_template) == (5000, None)
    assert isinstance(init, ops.CreatePods)
    assert (init.count, init.collect_metrics) == (1000, False)
    assert isinstance(measured, ops.CreatePods)
    assert (measured.count, measured.collect_metrics) == (10000, True)
    assert measured.pod_template is not None
    assert measured.pod_template.name == "pod-default.yaml"
    assert params.unused() == []
    assert selected.threshold() == 680


def test_overrides_change_params_and_are_reported(suite: list[TestCase]) -> None:
    """--param initNodes=500 replaces the value and says so; equal values are no override."""
    selected = one(suite, "SchedulingBasic/5000Nodes_10000Pods", initNodes=500, initPods=1000)
    assert selected.params["initNodes"] == 500
    assert dict(selected.overridden) == {"initNodes": 500}
    nodes = decode.resolve(selected)[0][0]
    assert isinstance(nodes, ops.CreateNodes)
    assert nodes.count == 500


def test_signature_batch_size_param_reaches_the_pods(suite: list[TestCase]) -> None:
    """batching/'s signatureBatchSizeParam sets the pods' signature batch size."""
    selected = one(suite, "HostPortConflict/20000Nodes_20000Pods_100BatchSize")
    pods = decode.resolve(selected)[0][1]
    assert isinstance(pods, ops.CreatePods)
    assert (pods.signature_batch_size, pods.count) == (100, 20000)
    assert selected.case.scheduler_config is not None
    assert selected.case.scheduler_config.name == "scheduler-config-no-topology.yaml"


def test_pod_sets_unroll_into_one_op_per_namespace(suite: list[TestCase]) -> None:
    """createPodSets becomes initNamespaces createPods ops in init-ns-0, init-ns-1, ..."""
    selected = one(suite, "SchedulingRequiredPodAntiAffinityWithNSSelector/5000Nodes")
    resolved = decode.resolve(selected)[0]
    sets = [op for op in resolved if isinstance(op, ops.CreatePods) and op.count == 40]
    assert [op.namespace for op in sets[:3]] == ["init-ns-0", "init-ns-1", "init-ns-2"]
    assert len(sets) == 100


def test_template_param_defaults_and_duration_params(suite: list[TestCase]) -> None:
    """$numPCIRoots|2 falls back to 2; steadyStateParam and durationParam are read."""
    selected = one(suite, "SchedulingWithResourceClaimTemplate/empty_500nodes")
    resolved, params = decode.resolve(selected)
    slices = next(op for op in resolved if isinstance(op, ops.CreateAny) and op.count == 500)
    assert slices.template_params == {"numPCIRoots": 2, "numDevices": 10}
    pods = resolved[-1]
    assert isinstance(pods, ops.CreatePods)
    assert (pods.steady_state, pods.duration_s) == (True, 10.0)
    assert params.unused() == []


def test_count_multiplier_multiplies(suite: list[TestCase]) -> None:
    """countMultiplierParam: pods = groups x pods per group."""
    selected = one(suite, "GangScheduling/5000Nodes_3Gangs_3000Pods_1000PerGroup")
    pods = decode.resolve(selected)[0][-1]
    assert isinstance(pods, ops.CreatePods)
    assert pods.count == 3000


def test_an_unknown_param_override_is_an_unused_param(suite: list[TestCase]) -> None:
    """A param no op reads is reported, as kube's runner fails such a workload."""
    selected = one(suite, "SchedulingBasic/5000Nodes_10000Pods")
    extra = Selected(selected.case, selected.workload, {**selected.params, "typo": 1}, {})
    assert decode.resolve(extra)[1].unused() == ["typo"]


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        pytest.param("10s", 10.0, id="seconds"),
        pytest.param("0s", 0.0, id="zero"),
        pytest.param("1m30s", 90.0, id="minutes-and-seconds"),
        pytest.param("500ms", 0.5, id="milliseconds"),
        pytest.param("1.5h", 5400.0, id="fractional-hours"),
    ],
)
def test_go_durations(text: str, seconds: float) -> None:
    """durationParam values parse as Go's time.ParseDuration."""
    assert decode.go_duration(text) == pytest.approx(seconds)


@pytest.mark.parametrize("text", ["", "10", "s", "10x"])
def test_bad_go_durations_are_refused(text: str) -> None:
    """A value Go would refuse is an OpError."""
    with pytest.raises(ops.OpError):
        decode.go_duration(text)


@pytest.mark.parametrize(
    ("text", "want"),
    [
        pytest.param("initNodes=500", ("initNodes", 500), id="int"),
        pytest.param("duration=10s", ("duration", "10s"), id="string"),
        pytest.param("steadyState=true", ("steadyState", True), id="bool"),
    ],
)
def test_param_overrides_parse_as_yaml(text: str, want: tuple[str, object]) -> None:
    """--param values take the type YAML gives them, as the files' own params do."""
    assert parse_param(text) == want
