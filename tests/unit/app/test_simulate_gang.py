"""simulate and explain with PodGroups: gangs placed whole (the gate on by itself for a
snapshot that holds PodGroups, off on request), members held by PreEnqueue named, and
explain of a member runs its group's cycle."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.builders import make_node, make_pod, make_pod_group


def _write(tmp_path: Path, docs: list[dict[str, Any]]) -> Path:
    path = tmp_path / "cluster.yaml"
    path.write_text(yaml.safe_dump_all(docs))
    return path


def _run(command: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "scheduler", command, *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def _cluster(tmp_path: Path) -> Path:
    """Two 4-CPU nodes; gang ``fits`` (3 × 1 CPU), gang ``huge`` (3 × 3 CPU: two fit),
    ``orphan`` naming a PodGroup the snapshot lacks, ``short`` with 1 of minCount 2."""
    docs: list[dict[str, Any]] = [make_node("n1"), make_node("n2")]
    docs += [make_pod_group("fits", min_count=3), make_pod_group("huge", min_count=3)]
    docs += [make_pod_group("short", min_count=2)]
    docs += [make_pod(f"fits-{i}", cpu="1", pod_group="fits") for i in range(3)]
    docs += [make_pod(f"huge-{i}", cpu="3", pod_group="huge") for i in range(3)]
    docs += [make_pod("orphan-0", cpu="1", pod_group="orphan")]
    docs += [make_pod("short-0", cpu="1", pod_group="short")]
    return _write(tmp_path, docs)


def test_simulate_places_gangs_whole_and_names_what_holds_the_rest(tmp_path: Path) -> None:
    done = _run("simulate", str(_cluster(tmp_path)), "--output", "json")
    assert done.returncode == 0, done.stderr
    assert "feature gate GenericWorkload=true: the snapshot holds 3 PodGroup(s)" in done.stderr
    report = json.loads(done.stdout)
    rows = {row["pod"]: row for row in report["placements"]}
    assert all(rows[f"default/fits-{i}"]["node"] for i in range(3))
    assert not any(rows[f"default/huge-{i}"]["node"] for i in range(3))
    assert rows["default/huge-0"]["pod_group"] == "default/huge"
    assert rows["default/orphan-0"]["held_by"] == "GangScheduling"
    assert rows["default/short-0"]["held_by"] == "GangScheduling"
    assert rows["default/short-0"]["reason"] == (
        "waiting for minCount pods from a gang to appear in scheduling queue"
    )
    summary = report["summary"]
    assert summary["waiting"] == 2
    groups = {g["pod_group"]: g for g in summary["pod_groups"]}
    assert (groups["default/fits"]["placed"], groups["default/fits"]["reason"]) == (3, "Scheduled")
    huge = groups["default/huge"]
    assert (huge["placed"], huge["status"], huge["reason"]) == (0, "False", "Unschedulable")
    assert huge["message"].startswith("minCount (3) cannot be satisfied")


def test_simulate_without_the_gate_places_members_one_by_one(tmp_path: Path) -> None:
    done = _run(
        "simulate",
        str(_cluster(tmp_path)),
        "--output",
        "json",
        "--feature-gates",
        "GenericWorkload=false",
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    rows = {row["pod"]: row for row in report["placements"]}
    assert any(rows[f"default/huge-{i}"]["node"] for i in range(3))  # no gang: one fits
    assert rows["default/orphan-0"]["node"]
    assert rows["default/short-0"]["node"]
    assert report["summary"]["pod_groups"] == []


def test_simulate_table_has_a_line_per_group(tmp_path: Path) -> None:
    done = _run("simulate", str(_cluster(tmp_path)))
    assert done.returncode == 0, done.stderr
    assert "pod group default/fits: 3 of 3 placed (minCount 3), Scheduled" in done.stdout
    assert "pod group default/huge: 0 of 3 placed (minCount 3), Unschedulable: " in done.stdout


@pytest.mark.parametrize(
    ("pod", "expected"),
    [
        (
            "default/huge-1",
            "Pod group default/huge (minCount 3): 2 placements found trying 3 members; 0 placed",
        ),
        (
            "default/fits-0",
            "Pod group default/fits (minCount 3): 3 placements found trying 3 members; 3 placed",
        ),
        ("default/short-0", "Pod group default/short (minCount 2): not queued"),
        ("default/orphan-0", "Pod group default/orphan (no such PodGroup in the snapshot)"),
    ],
    ids=["too-big", "fits", "short-of-minCount", "no-PodGroup"],
)
def test_explain_of_a_member_runs_its_groups_cycle(tmp_path: Path, pod: str, expected: str) -> None:
    done = _run("explain", str(_cluster(tmp_path)), pod)
    assert done.returncode == 0, done.stderr
    assert expected in done.stdout, done.stdout


def test_explain_json_names_the_member_that_did_not_fit(tmp_path: Path) -> None:
    done = _run("explain", str(_cluster(tmp_path)), "default/huge-0", "--output", "json")
    assert done.returncode == 0, done.stderr
    group = json.loads(done.stdout)["group"]
    assert (group["min_count"], group["found"], group["placed"]) == (3, 2, 0)
    assert group["tried"] == 3
    reasons = [m["reason"] for m in group["members"] if m["reason"]]
    assert any("Insufficient cpu" in reason for reason in reasons), group
    assert group["condition"]["reason"] == "Unschedulable"


def test_a_bad_feature_gate_is_one_line(tmp_path: Path) -> None:
    done = _run("simulate", str(_cluster(tmp_path)), "--feature-gates", "Bogus=true")
    assert done.returncode == 2
    assert done.stderr.strip() == (
        "batch-scheduler: --feature-gates: unrecognized feature gate: Bogus"
    )
