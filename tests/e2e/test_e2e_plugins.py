"""``run`` against the emulator with the example package's plugins (examples/plugins),
registered by their installed entry points and enabled by the configuration file: DrainGuard
keeps pods off a draining node, PreferLabeled draws them to a preferred one; a plugin that
cannot be imported stops ``run`` with exit 2 naming its flag."""

from __future__ import annotations

import subprocess
import sys
from typing import TYPE_CHECKING

import pytest
import yaml

from tests.builders import make_pod
from tests.example_plugins import CONFIG, config_and_log, ensure_installed
from tests.scheduler_process import SchedulerProc, wait_for

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    import kubernetes

pytestmark = pytest.mark.e2e

_BAD_FLAG = ("--plugin", "no_such_module_xyz:Thing")


@pytest.fixture(scope="module")
def nodes(core: kubernetes.client.CoreV1Api) -> tuple[str, str]:
    """(draining, preferred): two of the emulator's nodes, labelled for the plugins."""
    names = sorted(n.metadata.name for n in core.list_node().items)
    draining, preferred = names[0], names[1]
    core.patch_node(draining, {"metadata": {"labels": {"example.io/draining": "true"}}})
    core.patch_node(preferred, {"metadata": {"labels": {"example.io/preferred": "yes"}}})
    return draining, preferred


@pytest.fixture(scope="module")
def plugged(
    kubeconfig: Path, tmp_path_factory: pytest.TempPathFactory, nodes: tuple[str, str]
) -> Iterator[SchedulerProc]:
    config, logs = config_and_log(tmp_path_factory, CONFIG)
    proc = SchedulerProc(kubeconfig, logs, "--config", str(config))
    try:
        proc.wait_ready()
        yield proc
    finally:
        code = proc.terminate()
    assert code == 0, proc.stderr()
    assert "Traceback" not in proc.stderr()


def test_run_schedules_with_the_entry_point_plugins(
    core: kubernetes.client.CoreV1Api, plugged: SchedulerProc, nodes: tuple[str, str]
) -> None:
    draining, preferred = nodes
    for i in range(3):
        core.create_namespaced_pod("default", make_pod(f"plug-{i}", cpu="500m"))

    def placed() -> dict[str, str] | None:
        pods = core.list_namespaced_pod("default").items
        got = {p.metadata.name: p.spec.node_name for p in pods if p.metadata.name[:5] == "plug-"}
        return got if len(got) == 3 and all(got.values()) else None

    placements = wait_for(placed, timeout=30.0)
    assert placements == {f"plug-{i}": preferred for i in range(3)}, placements
    assert draining not in placements.values()
    # PreferLabeled has no sign_pod: said once, naming it.
    assert plugged.stderr().count('"batching_disabled"') == 1
    assert "PreferLabeled" in plugged.stderr()


def test_run_refuses_a_plugin_it_cannot_import(kubeconfig: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "scheduler", "run", "--kubeconfig", str(kubeconfig), *_BAD_FLAG],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 2
    assert "--plugin 'no_such_module_xyz:Thing': cannot import no_such_module_xyz" in (
        result.stderr
    )


def test_demo_runs_with_the_entry_point_plugins(tmp_path: Path) -> None:
    """``demo --config``: the plugins are built (every pod still bound); PreferLabeled's
    missing sign_pod turns batching off, said once, where the default profile batches."""
    ensure_installed()
    config = tmp_path / "config.yaml"
    config.write_text(yaml.safe_dump(CONFIG))
    small = ("--nodes", "4", "--pods", "8", "--no-compare")  # one run: batching annotated
    plugged = _demo(*small, "--config", str(config))
    assert plugged.returncode == 0, plugged.stderr
    assert "8/8" in plugged.stdout
    assert plugged.stderr.count("batching_disabled") == 1
    assert "PreferLabeled" in plugged.stderr
    assert "0% (0/8)" in plugged.stdout  # batched share
    default = _demo(*small)
    assert default.returncode == 0, default.stderr
    assert "batching_disabled" not in default.stderr
    assert "0% (0/8)" not in default.stdout


def _demo(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "scheduler", "demo", *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
