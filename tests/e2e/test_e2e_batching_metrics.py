""" "Is batching working?" (README): the metric query the README gives counts every batched
placement — kube's hint, the rescore, and the exact path of spread pods — as the ``path``
field of the ``pod_bound`` log lines does, pod for pod, on the real ``run`` path.

The pods exist before the scheduler starts, so its initial LIST queues each workload's pods
together and they batch whatever the machine's speed.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

import pytest

from tests.builders import make_pod
from tests.scheduler_process import BATCHING, SchedulerProc, wait_for

if TYPE_CHECKING:
    from pathlib import Path

    import kubernetes

pytestmark = pytest.mark.e2e

HOST_SPREAD = {
    "maxSkew": 1,
    "topologyKey": "kubernetes.io/hostname",
    "whenUnsatisfiable": "ScheduleAnyway",
    "labelSelector": {"matchLabels": {"app": "spread"}},
}
DECISIONS = "batch_scheduler_decision_duration_seconds_count"
BATCHED_PATHS = ("hint", "rescore", "exact")
"""The README's query: sum(batch_scheduler_decision_duration_seconds_count{path!="full"})."""


def test_the_readme_query_counts_every_batched_placement(
    core: kubernetes.client.CoreV1Api, kubeconfig: Path, tmp_path: Path
) -> None:
    """Plain pods (hint), spread pods (exact) and pods not opted in (full): the query's sum
    equals the pod_bound lines whose path is not ``full``; kube's hint_used counts fewer."""
    pods = [make_pod(f"plain-{i}", cpu="100m", annotations=BATCHING) for i in range(12)]
    pods += [
        make_pod(
            f"spread-{i}",
            cpu="100m",
            labels={"app": "spread"},
            annotations=BATCHING,
            topology_spread=[HOST_SPREAD],
        )
        for i in range(9)
    ]
    pods += [make_pod(f"alone-{i}", cpu="100m") for i in range(3)]
    for pod in pods:
        core.create_namespaced_pod("default", pod)
    proc = SchedulerProc(kubeconfig, tmp_path / "scheduler.log")
    try:
        proc.wait_ready()
        bound = wait_for(lambda: len(proc.events("pod_bound")) >= len(pods), timeout=30)
        assert bound, proc.stderr()[-3000:]
        paths = Counter(str(line["path"]) for line in proc.events("pod_bound"))
        by_path = {path: proc.metric(DECISIONS, path=path) for path in (*BATCHED_PATHS, "full")}
        hint_used = proc.metric("scheduler_batch_attempts_total", result="hint_used")
    finally:
        proc.assert_clean_exit(proc.terminate())
    batched = sum(count for path, count in paths.items() if path != "full")
    assert sum(by_path[path] for path in BATCHED_PATHS) == batched
    assert by_path["full"] == paths["full"]
    assert paths["exact"] >= 1, paths  # the spread pods after the first of their group
    assert paths["full"] >= 3, paths  # the pods not opted in, and each group's first pod
    assert hint_used < batched, (hint_used, paths)  # what the README's old metric read
