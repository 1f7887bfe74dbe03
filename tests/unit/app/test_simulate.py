"""``batch-scheduler simulate``: the CLI contract (JSON shape, exit codes, messages)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.builders import make_node, make_pod, taint


def _write(tmp_path: Path, docs: list[dict[str, object]]) -> Path:
    path = tmp_path / "cluster.yaml"
    path.write_text(yaml.safe_dump_all(docs))
    return path


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "scheduler", "simulate", *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def _strip(doc: dict[str, object]) -> dict[str, object]:
    """Hand-written snapshots have no uid or resourceVersion."""
    meta = dict(doc["metadata"])  # type: ignore[call-overload]
    meta.pop("uid", None)
    meta.pop("resourceVersion", None)
    return {**doc, "metadata": meta}


def test_json_report_places_and_explains(tmp_path: Path) -> None:
    """One JSON object: placements in queue order and kube's FailedScheduling message."""
    cluster = _write(
        tmp_path,
        [
            _strip(make_node("small", cpu="1")),
            _strip(make_node("gpu", taints=[taint("dedicated", "gpu")])),
            _strip(make_node("big", cpu="8")),
            _strip(make_pod("running", cpu="6", node_name="big")),
            _strip(make_pod("low", cpu="1500m")),
            _strip(make_pod("high", cpu="2", priority=100)),
            _strip(make_pod("other", scheduler_name="default-scheduler")),
        ],
    )
    result = _run(str(cluster), "--output", "json")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["placements"] == [
        {"pod": "default/high", "node": "big", "reason": None},
        {
            "pod": "default/low",
            "node": None,
            "reason": "0/3 nodes are available: 1 node(s) had untolerated taint(s), "
            "2 Insufficient cpu.",
        },
    ]
    assert report["summary"]["scheduled"] == 1
    assert report["summary"]["unschedulable"] == 1
    assert report["summary"]["full_passes"] == 2


def test_compare_reports_both_runs(tmp_path: Path) -> None:
    """--compare runs batching off and on over the same input and gives the speedup."""
    docs = [_strip(make_node(f"n{i}")) for i in range(20)]
    docs += [_strip(make_pod(f"job{i}", cpu="3")) for i in range(20)]
    result = _run(str(_write(tmp_path, docs)), "--output", "json", "--compare", "--batching", "all")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["off"]["summary"]["batched"] == 0
    assert report["on"]["summary"]["batched"] == 19
    assert report["on"]["summary"]["scheduled"] == report["off"]["summary"]["scheduled"] == 20
    assert report["speedup"] > 0


@pytest.mark.parametrize(
    ("docs", "needle"),
    [
        pytest.param(
            [_strip(make_node("n")), _strip(make_pod("p", cpu="lots"))],
            "document 1: Pod default/p: spec.containers[0].resources.requests.cpu",
            id="bad-quantity-names-document-object-field",
        ),
        pytest.param(
            [{"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s"}}],
            "document 0: kind 'Service' is not supported",
            id="unsupported-kind",
        ),
    ],
)
def test_bad_input_exits_2_naming_the_field(
    tmp_path: Path, docs: list[dict[str, object]], needle: str
) -> None:
    """Invalid input: exit 2 and a message with document index, object and field."""
    result = _run(str(_write(tmp_path, docs)), "--output", "json")
    assert result.returncode == 2
    assert needle in result.stderr
    assert result.stdout == ""


def test_bad_config_exits_2(tmp_path: Path) -> None:
    """An unsupported configuration field is named and the exit code is 2."""
    config = tmp_path / "config.yaml"
    config.write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
        "extenders: []\n"
    )
    cluster = _write(tmp_path, [_strip(make_node("n"))])
    result = _run(str(cluster), "--config", str(config))
    assert result.returncode == 2
    assert "extenders: unknown or unsupported field" in result.stderr


def _pod_doc(name: str = "p", **meta: object) -> dict[str, object]:
    doc = _strip(make_pod(name, cpu="100m"))
    doc["metadata"] = {**doc["metadata"], **meta}  # type: ignore[dict-item]
    return doc


@pytest.mark.parametrize(
    ("docs", "needle"),
    [
        pytest.param(
            [_strip(make_node("n")), _pod_doc(), _pod_doc()],
            "documents 1 and 2: both are Pod default/p",
            id="same-pod-twice",
        ),
        pytest.param(
            [_strip(make_node("n")), _pod_doc(), _strip(make_node("n"))],
            "documents 0 and 2: both are Node n",
            id="same-node-twice",
        ),
        pytest.param(
            [_strip(make_node("n")), _pod_doc("a", uid="u1"), _pod_doc("b", uid="u1")],
            "documents 1 and 2: both are uid u1",
            id="same-uid-twice",
        ),
        pytest.param(
            [_pod_doc(creationTimestamp="2020-13-45T00:00:00Z")],
            "document 0: Pod default/p: metadata.creationTimestamp: not a valid time",
            id="month-13",
        ),
        pytest.param(
            [{**_pod_doc(), "spec": {**make_pod("p")["spec"], "schedulingGates": "example.com/g"}}],
            "document 0: Pod default/p: spec.schedulingGates: expected a list, got a string",
            id="gates-as-a-string",
        ),
    ],
)
def test_duplicates_and_bad_fields_exit_2_naming_file_and_documents(
    tmp_path: Path, docs: list[dict[str, object]], needle: str
) -> None:
    path = _write(tmp_path, docs)
    result = _run(str(path))
    assert result.returncode == 2
    assert result.stderr.startswith(f"batch-scheduler: {path}: {needle}"), result.stderr
    assert result.stderr.count("\n") == 1
    assert result.stdout == ""


@pytest.mark.parametrize(
    ("content", "needle"),
    [
        pytest.param("kind: Pod\n".encode("utf-16"), "is UTF-16 (byte-order mark)", id="utf-16"),
        pytest.param(
            b"kind: Pod\nmetadata: {name: \xe9}\n", "not UTF-8 text: byte 0xE9", id="latin1"
        ),
        pytest.param(
            b"kind: Pod\nmetadata: {name: p, creationTimestamp: 2020-13-45}\n",
            "metadata.creationTimestamp: must be an RFC 3339 time",
            id="unquoted-bad-date",
        ),
        pytest.param(b"a: " + b"[" * 5000 + b"]" * 5000, "nested deeper than 100", id="deep"),
        pytest.param(bytes(range(256)), "not UTF-8 text", id="binary"),
    ],
)
def test_hostile_files_exit_2_with_one_line(tmp_path: Path, content: bytes, needle: str) -> None:
    path = tmp_path / "cluster.yaml"
    path.write_bytes(content)
    result = _run(str(path))
    assert result.returncode == 2, result.stderr
    assert result.stderr.startswith(f"batch-scheduler: {path}: ")
    assert result.stderr.count("\n") == 1
    assert needle in result.stderr


def test_valid_unquoted_timestamp_is_accepted(tmp_path: Path) -> None:
    """YAML would make a datetime of it; kube's tools keep the text, and so do we."""
    path = tmp_path / "cluster.yaml"
    node = yaml.safe_dump(_strip(make_node("n")))
    doc = _pod_doc()
    doc["metadata"].pop("creationTimestamp")  # type: ignore[attr-defined]
    pod = yaml.safe_dump(doc).replace(
        "metadata:\n", "metadata:\n  creationTimestamp: 2020-01-02T03:04:05Z\n", 1
    )
    path.write_text(f"{node}---\n{pod}")
    result = _run(str(path), "--output", "json")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["placements"][0]["node"] == "n"
