"""``run`` against the emulator with the example package's Gang plugin (a Permit plugin,
registered by its installed entry point and enabled by the configuration file): a pod of a
gang is bound only once the gang is complete; an incomplete gang's pod is rejected when its
wait times out, with kube's message in its FailedScheduling event."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

import pytest

from tests.builders import make_pod
from tests.example_plugins import config_and_log
from tests.scheduler_process import SchedulerProc, wait_for

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    import kubernetes

pytestmark = pytest.mark.e2e

TIMEOUT_SECONDS = 4
GANG_CONFIG = {
    "apiVersion": "kubescheduler.config.k8s.io/v1",
    "kind": "KubeSchedulerConfiguration",
    "profiles": [
        {
            "schedulerName": "batch-scheduler",
            "plugins": {"multiPoint": {"enabled": [{"name": "Gang"}]}},
            "pluginConfig": [{"name": "Gang", "args": {"timeoutSeconds": TIMEOUT_SECONDS}}],
        }
    ],
}


def member(name: str, gang: str, size: int) -> dict[str, Any]:
    return make_pod(
        name,
        cpu="100m",
        labels={"example.io/gang": gang},
        annotations={"example.io/gang-size": str(size)},
    )


@pytest.fixture(scope="module")
def gang_scheduler(
    kubeconfig: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[SchedulerProc]:
    config, logs = config_and_log(tmp_path_factory, GANG_CONFIG)
    proc = SchedulerProc(kubeconfig, logs, "--config", str(config))
    try:
        proc.wait_ready()
        yield proc
    finally:
        code = proc.terminate()
    assert code == 0, proc.stderr()
    assert "Traceback" not in proc.stderr()


def _node_of(core: kubernetes.client.CoreV1Api, name: str) -> str | None:
    node: str | None = core.read_namespaced_pod(name, "default").spec.node_name
    return node


def test_a_gang_is_bound_only_once_complete(
    core: kubernetes.client.CoreV1Api, gang_scheduler: SchedulerProc
) -> None:
    core.create_namespaced_pod("default", member("gang-a-0", "a", 2))
    assert wait_for(lambda: '"pod_waiting_on_permit"' in gang_scheduler.stderr(), timeout=15.0)
    time.sleep(1.0)  # held: not bound while it waits for the second member
    assert _node_of(core, "gang-a-0") is None
    core.create_namespaced_pod("default", member("gang-a-1", "a", 2))
    bound = wait_for(
        lambda: all(_node_of(core, f"gang-a-{i}") for i in range(2)) or None, timeout=15.0
    )
    assert bound
    assert (
        gang_scheduler.metric("scheduler_permit_wait_duration_seconds_count", result="Success") == 1
    )


def test_an_incomplete_gang_times_out_with_kubes_message(
    core: kubernetes.client.CoreV1Api, gang_scheduler: SchedulerProc
) -> None:
    core.create_namespaced_pod("default", member("gang-b-0", "b", 3))
    expected = (
        f"0/1 nodes are available: 1 rejected due to timeout after waiting "
        f"{TIMEOUT_SECONDS}s at plugin Gang."
    )

    def rejected() -> bool | None:
        events = core.list_namespaced_event("default").items
        return (
            any(
                e.involved_object.name == "gang-b-0"
                and e.reason == "FailedScheduling"
                and e.message == expected
                for e in events
            )
            or None
        )

    assert wait_for(rejected, timeout=TIMEOUT_SECONDS + 15.0)
    assert _node_of(core, "gang-b-0") is None
