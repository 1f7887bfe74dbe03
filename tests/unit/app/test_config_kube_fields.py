"""kube-scheduler's top-level configuration fields: each honoured, noted or refused by path.

The reference document is kube-scheduler v1.37.2's own ``--write-config-to`` output
(``data/kube-scheduler-v1.37.2-written-config.yaml``): what a user copies from a running
kube-scheduler.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from scheduler.app.config_file import read_config
from scheduler.app.core import build_scheduler
from scheduler.clock import FakeClock
from scheduler.cycle.schedule_one import BatchingSettings
from scheduler.framework.config import ConfigError, load_config
from scheduler.framework.config_run import notes, with_flags

WRITTEN = Path(__file__).parent / "data" / "kube-scheduler-v1.37.2-written-config.yaml"
HEAD = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}


def _written() -> dict[str, Any]:
    doc = yaml.safe_load(WRITTEN.read_text())
    assert isinstance(doc, dict)
    return doc


def _error(doc: dict[str, Any]) -> ConfigError:
    with pytest.raises(ConfigError) as caught:
        load_config(doc)
    return caught.value


def test_written_config_top_level_loads_with_kube_values() -> None:
    """Every top-level field kube-scheduler writes is read (its profiles are the plugin
    configuration's business, tested with the plugins)."""
    doc = _written()
    del doc["profiles"]
    config = load_config(doc)
    assert config.parallelism == 16
    assert config.percentage_of_nodes_to_score == 0
    assert (config.pod_initial_backoff_seconds, config.pod_max_backoff_seconds) == (1.0, 10.0)
    connection = config.client_connection
    assert connection.kubeconfig == "kc.yaml"
    assert (connection.qps, connection.burst) == (50.0, 100)
    assert connection.content_type == "application/vnd.kubernetes.protobuf"
    election = config.leader_election
    assert election.leader_elect is True
    assert (election.lease_duration, election.renew_deadline, election.retry_period) == (
        15.0,
        10.0,
        2.0,
    )
    assert (election.resource_namespace, election.resource_name) == (
        "kube-system",
        "kube-scheduler",
    )
    assert config.enable_profiling
    assert config.enable_contention_profiling


def test_written_config_notes_say_what_has_no_effect() -> None:
    doc = _written()
    del doc["profiles"]
    by_path = {note.path: note for note in notes(load_config(doc))}
    assert set(by_path) == {
        "clientConnection.contentType",
        "enableProfiling",
        "enableContentionProfiling",
        "leaderElection.resourceName",
    }
    assert "JSON" in by_path["clientConnection.contentType"].message
    # Sharing kube-scheduler's Lease is the one that may surprise: a warning.
    assert [n.path for n in by_path.values() if n.warning] == ["leaderElection.resourceName"]


def test_defaults_have_no_notes_and_no_client_limit() -> None:
    config = load_config({})
    assert notes(config) == ()
    assert config.client_connection.qps is None
    assert config.parallelism == 16
    assert config.pod_max_in_unschedulable_pods_seconds == 300.0


@pytest.mark.parametrize(
    ("connection", "qps", "burst"),
    [
        pytest.param({"qps": 20, "burst": 40}, 20.0, 40, id="given"),
        pytest.param({"qps": 0, "burst": 0}, 50.0, 100, id="zero-is-kube-default"),
        pytest.param({"qps": -1}, None, 100, id="negative-is-no-limit"),
        pytest.param({"qps": 2.5}, 2.5, 100, id="fraction"),
        pytest.param({"contentType": "application/json"}, None, 100, id="no-qps"),
    ],
)
def test_client_connection_rate(connection: dict[str, Any], qps: float | None, burst: int) -> None:
    config = load_config({**HEAD, "clientConnection": connection})
    assert (config.client_connection.qps, config.client_connection.burst) == (qps, burst)


@pytest.mark.parametrize(
    ("doc", "path"),
    [
        ({"clientConnection": {"burst": -1}}, "clientConnection.burst"),
        ({"clientConnection": {"qps": "50"}}, "clientConnection.qps"),
        ({"clientConnection": {"qps": True}}, "clientConnection.qps"),
        ({"clientConnection": {"contentType": "text/xml"}}, "clientConnection.contentType"),
        ({"clientConnection": {"kubeconfig": 7}}, "clientConnection.kubeconfig"),
        ({"clientConnection": {"timeout": "1s"}}, "clientConnection.timeout"),
        ({"parallelism": 0}, "parallelism"),
        ({"parallelism": "16"}, "parallelism"),
        ({"enableProfiling": "yes"}, "enableProfiling"),
        ({"delayCacheUntilActive": 1}, "delayCacheUntilActive"),
        ({"podMaxInUnschedulablePodsDuration": "0s"}, "podMaxInUnschedulablePodsDuration"),
        ({"podMaxInUnschedulablePodsDuration": 300}, "podMaxInUnschedulablePodsDuration"),
        ({"extenders": [{"urlPrefix": "http://127.0.0.1:8888"}]}, "extenders"),
        ({"extenders": {}}, "extenders"),
        ({"leaderElection": {"leaderElect": True, "resourceLock": "endpoints"}}, ""),
        ({"profile": []}, "profile"),
    ],
)
def test_bad_top_level_field_names_its_path(doc: dict[str, Any], path: str) -> None:
    error = _error({**HEAD, **doc})
    assert error.path == (path or "leaderElection.resourceLock")


def test_non_empty_extenders_are_refused_with_the_reason() -> None:
    error = _error({**HEAD, "extenders": [{"urlPrefix": "http://127.0.0.1:8888"}]})
    assert "not supported" in error.message
    assert "plugin" in error.message


def test_empty_extenders_and_delay_cache_are_accepted() -> None:
    config = load_config({**HEAD, "extenders": [], "delayCacheUntilActive": True})
    assert [n.path for n in notes(config)] == ["delayCacheUntilActive"]


def test_unschedulable_pool_duration_reaches_the_queue() -> None:
    config = load_config({**HEAD, "podMaxInUnschedulablePodsDuration": "90s"})
    assert config.pod_max_in_unschedulable_pods_seconds == 90.0
    scheduler = build_scheduler(
        config,
        clock=FakeClock(),
        binder=_Unused(),
        reporter=_Unused(),
        batching=BatchingSettings(),
    )
    assert scheduler.queue.max_unschedulable_seconds == 90.0


def test_percentage_per_profile_overrides_the_top_level() -> None:
    config = load_config(
        {
            **HEAD,
            "percentageOfNodesToScore": 30,
            "profiles": [
                {"schedulerName": "a", "percentageOfNodesToScore": 70},
                {"schedulerName": "b"},
            ],
        }
    )
    scheduler = build_scheduler(
        config, clock=FakeClock(), binder=_Unused(), reporter=_Unused(), batching=BatchingSettings()
    )
    percentages = {n: p.percentage_of_nodes_to_score for n, p in scheduler.profiles.items()}
    assert percentages == {"a": 70, "b": 30}


def test_leader_election_flags_win_over_the_file() -> None:
    config = load_config({**HEAD, "leaderElection": {"leaderElect": True, "leaseDuration": "20s"}})
    merged = with_flags(
        config,
        lease_duration="1m",
        renew_deadline="30s",
        retry_period="5s",
        resource_name="mine",
        resource_namespace="sched",
        resource_lock="leases",
        pod_max_in_unschedulable_pods_duration="2m",
    )
    election = merged.leader_election
    assert (election.lease_duration, election.renew_deadline, election.retry_period) == (
        60.0,
        30.0,
        5.0,
    )
    assert (election.resource_namespace, election.resource_name) == ("sched", "mine")
    assert election.leader_elect is True  # untouched by the timing flags
    assert merged.pod_max_in_unschedulable_pods_seconds == 120.0


def test_no_flags_leave_the_config_as_it_is() -> None:
    config = load_config({})
    assert with_flags(config, lease_duration=None) is config


@pytest.mark.parametrize(
    ("flags", "path"),
    [
        # The file's renewDeadline is 10s: a 5s lease is the flag's fault.
        ({"lease_duration": "5s"}, "--leader-elect-lease-duration"),
        ({"retry_period": "9s"}, "leaderElection.renewDeadline"),
        ({"retry_period": "9s", "renew_deadline": "10s"}, "--leader-elect-renew-deadline"),
        ({"lease_duration": "soon"}, "--leader-elect-lease-duration"),
        ({"resource_lock": "endpoints"}, "--leader-elect-resource-lock"),
        ({"resource_name": ""}, "--leader-elect-resource-name"),
        (
            {"pod_max_in_unschedulable_pods_duration": "-1s"},
            "--pod-max-in-unschedulable-pods-duration",
        ),
    ],
)
def test_bad_flag_names_the_flag_or_the_field_it_clashes_with(
    flags: dict[str, str], path: str
) -> None:
    with pytest.raises(ConfigError) as caught:
        with_flags(load_config({}), **flags)
    assert caught.value.path == path


def test_written_config_file_reads_with_its_top_level(tmp_path: Path) -> None:
    """Through the file reader too: the document's errors name the file."""
    doc = _written()
    del doc["profiles"]
    doc["parallelism"] = -1
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(doc))
    with pytest.raises(ConfigError) as caught:
        read_config(path)
    assert str(caught.value).startswith(f"{path}: parallelism: ")


class _Unused:
    """A binder/reporter port nothing calls: these tests only build the scheduler."""

    def __getattr__(self, name: str) -> Any:
        raise AssertionError(f"unexpected call: {name}")


def test_workload_points_kube_writes_empty_are_accepted() -> None:
    points: dict[str, object] = {
        "placementGenerate": {},
        "placementScore": {},
        "podGroupPostFilter": {},
    }
    config = load_config({**HEAD, "profiles": [{"plugins": points}]})
    assert config.profiles[0].plugins == load_config({}).profiles[0].plugins


def test_a_plugin_enabled_at_a_workload_point_is_refused_by_path() -> None:
    plugins = {"placementScore": {"enabled": [{"name": "GangScheduling"}]}}
    error = _error({**HEAD, "profiles": [{"plugins": plugins}]})
    assert error.path == "profiles[0].plugins.placementScore.enabled[0].name"


def test_an_unknown_leader_flag_name_is_a_programming_error() -> None:
    with pytest.raises(TypeError, match="lease_time"):
        with_flags(load_config({}), lease_time="15s")


def test_written_config_loads_as_written_and_warns_of_the_unimplemented_plugins() -> None:
    """kube-scheduler's written configuration loads unedited: NodeDeclaredFeatures is
    accepted without effect, with a warning naming what is missing; DynamicResources runs,
    with the pluginConfig kube writes for it."""
    config = load_config(_written())
    assert set(config.profiles[0].without_effect) == {"NodeDeclaredFeatures"}
    names = {p.name for p in config.profiles[0].plugins}
    assert "DynamicResources" in names
    assert "NodeDeclaredFeatures" not in names
    warned = [n.message for n in notes(config) if n.path == "profiles[0].plugins"]
    assert len(warned) == 1
    assert warned[0].startswith("NodeDeclaredFeatures ")


def test_a_plugin_unknown_to_kube_too_is_still_refused_with_its_path() -> None:
    plugins = {"multiPoint": {"enabled": [{"name": "DynamicResourcez"}]}}
    error = _error({**HEAD, "profiles": [{"plugins": plugins}]})
    assert error.path == "profiles[0].plugins.multiPoint.enabled[0].name"
    assert "unknown plugin 'DynamicResourcez'" in error.message


def test_written_config_builds_kube_schedulers_profile() -> None:
    """Every pluginConfig args kube writes (VolumeBinding's default shape included) is read
    by the plugins, and the profile has kube's default plugins and weights."""
    config = load_config(_written())
    scheduler = build_scheduler(
        config, clock=FakeClock(), binder=_Unused(), reporter=_Unused(), batching=BatchingSettings()
    )
    assert list(scheduler.profiles) == ["default-scheduler"]
    weights = {spec.name: spec.weight for spec in config.profiles[0].plugins}
    assert (weights["TaintToleration"], weights["NodeAffinity"]) == (3, 2)
    assert (weights["PodTopologySpread"], weights["InterPodAffinity"]) == (2, 2)


def test_a_volume_binding_shape_other_than_kubes_default_is_refused() -> None:
    doc = _written()
    [volume_binding] = [
        c for c in doc["profiles"][0]["pluginConfig"] if c["name"] == "VolumeBinding"
    ]
    volume_binding["args"]["shape"] = [{"utilization": 0, "score": 0}]
    with pytest.raises(ConfigError) as caught:
        build_scheduler(
            load_config(doc),
            clock=FakeClock(),
            binder=_Unused(),
            reporter=_Unused(),
            batching=BatchingSettings(),
        )
    assert caught.value.path == "pluginConfig[VolumeBinding].args"
    assert "VolumeBindingArgs.shape" in caught.value.message
