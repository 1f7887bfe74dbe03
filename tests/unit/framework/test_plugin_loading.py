"""Out-of-tree plugins: the ``batch_scheduler.plugins`` entry points of an installed package
(examples/plugins) and ``--plugin``, in simulate and explain; every way a plugin can be bad
gives one message naming where it came from."""

from __future__ import annotations

import json
import subprocess
import sys
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
import yaml

from scheduler.app import simulate
from scheduler.app.plugin_loading import ENTRY_POINT_GROUP, PluginLoadError, load_registry
from scheduler.app.snapshot_file import read_snapshot_file
from scheduler.batching.signature import BatchingMode
from scheduler.framework import SUCCESS, Status
from scheduler.framework.config import ConfigError, load_config
from tests.builders import make_node, make_pod
from tests.example_plugins import ensure_installed

if TYPE_CHECKING:
    from scheduler.cache.node_info import NodeInfo
    from scheduler.framework import CycleState, Handle, PluginArgs
    from scheduler.model.pod import Pod

HERE = "tests.unit.framework.test_plugin_loading"


@pytest.fixture(scope="module", autouse=True)
def _example_installed() -> None:
    ensure_installed()


class Raiser:
    """A Filter that raises on node ``bad`` (a plugin's bug)."""

    name = "Raiser"

    def __init__(self, args: PluginArgs, handle: Handle) -> None:
        pass

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        if node_info.name == "bad":
            raise ZeroDivisionError("division by zero")
        return SUCCESS

    def sign_pod(self, pod: Pod) -> tuple[str]:
        return ("Raiser",)


class ScoreRaiser(Raiser):
    name = "ScoreRaiser"

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        return SUCCESS

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        raise KeyError("missing")


def broken_factory(args: PluginArgs, handle: Handle) -> Raiser:
    raise RuntimeError("cannot start")


def misnamed(args: PluginArgs, handle: Handle) -> Raiser:
    return Raiser(args, handle)  # named Raiser, registered under another name


def _docs(tmp_path: Path) -> Path:
    """``draining`` is the roomiest node: without DrainGuard the pod goes there."""
    path = tmp_path / "cluster.yaml"
    docs = [
        make_node("draining", cpu="16", labels={"example.io/draining": "true"}),
        make_node("small", cpu="2"),
        make_pod("web", cpu="1"),
    ]
    for doc in docs:
        doc["metadata"].pop("uid", None)
        doc["metadata"].pop("resourceVersion", None)
    path.write_text(yaml.safe_dump_all(docs))
    return path


def _config(tmp_path: Path, *enabled: str, plugin_config: list[Any] | None = None) -> Path:
    path = tmp_path / "config.yaml"
    doc: dict[str, Any] = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [
            {
                "schedulerName": "batch-scheduler",
                "plugins": {"multiPoint": {"enabled": [{"name": n} for n in enabled]}},
                "pluginConfig": plugin_config or [],
            }
        ],
    }
    path.write_text(yaml.safe_dump(doc))
    return path


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "scheduler", *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def _placement(stdout: str) -> dict[str, Any]:
    (row,) = json.loads(stdout)["placements"]
    assert isinstance(row, dict)
    return row


def test_installed_entry_points_are_registered() -> None:
    """The example package's entry points, read from the installed metadata."""
    names = {ep.name for ep in metadata.entry_points(group=ENTRY_POINT_GROUP)}
    assert {"DrainGuard", "PreferLabeled"} <= names
    registry = load_registry()
    assert {"DrainGuard", "PreferLabeled"} <= registry.out_of_tree
    assert "NodeResourcesFit" in registry  # the in-tree ones stay


def test_simulate_with_the_entry_point_plugin(tmp_path: Path) -> None:
    """Enabled in multiPoint, DrainGuard keeps the pod off the draining node; without it the
    pod goes there (the roomiest node)."""
    cluster = _docs(tmp_path)
    without = _cli("simulate", str(cluster), "--output", "json")
    assert without.returncode == 0, without.stderr
    assert _placement(without.stdout)["node"] == "draining"
    config = _config(tmp_path, "DrainGuard")
    result = _cli("simulate", str(cluster), "--config", str(config), "--output", "json")
    assert result.returncode == 0, result.stderr
    assert _placement(result.stdout)["node"] == "small"
    assert json.loads(result.stdout)["summary"]["unsignable_plugins"] == {}


def test_plugin_config_args_reach_the_factory(tmp_path: Path) -> None:
    """DrainGuard's ``label`` arg from pluginConfig; a bad arg names pluginConfig."""
    cluster = _docs(tmp_path)
    other = [{"name": "DrainGuard", "args": {"label": "example.io/other"}}]
    config = _config(tmp_path, "DrainGuard", plugin_config=other)
    result = _cli("simulate", str(cluster), "--config", str(config), "--output", "json")
    assert _placement(result.stdout)["node"] == "draining"  # not its label
    bad = _config(tmp_path, "DrainGuard", plugin_config=[{"name": "DrainGuard", "args": {"x": 1}}])
    failed = _cli("simulate", str(cluster), "--config", str(bad))
    assert failed.returncode == 2
    assert "pluginConfig[DrainGuard].args" in failed.stderr
    assert "unknown field(s) ['x']" in failed.stderr


def test_explain_shows_the_plugin_verdict(tmp_path: Path) -> None:
    cluster = _docs(tmp_path)
    config = _config(tmp_path, "DrainGuard")
    result = _cli(
        "explain", str(cluster), "default/web", "--config", str(config), "--output", "json"
    )
    assert result.returncode == 0, result.stderr
    assert "node(s) are being drained" in result.stdout
    assert "DrainGuard" in result.stdout


def test_a_plugin_without_sign_pod_is_said_in_the_summary(tmp_path: Path) -> None:
    cluster = _docs(tmp_path)
    config = _config(tmp_path, "PreferLabeled")
    result = _cli("simulate", str(cluster), "--config", str(config), "--batching", "all")
    assert result.returncode == 0, result.stderr
    assert (
        "batching off for profile batch-scheduler: plugin(s) PreferLabeled cannot sign pods"
        in result.stdout
    )


def test_plugin_flag_names_by_the_factory_or_explicitly(tmp_path: Path) -> None:
    """``--plugin module:Class`` takes the class's name; ``NAME=module:factory`` names it."""
    registry = load_registry([f"{HERE}:Raiser", f"Other={HERE}:misnamed"], entry_points=())
    assert registry.out_of_tree == {"Raiser", "Other"}
    assert registry.sources["Raiser"] == f"--plugin '{HERE}:Raiser'"
    with pytest.raises(PluginLoadError, match=r"has no 'name' attribute.*--plugin NAME="):
        load_registry([f"{HERE}:broken_factory"], entry_points=())


def test_unknown_names_are_still_refused() -> None:
    with pytest.raises(ConfigError, match=r"multiPoint.enabled\[0\].name: unknown plugin 'Nope'"):
        load_config(
            {
                "apiVersion": "kubescheduler.config.k8s.io/v1",
                "kind": "KubeSchedulerConfiguration",
                "profiles": [{"plugins": {"multiPoint": {"enabled": [{"name": "Nope"}]}}}],
            },
            plugin_names={"DrainGuard"},
        )


def _entry(name: str, value: str) -> metadata.EntryPoint:
    return metadata.EntryPoint(name, value, ENTRY_POINT_GROUP)


def _simulate_with(registry_flags: list[str], *entries: metadata.EntryPoint, enable: str) -> Any:
    registry = load_registry(registry_flags, entry_points=entries)
    doc: dict[str, object] = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [{"plugins": {"multiPoint": {"enabled": [{"name": enable}]}}}],
    }
    config = load_config(doc, plugin_names=registry.out_of_tree)
    return registry, config


def _snapshot(tmp_path: Path, *nodes: str) -> Any:
    path = tmp_path / "cluster.yaml"
    docs = [make_node(n) for n in nodes] + [make_pod("web", cpu="1")]
    path.write_text(yaml.safe_dump_all(docs))
    return read_snapshot_file(path, {"batch-scheduler"})


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("no_such_module_xyz:make", "cannot import no_such_module_xyz: ModuleNotFoundError"),
        (f"{HERE}:nothing_here", "has no attribute 'nothing_here'"),
        (f"{HERE}:broken_factory", "raised RuntimeError: cannot start"),
        (f"{HERE}:misnamed", "made a plugin named 'Raiser', registered as 'Broken'"),
    ],
)
def test_a_bad_entry_point_names_itself(tmp_path: Path, value: str, message: str) -> None:
    """Each failure is one PluginLoadError naming the entry point, when the profile that
    enables it is built (an entry point no profile enables is never imported)."""
    registry, config = _simulate_with([], _entry("Broken", value), enable="Broken")
    with pytest.raises(PluginLoadError) as caught:
        simulate.simulate(
            _snapshot(tmp_path, "a"), config, mode=BatchingMode.OFF, registry=registry
        )
    text = str(caught.value)
    assert text.startswith(f"entry point {ENTRY_POINT_GROUP} 'Broken' = '{value}': ")
    assert message in text
    # not enabled: nothing is imported, the in-tree profile runs
    unused = load_registry((), entry_points=[_entry("Broken", value)])
    report = simulate.simulate(
        _snapshot(tmp_path, "a"), load_config({}), mode=BatchingMode.OFF, registry=unused
    )
    assert report["summary"]["scheduled"] == 1


def test_a_name_clashing_with_an_in_tree_plugin_is_refused() -> None:
    with pytest.raises(PluginLoadError) as caught:
        load_registry((), entry_points=[_entry("NodeResourcesFit", f"{HERE}:Raiser")])
    assert str(caught.value) == (
        f"entry point {ENTRY_POINT_GROUP} 'NodeResourcesFit' = '{HERE}:Raiser': "
        "plugin name 'NodeResourcesFit' is already taken by an in-tree plugin"
    )
    with pytest.raises(PluginLoadError, match="already taken by another"):
        load_registry([f"{HERE}:Raiser"], entry_points=[_entry("Raiser", f"{HERE}:Raiser")])


def test_the_cli_exits_2_naming_the_flag(tmp_path: Path) -> None:
    cluster = _docs(tmp_path)
    result = _cli("simulate", str(cluster), "--plugin", "no_such_module_xyz:Thing")
    assert result.returncode == 2
    assert result.stderr.strip() == (
        "batch-scheduler: --plugin 'no_such_module_xyz:Thing': cannot import "
        "no_such_module_xyz: ModuleNotFoundError: No module named 'no_such_module_xyz'"
    )


@pytest.mark.parametrize(("plugin", "point"), [("Raiser", "Filter"), ("ScoreRaiser", "Score")])
def test_a_plugin_that_raises_fails_the_cycle_with_error(
    tmp_path: Path, plugin: str, point: str
) -> None:
    """The pod's cycle fails with an Error status naming the plugin (retried with backoff,
    never placed while the plugin raises); the scheduler keeps going."""
    registry, config = _simulate_with([f"{HERE}:{plugin}"], enable=plugin)
    report = simulate.simulate(
        _snapshot(tmp_path, "bad", "good"), config, mode=BatchingMode.OFF, registry=registry
    )
    (row,) = report["placements"]
    assert row["node"] is None
    assert f"plugin '{plugin}' raised in {point}" in row["reason"]
