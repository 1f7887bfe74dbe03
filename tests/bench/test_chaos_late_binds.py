"""bench.chaos.figures.late_binds: a bind that landed on a deleted node counts against ours
only when it started after ours' cache had dropped the node."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from bench.chaos import report
from bench.chaos.figures import late_binds

if TYPE_CHECKING:
    from pathlib import Path


def _bind(pod: str, node: str, received: str, code: int = 201) -> str:
    return json.dumps(
        {
            "verb": "create",
            "objectRef": {
                "resource": "pods",
                "subresource": "binding",
                "namespace": "chaos",
                "name": pod,
            },
            "requestObject": {"target": {"name": node}},
            "requestReceivedTimestamp": received,
            "responseStatus": {"code": code},
        }
    )


def test_only_binds_started_after_the_drop_count(tmp_path: Path) -> None:
    log = tmp_path / "ours-1.log"
    log.write_text(
        "\n".join(
            [
                "not json: a traceback line",
                json.dumps(
                    {
                        "event": "node_deleted",
                        "node": "n1",
                        "binds_on_wire": ["chaos/on-wire"],
                        "timestamp": "2026-12-07T20:20:14.100000Z",
                    }
                ),
            ]
        )
        + "\n"
    )
    audit = tmp_path / "audit.log"
    audit.write_text(
        "\n".join(
            [
                _bind("before", "n1", "2026-12-07T20:20:14.073000Z"),  # sent before the drop
                _bind("on-wire", "n1", "2026-12-07T20:20:14.100500Z"),  # named on the wire
                _bind("late", "n1", "2026-12-07T20:20:14.200000Z"),  # started after: ours' bug
                _bind("refused", "n1", "2026-12-07T20:20:14.300000Z", code=409),
                _bind("other", "n2", "2026-12-07T20:20:14.400000Z"),  # n2 not deleted
            ]
        )
        + "\n"
    )
    figures = late_binds([log], audit)
    assert figures == {
        "binds_after_deletion_seen": 1,
        "binds_after_deletion_seen_sample": ["chaos/late on n1"],
        "binds_on_wire_at_deletion": 1,
        "nodes_seen_deleted": 1,
    }
    assert report.violations({**figures, "on_deleted_nodes": 3}) == ["binds_after_deletion_seen=1"]


def test_without_lines_or_audit_nothing_counts(tmp_path: Path) -> None:
    assert late_binds([tmp_path / "missing.log"], tmp_path / "audit.log") == {
        "binds_after_deletion_seen": 0,
        "binds_after_deletion_seen_sample": [],
        "binds_on_wire_at_deletion": 0,
        "nodes_seen_deleted": 0,
    }
