"""bench.scheduler_perf: what each scheduler is planned to run (capability), and the
objects the runner creates, for kube's real workload files."""

from __future__ import annotations

import random

import pytest

from bench.scheduler_perf import capability, objects, runner
from bench.scheduler_perf.suite import Selected, SuiteError, TestCase, load_suite, select


@pytest.fixture(scope="module")
def suite() -> list[TestCase]:
    try:
        return load_suite()
    except SuiteError as exc:
        pytest.skip(f"kube's module is not in the Go module cache: {exc}")


@pytest.fixture(autouse=True)
def _ours_with_feature_gates(monkeypatch: pytest.MonkeyPatch) -> None:
    """Ours has --feature-gates (asked of its --help otherwise: a subprocess per test)."""
    monkeypatch.setattr(capability, "ours_has_feature_gates", lambda: True)


def one(suite: list[TestCase], test_id: str) -> Selected:
    (chosen,) = select(suite, labels=(), test=f"^{test_id}$")
    return chosen


def test_gate_defaults_come_from_the_pinned_kube_features() -> None:
    """v1.37: OpportunisticBatching on, GenericWorkload off, DRA locked on."""
    try:
        defaults = capability.gate_defaults()
    except SuiteError as exc:
        pytest.skip(str(exc))
    assert defaults["OpportunisticBatching"].default is True
    assert defaults["GenericWorkload"].default is False
    assert defaults["DynamicResourceAllocation"] == capability.GateDefault(True, locked=True)


@pytest.mark.parametrize(
    ("test_id", "kube_args", "ours"),
    [
        pytest.param(
            "SchedulingBasic/5000Nodes_10000Pods",
            (),
            ("--batching", "all"),
            id="no-gates-ours-batches-as-kube-does-by-default",
        ),
        pytest.param(
            "HostPortConflict/20000Nodes_20000Pods_OpportunisticBatchingDisabled",
            ("--feature-gates=OpportunisticBatching=false",),
            ("--batching", "off"),
            id="opportunistic-batching-off-maps-to-batching-off",
        ),
        pytest.param(
            "SchedulingBasic/5000Nodes_50000Pods",
            ("--feature-gates=SchedulerAsyncAPICalls=false",),
            ("--batching", "all"),
            id="gate-at-its-default-needs-nothing-of-ours",
        ),
        pytest.param(
            "SchedulingBasic/5000Nodes_50000Pods_AsyncAPICallsEnabled",
            ("--feature-gates=SchedulerAsyncAPICalls=true",),
            ("--batching", "all", "--feature-gates=SchedulerAsyncAPICalls=true"),
            id="non-default-gate-goes-to-ours-feature-gates",
        ),
        pytest.param(
            "SchedulingBasic/5000Nodes_50000Pods_NodeDeclaredFeaturesDisabled",
            (
                "--feature-gates=NodeDeclaredFeatures=false",
                "--emulated-version=kube=1.36",
            ),
            "NodeDeclaredFeatures=false: kube's test emulates v1.36",
            id="locked-gate-off-emulates-1.36-as-kubes-test-ours-skips",
        ),
        pytest.param(
            "GangScheduling/5000Nodes_1000Gangs_3000Pods",
            ("--feature-gates=GenericWorkload=true",),
            ("--batching", "all", "--feature-gates=GenericWorkload=true"),
            id="pods-in-podgroups-run-ours-with-generic-workload",
        ),
        pytest.param(
            "BasicScheduling/5000Nodes_3Groups_3000Pods_1000PerGroup",
            ("--feature-gates=GenericWorkload=true",),
            ("--batching", "all", "--feature-gates=GenericWorkload=true"),
            id="basic-podgroups-run-ours-with-generic-workload",
        ),
        pytest.param(
            "TopologyAwareScheduling/5000Nodes_750Gangs_3000Pods",
            ("--feature-gates=GenericWorkload=true,TopologyAwareWorkloadScheduling=true",),
            "does not implement topology-aware placement",
            id="topology-aware-gangs-skip-ours",
        ),
        pytest.param(
            "ExtendedResource/Explicit_25classes_5000pods_500nodes",
            ("--feature-gates=DynamicResourceAllocation=true,DRAExtendedResource=true",),
            "DRA",
            id="resource-slices-skip-ours",
        ),
    ],
)
def test_plans_per_scheduler(
    suite: list[TestCase], test_id: str, kube_args: tuple[str, ...], ours: object
) -> None:
    """kube gets the gates as flags; ours runs with its flags or is skipped with why."""
    plans = runner.plan(one(suite, test_id)).plans
    assert plans["kube"] == capability.Plan("kube", args=kube_args)
    if isinstance(ours, tuple):
        assert plans["ours"] == capability.Plan("ours", args=ours)
    else:
        assert plans["ours"].skip is not None
        assert str(ours) in plans["ours"].skip


@pytest.mark.parametrize(
    ("test_id", "reason"),
    [
        pytest.param(
            "NodeDeclaredFeaturesEnabled/5000Nodes20DeclaredFeatures",
            "mock node features",
            id="go-hooks-inside-the-scheduler",
        ),
    ],
)
def test_runner_skips_both_with_the_reason(
    suite: list[TestCase], test_id: str, reason: str
) -> None:
    """What the runner cannot do is a skip for both schedulers, never a silent drop."""
    plans = runner.plan(one(suite, test_id)).plans
    for plan in plans.values():
        assert plan.skip is not None
        assert reason in plan.skip


def test_dra_workloads_run_for_both(suite: list[TestCase]) -> None:
    """allocResourceClaims runs kube's allocator (bench/draalloc); ours has DynamicResources:
    both run."""
    plans = runner.plan(one(suite, "Partitionable/empty_500nodes")).plans
    assert plans["kube"].skip is None
    assert plans["ours"].skip is None


@pytest.mark.parametrize(
    ("workload", "reason"),
    [
        pytest.param(
            "ExtendedResource/Explicit_25classes_5000pods_500nodes",
            capability.OURS_LACKS[capability.DRA_EXTENDED_RESOURCES],
            id="dra-extended-resources",
        ),
        pytest.param(
            "CompatibilityGroups/empty_500nodes",
            capability.OURS_LACKS_GATES["DRADeviceCompatibilityGroups"],
            id="compatibility-groups",
        ),
    ],
)
def test_dra_features_ours_lacks_skip_ours(
    suite: list[TestCase], workload: str, reason: str
) -> None:
    """A DRA feature ours does not implement skips ours, with the reason; kube runs."""
    plans = runner.plan(one(suite, workload)).plans
    assert plans["kube"].skip is None
    assert plans["ours"].skip == reason


def test_extended_resources_without_dra_objects_run_for_ours(suite: list[TestCase]) -> None:
    """misc's plain extended resources are no DRA: ours runs them (DRA gates at defaults)."""
    plans = runner.plan(
        one(suite, "SchedulingWithExtendedResource/5000pods_5000nodes_DRAExtendedResourceEnabled")
    ).plans
    assert plans["ours"].skip is None


def test_apiserver_flags_follow_kubes_test_setup() -> None:
    """Admission as kube's test; the scheduling v1beta1 API for GenericWorkload."""
    args = runner.apiserver_args({"GenericWorkload": True})
    assert args == [
        "--disable-admission-plugins=ServiceAccount,TaintNodesByCondition,Priority",
        "--runtime-config=scheduling.k8s.io/v1beta1=true",
        "--feature-gates=GenericWorkload=true",
    ]


def test_nodes_are_named_with_hostname_labels(suite: list[TestCase]) -> None:
    """A generateName'd node gets 5 random characters and the hostname label."""
    template = one(suite, "HostPortConflict/20000Nodes_20000Pods_100BatchSize").case.directory
    path = (template / "../templates/node-default.yaml").resolve()
    node = objects.node(path, {}, index=0, count=1, prefix="x-", rng=random.Random(1))
    name = node["metadata"]["name"]
    assert name.startswith("scheduler-perf-")
    assert len(name) == len("scheduler-perf-") + 5
    assert node["metadata"]["labels"] == {"kubernetes.io/hostname": name}
    base = objects.node(None, {}, index=0, count=1, prefix="node-0-", rng=random.Random(1))
    assert base["metadata"]["name"].startswith("node-0-")
    assert base["status"]["allocatable"] == {"pods": "110", "cpu": "4", "memory": "32Gi"}


def test_pods_carry_the_signature_label_and_the_scheduler_name(suite: list[TestCase]) -> None:
    """Template pods get signature-label-<index / batch size> and the run's scheduler."""
    case = one(suite, "HostPortConflict/20000Nodes_20000Pods_100BatchSize").case
    assert case.default_pod_template is not None
    pod = objects.pod(
        case.default_pod_template, {}, index=250, count=1000, batch_size=100, scheduler_name="s"
    )
    assert pod["metadata"]["labels"]["signature"] == "signature-label-2"
    assert pod["spec"]["schedulerName"] == "s"
    base = objects.pod(None, {}, index=3, count=5, batch_size=1, scheduler_name="s")
    assert "labels" not in base["metadata"]  # kube's static base pod has no signature label
    assert base["spec"]["schedulerName"] == "s"


def test_claims_and_volumes_are_bound_to_each_other(suite: list[TestCase]) -> None:
    """CreatePodWithPersistentVolume with bindVolume: pvc-i <-> <ns>-vol-i, both Bound."""
    case = one(suite, "SchedulingCSIPVs/5000Nodes").case
    pvc = (case.directory / "../templates/pvc.yaml").resolve()
    pv = (case.directory / "../templates/pv-csi.yaml").resolve()
    claim, volume = objects.claim_and_volume(pvc, pv, index=4, namespace="ns")
    assert claim["metadata"]["name"] == "pvc-4"
    assert claim["spec"]["volumeName"] == volume["metadata"]["name"] == "ns-vol-4"
    assert volume["spec"]["csi"]["volumeHandle"] == "ns-vol-4"
    assert volume["spec"]["claimRef"]["name"] == "pvc-4"
    assert claim["status"] == volume["status"] == {"phase": "Bound"}
