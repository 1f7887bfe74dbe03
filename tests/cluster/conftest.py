"""The ``cluster`` tier: the real control plane (controlplane/), one per test session.

etcd, kube-apiserver and kube-controller-manager v1.37 run on loopback
(:class:`controlplane.launcher.ControlPlane`); the harness acts as ``kubernetes-admin``, the
scheduler runs as ``python -m scheduler run`` with a kubeconfig that authenticates as its
ServiceAccount under RBAC with our manifests. Nodes are API objects (no kubelets); tests
work in namespaces of their own so that they can share the session's nodes.

Without the binaries (no Go here, ``make controlplane`` not run) the tier is skipped, and
fails instead when ``BATCH_SCHEDULER_REQUIRE_CLUSTER`` is set (``.ci/run`` sets it).
"""

from __future__ import annotations

import os
import re
import uuid
from typing import TYPE_CHECKING, Any

import kubernetes
import pytest

from bench.scheduler_perf.suite import SuiteError, suite_root
from controlplane.launcher import ControlPlane
from controlplane.processes import missing_binaries
from scheduler.sim import workload
from tests.cluster.conformance import backends, ns  # noqa: F401  (fixtures)
from tests.cluster.gang_sides import GangCluster
from tests.scheduler_process import SchedulerProc

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

REQUIRE = "BATCH_SCHEDULER_REQUIRE_CLUSTER"
NODES = 4
"""The session's shared nodes: 64 CPU, 256Gi, 1000 pods each (room for every test)."""
FORBIDDEN = re.compile(r"forbidden: User .* cannot [a-z]+ resource")
"""How an RBAC refusal reads (in our ``kube.errors`` text and in kopf's quotes alike). Other
403s are admission's, e.g. an Event into a namespace being deleted."""


@pytest.fixture
def bench_prerequisites() -> None:
    """The benchmarks' small forms need the control plane and kube's scheduler_perf files
    in the pinned module (both there after ``make controlplane``)."""
    reason = missing_binaries()
    if reason:
        if os.environ.get(REQUIRE):
            pytest.fail(f"cluster tier required ({REQUIRE}) but {reason}")
        pytest.skip(f"cluster tier skipped: {reason}")
    try:
        suite_root()
    except SuiteError as exc:
        pytest.skip(str(exc))


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "tests/cluster/" in str(item.path).replace(os.sep, "/"):
            item.add_marker(pytest.mark.cluster)


@pytest.fixture(scope="session")
def control_plane(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ControlPlane]:
    reason = missing_binaries()
    if reason:
        if os.environ.get(REQUIRE):
            pytest.fail(f"cluster tier required ({REQUIRE}) but {reason}")
        pytest.skip(f"cluster tier skipped: {reason}")
    with ControlPlane.start(tmp_path_factory.mktemp("controlplane")) as cp:
        yield cp


@pytest.fixture(scope="session")
def gang_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[GangCluster]:
    """A control plane of its own with GenericWorkload (no kube-controller-manager), with
    kube-scheduler and ours both running (tests/cluster/gang_sides.py)."""
    reason = missing_binaries()
    if reason:
        if os.environ.get(REQUIRE):
            pytest.fail(f"cluster tier required ({REQUIRE}) but {reason}")
        pytest.skip(f"cluster tier skipped: {reason}")
    with GangCluster.start(tmp_path_factory.mktemp("gang")) as cluster:
        yield cluster


@pytest.fixture(scope="session")
def admin_api(control_plane: ControlPlane) -> Iterator[kubernetes.client.ApiClient]:
    """The official client as kubernetes-admin."""
    api = kubernetes.config.new_client_from_config(config_file=str(control_plane.admin_kubeconfig))
    with api:
        yield api


@pytest.fixture(scope="session")
def core(admin_api: kubernetes.client.ApiClient) -> kubernetes.client.CoreV1Api:
    return kubernetes.client.CoreV1Api(admin_api)


@pytest.fixture(scope="session")
def nodes(core: kubernetes.client.CoreV1Api) -> list[str]:
    """The shared nodes, created once as API objects."""
    made = workload.make_nodes(NODES, prefix="cluster-node-", cpu="64", memory="256Gi", pods="1000")
    for node in made:
        core.create_node(node)
    return [n["metadata"]["name"] for n in made]


@pytest.fixture
def namespace(core: kubernetes.client.CoreV1Api) -> Iterator[str]:
    """A namespace of the test's own (deleted afterwards, not waited for)."""
    name = f"t-{uuid.uuid4().hex[:8]}"
    core.create_namespace({"metadata": {"name": name}})
    wait_for_default_account(core, name)
    yield name
    core.delete_namespace(name)


def wait_for_default_account(core: kubernetes.client.CoreV1Api, namespace: str) -> None:
    """Pod creation needs the ``default`` ServiceAccount the controller-manager makes."""
    from tests.scheduler_process import wait_for

    def made() -> bool:
        try:
            core.read_namespaced_service_account("default", namespace)
        except kubernetes.client.ApiException as exc:
            if exc.status == 404:
                return False
            raise
        return True

    assert wait_for(made, 30), f"no default ServiceAccount in {namespace}"


def start_scheduler(cp: ControlPlane, log: Path, *args: str) -> SchedulerProc:
    """``batch-scheduler run`` as its ServiceAccount, ready (caches synced)."""
    proc = SchedulerProc(cp.scheduler_kubeconfig, log, *args)
    proc.wait_ready(60)
    return proc


def assert_no_forbidden(proc: SchedulerProc) -> None:
    """RBAC is sufficient: nothing the scheduler did was refused with 403."""
    refused = [line for line in proc.stderr().splitlines() if FORBIDDEN.search(line)]
    assert not refused, "\n".join(refused[:10])


@pytest.fixture(scope="module")
def scheduler(
    control_plane: ControlPlane, nodes: list[str], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[SchedulerProc]:
    """One scheduler (batching ``annotated``) shared by a module's tests."""
    proc = start_scheduler(control_plane, tmp_path_factory.mktemp("logs") / "scheduler.log")
    try:
        yield proc
    finally:
        code = proc.terminate()
    proc.assert_clean_exit(code)
    assert_no_forbidden(proc)


def pod(name: str, *, cpu: str = "100m", memory: str = "64Mi", **kw: Any) -> dict[str, Any]:
    """One pod of ours (schedulerName batch-scheduler) requesting ``cpu`` and ``memory``."""
    made = workload.make_pods(
        1, prefix=name, cpu=cpu, memory=memory, scheduler_name="batch-scheduler", **kw
    )[0]
    made["metadata"]["name"] = name
    return made


def create_many(
    core: kubernetes.client.CoreV1Api, namespace: str, pods: list[dict[str, Any]], threads: int = 16
) -> None:
    """Create ``pods`` in ``namespace`` from ``threads`` threads (a burst)."""
    from concurrent.futures import ThreadPoolExecutor

    def create(body: dict[str, Any]) -> None:
        body["metadata"]["namespace"] = namespace
        core.create_namespaced_pod(namespace, body)

    with ThreadPoolExecutor(threads) as pool:
        list(pool.map(create, pods))


def deployed_config(path: Path, **leader_election: str) -> Path:
    """The KubeSchedulerConfiguration of manifests/06-configmap.yaml (the one the Deployment
    runs with), leader-election timings overridden by ``leader_election``."""
    import yaml

    from controlplane.launcher import MANIFESTS

    configmap = yaml.safe_load((MANIFESTS / "06-configmap.yaml").read_text())
    config = yaml.safe_load(configmap["data"]["config.yaml"])
    config["leaderElection"].update(leader_election)
    path.write_text(yaml.safe_dump(config))
    return path


def bound_once(procs: list[SchedulerProc]) -> dict[str, int]:
    """pod key → how many ``pod_bound`` lines the schedulers logged for it."""
    counts: dict[str, int] = {}
    for proc in procs:
        for record in proc.events("pod_bound"):
            key = str(record.get("pod"))
            counts[key] = counts.get(key, 0) + 1
    return counts


def placements(core: kubernetes.client.CoreV1Api, namespace: str) -> dict[str, str | None]:
    """pod name → spec.nodeName, from raw JSON (the client's models cost a core under a
    burst of polls)."""
    import json

    response = core.list_namespaced_pod(namespace, _preload_content=False)
    items = json.loads(response.data)["items"]
    return {p["metadata"]["name"]: p["spec"].get("nodeName") for p in items}
