"""The emulator's PodDisruptionBudgets: discovery, validation, the disruption controller's
status (what preemption reads) and kubectl's columns."""

from __future__ import annotations

import json
import urllib.request
from typing import TYPE_CHECKING, Any

import kubernetes
import pytest

from tests.scheduler_process import wait_for

if TYPE_CHECKING:
    from kubernetes.client import CoreV1Api

    from scheduler.sim.server import SimServer

WEB = {"app": "web"}


def _pdb(name: str, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": name},
        "spec": {"selector": {"matchLabels": WEB}, **spec},
    }


def _ready_pod(name: str, *, ready: bool = True) -> dict[str, Any]:
    return {
        "metadata": {"name": name, "labels": WEB},
        "spec": {"nodeName": "node-0", "containers": [{"name": "c", "image": "pause"}]},
        "status": {
            "phase": "Running",
            "conditions": [{"type": "Ready", "status": "True" if ready else "False"}],
        },
    }


def _status(policy: Any, name: str) -> dict[str, Any]:
    raw = policy.api_client.sanitize_for_serialization(
        policy.read_namespaced_pod_disruption_budget_status(name, "default")
    )
    return dict(raw.get("status") or {})


def _counts(status: dict[str, Any]) -> tuple[int, ...]:
    keys = ("expectedPods", "desiredHealthy", "currentHealthy", "disruptionsAllowed")
    return tuple(status.get(k, 0) for k in keys)


def test_status_follows_the_matching_ready_pods(core: CoreV1Api) -> None:
    """minAvailable: 1 over three Ready pods (one not Ready, one of another app) allows
    one disruption; deleting a Ready pod leaves none (InsufficientPods)."""
    policy = kubernetes.client.PolicyV1Api(core.api_client)
    for name in ("web-0", "web-1"):
        core.create_namespaced_pod("default", _ready_pod(name))
    core.create_namespaced_pod("default", _ready_pod("web-2", ready=False))
    other = _ready_pod("db-0")
    other["metadata"]["labels"] = {"app": "db"}
    core.create_namespaced_pod("default", other)
    body = _pdb("web", minAvailable=1)
    body["status"] = {"disruptionsAllowed": 9}  # a create cannot set the status
    policy.create_namespaced_pod_disruption_budget("default", body)
    assert wait_for(lambda: _counts(_status(policy, "web")) == (3, 1, 2, 1), 5.0)
    status = _status(policy, "web")
    (condition,) = status["conditions"]
    assert (condition["type"], condition["status"], condition["reason"]) == (
        "DisruptionAllowed",
        "True",
        "SufficientPods",
    )
    assert status["observedGeneration"] == 1
    core.delete_namespaced_pod("web-0", "default")
    assert wait_for(lambda: _counts(_status(policy, "web")) == (2, 1, 1, 0), 5.0)
    (condition,) = _status(policy, "web")["conditions"]
    assert (condition["status"], condition["reason"]) == ("False", "InsufficientPods")


def test_max_unavailable_counts_the_controllers_scale(core: CoreV1Api) -> None:
    """maxUnavailable reads the ReplicaSet's replicas (not the pods there are); its pods are
    pending, so none is healthy and nothing may be disrupted."""
    apps = kubernetes.client.AppsV1Api(core.api_client)
    policy = kubernetes.client.PolicyV1Api(core.api_client)
    template = {
        "metadata": {"labels": WEB},
        "spec": {"schedulerName": "nobody", "containers": [{"name": "c", "image": "pause"}]},
    }
    apps.create_namespaced_replica_set(
        "default",
        {
            "metadata": {"name": "web"},
            "spec": {"replicas": 4, "selector": {"matchLabels": WEB}, "template": template},
        },
    )
    policy.create_namespaced_pod_disruption_budget("default", _pdb("web", maxUnavailable="50%"))
    assert wait_for(lambda: _counts(_status(policy, "web")) == (4, 2, 0, 0), 5.0)


def test_a_pod_without_a_known_controller_fails_safe(sim: SimServer, core: CoreV1Api) -> None:
    """A percentage needs each pod's controller scale: a Job has none, so the sync fails and
    only disruptionsAllowed: 0 with the SyncFailed condition is written (kube's failSafe)."""
    policy = kubernetes.client.PolicyV1Api(core.api_client)
    pod = _ready_pod("web-0")
    pod["metadata"]["ownerReferences"] = [
        {"apiVersion": "batch/v1", "kind": "Job", "name": "j", "uid": "u1", "controller": True}
    ]
    core.create_namespaced_pod("default", pod)
    policy.create_namespaced_pod_disruption_budget("default", _pdb("web", minAvailable="50%"))

    def failed() -> bool:
        conditions = _status(policy, "web").get("conditions") or []
        return any(c.get("reason") == "SyncFailed" for c in conditions)

    assert wait_for(failed, 5.0)
    status = _status(policy, "web")
    assert status["disruptionsAllowed"] == 0
    (condition,) = status["conditions"]
    assert condition["message"] == "jobs.batch does not implement the scale subresource"


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        pytest.param(
            {"minAvailable": 1, "maxUnavailable": 1},
            "minAvailable and maxUnavailable cannot be both set",
            id="both",
        ),
        pytest.param({"minAvailable": "120%"}, "must not be greater than 100%", id="over-100"),
        pytest.param({"maxUnavailable": -1}, "must be greater than or equal to 0", id="negative"),
        pytest.param({"minAvailable": "half"}, "a valid percent string", id="not-a-percent"),
    ],
)
def test_invalid_budgets_are_refused(core: CoreV1Api, spec: dict[str, Any], message: str) -> None:
    policy = kubernetes.client.PolicyV1Api(core.api_client)
    with pytest.raises(kubernetes.client.ApiException) as caught:
        policy.create_namespaced_pod_disruption_budget("default", _pdb("bad", **spec))
    assert caught.value.status == 422
    body = json.loads(caught.value.body)
    assert message in body["message"]
    assert body["details"]["group"] == "policy"


def _get(url: str, accept: str = "application/json") -> Any:
    request = urllib.request.Request(url, headers={"Accept": accept})
    with urllib.request.urlopen(request, timeout=5) as resp:
        return json.load(resp)


def test_discovery_and_kubectl_columns(sim: SimServer, core: CoreV1Api) -> None:
    """Announced under policy/v1 with the pdb short name; the Table has kube's columns."""
    resources = _get(f"{sim.url}/apis/policy/v1")["resources"]
    entry = next(r for r in resources if r["name"] == "poddisruptionbudgets")
    assert entry["shortNames"] == ["pdb"]
    assert "watch" in entry["verbs"]
    assert any(g["name"] == "policy" for g in _get(f"{sim.url}/apis")["groups"])
    policy = kubernetes.client.PolicyV1Api(core.api_client)
    policy.create_namespaced_pod_disruption_budget("default", _pdb("web", maxUnavailable=1))
    table = _get(
        f"{sim.url}/apis/policy/v1/namespaces/default/poddisruptionbudgets",
        "application/json;as=Table;v=v1;g=meta.k8s.io",
    )
    names = [c["name"] for c in table["columnDefinitions"]]
    assert names == ["Name", "Min Available", "Max Unavailable", "Allowed Disruptions", "Age"]
    assert table["rows"][0]["cells"][:4] == ["web", "N/A", "1", 0]
