"""Decisions a person can read: the debug line per decision and the batch's end line."""

from __future__ import annotations

import io
import json
from typing import Any

from scheduler.batching.signature import BatchingMode
from scheduler.logs import debug_enabled
from scheduler.logs.setup import configure_logging
from scheduler.model.parse import pod_from_raw
from tests.builders import make_node, make_pod
from tests.harness import drain, scheduler_for


def _lines(stream: io.StringIO, event: str) -> list[dict[str, Any]]:
    rows = [json.loads(line) for line in stream.getvalue().splitlines() if line.strip()]
    return [row for row in rows if row.get("event") == event]


def test_each_decision_says_how_its_node_was_found() -> None:
    """A full pass names the evaluated and feasible nodes and the best three by weighted
    total; the hinted pods after it name the batch and the same signature."""
    stream = io.StringIO()
    configure_logging(fmt="json", level="debug", stream=stream)
    scheduler, _, _ = scheduler_for(
        [make_node(f"n{i}", cpu="2") for i in range(4)], mode=BatchingMode.ALL
    )
    for i in range(3):  # one per node (1.5 cpu each): a full pass, then hints
        scheduler.enqueue(pod_from_raw(make_pod(f"p{i}", cpu="1500m")))
    placed = drain(scheduler)
    decided = _lines(stream, "pod_decided")
    assert [row["pod"] for row in decided] == ["default/p0", "default/p1", "default/p2"]
    first, *hinted = decided
    assert first["path"] == "full"
    assert (first["evaluated"], first["feasible"]) == (4, 4)
    assert first["node"] == placed["default/p0"]
    totals = [total for _, total in first["top"]]
    assert len(first["top"]) == 3
    assert totals == sorted(totals, reverse=True)
    assert first["top"][0][0] == first["node"]
    assert first["batch"] == 1  # the state its full pass started
    for row in hinted:
        assert row["path"] == "hint"  # each node takes one pod: no rescoring
        assert row["batch"] == 1
        assert row["signature"] == first["signature"] is not None
        assert (row["evaluated"], row["feasible"]) == (1, 1)
        assert row["node"] == placed[row["pod"]]
        assert [name for name, _ in row["top"]] == [row["node"]]
    assert len({row["cycle"] for row in decided}) == 3


def test_a_batch_that_ends_says_why_and_how_many_pods_it_placed() -> None:
    stream = io.StringIO()
    configure_logging(fmt="json", level="debug", stream=stream)
    scheduler, _, _ = scheduler_for([make_node(f"n{i}") for i in range(3)])
    scheduler.enqueue(pod_from_raw(make_pod("a", cpu="100m")))
    scheduler.enqueue(pod_from_raw(make_pod("b", cpu="100m")))
    drain(scheduler)
    scheduler.enqueue(pod_from_raw(make_pod("c", cpu="3")))  # another signature
    drain(scheduler)
    [ended] = _lines(stream, "batch_ended")
    assert ended["reason"] == "pod_incompatible"
    assert ended["batch"] == 1
    assert ended["pods"] == 2  # a (the full pass) and b (its hint)
    assert _lines(stream, "pod_decided")[1]["path"] == "rescore"  # many pods per node


def test_nothing_is_built_at_info_level() -> None:
    stream = io.StringIO()
    configure_logging(fmt="json", level="info", stream=stream)
    assert not debug_enabled()
    scheduler, _, _ = scheduler_for([make_node("n0")])
    scheduler.enqueue(pod_from_raw(make_pod("a", cpu="100m")))
    drain(scheduler)
    assert _lines(stream, "pod_decided") == []
