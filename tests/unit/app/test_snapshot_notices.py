"""What a snapshot holds and ``simulate``/``explain`` do not read is said on stderr, one line
per kind (and per schedulerName left out); an empty snapshot is an error naming the input.

Through ``python -m scheduler`` in a subprocess: stdout stays the report, stderr the notices.
"""

from __future__ import annotations

import json
import subprocess
import sys
from typing import TYPE_CHECKING, Any

import pytest
import yaml

from tests.builders import make_node, make_pod

if TYPE_CHECKING:
    from pathlib import Path


def _run(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "scheduler", *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def _object(api_version: str, kind: str, name: str) -> dict[str, Any]:
    return {"apiVersion": api_version, "kind": kind, "metadata": {"name": name}}


POD_GROUP = {
    **_object("scheduling.k8s.io/v1alpha3", "PodGroup", "trainers"),
    "metadata": {"name": "trainers", "namespace": "default"},
    "spec": {"minCount": 2},
}
SNAPSHOT: list[dict[str, Any]] = [
    make_node("n1", cpu="4"),
    make_pod("web", cpu="1"),
    make_pod("theirs", cpu="1", scheduler_name="default-scheduler"),
    make_pod("also-theirs", cpu="1", scheduler_name="default-scheduler"),
    _object("v1", "ConfigMap", "a"),
    _object("v1", "ConfigMap", "b"),
    _object("apps/v1", "Deployment", "web"),
    _object("scheduling.k8s.io/v1", "PriorityClass", "high"),
    _object("example.com/v1", "Widget", "w"),
    POD_GROUP,
]
NOTICES = [
    "ignored: 2 ConfigMap (not read by the scheduler)",
    "ignored: 1 Deployment (the scheduler reads the ReplicaSets it owns)",
    "ignored: 1 PodGroup (another version: the scheduler reads scheduling.k8s.io/v1beta1 "
    "PodGroups)",
    "ignored: 1 PriorityClass (admission already wrote each pod's spec.priority from it)",
    "ignored: 1 Widget (a custom resource: not read by the scheduler)",
]
LEFT_OUT = (
    "left out: 2 pending Pod of schedulerName default-scheduler (no profile of ours serves it)"
)


@pytest.fixture
def snapshot(tmp_path: Path) -> Path:
    path = tmp_path / "snap.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": SNAPSHOT}))
    return path


@pytest.mark.parametrize("output", ["table", "json"])
def test_simulate_names_every_ignored_kind_on_stderr(snapshot: Path, output: str) -> None:
    """One line per ignored kind, with its count and why (a PodGroup of a version the
    scheduler does not read too), and one for the pods of a scheduler no profile serves;
    stdout is the report."""
    result = _run("simulate", str(snapshot), "--output", output)
    assert result.returncode == 0, result.stderr
    assert result.stderr.splitlines() == [*NOTICES, LEFT_OUT]
    assert "ignored" not in result.stdout.replace('"ignored"', "")
    if output == "json":
        summary = json.loads(result.stdout)["summary"]
        assert summary["ignored"] == {
            "ConfigMap": 2,
            "Deployment": 1,
            "PodGroup": 1,
            "PriorityClass": 1,
            "Widget": 1,
        }
        assert summary["left_out"] == {"default-scheduler": 2}


def test_explain_names_every_ignored_kind_on_stderr(snapshot: Path) -> None:
    """explain reads every scheduler's pods (it explains any of them under --profile), so
    only the ignored kinds are named."""
    result = _run("explain", str(snapshot), "default/web")
    assert result.returncode == 0, result.stderr
    assert result.stderr.splitlines() == NOTICES
    assert result.stdout.startswith("Pod default/web (profile batch-scheduler): 1/1 nodes")


def test_nothing_ignored_says_nothing(tmp_path: Path) -> None:
    path = tmp_path / "snap.yaml"
    path.write_text(yaml.safe_dump_all([make_node("n1"), make_pod("web")]))
    result = _run("simulate", str(path))
    assert (result.returncode, result.stderr) == (0, "")


EMPTY = "no objects in the snapshot (an empty input, or a List with no items)"


@pytest.mark.parametrize("command", ["simulate", "explain"])
@pytest.mark.parametrize(
    "text",
    [
        pytest.param("", id="empty"),
        pytest.param("\n# nothing here\n", id="only-a-comment"),
        pytest.param("---\n---\n", id="only-empty-documents"),
        pytest.param('{"apiVersion": "v1", "kind": "List", "items": []}', id="empty-kubectl-list"),
        pytest.param("apiVersion: v1\nkind: PodList\nitems: []\n", id="empty-typed-list"),
    ],
)
def test_an_empty_snapshot_exits_2_naming_the_input(
    tmp_path: Path, command: str, text: str
) -> None:
    """No object at all, from a file or stdin: exit 2 and one line naming the input, as
    kubectl refuses input without objects; never an empty report with exit 0."""
    pod = ["default/web"] if command == "explain" else []
    path = tmp_path / "snap.yaml"
    path.write_text(text)
    from_file = _run(command, str(path), *pod)
    from_stdin = _run(command, "-", *pod, stdin=text)
    assert (from_file.returncode, from_file.stdout) == (2, "")
    assert from_file.stderr == f"batch-scheduler: {path}: {EMPTY}\n"
    assert (from_stdin.returncode, from_stdin.stdout) == (2, "")
    assert from_stdin.stderr == f"batch-scheduler: <stdin>: {EMPTY}\n"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        pytest.param(
            ["explain", "default/absent"],
            "pod default/absent is not in the snapshot",
            id="explain-a-pod-not-there",
        ),
        pytest.param(
            ["simulate", "--plugin", "no_such_module_xyz:Thing"],
            "--plugin 'no_such_module_xyz:Thing': cannot import",
            id="simulate-a-plugin-that-cannot-load",
        ),
    ],
)
def test_an_error_after_reading_stays_one_line(
    snapshot: Path, args: list[str], message: str
) -> None:
    """The notices come with the report: a command that fails once the snapshot is read
    still says one line on stderr, the error."""
    command, *rest = args
    result = _run(command, str(snapshot), *rest)
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1, result.stderr
    assert message in result.stderr
