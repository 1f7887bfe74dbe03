"""The exact batch's scenarios (issue 28) on the real API server (``bench.e2e --api real``),
run small: every scheduler binds each burst, kube-scheduler refuses to batch these pods, and
ours places all but the first on the exact path. No timing is asserted."""

from __future__ import annotations

import os

import pytest

from bench import real
from controlplane.processes import missing_binaries

NODES = 20
SCENARIOS = ("deployment", "zone-spread", "one-per-node")


@pytest.fixture(autouse=True)
def _binaries() -> None:
    reason = missing_binaries()
    if reason:
        if os.environ.get("BATCH_SCHEDULER_REQUIRE_CLUSTER"):
            pytest.fail(f"cluster tier required but {reason}")
        pytest.skip(f"cluster tier skipped: {reason}")


async def test_ours_and_kube_bind_each_exact_scenario_and_count_their_paths() -> None:
    records = await real.run_matrix(
        ["ours-on", "kube-on"], ["default"], list(SCENARIOS), [NODES], 1, 120.0, lambda _: None
    )
    by = {(r["scenario"], r["scheduler"]): r for r in records}
    assert set(by) == {(s, k) for s in SCENARIOS for k in ("ours-on", "kube-on")}
    for (_, scheduler), record in by.items():
        assert record["bound"] == record["pods"], record
        if scheduler == "kube-on":  # spreading and pod affinity: kube signs none of them
            assert record["batch_attempts"].get("hint_used", 0) == 0, record
            assert record["exact_batch"] == {}, record
        else:  # the first pod builds the state; the rest take the exact path
            assert record["exact_batch"].get("placed", 0) == record["pods"] - 1, record
