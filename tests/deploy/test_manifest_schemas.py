"""Every manifest validates offline against the Kubernetes 1.35 OpenAPI schemas (strict).

``kubernetes-validate`` bundles JSON schemas for 1.25 to 1.37 and needs no network; 1.35 is
the release this project targets (framework/config.py follows kube-scheduler v1.35). Strict
schemas reject unknown fields, so a typo (``readinesProbe``) fails here, not in a cluster.
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING

import kubernetes_validate
import pytest
from deploy_support import (
    EXAMPLES,
    MANIFESTS,
    documents,
    install_manifests,
    manifest_files,
    one,
)
from kubernetes_validate import utils as kubernetes_validate_utils

if TYPE_CHECKING:
    from pathlib import Path

KUBERNETES_VERSION = "1.35.0"
NAMESPACE = "batch-scheduler"
CLUSTER_SCOPED = {"Namespace", "ClusterRole", "ClusterRoleBinding"}


def test_bundled_schemas_include_the_target_version() -> None:
    """kubernetes-validate ships the 1.35 schemas (validate() would fall back silently)."""
    assert KUBERNETES_VERSION in kubernetes_validate_utils.all_versions()


@pytest.mark.parametrize("path", manifest_files(), ids=lambda p: str(p.relative_to(MANIFESTS)))
def test_manifest_validates_against_kubernetes_schemas(path: Path) -> None:
    """Each document of the file passes the strict 1.35 schema of its kind."""
    docs = documents(path)
    assert docs, f"{path} holds no document"
    for doc in docs:
        version = kubernetes_validate.validate(doc, KUBERNETES_VERSION, strict=True)
        assert version == "1.35"


def test_schema_validation_rejects_a_broken_deployment() -> None:
    """A control: a misspelt field and a wrong type do fail the same validation."""
    deployment = copy.deepcopy(one("Deployment"))
    container = deployment["spec"]["template"]["spec"]["containers"][0]
    container["readinesProbe"] = container.pop("readinessProbe")
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(deployment, KUBERNETES_VERSION, strict=True)
    deployment = copy.deepcopy(one("Deployment"))
    deployment["spec"]["replicas"] = "two"
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(deployment, KUBERNETES_VERSION, strict=True)


def test_install_manifests_live_in_one_namespace_created_first() -> None:
    """kubectl apply -f manifests/ creates the Namespace before anything that lives in it."""
    docs = install_manifests()
    assert docs[0]["kind"] == "Namespace"
    assert docs[0]["metadata"]["name"] == NAMESPACE
    for doc in docs[1:]:
        if doc["kind"] in CLUSTER_SCOPED:
            assert "namespace" not in doc["metadata"], doc["metadata"]["name"]
        else:
            assert doc["metadata"].get("namespace") == NAMESPACE, (doc["kind"], doc["metadata"])
    kinds = sorted(doc["kind"] for doc in docs)
    assert kinds == sorted(
        [
            "Namespace",
            "ServiceAccount",
            "ClusterRole",
            "ClusterRoleBinding",
            "Role",
            "RoleBinding",
            "ConfigMap",
            "Deployment",
            "Service",
            "PodDisruptionBudget",
        ]
    )


def test_examples_are_opted_in_workloads_outside_the_install_set() -> None:
    """The examples use our schedulerName and the batching annotation; apply -f skips them."""
    files = sorted(EXAMPLES.glob("*.yaml"))
    assert {doc["kind"] for path in files for doc in documents(path)} == {"Job", "Deployment"}
    for path in files:
        for doc in documents(path):
            template = doc["spec"]["template"]
            assert template["spec"]["schedulerName"] == "batch-scheduler", path.name
            assert template["metadata"]["annotations"]["batch-scheduler.io/batching"] == "true"
    assert not any(p.parent == MANIFESTS for p in files)
