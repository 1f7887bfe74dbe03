"""``python -m scheduler explain``: the CLI contract (table, JSON, exit codes) in a subprocess."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import TYPE_CHECKING

import pytest
import yaml

from tests.builders import make_node, make_pod, taint

if TYPE_CHECKING:
    from pathlib import Path

pytestmark = pytest.mark.e2e


def _strip(doc: dict[str, object]) -> dict[str, object]:
    """Hand-written snapshots have no uid or resourceVersion."""
    meta = dict(doc["metadata"])  # type: ignore[call-overload]
    meta.pop("uid", None)
    meta.pop("resourceVersion", None)
    return {**doc, "metadata": meta}


@pytest.fixture
def cluster(tmp_path: Path) -> Path:
    path = tmp_path / "cluster.yaml"
    docs = [
        make_node("n1", cpu="4"),
        make_node("n2", cpu="8"),
        make_node("gpu", taints=[taint("dedicated", "gpu")]),
        make_node("tiny", cpu="1"),
        make_pod("db", cpu="3", node_name="n2"),
        make_pod("web", cpu="2", namespace="shop"),
    ]
    path.write_text(yaml.safe_dump_all([_strip(doc) for doc in docs]))
    return path


def _explain(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "scheduler", "explain", *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_table_and_json_explain_the_same_pod(cluster: Path) -> None:
    """The table names each rejecting plugin; the JSON ranks the feasible nodes by total."""
    table = _explain(str(cluster), "shop/web")
    assert table.returncode == 0, table.stderr
    lines = table.stdout.splitlines()
    assert lines[0].startswith("Pod shop/web (profile batch-scheduler): 2/4 nodes feasible")
    assert any(
        line.split()[:3] == ["gpu", "UnschedulableAndUnresolvable", "TaintToleration"]
        for line in lines
    )
    assert any(line.startswith("tiny") and "Insufficient cpu" in line for line in lines)
    assert max(map(len, lines)) <= 100

    result = _explain(str(cluster), "shop/web", "--output", "json")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    feasible = [node for node in report["nodes"] if node["feasible"]]
    assert {node["node"] for node in feasible} == {"n1", "n2"}
    assert report["best"] == [feasible[0]["node"]]
    assert feasible[0]["total"] > feasible[1]["total"]
    assert all(n["total"] == sum(s["weighted"] for s in n["scores"]) for n in feasible)
    assert report["batching"]["refused_by"] == "OptedOut"


def test_bound_pod_exits_2_naming_it(cluster: Path) -> None:
    """A pod that is not pending is refused with one line naming it, no traceback."""
    result = _explain(str(cluster), "default/db")
    assert result.returncode == 2
    assert result.stderr == (
        "batch-scheduler: pod default/db is already bound to node n2: "
        "explain diagnoses pending pods\n"
    )
    assert result.stdout == ""


@pytest.mark.parametrize("command", ["explain", "simulate"])
def test_a_reader_that_stops_early_ends_the_command_quietly(cluster: Path, command: str) -> None:
    """``… | head``: the pipe closes before the report is written; the command ends with a
    closed pipe's status (141) and no BrokenPipeError traceback."""
    pod = ["shop/web"] if command == "explain" else []
    proc = subprocess.Popen(
        [sys.executable, "-m", "scheduler", command, str(cluster), *pod],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    proc.stdout.close()  # the reader is gone before the report comes
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 141, err
    assert "Traceback" not in err
    assert err == ""
