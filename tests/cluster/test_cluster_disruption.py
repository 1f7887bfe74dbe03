"""The emulator's PodDisruptionBudget status against kube-controller-manager's disruption
controller: the same budgets over the same pods give the same counts and condition."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import kubernetes
import pytest

from scheduler.sim.server import SimServer, run_in_thread
from tests.scheduler_process import wait_for

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

Status = tuple[int, int, int, int, str]
WEB = {"app": "web"}
CONTAINERS = [{"name": "c", "image": "registry.k8s.io/pause:3.10"}]


@pytest.fixture
def sim_api() -> Iterator[kubernetes.client.ApiClient]:
    server = SimServer(nodes=1)
    with run_in_thread(server):
        config = kubernetes.client.Configuration(host=server.url)
        with kubernetes.client.ApiClient(config) as api:
            yield api


def _pod(name: str) -> dict[str, Any]:
    return {
        "metadata": {"name": name, "labels": WEB},
        "spec": {"schedulerName": "nobody", "containers": CONTAINERS},
    }


def _status(api: kubernetes.client.ApiClient, namespace: str) -> Status | None:
    raw = api.sanitize_for_serialization(
        kubernetes.client.PolicyV1Api(api).read_namespaced_pod_disruption_budget("web", namespace)
    )
    status = raw.get("status") or {}
    conditions = status.get("conditions") or []
    if status.get("observedGeneration") != 1 or not conditions:
        return None  # the controller has not written it yet
    keys = ("expectedPods", "desiredHealthy", "currentHealthy", "disruptionsAllowed")
    counts = [status.get(key, 0) for key in keys]
    return (*counts, conditions[0]["reason"])  # type: ignore[return-value]


def _min_available(api: kubernetes.client.ApiClient, namespace: str) -> None:
    """minAvailable 1 over three pods, two of them Ready."""
    core = kubernetes.client.CoreV1Api(api)
    for name in ("web-0", "web-1", "web-2"):
        core.create_namespaced_pod(namespace, _pod(name))
    for name in ("web-0", "web-1"):
        core.patch_namespaced_pod_status(
            name,
            namespace,
            {"status": {"conditions": [{"type": "Ready", "status": "True"}]}},
        )
    _budget(api, namespace, minAvailable=1)


def _max_unavailable(api: kubernetes.client.ApiClient, namespace: str) -> None:
    """maxUnavailable 25% of a ReplicaSet of 4 replicas whose pods never start."""
    kubernetes.client.AppsV1Api(api).create_namespaced_replica_set(
        namespace,
        {
            "metadata": {"name": "web"},
            "spec": {
                "replicas": 4,
                "selector": {"matchLabels": WEB},
                "template": {
                    "metadata": {"labels": WEB},
                    "spec": {"schedulerName": "nobody", "containers": CONTAINERS},
                },
            },
        },
    )
    _budget(api, namespace, maxUnavailable="25%")


def _budget(api: kubernetes.client.ApiClient, namespace: str, **spec: Any) -> None:
    kubernetes.client.PolicyV1Api(api).create_namespaced_pod_disruption_budget(
        namespace,
        {
            "apiVersion": "policy/v1",
            "kind": "PodDisruptionBudget",
            "metadata": {"name": "web"},
            "spec": {"selector": {"matchLabels": WEB}, **spec},
        },
    )


@pytest.mark.parametrize(
    ("setup", "expected"),
    [
        pytest.param(_min_available, (3, 1, 2, 1, "SufficientPods"), id="minAvailable"),
        pytest.param(_max_unavailable, (4, 3, 0, 0, "InsufficientPods"), id="maxUnavailable"),
    ],
)
def test_budget_status_as_the_disruption_controller_writes_it(
    admin_api: kubernetes.client.ApiClient,
    sim_api: kubernetes.client.ApiClient,
    namespace: str,
    setup: Callable[[kubernetes.client.ApiClient, str], None],
    expected: Status,
) -> None:
    setup(admin_api, namespace)
    setup(sim_api, "default")
    seen: dict[str, Status | None] = {}

    def settled() -> bool:
        seen["real"] = _status(admin_api, namespace)
        seen["sim"] = _status(sim_api, "default")
        return seen["real"] == expected and seen["sim"] == expected

    assert wait_for(settled, 30.0), seen
