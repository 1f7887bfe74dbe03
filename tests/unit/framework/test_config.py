"""KubeSchedulerConfiguration: what we run, and errors that name the unsupported field."""

from __future__ import annotations

import pytest

from scheduler.framework.config import ConfigError, default_config, load_config
from tests.harness import cluster_of, profile_for

HEAD = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}


def test_defaults_match_kube_default_profile() -> None:
    """Default profile: kube's filter/score plugins with kube's score weights."""
    config = default_config()
    weights = {p.name: p.weight for p in config.profiles[0].plugins}
    assert weights["TaintToleration"] == 3
    assert weights["NodeAffinity"] == 2
    assert weights["PodTopologySpread"] == 2
    assert weights["InterPodAffinity"] == 2
    assert weights["NodeResourcesFit"] == 1
    assert config.profiles[0].scheduler_name == "batch-scheduler"
    assert config.pod_initial_backoff_seconds == 1.0
    assert config.pod_max_backoff_seconds == 10.0


def test_full_document_loads() -> None:
    """Profiles, weights, args, percentage, backoff and leader election are all read."""
    config = load_config(
        {
            **HEAD,
            "percentageOfNodesToScore": 30,
            "podInitialBackoffSeconds": 2,
            "podMaxBackoffSeconds": 20,
            "leaderElection": {
                "leaderElect": True,
                "leaseDuration": "20s",
                "renewDeadline": "15s",
                "retryPeriod": "3s",
                "resourceNamespace": "batch",
            },
            "profiles": [
                {
                    "schedulerName": "packer",
                    "plugins": {
                        "score": {"enabled": [{"name": "NodeResourcesFit", "weight": 5}]},
                        "multiPoint": {"disabled": [{"name": "ImageLocality"}]},
                    },
                    "pluginConfig": [
                        {
                            "name": "NodeResourcesFit",
                            "args": {"scoringStrategy": {"type": "MostAllocated"}},
                        }
                    ],
                }
            ],
        }
    )
    profile = config.profiles[0]
    assert profile.scheduler_name == "packer"
    assert {p.name: p.weight for p in profile.plugins}["NodeResourcesFit"] == 5
    assert "ImageLocality" not in {p.name for p in profile.plugins}
    assert config.leader_election.lease_duration == 20.0
    assert config.leader_election.resource_namespace == "batch"
    assert config.percentage_of_nodes_to_score == 30
    built = profile_for(cluster_of([]), config)
    assert built.scheduler_name == "packer"


def _w(name: str, weight: int) -> dict[str, object]:
    return {"name": name, "weight": weight}


@pytest.mark.parametrize(
    ("doc", "path"),
    [
        pytest.param({**HEAD, "schedulerName": "x"}, "schedulerName", id="unknown-top-level-field"),
        pytest.param(
            {**HEAD, "extenders": [{"urlPrefix": "http://x"}]}, "extenders", id="extenders"
        ),
        pytest.param({**HEAD, "apiVersion": "v1beta3"}, "apiVersion", id="wrong-api-version"),
        pytest.param(
            {**HEAD, "percentageOfNodesToScore": 101},
            "percentageOfNodesToScore",
            id="percentage-out-of-range",
        ),
        pytest.param(
            {**HEAD, "profiles": [{"plugins": {"filter": {"enabled": [{"name": "Nope"}]}}}]},
            "profiles[0].plugins.filter.enabled[0].name",
            id="unknown-plugin",
        ),
        pytest.param(
            {**HEAD, "profiles": [{"schedulerName": "a"}, {"schedulerName": "a"}]},
            "profiles[1].schedulerName",
            id="duplicate-profile",
        ),
        pytest.param(
            {**HEAD, "leaderElection": {"leaseDuration": "soon"}},
            "leaderElection.leaseDuration",
            id="bad-duration",
        ),
        pytest.param(
            {**HEAD, "leaderElection": {"resourceLock": "endpoints"}},
            "leaderElection.resourceLock",
            id="only-lease-locks",
        ),
        pytest.param(
            {
                **HEAD,
                "profiles": [{"pluginConfig": [{"name": "NodeResourcesFit", "args": "fast"}]}],
            },
            "profiles[0].pluginConfig[0].args",
            id="args-not-a-mapping",
        ),
        # kube-scheduler's own validation (pkg/scheduler/apis/config/validation, componentbase
        # leader election, client-go's NewLeaderElector) and the framework's duplicate check.
        pytest.param(
            {
                **HEAD,
                "profiles": [
                    {
                        "plugins": {
                            "score": {"enabled": [_w("ImageLocality", 2), _w("ImageLocality", 3)]}
                        }
                    }
                ],
            },
            "profiles[0].plugins.score.enabled[1]",
            id="score-plugin-twice",
        ),
        pytest.param(
            {
                **HEAD,
                "profiles": [
                    {
                        "plugins": {
                            "filter": {
                                "enabled": [
                                    {"name": "NodePorts"},
                                    {"name": "NodeName"},
                                    {"name": "NodePorts"},
                                ]
                            }
                        }
                    }
                ],
            },
            "profiles[0].plugins.filter.enabled[2]",
            id="filter-plugin-twice",
        ),
        pytest.param(
            {
                **HEAD,
                "profiles": [
                    {},
                    {
                        "schedulerName": "b",
                        "plugins": {
                            "multiPoint": {
                                "enabled": [{"name": "NodePorts"}, {"name": "NodePorts"}]
                            }
                        },
                    },
                ],
            },
            "profiles[1].plugins.multiPoint.enabled[1]",
            id="multipoint-plugin-twice",
        ),
        pytest.param(
            {
                **HEAD,
                "profiles": [
                    {
                        "plugins": {
                            "queueSort": {
                                "enabled": [{"name": "PrioritySort"}, {"name": "PrioritySort"}]
                            }
                        }
                    }
                ],
            },
            "profiles[0].plugins.queueSort.enabled[1]",
            id="queue-sort-twice",
        ),
        pytest.param(
            {**HEAD, "leaderElection": {"leaseDuration": "3000000000s"}},
            "leaderElection.leaseDuration",
            id="lease-beyond-int32-seconds",
        ),
        pytest.param(
            {**HEAD, "leaderElection": {"leaseDuration": "100000000000s"}},
            "leaderElection.leaseDuration",
            id="lease-beyond-a-go-duration",
        ),
        pytest.param(
            {**HEAD, "leaderElection": {"leaseDuration": "10s", "renewDeadline": "10s"}},
            "leaderElection.leaseDuration",
            id="lease-not-above-renew-deadline",
        ),
        pytest.param(
            {**HEAD, "leaderElection": {"renewDeadline": "2s", "retryPeriod": "2s"}},
            "leaderElection.renewDeadline",
            id="renew-deadline-not-above-retry-times-jitter",
        ),
        pytest.param(
            {**HEAD, "leaderElection": {"renewDeadline": "2400ms", "retryPeriod": "2s"}},
            "leaderElection.renewDeadline",
            id="renew-deadline-exactly-retry-times-jitter",
        ),
        pytest.param(
            {**HEAD, "podInitialBackoffSeconds": 0}, "podInitialBackoffSeconds", id="backoff-zero"
        ),
        pytest.param(
            {**HEAD, "podInitialBackoffSeconds": 5, "podMaxBackoffSeconds": 4},
            "podMaxBackoffSeconds",
            id="max-backoff-below-initial",
        ),
        pytest.param(
            {**HEAD, "podMaxBackoffSeconds": 10**23}, "podMaxBackoffSeconds", id="backoff-1e23"
        ),
        pytest.param(
            {**HEAD, "podInitialBackoffSeconds": 1e23},
            "podInitialBackoffSeconds",
            id="backoff-float",
        ),
        pytest.param(
            {**HEAD, "profiles": [{"percentageOfNodesToScore": -1}]},
            "profiles[0].percentageOfNodesToScore",
            id="profile-percentage-negative",
        ),
    ],
)
def test_bad_config_names_the_field(doc: dict[str, object], path: str) -> None:
    """Unsupported or malformed configuration is an error whose path names the field."""
    with pytest.raises(ConfigError) as caught:
        load_config(doc)
    assert caught.value.path == path


def test_bounds_that_kube_accepts_load() -> None:
    """The edges kube accepts: the longest Lease, renewDeadline just above retryPeriod*1.2,
    max backoff equal to the initial one, the same plugin enabled and disabled."""
    config = load_config(
        {
            **HEAD,
            "podInitialBackoffSeconds": 7,
            "podMaxBackoffSeconds": 7,
            "leaderElection": {
                "leaseDuration": "2147483647s",
                "renewDeadline": "2500ms",
                "retryPeriod": "2s",
            },
            "profiles": [
                {
                    "plugins": {
                        "score": {
                            "disabled": [{"name": "ImageLocality"}, {"name": "ImageLocality"}],
                            "enabled": [_w("ImageLocality", 5)],
                        }
                    }
                }
            ],
        }
    )
    assert config.leader_election.lease_duration == 2147483647.0
    assert config.pod_max_backoff_seconds == config.pod_initial_backoff_seconds == 7.0
    [image] = [p for p in config.profiles[0].plugins if p.name == "ImageLocality"]
    assert image.weight == 5


def test_config_error_names_the_file() -> None:
    """An error from a file names the file first, then the field, on one line."""
    error = ConfigError("profiles[0].plugins.score.enabled[1]", "duplicate").in_file("c.yaml")
    assert str(error) == "c.yaml: profiles[0].plugins.score.enabled[1]: duplicate"
    assert error.in_file("other.yaml") is error  # already named
    assert str(ConfigError("", "not UTF-8 text", file="c.yaml")) == "c.yaml: not UTF-8 text"


def test_bad_plugin_args_are_a_config_error() -> None:
    """A plugin rejecting its args surfaces as a ConfigError naming the plugin's args."""
    config = load_config(
        {
            **HEAD,
            "profiles": [
                {
                    "pluginConfig": [
                        {
                            "name": "NodeResourcesFit",
                            "args": {"scoringStrategy": {"type": "Fastest"}},
                        }
                    ]
                }
            ],
        }
    )
    with pytest.raises(ConfigError, match="NodeResourcesFit"):
        profile_for(cluster_of([]), config)


def _disabling(point: str, name: str) -> dict[str, object]:
    return {**HEAD, "profiles": [{"plugins": {point: {"disabled": [{"name": name}]}}}]}


@pytest.mark.parametrize(
    "point",
    ["multiPoint", "preFilter", "filter", "score", "postFilter", "preBind", "queueSort", "bind"],
)
def test_an_unknown_disabled_name_is_an_error_as_an_enabled_one(point: str) -> None:
    """A typo in ``disabled`` is refused with the path and the message of an enabled typo
    (kube-scheduler ignores it, leaving the plugin on)."""
    with pytest.raises(ConfigError) as caught:
        load_config(_disabling(point, "ImageLocalty"))
    assert caught.value.path == f"profiles[0].plugins.{point}.disabled[0].name"
    assert caught.value.message == "unknown plugin 'ImageLocalty'"
    with pytest.raises(ConfigError) as enabled:
        load_config(
            {**HEAD, "profiles": [{"plugins": {"score": {"enabled": [_w("Imagelocal", 1)]}}}]}
        )
    assert enabled.value.message == "unknown plugin 'Imagelocal'"


@pytest.mark.parametrize(
    ("point", "name", "plugin_names"),
    [
        pytest.param("filter", "*", (), id="the-wildcard"),
        pytest.param("multiPoint", "*", (), id="the-wildcard-at-multipoint"),
        pytest.param("score", "ImageLocality", (), id="an-in-tree-plugin"),
        pytest.param("queueSort", "PrioritySort", (), id="a-plugin-whose-job-the-queue-does"),
        pytest.param("bind", "DefaultBinder", (), id="a-plugin-whose-job-the-binder-does"),
        pytest.param("filter", "DynamicResources", (), id="a-plugin-accepted-without-effect"),
        pytest.param("filter", "Example", ("Example",), id="an-out-of-tree-plugin"),
    ],
)
def test_known_disabled_names_load(point: str, name: str, plugin_names: tuple[str, ...]) -> None:
    """``*`` and every name an ``enabled`` list accepts may be disabled."""
    config = load_config(_disabling(point, name), plugin_names=plugin_names)
    assert [p.scheduler_name for p in config.profiles] == ["batch-scheduler"]
