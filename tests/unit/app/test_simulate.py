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
