"""A pod woken while it backs off, side by side with kube-scheduler v1.37.2 on the real
kube-apiserver: both schedulers with a 30 s pod backoff, a pod that does not fit until a
blocker is deleted. The deletion moves it to the backoff, 30 s from its failure; with
nothing else to do each scheduler pops it from there at once (kube's
SchedulerPopFromBackoffQ, on by default since v1.33), so it is bound in seconds on both
sides, not after the backoff."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

import pytest

from controlplane.processes import missing_binaries
from tests.cluster.gang_sides import Case, GangCluster
from tests.scheduler_process import wait_for

if TYPE_CHECKING:
    from collections.abc import Iterator

    from tests.cluster.gang_sides import Side

BACKOFF = 30


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[GangCluster]:
    reason = missing_binaries()
    if reason:
        pytest.skip(f"cluster tier skipped: {reason}")
    with GangCluster.start(tmp_path_factory.mktemp("backoff"), backoff=BACKOFF) as started:
        yield started


def test_a_woken_pod_is_popped_before_its_backoff_ends(cluster: GangCluster) -> None:
    """Bound within 10 s of the blocker's deletion on both sides (the backoff is 30 s)."""
    with Case.open(cluster) as case:
        case.nodes(1, "4")

        def script(side: Side) -> float | None:
            side.pod("blocker", cpu="3")
            assert wait_for(lambda: side.bound() == {"blocker"}, 30), side.name
            side.pod("waiting", cpu="2")
            assert wait_for(
                lambda: (
                    side.pod_state(side.pods()["waiting"])[0:2]
                    == (
                        "pending",
                        "Unschedulable",
                    )
                ),
                30,
            ), side.name
            deleted = time.monotonic()
            side.delete_pods(["blocker"])
            if not wait_for(lambda: side.bound() == {"waiting"}, BACKOFF - 10):
                return None
            return time.monotonic() - deleted

        kube, ours = case.run(script)
    assert kube is not None, "kube-scheduler waited for the backoff"
    assert ours is not None, "ours waited for the backoff"
    assert kube < 10, kube
    assert ours < 10, ours
