"""The real ``run`` path against kube-apiserver v1.37 with the example package's plugins
(examples/plugins), registered by their installed entry points and enabled by --config:
DrainGuard keeps pods off a draining node, PreferLabeled draws them to a preferred one."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from tests.cluster.conftest import assert_no_forbidden, placements, pod, start_scheduler
from tests.example_plugins import CONFIG, config_and_log
from tests.scheduler_process import wait_for

if TYPE_CHECKING:
    from collections.abc import Iterator

    import kubernetes

    from controlplane.launcher import ControlPlane
    from tests.scheduler_process import SchedulerProc

DRAINING = "example.io/draining"
PREFERRED = "example.io/preferred"


@pytest.fixture(scope="module")
def labelled(core: kubernetes.client.CoreV1Api, nodes: list[str]) -> Iterator[tuple[str, str]]:
    """(draining, preferred) among the session's shared nodes; the labels are removed after."""
    draining, preferred = nodes[0], nodes[1]
    core.patch_node(draining, {"metadata": {"labels": {DRAINING: "true"}}})
    core.patch_node(preferred, {"metadata": {"labels": {PREFERRED: "yes"}}})
    try:
        yield draining, preferred
    finally:
        core.patch_node(draining, {"metadata": {"labels": {DRAINING: None}}})
        core.patch_node(preferred, {"metadata": {"labels": {PREFERRED: None}}})


@pytest.fixture(scope="module")
def plugged(
    control_plane: ControlPlane,
    labelled: tuple[str, str],
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[SchedulerProc]:
    config, log = config_and_log(tmp_path_factory, CONFIG)
    proc = start_scheduler(control_plane, log, "--config", str(config))
    try:
        yield proc
    finally:
        code = proc.terminate()
    proc.assert_clean_exit(code)
    assert_no_forbidden(proc)


def test_entry_point_plugins_decide_on_the_real_api_server(
    core: kubernetes.client.CoreV1Api,
    plugged: SchedulerProc,
    namespace: str,
    labelled: tuple[str, str],
) -> None:
    draining, preferred = labelled
    names = [f"plug-{i}" for i in range(3)]
    for name in names:
        body = pod(name)
        body["metadata"]["namespace"] = namespace
        core.create_namespaced_pod(namespace, body)

    def bound() -> bool:
        seen = placements(core, namespace)
        return all(seen.get(name) for name in names)

    assert wait_for(bound, 30), placements(core, namespace)
    seen = placements(core, namespace)
    assert seen == dict.fromkeys(names, preferred)
    assert draining not in seen.values()
