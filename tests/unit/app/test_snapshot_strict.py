"""Snapshots, fast and strict (issue 31, item 4): JSON as ``kubectl get -o json`` writes it,
standard input, truncated files, kinds Kubernetes does not serve, gated pods, --compare."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import TYPE_CHECKING, Any

import pytest
import yaml

from scheduler.app import explain, explain_render
from scheduler.app.input_file import MAX_DEPTH, InputFileError, parse_documents
from scheduler.app.simulate import (
    InputError,
    compare,
    read_snapshot_file,
    render_compare,
    render_table,
    simulate,
)
from scheduler.app.snapshot_file import USED_KINDS
from scheduler.batching.signature import BatchingMode
from scheduler.framework.config import DEFAULT_SCHEDULER_NAME, default_config
from tests.builders import make_node, make_pod

if TYPE_CHECKING:
    from pathlib import Path

NAMES = {DEFAULT_SCHEDULER_NAME}


def _list(items: list[Any]) -> dict[str, Any]:
    return {"apiVersion": "v1", "items": items, "kind": "List", "metadata": {"resourceVersion": ""}}


def _cluster() -> list[dict[str, Any]]:
    return [make_node("n1"), make_node("n2", cpu="8"), make_pod("web", cpu="1")]


def _run(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "scheduler", *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


# -- JSON fast path ----------------------------------------------------------------------


def test_json_and_yaml_of_one_list_read_the_same(tmp_path: Path) -> None:
    data = _list(_cluster())
    as_json, as_yaml = tmp_path / "c.json", tmp_path / "c.yaml"
    as_json.write_text(json.dumps(data, indent=4))
    as_yaml.write_text(yaml.safe_dump(data))
    from_json = read_snapshot_file(as_json, NAMES)
    from_yaml = read_snapshot_file(as_yaml, NAMES)
    assert from_json == from_yaml
    assert [pod.key for pod in from_json.pending] == ["default/web"]


def test_json_keeps_the_yaml_rules() -> None:
    """A duplicate key is located by line and column; nesting is limited; timestamps are
    strings either way."""
    with pytest.raises(InputFileError, match=r"line 1, column 10: key 'a' appears twice"):
        parse_documents('{"a": 1, "a": 2}', "f.json")
    deep = '{"a": ' + "[" * MAX_DEPTH + "]" * MAX_DEPTH + "}"
    with pytest.raises(InputFileError, match=f"nested deeper than {MAX_DEPTH} levels"):
        parse_documents(deep, "f.json")
    ok = '{"a": ' + "[" * (MAX_DEPTH - 1) + "]" * (MAX_DEPTH - 1) + "}"
    assert parse_documents(ok, "f.json") == [json.loads(ok)]
    assert parse_documents('{"t": "2020-01-02T03:04:05Z"}', "f") == [{"t": "2020-01-02T03:04:05Z"}]


def test_yaml_flow_mapping_that_is_not_json_is_still_yaml() -> None:
    assert parse_documents("{kind: Pod, n: 1}\n", "f") == [{"kind": "Pod", "n": 1}]


# -- truncated files ---------------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["json", "yaml"])
def test_a_cut_off_file_is_named_truncated(tmp_path: Path, fmt: str) -> None:
    data = _list(_cluster())
    text = json.dumps(data, indent=4) if fmt == "json" else yaml.safe_dump(data)
    path = tmp_path / f"c.{fmt}"
    path.write_text(text[: len(text) * 2 // 3])
    with pytest.raises(InputError, match="truncated") as caught:
        read_snapshot_file(path, NAMES)
    assert str(caught.value).startswith(f"{path}: ")
    assert "\n" not in str(caught.value)


def test_a_kubectl_yaml_list_cut_before_its_kind_is_named_truncated(tmp_path: Path) -> None:
    """kubectl writes ``kind: List`` after the items: cut there, the YAML is still valid."""
    text = yaml.safe_dump(_list(_cluster()))
    path = tmp_path / "c.yaml"
    path.write_text(text[: text.index("kind: List")])
    with pytest.raises(InputError, match=r"document 0: kind: missing after the items: .*truncated"):
        read_snapshot_file(path, NAMES)


# -- kinds -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("doc", "needle"),
    [
        pytest.param(
            {"apiVersion": "v1", "kind": "Pdo", "metadata": {"name": "x"}},
            "document 0, items[1]: Pdo is not a kind Kubernetes serves (did you mean Pod?)",
            id="typo",
        ),
        pytest.param(
            {"apiVersion": "extensions/v1beta1", "kind": "Deployment", "metadata": {"name": "d"}},
            "document 0, items[1]: Kubernetes does not serve Deployment as extensions/v1beta1; "
            "it serves apps/v1",
            id="removed-version",
        ),
        pytest.param(
            {"apiVersion": "apps/v1", "kind": "Pod", "metadata": {"name": "p"}},
            "Kubernetes does not serve Pod as apps/v1; it serves v1",
            id="used-kind-wrong-group",
        ),
    ],
)
def test_a_kind_kubernetes_does_not_serve_exits_2(
    tmp_path: Path, doc: dict[str, Any], needle: str
) -> None:
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(_list([make_node("n1"), doc])))
    result = _run("simulate", str(path))
    assert result.returncode == 2, result.stdout
    assert result.stderr.count("\n") == 1
    assert needle in result.stderr


def test_known_kinds_and_custom_resources_are_counted_as_ignored(tmp_path: Path) -> None:
    items = [
        *_cluster(),
        {"apiVersion": "v1", "kind": "Event", "metadata": {"name": "e"}},
        {"apiVersion": "events.k8s.io/v1", "kind": "Event", "metadata": {"name": "e2"}},
        {"apiVersion": "serving.knative.dev/v1", "kind": "Service", "metadata": {"name": "k"}},
        {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}},
    ]
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(_list(items)))
    assert read_snapshot_file(path, NAMES).ignored == {
        "Event": 2,
        "Service.serving.knative.dev": 1,
        "Widget": 1,
    }


def test_simulate_help_names_every_kind_the_loader_reads() -> None:
    result = _run("simulate", "--help")
    text = " ".join(result.stdout.split())
    for kind in USED_KINDS:
        assert f" {kind}," in text or f" {kind} (" in text, kind


# -- stdin -------------------------------------------------------------------------------


def test_dash_reads_standard_input() -> None:
    text = json.dumps(_list(_cluster()), indent=4)
    result = _run("simulate", "-", "--output", "json", stdin=text)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["summary"]["scheduled"] == 1
    bad = _run("simulate", "-", stdin="a: [1\n")
    assert bad.returncode == 2
    assert bad.stderr.startswith("batch-scheduler: <stdin>: not valid YAML: ")


# -- gated pods and --compare ------------------------------------------------------------


def _gated_pod(name: str, *gates: str) -> dict[str, Any]:
    pod = make_pod(name, cpu="1")
    pod["spec"]["schedulingGates"] = [{"name": gate} for gate in gates]
    return pod


def test_gated_pods_appear_as_gated_and_are_counted(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(_list([*_cluster(), _gated_pod("held", "quota", "image")])))
    report = simulate(read_snapshot_file(path, NAMES), default_config(), mode=BatchingMode.OFF)
    rows = {row["pod"]: row for row in report["placements"]}
    assert rows["default/held"]["gated"] is True
    assert rows["default/held"]["node"] is None
    assert rows["default/held"]["reason"] == (
        "SchedulingGated: Scheduling is blocked due to non-empty scheduling gates (quota, image)"
    )
    assert rows["default/web"]["gated"] is False
    summary = report["summary"]
    assert (summary["scheduled"], summary["unschedulable"], summary["gated"]) == (1, 0, 1)
    table = render_table(report)
    assert any(line.split()[:2] == ["default/held", "gated"] for line in table.splitlines())
    assert "gated 1" in table.splitlines()[-1] or "gated 1" in table


def test_compare_lists_the_placements_that_differ(tmp_path: Path) -> None:
    """Two equal nodes and a pod that fills one: batching off places each pod by a full pass
    and may pick another node of the same score than the batch's hint; whatever they pick,
    ``differences`` is exactly the pods whose node differs."""
    items: list[Any] = [make_node(f"n{i}", cpu="4") for i in range(3)]
    items += [make_pod(f"p{i}", cpu="1") for i in range(6)]
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(_list(items)))
    snapshot = read_snapshot_file(path, NAMES)
    report = compare(snapshot, default_config(), mode=BatchingMode.ALL, seed=1)
    off = {row["pod"]: row["node"] for row in report["off"]["placements"]}
    on = {row["pod"]: row["node"] for row in report["on"]["placements"]}
    expected = [{"pod": p, "off": off[p], "on": on[p]} for p in off if off[p] != on[p]]
    assert report["differences"] == expected
    text = render_compare(report)
    if expected:
        assert f"placements that differ: {len(expected)} of 6" in text
        for diff in expected:
            assert any(
                line.split() == [diff["pod"], diff["off"], diff["on"]] for line in text.splitlines()
            )
    else:
        assert "placements that differ: none of 6" in text


# -- explain --top / --node / gates ------------------------------------------------------


def _explained(tmp_path: Path, items: list[Any], key: str) -> dict[str, Any]:
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(_list(items)))
    return explain.explain(explain.read_cluster(path), default_config(), key)


def test_explain_top_keeps_the_best_scored_then_the_rejected(tmp_path: Path) -> None:
    """--top 3: the three best totals, then the rejected node; the counts stay whole."""
    items: list[Any] = [make_node(f"n{i}", cpu=str(2 + i)) for i in range(6)]
    items += [make_node("tiny", cpu="500m"), make_pod("web", cpu="1")]
    report = _explained(tmp_path, items, "default/web")
    totals = sorted((n["total"] for n in report["nodes"] if n["total"] is not None), reverse=True)
    top = explain.select(report, top=3)
    assert [n["total"] for n in top["nodes"]] == [*totals[:3], None]
    assert top["nodes"][-1]["node"] == "tiny"
    assert top["omitted"] == len(report["nodes"]) - 4
    assert top["feasible"] == report["feasible"]
    assert top["best"] == report["best"]
    everything = explain.select(report, top=100)
    assert everything["nodes"][-1]["node"] == "tiny"
    assert everything["omitted"] == 0
    assert "(3 more nodes not shown: --top, --node)" in explain_render.render_table(top)


def test_explain_node_shows_that_node_alone(tmp_path: Path) -> None:
    report = _explained(tmp_path, [make_node("a"), make_node("b"), make_pod("web")], "default/web")
    only = explain.select(report, node="b")
    assert [n["node"] for n in only["nodes"]] == ["b"]
    with pytest.raises(explain.ExplainError, match=r"--node: the snapshot has no node named 'c'"):
        explain.select(report, node="c")
    result = _run(
        "explain",
        "-",
        "default/web",
        "--node",
        "c",
        stdin=yaml.safe_dump(_list([make_node("a"), make_pod("web")])),
    )
    assert result.returncode == 2
    assert "no node named 'c'" in result.stderr


def test_explain_gives_the_gates_as_the_reason(tmp_path: Path) -> None:
    report = _explained(tmp_path, [make_node("a"), _gated_pod("held", "quota")], "default/held")
    reason = "SchedulingGated: Scheduling is blocked due to non-empty scheduling gates (quota)"
    assert report["gated"] == reason
    assert not any("gate" in note for note in report["notes"])
    assert (
        explain_render.render_table(report).splitlines()[1].startswith(f"Not attempted: {reason}")
    )
