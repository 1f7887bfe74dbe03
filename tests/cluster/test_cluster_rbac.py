"""The ClusterRole and Role of manifests/ under the real RBAC authorizer: enough for every
call the scheduler makes (no 403 in its logs: see ``assert_no_forbidden`` in the fixtures),
and no more than that."""

from __future__ import annotations

import json
import shutil
from typing import TYPE_CHECKING

import kubernetes
import pytest

from tests.sim.kubectl_helpers import kubectl

if TYPE_CHECKING:
    from controlplane.launcher import ControlPlane

NS = "batch-scheduler"
ALLOWED = [
    # (verb, resource, subresource, namespace, name)
    ("list", "pods", "", None, None),
    ("watch", "pods", "", None, None),
    ("create", "pods", "binding", "default", None),
    ("delete", "pods", "", "default", None),  # preemption's victims
    ("patch", "pods", "status", "default", None),
    ("list", "nodes", "", None, None),
    ("watch", "nodes", "", None, None),
    *(
        (verb, resource, "", None, None)
        for resource in (
            "namespaces",
            "services",
            "replicationcontrollers",
            "replicasets",
            "statefulsets",
            "poddisruptionbudgets",
        )
        for verb in ("list", "watch")
    ),
    ("create", "events", "", "default", None),
    ("create", "leases", "", NS, None),
    ("get", "leases", "", NS, "batch-scheduler"),
    ("update", "leases", "", NS, "batch-scheduler"),
]
DENIED = [
    ("get", "secrets", "", NS, None),
    ("list", "secrets", "", None, None),
    ("create", "pods", "", "default", None),
    ("patch", "pods", "", "default", None),  # the spec: only pods/status is ours to patch
    ("update", "pods", "", "default", None),
    ("deletecollection", "pods", "", "default", None),
    ("update", "nodes", "", None, None),
    ("patch", "nodes", "", None, None),
    ("delete", "nodes", "", None, None),
    ("create", "configmaps", "", NS, None),
    ("update", "leases", "", NS, "kube-scheduler"),  # only our own Lease
    ("create", "leases", "", "kube-system", None),  # and only in our namespace
    ("get", "services", "", "default", None),  # watched, never read one by one
    ("update", "replicasets", "", "default", None),
    ("patch", "namespaces", "", None, None),
    ("update", "poddisruptionbudgets", "", "default", None),  # read only
]
GROUPS = {
    "leases": "coordination.k8s.io",
    "replicasets": "apps",
    "statefulsets": "apps",
    "poddisruptionbudgets": "policy",
}
Access = tuple[str, str, str, "str | None", "str | None"]


def _can(api: kubernetes.client.ApiClient, access: Access) -> bool:
    verb, resource, sub, namespace, name = access
    attributes = {
        "verb": verb,
        "resource": resource,
        "group": GROUPS.get(resource, ""),
        "subresource": sub,
    }
    if namespace is not None:
        attributes["namespace"] = namespace
    if name is not None:
        attributes["name"] = name
    review = kubernetes.client.AuthorizationV1Api(api).create_self_subject_access_review(
        {"spec": {"resourceAttributes": attributes}}
    )
    return bool(review.status.allowed)


@pytest.fixture(scope="module")
def as_scheduler(control_plane: ControlPlane) -> kubernetes.client.ApiClient:
    return kubernetes.config.new_client_from_config(
        config_file=str(control_plane.scheduler_kubeconfig)
    )


@pytest.mark.parametrize("access", ALLOWED, ids=str)
def test_the_service_account_may(as_scheduler: kubernetes.client.ApiClient, access: Access) -> None:
    assert _can(as_scheduler, access)


@pytest.mark.parametrize("access", DENIED, ids=str)
def test_the_service_account_may_not(
    as_scheduler: kubernetes.client.ApiClient, access: Access
) -> None:
    assert not _can(as_scheduler, access)


def test_reading_a_secret_is_refused_with_403(as_scheduler: kubernetes.client.ApiClient) -> None:
    with pytest.raises(kubernetes.client.ApiException) as refused:
        kubernetes.client.CoreV1Api(as_scheduler).list_namespaced_secret("batch-scheduler")
    assert refused.value.status == 403
    body = json.loads(refused.value.body)
    assert body["reason"] == "Forbidden"
    assert "system:serviceaccount:batch-scheduler:batch-scheduler" in body["message"]


def test_kubectl_auth_can_i_list(control_plane: ControlPlane) -> None:
    """What docs/operations.md shows: ``kubectl auth can-i --list`` as the ServiceAccount."""
    if shutil.which("kubectl") is None:
        pytest.skip("kubectl not installed")
    out = kubectl(control_plane.scheduler_kubeconfig, "auth", "can-i", "--list", "-n", NS)
    rows = {line.split()[0]: line for line in out.splitlines()[1:] if line.strip()}
    assert "[create]" in rows["pods/binding"]
    assert "[patch]" in rows["pods/status"]
    assert "secrets" not in rows
