"""``explain``: every node's Filter verdict, the Score breakdown, signability, and errors.

In process: the snapshot is written to a file and read as the CLI reads it; errors go through
``cli.main.main`` for their exit code and one-line message.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest
import yaml

from scheduler.app import explain, explain_render
from scheduler.app.simulate import simulate
from scheduler.app.snapshot_file import snapshot_from_documents
from scheduler.batching.signature import BatchingMode
from scheduler.cli.main import main
from scheduler.framework.config import default_config
from tests.builders import make_node, make_pod, taint

if TYPE_CHECKING:
    from pathlib import Path

ZONE = "topology.kubernetes.io/zone"

# Sizes differ so that no two feasible nodes tie: the best node is the one a full pass picks.
CLUSTER: list[dict[str, Any]] = [
    make_node("big", cpu="16", labels={ZONE: "a"}),
    make_node("medium", cpu="8", labels={ZONE: "b"}),
    make_node("busy", cpu="8", labels={ZONE: "b"}),
    make_node("small", cpu="1", labels={ZONE: "a"}),
    make_node("gpu", cpu="32", taints=[taint("dedicated", "gpu")], labels={ZONE: "c"}),
    make_pod("db", cpu="6", node_name="busy"),
    make_pod("web", cpu="2", memory="1Gi"),
]


def _write(tmp_path: Path, docs: list[dict[str, Any]]) -> Path:
    path = tmp_path / "cluster.yaml"
    path.write_text(yaml.safe_dump_all(docs))
    return path


def _explain(tmp_path: Path, docs: list[dict[str, Any]], key: str, **kw: Any) -> dict[str, Any]:
    snapshot = explain.read_cluster(_write(tmp_path, docs))
    return explain.explain(snapshot, default_config(), key, **kw)


def _by_node(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {node["node"]: node for node in report["nodes"]}


@pytest.mark.parametrize(
    ("node", "point", "plugin", "code", "reasons"),
    [
        pytest.param(
            "gpu",
            "Filter",
            "TaintToleration",
            "UnschedulableAndUnresolvable",
            ["node(s) had untolerated taint(s)"],
            id="taint-rejects-with-kube-message",
        ),
        pytest.param(
            "small",
            "Filter",
            "NodeResourcesFit",
            "UnschedulableAndUnresolvable",  # more than its allocatable: preemption can't help
            ["Insufficient cpu"],
            id="too-little-cpu-is-insufficient-cpu",
        ),
        pytest.param("big", None, None, "Success", [], id="roomy-node-passes"),
        pytest.param("busy", None, None, "Success", [], id="bound-pod-counted-still-fits"),
    ],
)
def test_filter_verdict_per_node(
    tmp_path: Path,
    node: str,
    point: str | None,
    plugin: str | None,
    code: str,
    reasons: list[str],
) -> None:
    """Each node carries the first rejecting plugin and its Status, as a full pass keeps it."""
    verdict = _by_node(_explain(tmp_path, CLUSTER, "default/web"))[node]
    assert (verdict["point"], verdict["plugin"], verdict["code"]) == (point, plugin, code)
    assert verdict["reasons"] == reasons
    assert verdict["feasible"] is (code == "Success")


def test_bound_pods_take_room(tmp_path: Path) -> None:
    """A bound pod's requests count on its node: 6 of 8 cpu taken leaves no room for 3."""
    docs = [*CLUSTER, make_pod("wide", cpu="3")]
    verdict = _by_node(_explain(tmp_path, docs, "default/wide"))["busy"]
    assert (verdict["plugin"], verdict["code"]) == ("NodeResourcesFit", "Unschedulable")
    assert verdict["reasons"] == ["Insufficient cpu"]


def test_totals_are_weighted_sums_ordered_as_the_full_pass_picks(tmp_path: Path) -> None:
    """Feasible nodes come first, by total; each total is the sum of its weighted scores,
    weighted = normalized x weight; the first is the node simulate's full pass chooses."""
    report = _explain(tmp_path, CLUSTER, "default/web")
    feasible = [node for node in report["nodes"] if node["feasible"]]
    assert [node["node"] for node in feasible] != []
    assert report["feasible"] == len(feasible) == 3
    for node in feasible:
        assert node["scores"], node["node"]
        assert node["total"] == sum(score["weighted"] for score in node["scores"])
        for score in node["scores"]:
            assert score["weighted"] == score["normalized"] * score["weight"]
    totals = [node["total"] for node in feasible]
    assert totals == sorted(totals, reverse=True)
    assert totals[0] > totals[1], "the cluster is meant to have no tie at the top"
    assert all(node["total"] is None for node in report["nodes"][len(feasible) :])
    names = {p.scheduler_name for p in default_config().profiles}
    docs: list[object] = list(CLUSTER)
    placed = simulate(snapshot_from_documents(docs, names), default_config(), mode=BatchingMode.OFF)
    (placement,) = placed["placements"]
    assert report["best"] == [feasible[0]["node"]] == [placement["node"]]


def test_normalize_score_shows_beside_raw(tmp_path: Path) -> None:
    """TaintToleration's NormalizeScore turns a raw 0 (no PreferNoSchedule taint) into 100."""
    report = _explain(tmp_path, CLUSTER, "default/web")
    scores = {s["plugin"]: s for s in _by_node(report)["big"]["scores"]}
    assert scores["TaintToleration"] == {
        "plugin": "TaintToleration",
        "raw": 0,
        "normalized": 100,
        "weight": 3,
        "weighted": 300,
    }


def test_pre_filter_rejection_is_every_nodes_verdict(tmp_path: Path) -> None:
    """A PreFilter rejection is each node's verdict, and kube's FailedScheduling message."""
    conflicting = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {
                        "matchFields": [
                            {"key": "metadata.name", "operator": "In", "values": ["big"]},
                            {"key": "metadata.name", "operator": "In", "values": ["small"]},
                        ]
                    }
                ]
            }
        }
    }
    docs = [*CLUSTER, make_pod("nowhere", affinity=conflicting)]
    report = _explain(tmp_path, docs, "default/nowhere")
    assert report["feasible"] == 0
    assert report["pre_filter"]["plugin"] == "NodeAffinity"
    assert {(n["point"], n["plugin"]) for n in report["nodes"]} == {("PreFilter", "NodeAffinity")}
    assert len(report["nodes"]) == 5
    assert report["fit_error"].startswith("0/5 nodes are available: ")


def test_nodes_outside_the_pre_filter_result_name_the_plugin(tmp_path: Path) -> None:
    """NodeAffinity's PreFilter narrows to the named node: the others carry kube's absent
    nodes status, not a Filter verdict."""
    pinned = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["big"]}]}
                ]
            }
        }
    }
    report = _explain(tmp_path, [*CLUSTER, make_pod("pinned", affinity=pinned)], "default/pinned")
    nodes = _by_node(report)
    assert report["pre_filter"]["narrowed_by"] == ["NodeAffinity"]
    assert nodes["big"]["feasible"]
    assert nodes["medium"]["point"] == "PreFilter"
    assert nodes["medium"]["reasons"] == ["node(s) didn't satisfy plugin(s) [NodeAffinity]"]
    assert "one feasible node: a full pass takes it without scoring" in report["notes"]


def test_nominated_pods_take_room_in_filter(tmp_path: Path) -> None:
    """A higher-priority pod nominated to a node keeps its room there, as in a full pass."""
    nominated = make_pod("preemptor", cpu="15", priority=1000)
    nominated["status"]["nominatedNodeName"] = "big"
    report = _explain(tmp_path, [*CLUSTER, nominated], "default/web")
    assert _by_node(report)["big"]["reasons"] == ["Insufficient cpu"]
    assert report["nominated_pods"] == {"big": ["default/preemptor"]}


SPREAD = [{"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule"}]
ANTI = {
    "podAntiAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {"matchLabels": {"app": "x"}}, "topologyKey": ZONE}
        ]
    }
}


@pytest.mark.parametrize(
    ("pod", "mode", "signable", "refused_by", "if_opted_in"),
    [
        pytest.param(
            make_pod("p", cpu="1"), BatchingMode.ALL, True, None, None, id="plain-pod-signs"
        ),
        pytest.param(
            make_pod("p", cpu="1", labels={"app": "x"}, topology_spread=SPREAD),
            BatchingMode.ALL,
            True,
            None,
            None,
            id="topology-spread-signs-exact",
        ),
        pytest.param(
            make_pod("p", cpu="1", labels={"app": "x"}, affinity=ANTI),
            BatchingMode.ALL,
            True,
            None,
            None,
            id="anti-affinity-signs-exact",
        ),
        pytest.param(
            make_pod("p", cpu="1"),
            BatchingMode.ANNOTATED,
            False,
            "OptedOut",
            {"signable": True, "path": "hint", "refused_by": None, "reason": None},
            id="not-annotated-would-sign-if-opted-in",
        ),
        pytest.param(
            make_pod("p", cpu="1", labels={"app": "x"}, topology_spread=SPREAD),
            BatchingMode.ANNOTATED,
            False,
            "OptedOut",
            {"signable": True, "path": "exact", "refused_by": None, "reason": None},
            id="not-annotated-spread-would-sign-exact",
        ),
    ],
)
def test_signability_names_the_refusing_plugin(
    tmp_path: Path,
    pod: dict[str, Any],
    mode: BatchingMode,
    signable: bool,
    refused_by: str | None,
    if_opted_in: dict[str, Any] | None,
) -> None:
    """The profile's Signer decides; a refusal names the plugin (or the pod-level rule)."""
    batching = _explain(tmp_path, [*CLUSTER, pod], "default/p", mode=mode)["batching"]
    assert batching["mode"] == str(mode)
    assert (batching["signable"], batching["refused_by"]) == (signable, refused_by)
    assert (batching["reason"] is None) is signable
    assert batching["if_opted_in"] == if_opted_in


def test_table_fits_100_columns_and_names_plugins(tmp_path: Path) -> None:
    """The table uses kube's words and stays within 100 columns."""
    table = explain_render.render_table(_explain(tmp_path, CLUSTER, "default/web"))
    assert "TaintToleration" in table
    assert "Insufficient cpu" in table
    assert "NORMALIZED" in table
    assert "WEIGHTED" in table
    assert max(len(line) for line in table.splitlines()) <= 100


def test_json_keys_are_documented(tmp_path: Path) -> None:
    """Every key the module docstring documents is present, and no other."""
    report = _explain(tmp_path, CLUSTER, "default/web")
    assert list(report) == [
        "pod",
        "profile",
        "num_nodes",
        "feasible",
        "best",
        "pre_filter",
        "nodes",
        "nominated_pods",
        "fit_error",
        "batching",
        "gated",
        "binding_points",
        "group",
        "omitted",
        "notes",
    ]
    assert set(report["nodes"][0]) == {
        "node",
        "feasible",
        "point",
        "plugin",
        "code",
        "reasons",
        "details",
        "total",
        "scores",
    }
    assert set(report["batching"]) == {
        "mode",
        "signable",
        "path",
        "refused_by",
        "reason",
        "if_opted_in",
    }


# Four feasible nodes of different sizes; six rejected for three reasons, by name:
# cordoned-1 (unschedulable), full-1..3 (Insufficient cpu), tainted-1..2 (taint).
TOP_CLUSTER: list[dict[str, Any]] = [
    *(make_node(f"fit-{cpu}", cpu=str(cpu)) for cpu in (4, 8, 16, 32)),
    *(make_node(f"full-{i}", cpu="1") for i in (1, 2, 3)),
    *(make_node(f"tainted-{i}", cpu="8", taints=[taint("dedicated", "gpu")]) for i in (1, 2)),
    {**make_node("cordoned-1", cpu="8"), "spec": {"unschedulable": True}},
    make_pod("web", cpu="2"),
]


@pytest.mark.parametrize(
    ("top", "shown", "omitted"),
    [
        pytest.param(1, ["fit-32", "cordoned-1"], 8, id="top-1-best-node-and-one-rejected-node"),
        pytest.param(
            2,
            ["fit-32", "fit-16", "cordoned-1", "full-1"],
            6,
            id="top-2-two-rejected-nodes-for-two-different-reasons",
        ),
        pytest.param(
            4,
            ["fit-32", "fit-16", "fit-8", "fit-4", "cordoned-1", "full-1", "full-2", "tainted-1"],
            2,
            id="top-4-every-reason-first-then-the-next-by-name",
        ),
        pytest.param(
            10,
            [
                "fit-32",
                "fit-16",
                "fit-8",
                "fit-4",
                "cordoned-1",
                "full-1",
                "full-2",
                "full-3",
                "tainted-1",
                "tainted-2",
            ],
            0,
            id="top-beyond-the-cluster-shows-every-node",
        ),
    ],
)
def test_top_shows_the_best_nodes_and_a_rejected_node_per_reason(
    tmp_path: Path, top: int, shown: list[str], omitted: int
) -> None:
    """--top N: the N best-scored nodes, then up to N rejected ones, one for each distinct
    reason before a second of any (in node-name order), as the help says."""
    report = explain.select(_explain(tmp_path, TOP_CLUSTER, "default/web"), top=top)
    assert [node["node"] for node in report["nodes"]] == shown
    assert report["omitted"] == omitted
    assert (report["num_nodes"], report["feasible"], report["best"]) == (10, 4, ["fit-32"])


def test_top_help_says_what_top_does(capsys: pytest.CaptureFixture[str]) -> None:
    """The help of --top names both halves of what it keeps."""
    with pytest.raises(SystemExit):
        main(["explain", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert "only the N best-scored nodes, and up to N rejected ones" in help_text


def test_node_without_the_best_row_keeps_the_headline(tmp_path: Path) -> None:
    """--node of a rejected node: the headline still names the best node (its total is in
    a row not shown), and the table has that node alone."""
    report = explain.select(_explain(tmp_path, TOP_CLUSTER, "default/web"), node="full-2")
    lines = explain_render.render_table(report).splitlines()
    assert lines[0] == "Pod default/web (profile batch-scheduler): 4/10 nodes feasible, best fit-32"
    assert [
        line.split()[0] for line in lines if line.startswith(("fit", "full", "tai", "cor"))
    ] == ["full-2"]
    assert "(9 more nodes not shown: --top, --node)" in lines


@pytest.mark.parametrize(
    ("args", "message"),
    [
        pytest.param(
            ["default/absent"], "pod default/absent is not in the snapshot", id="not-found"
        ),
        pytest.param(
            ["default/db"], "pod default/db is already bound to node busy", id="already-bound"
        ),
        pytest.param(
            ["default/theirs"],
            "pod default/theirs has schedulerName 'default-scheduler', which no profile serves",
            id="another-scheduler",
        ),
        pytest.param(["web"], "pod: expected namespace/name, got 'web'", id="not-namespaced"),
        pytest.param(
            ["default/web", "--profile", "nope"],
            "--profile: no profile is named 'nope'",
            id="unknown-profile",
        ),
    ],
)
def test_errors_exit_2_with_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    """A pod that cannot be explained: exit 2, one line naming it, no traceback."""
    docs = [*CLUSTER, make_pod("theirs", scheduler_name="default-scheduler")]
    with pytest.raises(SystemExit) as exited:
        main(["explain", str(_write(tmp_path, docs)), *args])
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert message in err
    assert err.count("\n") == 1


def test_another_schedulers_pod_explained_under_a_named_profile(tmp_path: Path) -> None:
    """--profile explains a pod of another scheduler, and says so."""
    docs = [*CLUSTER, make_pod("theirs", cpu="2", scheduler_name="default-scheduler")]
    report = _explain(tmp_path, docs, "default/theirs", profile="batch-scheduler")
    assert report["profile"] == "batch-scheduler"
    assert report["feasible"] == 3
    assert any("schedulerName is default-scheduler" in note for note in report["notes"])


def test_bad_object_exits_2_naming_object_and_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A malformed pod in the snapshot is named with its document and field."""
    docs = [*CLUSTER, make_pod("broken", cpu="lots")]
    with pytest.raises(SystemExit) as exited:
        main(["explain", str(_write(tmp_path, docs)), "default/web"])
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert "document 7: Pod default/broken: spec.containers[0].resources.requests.cpu" in err
    assert "Traceback" not in err
