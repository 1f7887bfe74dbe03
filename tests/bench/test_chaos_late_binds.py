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


def _dropped(node: str, at: str, on_wire: list[str]) -> str:
    return json.dumps(
        {"event": "node_deleted", "node": node, "binds_on_wire": on_wire, "timestamp": at}
    )


def _write(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines) + "\n")
    return path


def test_only_binds_started_after_the_drop_count(tmp_path: Path) -> None:
    log = _write(
        tmp_path / "ours-1.log",
        [
            "not json: a traceback line",
            _dropped("n1", "2026-12-07T20:20:14.100000Z", ["chaos/on-wire"]),
            _dropped("n3", "2026-12-07T20:20:14.100000Z", []),  # unreadable, not deleted
        ],
    )
    audit = _write(
        tmp_path / "audit.log",
        [
            _bind("before", "n1", "2026-12-07T20:20:14.073000Z"),  # sent before the drop
            _bind("on-wire", "n1", "2026-12-07T20:20:14.100500Z"),  # named on the wire
            _bind("late", "n1", "2026-12-07T20:20:14.200000Z"),  # started after: ours' bug
            _bind("refused", "n1", "2026-12-07T20:20:14.300000Z", code=409),
            _bind("other", "n3", "2026-12-07T20:20:14.400000Z"),  # n3 not deleted
        ],
    )
    figures = late_binds([log], audit, ["n1", "n2"])
    assert figures == {
        "binds_after_deletion_seen": 1,
        "binds_after_deletion_seen_sample": ["chaos/late on n1"],
        "binds_on_wire_at_deletion": 1,
        "nodes_not_seen_deleted": 1,  # n2: the cache never dropped it
    }
    assert report.violations({**figures, "on_deleted_nodes": 3}) == [
        "binds_after_deletion_seen=1",
        "nodes_not_seen_deleted=1",
    ]


def test_replicas_lines_merge_leniently(tmp_path: Path) -> None:
    """The last replica's drop and every pod any line names; audit and log times in either
    RFC 3339 form (``Z`` or ``+00:00``, with or without a fraction)."""
    leader = _write(tmp_path / "ours-1.log", [_dropped("n1", "2026-12-07T20:20:14Z", ["chaos/a"])])
    standby = _write(
        tmp_path / "ours-2.log", [_dropped("n1", "2026-12-07T20:20:15.000000+00:00", [])]
    )
    audit = _write(
        tmp_path / "audit.log",
        [
            _bind("a", "n1", "2026-12-07T20:20:15.500000Z"),  # named by the leader
            _bind("b", "n1", "2026-12-07T20:20:14.500000Z"),  # before the standby's drop
            _bind("c", "n1", "2026-12-07T20:20:16Z"),
        ],
    )
    figures = late_binds([leader, standby], audit, ["n1"])
    assert figures["binds_after_deletion_seen_sample"] == ["chaos/c on n1"]


def test_without_an_audit_log_the_invariant_is_unmeasured(tmp_path: Path) -> None:
    log = _write(tmp_path / "ours-1.log", [_dropped("n1", "2026-12-07T20:20:14Z", [])])
    figures = late_binds([log], tmp_path / "audit.log", ["n1"])
    assert figures["binds_after_deletion_seen"] is None
    assert report.violations(figures) == ["binds_after_deletion_seen=None"]
    assert late_binds([tmp_path / "missing.log"], tmp_path / "audit.log", []) == {
        "binds_after_deletion_seen": 0,
        "binds_on_wire_at_deletion": 0,
        "nodes_not_seen_deleted": 0,
    }
