"""The secure port against the real API server: a ServiceAccount bound to the usual
Prometheus ClusterRole (nonResourceURLs /metrics, get) scrapes, one without it gets 403,
a token the API server does not accept gets 401, and no token is ``system:anonymous``
(403, as kube-scheduler answers it: its delegated authentication has anonymous on)."""

from __future__ import annotations

import json
import ssl
import urllib.error
import urllib.request
from typing import TYPE_CHECKING

import kubernetes
import pytest

from tests.cluster.conftest import start_scheduler
from tests.scheduler_process import free_port

if TYPE_CHECKING:
    from collections.abc import Iterator

    from controlplane.launcher import ControlPlane
    from tests.scheduler_process import SchedulerProc

ROLE = "batch-scheduler-test-metrics-reader"


@pytest.fixture(scope="module")
def secure(
    control_plane: ControlPlane, nodes: list[str], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[SchedulerProc, int]]:
    port = free_port()
    kubeconfig = str(control_plane.scheduler_kubeconfig)
    proc = start_scheduler(
        control_plane,
        tmp_path_factory.mktemp("logs") / "scheduler.log",
        f"--secure-port={port}",
        "--bind-address=127.0.0.1",
        f"--authentication-kubeconfig={kubeconfig}",
        f"--authorization-kubeconfig={kubeconfig}",
    )
    try:
        yield proc, port
    finally:
        code = proc.terminate()
    proc.assert_clean_exit(code)


@pytest.fixture(scope="module")
def tokens(admin_api: kubernetes.client.ApiClient) -> Iterator[dict[str, str]]:
    """A token of a ServiceAccount with the reader ClusterRole, and one without."""
    core = kubernetes.client.CoreV1Api(admin_api)
    rbac = kubernetes.client.RbacAuthorizationV1Api(admin_api)
    ns = "metrics-auth"
    core.create_namespace({"metadata": {"name": ns}})
    rbac.create_cluster_role(
        {
            "metadata": {"name": ROLE},
            "rules": [{"nonResourceURLs": ["/metrics"], "verbs": ["get"]}],
        }
    )
    rbac.create_cluster_role_binding(
        {
            "metadata": {"name": ROLE},
            "roleRef": {
                "apiGroup": "rbac.authorization.k8s.io",
                "kind": "ClusterRole",
                "name": ROLE,
            },
            "subjects": [{"kind": "ServiceAccount", "name": "prometheus", "namespace": ns}],
        }
    )
    made = {}
    for name in ("prometheus", "nobody"):
        core.create_namespaced_service_account(ns, {"metadata": {"name": name}})
        request = core.create_namespaced_service_account_token(
            name, ns, {"spec": {"expirationSeconds": 3600}}
        )
        made[name] = request.status.token
    try:
        yield made
    finally:
        rbac.delete_cluster_role_binding(ROLE)
        rbac.delete_cluster_role(ROLE)
        core.delete_namespace(ns)


def _get(port: int, path: str, token: str | None = None) -> tuple[int, str]:
    insecure = ssl.create_default_context()
    insecure.check_hostname = False
    insecure.verify_mode = ssl.CERT_NONE  # the self-signed certificate
    request = urllib.request.Request(f"https://127.0.0.1:{port}{path}")
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=10, context=insecure) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def test_the_reader_scrapes(secure: tuple[SchedulerProc, int], tokens: dict[str, str]) -> None:
    status, body = _get(secure[1], "/metrics", tokens["prometheus"])
    assert status == 200, body
    assert "scheduler_schedule_attempts_total" in body or "scheduler_pending_pods" in body


def test_a_service_account_without_the_role_is_forbidden(
    secure: tuple[SchedulerProc, int], tokens: dict[str, str]
) -> None:
    status, body = _get(secure[1], "/metrics", tokens["nobody"])
    assert status == 403, body
    assert json.loads(body)["message"] == (
        'forbidden: User "system:serviceaccount:metrics-auth:nobody" cannot get path "/metrics"'
    )


def test_a_token_the_api_server_rejects_is_401(secure: tuple[SchedulerProc, int]) -> None:
    status, body = _get(secure[1], "/metrics", "not-a-token")
    assert status == 401, body


def test_no_token_is_anonymous(secure: tuple[SchedulerProc, int]) -> None:
    status, body = _get(secure[1], "/metrics")
    assert status == 403, body
    assert 'User "system:anonymous"' in json.loads(body)["message"]


def test_health_paths_are_open(secure: tuple[SchedulerProc, int]) -> None:
    for path in ("/healthz", "/livez", "/readyz"):
        assert _get(secure[1], path) == (200, "ok")
