"""simulate and explain with DRA objects in the snapshot: DeviceClasses, ResourceSlices and
ResourceClaims are read, devices are allocated as pods are placed (a device goes to one
claim only), and explain names DynamicResources where a node cannot hold a pod's claims."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

from tests.builders import make_node, make_pod

DRIVER = "gpu.example.com"
RESOURCE = "resource.k8s.io/v1"


def _slice(node: str, gpus: int) -> dict[str, Any]:
    return {
        "apiVersion": RESOURCE,
        "kind": "ResourceSlice",
        "metadata": {"name": f"{node}-gpus"},
        "spec": {
            "driver": DRIVER,
            "nodeName": node,
            "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
            "devices": [{"name": f"gpu-{i}"} for i in range(gpus)],
        },
    }


def _claim(name: str) -> dict[str, Any]:
    request = {"name": "gpu", "exactly": {"deviceClassName": "gpu", "count": 1}}
    return {
        "apiVersion": RESOURCE,
        "kind": "ResourceClaim",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"devices": {"requests": [request]}},
    }


def _pod(name: str, claim: str) -> dict[str, Any]:
    pod = make_pod(name, cpu="100m")
    pod["spec"]["resourceClaims"] = [{"name": "gpu", "resourceClaimName": claim}]
    pod["spec"]["containers"][0]["resources"]["claims"] = [{"name": "gpu"}]
    return pod


def _snapshot(tmp_path: Path) -> Path:
    """n1 without GPUs, n2 with one; three pods with a claim of one GPU each, and a
    ResourceClaimTemplate (counted, not read)."""
    device_class = {
        "apiVersion": RESOURCE,
        "kind": "DeviceClass",
        "metadata": {"name": "gpu"},
        "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}]},
    }
    template = {
        "apiVersion": RESOURCE,
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": "one-gpu", "namespace": "default"},
        "spec": {"spec": {"devices": {"requests": []}}},
    }
    docs: list[dict[str, Any]] = [make_node("n1"), make_node("n2"), device_class, template]
    docs += [_slice("n1", 0), _slice("n2", 1)]
    docs += [_claim(f"claim-{i}") for i in range(2)]
    docs += [_pod(f"p{i}", f"claim-{i}") for i in range(2)]
    path = tmp_path / "dra.yaml"
    path.write_text(yaml.safe_dump_all(docs))
    return path


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "scheduler", *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_simulate_allocates_each_device_once(tmp_path: Path) -> None:
    done = _run("simulate", str(_snapshot(tmp_path)), "--output", "json")
    assert done.returncode == 0, done.stderr
    assert "ignored: 1 ResourceClaimTemplate (the resourceclaim controller makes" in done.stderr
    rows = {row["pod"]: row for row in json.loads(done.stdout)["placements"]}
    assert rows["default/p0"]["node"] == "n2"  # the one node with a GPU
    assert rows["default/p1"]["node"] is None
    assert "cannot allocate all claims" in rows["default/p1"]["reason"]


def test_explain_names_dynamic_resources_on_the_node_without_devices(tmp_path: Path) -> None:
    done = _run("explain", str(_snapshot(tmp_path)), "default/p0", "--output", "json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    verdicts = {node["node"]: node for node in report["nodes"]}
    assert verdicts["n2"]["feasible"] is True
    assert (verdicts["n1"]["plugin"], verdicts["n1"]["feasible"]) == ("DynamicResources", False)


def test_another_version_of_a_dra_kind_is_counted_not_read(tmp_path: Path) -> None:
    old = _claim("old")
    old["apiVersion"] = "resource.k8s.io/v1beta2"
    path = tmp_path / "old.yaml"
    path.write_text(yaml.safe_dump_all([make_node("n1"), old]))
    done = _run("simulate", str(path))
    assert done.returncode == 0, done.stderr
    assert (
        "ignored: 1 ResourceClaim (another version: the scheduler reads resource.k8s.io/v1 "
        "ResourceClaims)"
    ) in done.stderr


def test_explain_says_which_request_a_node_cannot_satisfy(tmp_path: Path) -> None:
    """explain's details on a DRA rejection: per request, the devices on the node, those the
    selectors reject (by selector), those allocated, and how many that leaves."""
    done = _run("explain", str(_snapshot(tmp_path)), "default/p0", "--output", "json")
    assert done.returncode == 0, done.stderr
    verdicts = {node["node"]: node for node in json.loads(done.stdout)["nodes"]}
    assert verdicts["n1"]["reasons"] == ["cannot allocate all claims"]  # kube's text, kept
    assert verdicts["n1"]["details"] == [
        "claim default/claim-0, request gpu (class gpu): needs 1 device, 0 free (0 on the node)"
    ]
    assert verdicts["n2"]["details"] == []

    # n3: model a (allocated to another claim) and model b; the claim asks for model a.
    device_class = {
        "apiVersion": RESOURCE,
        "kind": "DeviceClass",
        "metadata": {"name": "gpu"},
        "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}]},
    }
    gpus = _slice("n3", 2)
    for device, model in zip(gpus["spec"]["devices"], ("a", "b"), strict=True):
        device["attributes"] = {"model": {"string": model}}
    taken = _claim("taken")
    taken["status"] = {
        "allocation": {
            "devices": {
                "results": [{"request": "gpu", "driver": DRIVER, "pool": "n3", "device": "gpu-0"}]
            }
        }
    }
    wants_a = _claim("wants-a")
    wants_a["spec"]["devices"]["requests"][0]["exactly"]["selectors"] = [
        {"cel": {"expression": f'device.attributes["{DRIVER}"].model == "a"'}}
    ]
    path = tmp_path / "models.yaml"
    docs = [make_node("n3"), device_class, gpus, taken, wants_a, _pod("p", "wants-a")]
    path.write_text(yaml.safe_dump_all(docs))
    done = _run("explain", str(path), "default/p", "--output", "json")
    assert done.returncode == 0, done.stderr
    (n3,) = json.loads(done.stdout)["nodes"]
    assert n3["details"] == [
        "claim default/wants-a, request gpu (class gpu): needs 1 device, 0 free (2 on the "
        "node, 1 rejected by claim default/wants-a: selector #0, 1 allocated)"
    ]
    table = _run("explain", str(path), "default/p")
    assert "- claim default/wants-a, request gpu (class gpu): needs 1 device" in table.stdout
