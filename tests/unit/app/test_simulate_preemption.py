"""simulate with DefaultPreemption: victims leave the simulated cluster, the preemptor is
placed on its nominated node in the same run, PodDisruptionBudgets steer the choice."""

from __future__ import annotations

from typing import Any

from scheduler.app.simulate import _Evictor, _final, render_table, simulate
from scheduler.app.snapshot_file import snapshot_from_documents
from scheduler.batching.signature import BatchingMode
from scheduler.framework.config import default_config
from scheduler.model.parse import pod_from_raw
from tests.builders import make_node, make_pod

Raw = dict[str, Any]
OURS = {"batch-scheduler"}


def _running(name: str, node: str, cpu: str, priority: int, started: str, **kw: Any) -> Raw:
    raw = make_pod(name, cpu=cpu, node_name=node, priority=priority, phase="Running", **kw)
    raw["status"]["startTime"] = started
    return raw


def _pdb(name: str, labels: dict[str, str], allowed: int) -> Raw:
    return {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"minAvailable": 1, "selector": {"matchLabels": labels}},
        "status": {"disruptionsAllowed": allowed},
    }


def _run(docs: list[Raw], mode: BatchingMode = BatchingMode.ALL) -> dict[str, Any]:
    return simulate(snapshot_from_documents(docs, OURS), default_config(), mode=mode)


def full_cluster() -> list[Raw]:
    """Three 4-cpu nodes full of lower-priority pods: n0 four 1-cpu pods of priority 1, n1
    two 2-cpu pods of priority 0 (n1-b the younger), n2 four 1-cpu pods of priority 0."""
    docs: list[Raw] = [make_node(f"n{i}", cpu="4") for i in range(3)]
    docs += [_running(f"n0-{i}", "n0", "1", 1, "2026-01-01T00:00:00Z") for i in range(4)]
    docs.append(_running("n1-a", "n1", "2", 0, "2026-01-01T00:00:00Z"))
    docs.append(_running("n1-b", "n1", "2", 0, "2026-01-02T00:00:00Z"))
    docs += [_running(f"n2-{i}", "n2", "1", 0, "2026-01-01T00:00:00Z") for i in range(4)]
    return docs


def test_high_priority_pod_preempts_the_minimal_victims_and_is_scheduled() -> None:
    """kube's order: n0's victims have priority 1, so n0 loses; n1 and n2 both offer priority
    0, n1 with one victim (the smaller sum); of n1's equal pods the younger goes."""
    docs = [*full_cluster(), make_pod("high", cpu="2", priority=100)]
    for mode in (BatchingMode.OFF, BatchingMode.ALL):
        report = _run(docs, mode)
        assert report["placements"] == [
            {
                "pod": "default/high",
                "node": "n1",
                "reason": None,
                "gated": False,
                "held_by": None,
                "nominated_node": "n1",
                "victims": ["default/n1-b"],
                "pod_group": None,
            }
        ]
        summary = report["summary"]
        assert (summary["scheduled"], summary["unschedulable"], summary["preempted"]) == (1, 0, 1)


def test_a_lower_pod_does_not_take_the_victims_room() -> None:
    """The nominated node's freed cpu is held for the preemptor: a pod of lower priority
    that is retried with it stays unschedulable (it may not preempt the preemptor)."""
    docs = [
        *full_cluster(),
        make_pod("high", cpu="2", priority=100),
        make_pod("low", cpu="2", priority=0),
    ]
    rows = {p["pod"]: p for p in _run(docs)["placements"]}
    assert rows["default/high"]["node"] == "n1"
    assert rows["default/low"]["node"] is None
    assert rows["default/low"]["victims"] == []


def test_preemption_policy_never_evicts_nothing() -> None:
    raw = make_pod("polite", cpu="2", priority=100)
    raw["spec"]["preemptionPolicy"] = "Never"
    report = _run([*full_cluster(), raw])
    (row,) = report["placements"]
    assert (row["node"], row["nominated_node"], row["victims"]) == (None, None, [])
    assert row["reason"].endswith(" preemption: not eligible due to preemptionPolicy=Never.")
    assert report["summary"]["preempted"] == 0


def _two_equal_nodes() -> list[Raw]:
    """n0 and n1 each full with one 2-cpu pod of priority 0; n0's started later, so kube's
    last tie-break (latest start among the victims) prefers n0."""
    return [
        make_node("n0", cpu="2"),
        make_node("n1", cpu="2"),
        _run_pod("guarded", "n0", "2026-01-02T00:00:00Z", labels={"app": "guarded"}),
        _run_pod("free", "n1", "2026-01-01T00:00:00Z", labels={"app": "free"}),
        make_pod("high", cpu="2", priority=100),
    ]


def _run_pod(name: str, node: str, started: str, **kw: Any) -> Raw:
    return _running(name, node, "2", 0, started, **kw)


def test_a_disruption_budget_moves_the_preemption_to_another_node() -> None:
    """Without a budget n0 is chosen; a budget with no disruption left over n0's pod makes
    n0 a node with one violation, and kube prefers fewer violations first."""
    (row,) = _run(_two_equal_nodes())["placements"]
    assert (row["node"], row["victims"]) == ("n0", ["default/guarded"])
    protected = [*_two_equal_nodes(), _pdb("guard", {"app": "guarded"}, allowed=0)]
    report = _run(protected)
    (row,) = report["placements"]
    assert (row["node"], row["nominated_node"], row["victims"]) == ("n1", "n1", ["default/free"])
    assert "PodDisruptionBudget" not in report["summary"]["ignored"]
    allowing = [*_two_equal_nodes(), _pdb("guard", {"app": "guarded"}, allowed=1)]
    (row,) = _run(allowing)["placements"]
    assert row["victims"] == ["default/guarded"]


def test_a_victim_placed_earlier_in_the_run_says_who_preempted_it() -> None:
    evictor = _Evictor()
    victim = pod_from_raw(make_pod("mid", cpu="1"))
    evictor.preempt(pod_from_raw(make_pod("high", cpu="1")), "n1", [victim])
    row = _final({"pod": "default/mid", "node": "n1", "reason": None}, evictor)
    assert row == {
        "pod": "default/mid",
        "node": None,
        "reason": "preempted by default/high on node n1",
        "gated": False,
        "held_by": None,
        "nominated_node": None,
        "victims": [],
    }


def test_the_table_names_the_victims() -> None:
    report = _run([*full_cluster(), make_pod("high", cpu="2", priority=100)])
    table = render_table(report)
    assert "preempted default/n1-b on n1" in table
    assert "preempted 1," in table
