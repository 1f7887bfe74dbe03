"""bench.chaos exits 1 when a run of ours breaks an invariant or any run fails, not when
kube-scheduler breaks one it does not guarantee (the table reports it)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

import pytest

from bench.chaos import cli
from bench.chaos import run as chaos_run

if TYPE_CHECKING:
    from pathlib import Path


@pytest.mark.parametrize(
    ("ours", "kube", "code"),
    [
        ({}, {"binds_already_bound": 46}, 0),
        ({"binds_after_deletion_seen": 1}, {}, 1),
        ({}, {"failed": "control plane: etcd did not start"}, 1),
    ],
)
async def test_exit_code(
    ours: dict[str, Any],
    kube: dict[str, Any],
    code: int,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    async def run(scenario: object, scheduler: str, **_: object) -> dict[str, Any]:
        broken = ours if scheduler == "ours" else kube
        return {
            "fault": "f",
            "scenario": "deletions",
            "scheduler": scheduler,
            "nodes": 3,
            "pods": 9,
            "lost": 0,
            **broken,
        }

    monkeypatch.setattr(chaos_run, "run", run)
    args = argparse.Namespace(out=tmp_path, nodes=3, pods=9, timeout=1.0, settle=1.0, append=False)
    assert await cli.run_all(["deletions"], ["ours", "kube"], args, []) == code
