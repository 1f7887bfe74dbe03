"""Differential decisions, a seeded sample: the same 50 pending pods, one at a time, with
kube-scheduler v1.37.2 and with ours on the real API server (``bench.parity``, issue 15).

Per pod both must agree on scheduled or not, on the node (ours one of kube's tied best nodes,
read from kube's ``-v=10`` score lines) and on the ``PodScheduled`` message. Its own control
plane without kube-controller-manager (nothing else writes pods, nodes stay API objects).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

import pytest

from bench import parity, parity_cases
from controlplane.launcher import ControlPlane
from controlplane.processes import missing_binaries

if TYPE_CHECKING:
    from collections.abc import Iterator

SEED = 3
PENDING = 50


@pytest.fixture(scope="module")
def rows(tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[dict[str, Any]]]:
    reason = missing_binaries()
    if reason:
        if os.environ.get("BATCH_SCHEDULER_REQUIRE_CLUSTER"):
            pytest.fail(f"cluster tier required but {reason}")
        pytest.skip(f"cluster tier skipped: {reason}")
    workdir = tmp_path_factory.mktemp("parity")
    with ControlPlane.start(workdir / "cp", controller_manager=False) as cp:
        yield parity.run_seeds(
            cp, workdir, [SEED], nodes=16, running=24, pending=PENDING, log=lambda _: None
        )


def test_sample_covers_every_family_and_both_outcomes(rows: list[dict[str, Any]]) -> None:
    """The sample is worth asserting on: every family, bound and unscheduled pods."""
    assert len(rows) == PENDING
    seen = {family for row in rows for family in row["families"]}
    assert seen == set(parity_cases.FAMILIES)
    unscheduled = [row for row in rows if row["kube_bound"] is None]
    assert 0 < len(unscheduled) < PENDING
    assert all(str(row["kube"]).startswith("0/16 nodes are available") for row in unscheduled)


@pytest.mark.parametrize("family", parity_cases.FAMILIES)
def test_family_agrees_with_kube_scheduler(rows: list[dict[str, Any]], family: str) -> None:
    """Scheduled or not, the node (within kube's ties) and the message, for every pod."""
    differ = [
        {k: row[k] for k in ("pod", "verdict", "kube", "ours", "kube_tied_best", "why")}
        for row in rows
        if family in row["families"] and row["verdict"] != "agree"
    ]
    assert not differ, differ
