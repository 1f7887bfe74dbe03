"""The emulator kept honest on what default spreading reads: Services, ReplicaSets,
StatefulSets and the owner chain their controllers write (same method as test_conformance).

The scheduler reads a Service's ``spec.selector``, a controller's ``spec.selector`` and a
pod's controller ``ownerReferences``; these scripts compare exactly those (and the 422s a
bad selector gets), not the values only kube allocates (cluster IPs, template hashes).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

import pytest

from tests.cluster.conformance import Backend, both, status_of

if TYPE_CHECKING:
    from collections.abc import Callable

APPS = "/apis/apps/v1/namespaces/{ns}/{plural}"
TEMPLATE_SPEC = {
    "schedulerName": "conformance-nobody",
    "containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10"}],
}


def template(labels: dict[str, str]) -> dict[str, Any]:
    return {"metadata": {"labels": labels}, "spec": dict(TEMPLATE_SPEC)}


def wait_for(check: Callable[[], Any], seconds: float = 30.0) -> Any:
    """``check()`` once truthy, polling (controllers work asynchronously on both)."""
    deadline = time.monotonic() + seconds
    while True:
        value = check()
        if value or time.monotonic() > deadline:
            return value
        time.sleep(0.2)


def controller_of(obj: dict[str, Any]) -> tuple[str, str, str] | None:
    """(apiVersion, kind, name) of the owner reference with ``controller: true``."""
    for ref in obj["metadata"].get("ownerReferences") or []:
        if ref.get("controller"):
            return (ref["apiVersion"], ref["kind"], ref["name"])
    return None


def test_service_selector_and_refusals(backends: list[Backend], ns: str) -> None:
    """A Service keeps its selector (nil stays absent); a Service without ports is 422."""
    services = f"/api/v1/namespaces/{ns}/services"

    def script(b: Backend) -> Any:
        port = [{"port": 80}]
        code, made = b.request(
            "POST",
            services,
            {"metadata": {"name": "web"}, "spec": {"selector": {"app": "w"}, "ports": port}},
        )
        _, headless = b.request(
            "POST", services, {"metadata": {"name": "bare"}, "spec": {"ports": port}}
        )
        refused = b.request("POST", services, {"metadata": {"name": "noports"}, "spec": {}})
        return (
            code,
            made["spec"]["selector"],
            made["spec"]["type"],
            "selector" in headless["spec"],
            status_of(refused)["http"],
            status_of(refused)["reason"],
            [c["field"] for c in status_of(refused)["details"]["causes"]],
        )

    real = both(backends, script)
    assert real == (201, {"app": "w"}, "ClusterIP", False, 422, "Invalid", ["spec.ports"])


@pytest.mark.parametrize("plural", ["replicasets", "statefulsets"])
def test_a_selector_that_misses_the_template_is_invalid(
    backends: list[Backend], ns: str, plural: str
) -> None:
    def script(b: Backend) -> Any:
        spec: dict[str, Any] = {
            "replicas": 0,
            "selector": {"matchLabels": {"app": "a"}},
            "template": template({"app": "b"}),
        }
        if plural == "statefulsets":
            spec["serviceName"] = "s"
        reply = b.request(
            "POST", APPS.format(ns=ns, plural=plural), {"metadata": {"name": "x"}, "spec": spec}
        )
        digest = status_of(reply)
        return digest["http"], digest["reason"], digest["details"]["causes"]

    code, reason, causes = both(backends, script)
    assert (code, reason) == (422, "Invalid")
    assert {
        "reason": "FieldValueInvalid",
        "message": 'Invalid value: {"app":"b"}: `selector` does not match template `labels`',
        "field": "spec.template.metadata.labels",
    } in causes


def test_owner_chain_of_a_deployment_and_a_statefulset(backends: list[Backend], ns: str) -> None:
    """Deployment → ReplicaSet (controller ref) → pods (controller ref to the ReplicaSet,
    the ReplicaSet's pod-template-hash label); StatefulSet pods ``<name>-<i>`` controlled by
    it. kube-controller-manager writes these on the real one, the emulator's controllers on
    the other."""

    def script(b: Backend) -> Any:
        labels = {"app": "d"}
        deployment = {
            "metadata": {"name": "d"},
            "spec": {
                "replicas": 2,
                "selector": {"matchLabels": labels},
                "template": template(labels),
            },
        }
        code, _ = b.request("POST", APPS.format(ns=ns, plural="deployments"), deployment)
        assert code == 201, b.name
        sts = {
            "metadata": {"name": "s"},
            "spec": {
                "replicas": 2,
                "serviceName": "s",
                "podManagementPolicy": "Parallel",
                "selector": {"matchLabels": {"app": "s"}},
                "template": template({"app": "s"}),
            },
        }
        code, _ = b.request("POST", APPS.format(ns=ns, plural="statefulsets"), sts)
        assert code == 201, b.name

        def pods() -> list[dict[str, Any]]:
            _, body = b.request("GET", f"/api/v1/namespaces/{ns}/pods")
            items: list[dict[str, Any]] = body["items"]
            return items if len(items) == 4 else []

        listed = wait_for(pods)
        assert listed, f"{b.name}: 4 pods did not appear"
        _, sets = b.request("GET", APPS.format(ns=ns, plural="replicasets"))
        (rs,) = sets["items"]
        rs_name = rs["metadata"]["name"]
        rs_hash = rs["metadata"]["labels"]["pod-template-hash"]
        out: list[Any] = [
            controller_of(rs),
            rs_name == f"d-{rs_hash}",
            sorted(rs["spec"]["selector"]["matchLabels"]),
        ]
        for item in sorted(listed, key=lambda p: p["metadata"]["name"]):
            meta = item["metadata"]
            version, kind, owner = controller_of(item) or ("", "", "")
            if kind == "ReplicaSet":
                same_hash = meta["labels"].get("pod-template-hash") == rs_hash
                out.append((version, kind, owner == rs_name, same_hash))
            else:
                pod_name = meta["labels"].get("statefulset.kubernetes.io/pod-name")
                out.append((version, kind, owner, meta["name"], pod_name))
        return out

    real = both(backends, script)
    assert real[0] == ("apps/v1", "Deployment", "d")
    assert real[1] is True
    assert real[2] == ["app", "pod-template-hash"]
    assert real[3:5] == [("apps/v1", "ReplicaSet", True, True)] * 2
    assert real[5:] == [
        ("apps/v1", "StatefulSet", "s", "s-0", "s-0"),
        ("apps/v1", "StatefulSet", "s", "s-1", "s-1"),
    ]
