"""The scheduler SIGKILLed in the middle of a 2000-pod burst, then restarted."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

from scheduler.kube.binder import BinderOptions
from tests.cluster.conftest import (
    assert_no_forbidden,
    bound_once,
    create_many,
    placements,
    pod,
    start_scheduler,
)
from tests.scheduler_process import BATCHING, wait_for

if TYPE_CHECKING:
    from pathlib import Path

    import kubernetes

    from controlplane.launcher import ControlPlane

BURST = 2000


def _bound(core: kubernetes.client.CoreV1Api, namespace: str) -> int:
    return sum(1 for node in placements(core, namespace).values() if node)


def test_every_pod_bound_exactly_once_across_a_sigkill(
    control_plane: ControlPlane,
    core: kubernetes.client.CoreV1Api,
    namespace: str,
    nodes: list[str],
    tmp_path: Path,
) -> None:
    first = start_scheduler(control_plane, tmp_path / "first.log", "--batching", "all")
    pods = [pod(f"burst-{i}", cpu="10m", annotations=BATCHING) for i in range(BURST)]
    creator = threading.Thread(target=create_many, args=(core, namespace, pods))
    creator.start()
    second = None
    try:
        # Kill once a share of the burst is bound: binds are in flight, the queue is full.
        assert wait_for(lambda: _bound(core, namespace) >= BURST // 4, 120, 0.2)
        first.kill()
        second = start_scheduler(control_plane, tmp_path / "second.log", "--batching", "all")
        creator.join(120)
        assert not creator.is_alive()
        assert wait_for(lambda: _bound(core, namespace) == BURST, 180, 0.5), _bound(core, namespace)
        counts = bound_once([first, second])
        twice = {k: n for k, n in counts.items() if n > 1}
        assert not twice, twice
        # A bind that reached the API server in the instant of the kill was never logged:
        # at most the binds in flight (the binder's default concurrency, which `run` uses at
        # the default parallelism). Every other pod has exactly one line.
        in_flight = BinderOptions().concurrency
        assert BURST - len(counts) <= in_flight, (BURST - len(counts), in_flight)
    finally:
        creator.join(120)
        first.terminate()
        if second is not None:
            assert second.terminate() == 0
    assert second is not None
    assert "Traceback" not in second.stderr()
    assert_no_forbidden(second)
