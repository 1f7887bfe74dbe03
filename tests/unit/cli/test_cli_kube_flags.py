"""``run`` with kube-scheduler's flags and a config copied from kube-scheduler: what reaches
the runtime (settings and configuration), what is logged, what is refused."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
import yaml

from scheduler.app import runtime
from scheduler.cli import kube_flags
from scheduler.cli.main import _dispatch, build_parser

if TYPE_CHECKING:
    from collections.abc import Coroutine, Mapping

    from scheduler.app.settings import SchedulerSettings
    from scheduler.framework.config import SchedulerConfig
    from scheduler.framework.profile import PluginFactory

WRITTEN = Path(__file__).parents[1] / "app" / "data" / "kube-scheduler-v1.37.2-written-config.yaml"


@pytest.mark.parametrize(
    ("argv", "level"),
    [
        ([], "info"),
        (["-v=2"], "info"),
        (["-v", "4"], "debug"),
        (["--v=10"], "trace"),
        (["--log-level", "warning"], "warning"),
    ],
)
def test_verbosity_flags(argv: list[str], level: str) -> None:
    assert kube_flags.log_level(build_parser().parse_args(["run", *argv])) == level


@pytest.mark.parametrize(
    ("argv", "fmt"),
    [
        ([], "json"),
        (["--logging-format=text"], "console"),
        (["--log-format", "console"], "console"),
    ],
)
def test_logging_format(argv: list[str], fmt: str) -> None:
    assert kube_flags.log_format(build_parser().parse_args(["run", *argv])) == fmt


@pytest.mark.parametrize(
    "argv", [["-v=4", "--log-level=debug"], ["-v=x"], ["--logging-format=xml"]]
)
def test_conflicting_or_bad_logging_flags_exit_2(argv: list[str]) -> None:
    with pytest.raises(SystemExit) as caught:
        build_parser().parse_args(["run", *argv])
    assert caught.value.code == 2


class _Recorded:
    def __init__(self) -> None:
        self.calls: list[tuple[SchedulerSettings, SchedulerConfig]] = []

    async def __call__(
        self,
        settings: SchedulerSettings,
        config: SchedulerConfig,
        registry: Mapping[str, PluginFactory] | None = None,
    ) -> None:
        self.calls.append((settings, config))


def _drive(coro: Coroutine[Any, Any, None]) -> None:
    """``asyncio.run`` for a coroutine that never waits (no event loop left behind)."""
    try:
        coro.send(None)
    except StopIteration:
        return
    raise AssertionError("the recorder awaited something")


@pytest.fixture
def recorded(monkeypatch: pytest.MonkeyPatch) -> _Recorded:
    """``runtime.run`` replaced by a recorder: these tests stop where the process would start."""
    recorder = _Recorded()
    monkeypatch.setattr(runtime, "run", recorder)
    monkeypatch.setattr(asyncio, "run", _drive)
    return recorder


def _copied_config(tmp_path: Path, **changes: Any) -> Path:
    doc = yaml.safe_load(WRITTEN.read_text())
    del doc["profiles"]  # the plugin part is tested with the plugins
    doc.update(changes)
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(doc))
    return path


def _run(*argv: str) -> int:
    return _dispatch(build_parser().parse_args(["run", *argv]))


def test_copied_config_and_kube_flags_reach_the_runtime(
    recorded: _Recorded, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config_path = _copied_config(tmp_path, parallelism=7)
    code = _run(
        "--config",
        str(config_path),
        "--leader-elect-lease-duration=30s",
        "--leader-elect-renew-deadline=20s",
        "--leader-elect-resource-name=batch-scheduler",
        "--pod-max-in-unschedulable-pods-duration=1m",
        "-v=4",
    )
    assert code == 0
    [(settings, config)] = recorded.calls
    assert settings.binder.concurrency == 28  # 4 x parallelism, no --bind-concurrency
    assert config.client_connection.qps == 50.0
    assert config.client_connection.kubeconfig == "kc.yaml"
    election = config.leader_election
    assert (election.lease_duration, election.renew_deadline) == (30.0, 20.0)
    assert election.resource_name == "batch-scheduler"
    assert config.pod_max_in_unschedulable_pods_seconds == 60.0
    notes = [json.loads(line) for line in capsys.readouterr().err.splitlines()]
    assert {n["field"] for n in notes if n["event"] == "config_field_note"} == {
        "clientConnection.contentType",
        "enableProfiling",
        "enableContentionProfiling",
    }  # the Lease is no longer kube-scheduler's: no warning about it


def test_copied_config_as_is_warns_about_kube_schedulers_lease(
    recorded: _Recorded, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _run("--config", str(_copied_config(tmp_path))) == 0
    lines = [json.loads(line) for line in capsys.readouterr().err.splitlines()]
    [warning] = [line for line in lines if line["level"] == "warning"]
    assert warning["field"] == "leaderElection.resourceName"
    assert "kube-scheduler" in warning["note"]


def test_bind_concurrency_flag_wins_over_parallelism(recorded: _Recorded, tmp_path: Path) -> None:
    assert _run("--config", str(_copied_config(tmp_path)), "--bind-concurrency=3") == 0
    [(settings, _)] = recorded.calls
    assert settings.binder.concurrency == 3


def test_bad_leader_flag_exits_2_naming_the_flag(
    recorded: _Recorded, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _run("--leader-elect-lease-duration=5s") == 2
    err = capsys.readouterr().err
    assert err.startswith("batch-scheduler: --leader-elect-lease-duration: ")
    assert recorded.calls == []


def test_bad_config_field_exits_2_naming_file_and_field(
    recorded: _Recorded, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _copied_config(tmp_path, extenders=[{"urlPrefix": "http://127.0.0.1:8888"}])
    assert _run("--config", str(path)) == 2
    assert capsys.readouterr().err.startswith(f"batch-scheduler: {path}: extenders: ")
    assert recorded.calls == []


@pytest.mark.parametrize(
    ("argv", "elect"),
    [
        ([], None),
        (["--leader-elect"], True),
        (["--leader-elect=true"], True),
        (["--leader-elect=false"], False),
        (["--leader-elect=0"], False),
        (["--no-leader-elect"], False),
    ],
)
def test_leader_elect_takes_a_go_bool_as_kube_schedulers_flag(
    argv: list[str], elect: bool | None
) -> None:
    assert build_parser().parse_args(["run", *argv]).leader_elect is elect


def test_leader_elect_refuses_a_non_bool() -> None:
    with pytest.raises(SystemExit) as caught:
        build_parser().parse_args(["run", "--leader-elect=maybe"])
    assert caught.value.code == 2
