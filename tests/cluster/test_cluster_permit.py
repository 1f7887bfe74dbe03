"""The real ``run`` path against kube-apiserver v1.37 with the example package's Gang plugin
(a Permit plugin, registered by its installed entry point, enabled by --config): a gang's
pods are bound only once the gang is complete; an incomplete gang's pod is rejected when its
wait times out, with kube's message in its FailedScheduling event."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

import pytest

from tests.cluster.conftest import assert_no_forbidden, placements, pod, start_scheduler
from tests.e2e.test_e2e_permit import GANG_CONFIG, TIMEOUT_SECONDS
from tests.example_plugins import config_and_log
from tests.scheduler_process import wait_for

if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any

    import kubernetes

    from controlplane.launcher import ControlPlane
    from tests.scheduler_process import SchedulerProc


@pytest.fixture(scope="module")
def gang_scheduler(
    control_plane: ControlPlane, nodes: list[str], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[SchedulerProc]:
    """``run`` with Gang, once the session's shared nodes exist."""
    config, log = config_and_log(tmp_path_factory, GANG_CONFIG)
    proc = start_scheduler(control_plane, log, "--config", str(config))
    try:
        yield proc
    finally:
        code = proc.terminate()
    proc.assert_clean_exit(code)
    assert_no_forbidden(proc)


def _member(name: str, namespace: str, gang: str, size: int) -> dict[str, Any]:
    body = pod(name)
    meta = body["metadata"]
    meta["namespace"] = namespace
    meta.setdefault("labels", {})["example.io/gang"] = gang
    meta.setdefault("annotations", {})["example.io/gang-size"] = str(size)
    return body


def test_a_gang_is_bound_only_once_complete(
    core: kubernetes.client.CoreV1Api, gang_scheduler: SchedulerProc, namespace: str
) -> None:
    core.create_namespaced_pod(namespace, _member("gang-a-0", namespace, "a", 2))
    assert wait_for(lambda: '"pod_waiting_on_permit"' in gang_scheduler.stderr(), timeout=30.0)
    time.sleep(1.0)  # held: not bound while it waits for the second member
    assert not placements(core, namespace).get("gang-a-0")
    core.create_namespaced_pod(namespace, _member("gang-a-1", namespace, "a", 2))

    def bound() -> bool:
        seen = placements(core, namespace)
        return bool(seen.get("gang-a-0") and seen.get("gang-a-1"))

    assert wait_for(bound, 30), placements(core, namespace)


def test_an_incomplete_gang_times_out_with_kubes_message(
    core: kubernetes.client.CoreV1Api, gang_scheduler: SchedulerProc, namespace: str
) -> None:
    core.create_namespaced_pod(namespace, _member("gang-b-0", namespace, "b", 3))
    expected = (
        f"0/1 nodes are available: 1 rejected due to timeout after waiting "
        f"{TIMEOUT_SECONDS}s at plugin Gang."
    )

    def rejected() -> bool:
        events = core.list_namespaced_event(namespace).items
        return any(
            e.involved_object.name == "gang-b-0"
            and e.reason == "FailedScheduling"
            and e.message == expected
            for e in events
        )

    assert wait_for(rejected, TIMEOUT_SECONDS + 30), [
        e.message for e in core.list_namespaced_event(namespace).items
    ]
    assert not placements(core, namespace).get("gang-b-0")
