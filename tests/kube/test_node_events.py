"""NodeEvents' deletion: the cache drops the node, and one ``node_deleted`` line names the
binds to it still on the wire (the ones that may yet land on it; bench.chaos reads it)."""

from __future__ import annotations

import pytest
import structlog

from scheduler.cycle.eventhandlers import EventHandlers
from scheduler.kube.controller.nodes import DELETED, NodeEvents
from tests.builders import make_node
from tests.harness import scheduler_for


@pytest.mark.usefixtures("debug_logs")
def test_a_deleted_node_leaves_the_cache_with_its_binds_on_wire_named() -> None:
    scheduler, _, _ = scheduler_for([])
    nodes = NodeEvents(EventHandlers(scheduler), metrics=scheduler.metrics)
    nodes.binds_on_wire = lambda name: ["ns/a", "ns/b"] if name == "node-1" else []
    raw = make_node("node-1")
    raw["metadata"]["resourceVersion"] = "7"
    nodes.apply(None, raw)
    assert scheduler.cluster.has_node("node-1")
    with structlog.testing.capture_logs() as captured:
        nodes.apply(DELETED, raw)
        nodes.apply(DELETED, make_node("node-9"))  # never known: nothing to say
    assert not scheduler.cluster.has_node("node-1")
    assert [(c["event"], c["node"], c["binds_on_wire"]) for c in captured] == [
        ("node_deleted", "node-1", ["ns/a", "ns/b"])
    ]
