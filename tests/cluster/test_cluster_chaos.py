"""bench.chaos shrunk to the cluster tier: faults on the real control plane mid-burst, each on
a fresh control plane, and the invariants after them — no pod lost, none bound a second
time elsewhere, none bound to a node by a bind that started after the cache dropped it, no
node overcommitted — for ours, and for kube-scheduler beside it where a run is cheap
(issue 37)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from bench.chaos import run as chaos_run
from bench.chaos.report import violations
from bench.chaos.scenarios import SCENARIOS

if TYPE_CHECKING:
    from pathlib import Path

NODES = 30
PODS = 200


pytestmark = pytest.mark.usefixtures("bench_prerequisites")


@pytest.mark.parametrize(
    ("scenario", "scheduler"),
    [
        ("apiserver-kill", "ours"),
        ("etcd-compact", "ours"),
        ("deletions", "ours"),
        ("deletions", "kube"),
    ],
    ids=[
        "ours through a kube-apiserver SIGKILL and restart",
        "ours through etcd compactions every 5 s (watch cache off)",
        "ours while nodes and pending pods are deleted",
        "kube-scheduler while nodes and pending pods are deleted",
    ],
)
async def test_every_pod_ends_bound_once_within_capacity(
    scenario: str, scheduler: str, tmp_path: Path
) -> None:
    """The burst's pods all end bound (but the deleted ones), none refused as bound
    elsewhere, none of ours bound by a bind that started after its cache dropped the node,
    no node over its allocatable."""
    record = await chaos_run.run(
        SCENARIOS[scenario], scheduler, nodes=NODES, pods=PODS, workdir=tmp_path, wait_s=90
    )
    broken = violations(record)
    if scheduler == "kube":
        # The reference is held to what it guarantees: kube-scheduler can decide a pod
        # twice after a lost answer; that is ours' invariant (bench.chaos reports it for
        # both). A pod bound to a deleted node (``on_deleted_nodes``) is reported, not held
        # against either: a bind on the wire, or sent before the deletion's watch event
        # arrived, lands, as kube-apiserver accepts a Binding to a deleted node. Ours is
        # held to ``binds_after_deletion_seen`` = 0 instead (bench.chaos.figures.late_binds).
        broken = [v for v in broken if not v.startswith("binds_already")]
    assert not broken, record.get("failure_detail") or record
    expected = PODS - record["deleted_pods"]
    assert record["bound"] + record["terminating"] >= expected, record
    # The audit log loses the requests in flight when kube-apiserver is SIGKILLed: binds
    # that landed may be missing from it, so it only shows that this scheduler bound.
    assert record["binds_ok"] > 0
    assert record["recovery_s"] is not None
    if scenario == "deletions":
        assert record["deleted_nodes"] == NODES // 10
        if scheduler == "ours":  # measured: its cache saw each deletion, the audit each bind
            assert record["nodes_not_seen_deleted"] == 0, record
            assert record["binds_after_deletion_seen"] == 0, record
    if scenario == "etcd-compact":
        assert record["compactions"] >= 1
