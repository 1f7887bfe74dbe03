"""A plugin that answers the wrong type or is written ``async def``: ``simulate`` and
``explain`` give one message naming the plugin and the extension point, never a traceback.

The plugins are loaded with ``--plugin`` from this module, in a ``python -m scheduler``
subprocess, as a plugin author would try them (docs/plugins.md, "When a plugin is bad").
"""

from __future__ import annotations

import json
import subprocess
import sys
from typing import TYPE_CHECKING, Any

import pytest
import yaml

from scheduler.framework import SUCCESS, Status
from tests.builders import make_node, make_pod

if TYPE_CHECKING:
    from pathlib import Path

    from scheduler.cache.node_info import NodeInfo
    from scheduler.framework import CycleState, Handle, PluginArgs
    from scheduler.model.pod import Pod

HERE = "tests.unit.app.test_plugin_misbehaviour"


class _Plugin:
    name = ""

    def __init__(self, args: PluginArgs, handle: Handle) -> None:
        self.calls = 0

    def sign_pod(self, pod: Pod) -> tuple[str]:
        return (self.name,)


class BoolFilter(_Plugin):
    """Filter answers a bool, not a Status."""

    name = "BoolFilter"

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> bool:
        return True


class AsyncFilter(_Plugin):
    """Filter written as a coroutine function: the cycle never awaits a plugin."""

    name = "AsyncFilter"

    async def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        return SUCCESS


class LateBadNormalize(_Plugin):
    """NormalizeScore answers a Status in the full pass (its first call), an int after:
    what explain's own NormalizeScore call (framework/explanation.py) meets."""

    name = "LateBadNormalize"

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        return 5

    def normalize_score(
        self, state: CycleState, pod: Pod, nodes: list[NodeInfo], scores: list[int]
    ) -> Status | int:
        self.calls += 1
        return SUCCESS if self.calls == 1 else 3


def _files(tmp_path: Path, plugin: str) -> tuple[Path, Path]:
    """A two-node snapshot with one pending pod, and a configuration enabling ``plugin``."""
    cluster = tmp_path / "cluster.yaml"
    docs = [make_node("n1", cpu="4"), make_node("n2", cpu="8"), make_pod("web", cpu="1")]
    cluster.write_text(yaml.safe_dump_all(docs))
    config = tmp_path / "config.yaml"
    profile = {"plugins": {"multiPoint": {"enabled": [{"name": plugin}]}}}
    config.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "kubescheduler.config.k8s.io/v1",
                "kind": "KubeSchedulerConfiguration",
                "profiles": [{"schedulerName": "batch-scheduler", **profile}],
            }
        )
    )
    return cluster, config


def _cli(
    tmp_path: Path, command: str, plugin: str, *extra: str
) -> subprocess.CompletedProcess[str]:
    cluster, config = _files(tmp_path, plugin)
    pod = ["default/web"] if command == "explain" else []
    flags = ["--config", str(config), "--plugin", f"{HERE}:{plugin}", "--output", "json"]
    return subprocess.run(
        [sys.executable, "-m", "scheduler", command, str(cluster), *pod, *flags, *extra],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


BOOL_MESSAGE = "plugin 'BoolFilter' Filter returned bool, not a Status"


@pytest.mark.parametrize("command", ["simulate", "explain"])
def test_a_filter_returning_a_bool_is_one_error_naming_plugin_and_point(
    tmp_path: Path, command: str
) -> None:
    """The pod is not placed; its reason (simulate) or FailedScheduling message (explain) is
    the one Error message, as run's FailedScheduling Event would be; no traceback."""
    result = _cli(tmp_path, command, "BoolFilter")
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    report: dict[str, Any] = json.loads(result.stdout)
    if command == "simulate":
        (row,) = report["placements"]
        assert (row["node"], row["reason"]) == (None, BOOL_MESSAGE)
        # the cycle's one warning line per failed attempt, nothing more
        assert all("scheduling_error" in line for line in result.stderr.splitlines())
    else:
        assert report["fit_error"] == BOOL_MESSAGE
        assert {node["code"] for node in report["nodes"]} == {"Error"}
        assert {node["plugin"] for node in report["nodes"]} == {"BoolFilter"}
        assert result.stderr == ""


@pytest.mark.parametrize("command", ["simulate", "explain"])
def test_an_async_def_filter_is_refused_at_load_in_one_line(tmp_path: Path, command: str) -> None:
    """``async def filter``: exit 2 and one line naming the file, the plugin and the point."""
    result = _cli(tmp_path, command, "AsyncFilter")
    assert result.returncode == 2
    assert result.stdout == ""
    config = tmp_path / "config.yaml"
    assert result.stderr == (
        f"batch-scheduler: {config}: plugins[AsyncFilter]: Filter (filter) must be synchronous "
        "(def, not async def): plugins run inside the scheduling cycle, which never awaits\n"
    )


def test_explain_own_normalize_call_is_handled_as_the_full_pass_handles_it(
    tmp_path: Path,
) -> None:
    """explain calls NormalizeScore again to show each plugin's column: a wrong answer there
    is the same one Error (scoring failed, the FailedScheduling message), not a traceback."""
    result = _cli(tmp_path, "explain", "LateBadNormalize")
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    report = json.loads(result.stdout)
    message = "plugin 'LateBadNormalize' NormalizeScore returned int, not a Status"
    assert report["fit_error"] == message
    assert report["best"] == []
    assert all(node["total"] is None for node in report["nodes"])
    assert f"scoring failed (LateBadNormalize): {message}" in report["notes"]
