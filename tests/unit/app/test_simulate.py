"""``batch-scheduler simulate``: the CLI contract (JSON shape, exit codes, messages)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

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
        {
            "pod": "default/high",
            "node": "big",
            "reason": None,
            "gated": False,
            "held_by": None,
            "nominated_node": None,
            "victims": [],
            "pod_group": None,
        },
        {
            "pod": "default/low",
            "node": None,
            "gated": False,
            "held_by": None,
            "nominated_node": None,
            "victims": [],
            "pod_group": None,
            # kube's message, with DefaultPreemption's: "big" only holds pods of no lower
            # priority; "small" (1 cpu) and the tainted node cannot be helped by evicting.
            "reason": "0/3 nodes are available: 1 node(s) had untolerated taint(s), "
            "2 Insufficient cpu. preemption: 0/3 nodes are available: "
            "1 No preemption victims found for incoming pod, "
            "2 Preemption is not helpful for scheduling.",
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
            [
                {
                    "apiVersion": "v1",
                    "kind": "List",
                    "items": [
                        _strip(make_node("n")),
                        {"kind": "Service", "metadata": {"name": "s"}, "spec": {"selector": "a"}},
                    ],
                }
            ],
            "document 0, items[1]: Service default/s: spec.selector: expected an object",
            id="bad-service-in-a-list",
        ),
        pytest.param(
            [{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": []}],
            "document 0: Pod default/p: spec: expected an object",
            id="spec-a-list",
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
        "noSuchField: 1\n"
    )
    cluster = _write(tmp_path, [_strip(make_node("n"))])
    result = _run(str(cluster), "--config", str(config))
    assert result.returncode == 2
    assert "noSuchField: unknown or unsupported field" in result.stderr


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
            [{"apiVersion": "v1", "kind": "List", "items": [_pod_doc(), _pod_doc()]}],
            "document 0, items[0] and document 0, items[1]: both are Pod default/p",
            id="same-pod-twice-in-a-list",
        ),
        pytest.param(
            [
                {
                    "apiVersion": "apps/v1",
                    "kind": "ReplicaSet",
                    "metadata": {"name": "rs"},
                    "spec": {"selector": {"matchLabels": {"app": ["web"]}}},
                }
            ],
            "document 0: ReplicaSet default/rs: spec.selector.matchLabels.app: ",
            id="bad-replicaset",
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


def _kubectl_list(docs: list[Any]) -> dict[str, object]:
    """``kubectl get nodes,pods,... -A -o yaml``: one v1 List."""
    return {"apiVersion": "v1", "kind": "List", "items": docs, "metadata": {"resourceVersion": ""}}


def test_kubectl_list_is_placed_and_ignored_kinds_counted(tmp_path: Path) -> None:
    """A kubectl List is read whole; kinds that cannot affect a decision are counted."""
    config_map = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}}
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"}}
    items = [_strip(make_node("n")), _pod_doc(), config_map, config_map, deployment]
    path = _write(tmp_path, [_kubectl_list(items)])
    result = _run(str(path), "--output", "json")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["placements"] == [
        {
            "pod": "default/p",
            "node": "n",
            "reason": None,
            "gated": False,
            "held_by": None,
            "nominated_node": None,
            "victims": [],
            "pod_group": None,
        }
    ]
    assert report["summary"]["ignored"] == {"ConfigMap": 2, "Deployment": 1}
    table = _run(str(path))
    assert table.returncode == 0, table.stderr
    assert table.stderr.splitlines() == [
        "ignored: 2 ConfigMap (not read by the scheduler)",
        "ignored: 1 Deployment (the scheduler reads the ReplicaSets it owns)",
    ]
    assert "ConfigMap" not in table.stdout


def test_nothing_ignored_is_an_empty_map(tmp_path: Path) -> None:
    result = _run(str(_write(tmp_path, [_strip(make_node("n"))])), "--output", "json")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["summary"]["ignored"] == {}


TWO_PROFILES = """\
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: batch-scheduler
- schedulerName: packer
  pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy:
        type: MostAllocated
        resources: [{name: cpu, weight: 1}, {name: memory, weight: 1}]
"""


@pytest.mark.parametrize("batching", ["off", "all"])
def test_two_profiles_place_the_pods_of_both_scheduler_names(tmp_path: Path, batching: str) -> None:
    """Each profile decides for its own pods: the default one spreads, the packer packs."""
    config = tmp_path / "config.yaml"
    config.write_text(TWO_PROFILES)
    nodes = [_strip(make_node(f"spread-{i}", labels={"pool": "spread"})) for i in range(3)]
    nodes += [_strip(make_node(f"pack-{i}", labels={"pool": "pack"})) for i in range(3)]
    pods: list[dict[str, object]] = []
    for i in range(3):
        for scheduler, pool in (("batch-scheduler", "spread"), ("packer", "pack")):
            pod = make_pod(
                f"{pool}-{i}",
                cpu="1",
                memory="8Gi",
                scheduler_name=scheduler,
                node_selector={"pool": pool},
            )
            pods.append(_strip(pod))
    pods.append(_strip(make_pod("theirs", scheduler_name="default-scheduler")))
    path = _write(tmp_path, [_kubectl_list(nodes + pods)])
    result = _run(str(path), "--config", str(config), "--output", "json", "--batching", batching)
    assert result.returncode == 0, result.stderr
    placed = {p["pod"]: p["node"] for p in json.loads(result.stdout)["placements"]}
    assert len(placed) == 6, placed  # not the default-scheduler's pod
    spread = {placed[f"default/spread-{i}"] for i in range(3)}
    packed = {placed[f"default/pack-{i}"] for i in range(3)}
    assert spread == {"spread-0", "spread-1", "spread-2"}, placed
    assert len(packed) == 1, placed
    assert packed <= {"pack-0", "pack-1", "pack-2"}, placed
