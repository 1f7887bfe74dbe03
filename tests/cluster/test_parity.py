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
from controlplane.launcher import ControlPlane, missing_binaries

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


DEPARTING = {f for f, config in parity_cases.DEPARTURES.items() if config == "default"}
CLAIMED = [f for f in parity_cases.FAMILIES if f not in DEPARTING]


def claimed(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Pods without a documented departure (docs/fidelity.md)."""
    return [row for row in rows if not DEPARTING.intersection(row["families"])]


def test_sample_covers_every_family_and_both_outcomes(rows: list[dict[str, Any]]) -> None:
    """The sample is worth asserting on: every claimed family, bound and unscheduled pods."""
    assert len(rows) == PENDING
    seen = {family for row in claimed(rows) for family in row["families"]}
    assert seen == set(CLAIMED)
    unscheduled = [row for row in rows if row["kube_bound"] is None]
    assert 0 < len(unscheduled) < PENDING
    assert all(str(row["kube"]).startswith("0/16 nodes are available") for row in unscheduled)


@pytest.mark.parametrize("family", CLAIMED)
def test_family_agrees_with_kube_scheduler(rows: list[dict[str, Any]], family: str) -> None:
    """Scheduled or not, the node (within kube's ties) and the message, for every pod."""
    differ = [
        {k: row[k] for k in ("pod", "verdict", "kube", "ours", "kube_tied_best", "why")}
        for row in claimed(rows)
        if family in row["families"] and row["verdict"] != "agree"
    ]
    assert not differ, differ


def test_departures_differ_only_by_default_spreading(rows: list[dict[str, Any]]) -> None:
    """Where a Service member's node differs, every plugin score of ours equals kube's; kube
    alone has a PodTopologySpread score (its System default constraints)."""
    for row in rows:
        if not DEPARTING.intersection(row["families"]) or row["verdict"] == "agree":
            continue
        assert row["verdict"] == "node", row
        for node, both in row["why"]["nodes"].items():
            ours = {k: v for k, v in both["ours"].items() if k != "total"}
            assert {k: both["kube"][k] for k in ours} == ours, (row["pod"], node)
            assert "PodTopologySpread" in both["kube"], (row["pod"], node)
