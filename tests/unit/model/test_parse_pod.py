"""pod_from_raw: kube v1.35 request rules, defaults, derived fields, and errors naming fields."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest

from scheduler.model.errors import ModelError
from scheduler.model.labels import LabelSelector, Operator, Requirement
from scheduler.model.parse import pod_from_raw, pod_with_status
from scheduler.model.pod import HostPort
from scheduler.model.taints import Effect, Toleration
from tests.builders import Raw, make_container, make_pod, toleration

Mi = 2**20
Gi = 2**30
DEFAULT_CPU = 100
DEFAULT_MEM = 200 * Mi


def with_status(raw: Raw, **status: Any) -> Raw:
    raw["status"].update(status)
    return raw


def with_spec(raw: Raw, **spec: Any) -> Raw:
    raw["spec"].update(spec)
    return raw


def limits_only(name: str = "c", **limits: str) -> Raw:
    c = make_container(name)
    c["resources"] = {"limits": dict(limits)}
    return c


# -- requests ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "cpu", "memory", "scalar"),
    [
        pytest.param(make_pod("p"), 0, 0, {}, id="no-requests-is-zero"),
        pytest.param(make_pod("p", cpu="250m", memory="1Gi"), 250, Gi, {}, id="one-container"),
        pytest.param(
            make_pod(
                "p", containers=[make_container("a", cpu="1"), make_container("b", cpu="500m")]
            ),
            1500,
            0,
            {},
            id="containers-sum",
        ),
        pytest.param(
            make_pod(
                "p",
                containers=[make_container("a", cpu="1", memory="1Gi")],
                init_containers=[make_container("i", cpu="3", memory="100Mi")],
            ),
            3000,
            Gi,
            {},
            id="init-container-max-per-resource",
        ),
        pytest.param(
            make_pod(
                "p",
                containers=[make_container("a", cpu="1")],
                init_containers=[
                    make_container("s", cpu="500m", restart_policy="Always"),
                    make_container("i", cpu="1200m"),
                ],
            ),
            1700,
            0,
            {},
            id="sidecar-before-init-adds-to-its-peak",
        ),
        pytest.param(
            make_pod(
                "p",
                containers=[make_container("a", cpu="1")],
                init_containers=[
                    make_container("i", cpu="1200m"),
                    make_container("s", cpu="500m", restart_policy="Always"),
                ],
            ),
            1500,
            0,
            {},
            id="sidecar-after-init-only-adds-to-containers",
        ),
        pytest.param(
            make_pod(
                "p",
                containers=[make_container("a", cpu="1")],
                init_containers=[
                    make_container("s1", cpu="1", restart_policy="Always"),
                    make_container("i", cpu="2"),
                    make_container("s2", cpu="1", restart_policy="Always"),
                ],
            ),
            3000,
            0,
            {},
            id="sum-of-sidecars-beats-init-peak",
        ),
        pytest.param(
            make_pod("p", cpu="1", memory="1Gi", overhead={"cpu": "250m", "memory": "64Mi"}),
            1250,
            Gi + 64 * Mi,
            {},
            id="overhead-added",
        ),
        pytest.param(
            make_pod("p", containers=[limits_only(cpu="2", memory="1Gi")]),
            2000,
            Gi,
            {},
            id="limits-default-missing-requests",
        ),
        pytest.param(
            make_pod(
                "p",
                containers=[
                    {
                        **make_container(),
                        "resources": {
                            "requests": {"cpu": "1"},
                            "limits": {"cpu": "4", "memory": "2Gi"},
                        },
                    }
                ],
            ),
            1000,
            2 * Gi,
            {},
            id="limit-only-fills-the-missing-resource",
        ),
        pytest.param(
            make_pod(
                "p",
                containers=[
                    make_container(requests={"nvidia.com/gpu": "2", "hugepages-2Mi": "4Mi"})
                ],
            ),
            0,
            0,
            {"nvidia.com/gpu": 2, "hugepages-2Mi": 4 * Mi},
            id="extended-and-hugepages-are-scalar",
        ),
        pytest.param(
            make_pod("p", containers=[make_container(requests={"pods": "3", "foo": "1"})]),
            0,
            0,
            {},
            id="pods-and-unqualified-names-ignored",
        ),
        pytest.param(
            make_pod(
                "p",
                containers=[make_container("a", cpu="0.0001"), make_container("b", cpu="0.0001")],
            ),
            1,
            0,
            {},
            id="summed-exactly-then-rounded-up-once",
        ),
        pytest.param(
            with_spec(
                make_pod("p", containers=[make_container("a", cpu="1", memory="1Gi")]),
                resources={"requests": {"cpu": "3"}},
            ),
            3000,
            Gi,
            {},
            id="pod-level-requests-replace-the-aggregate",
        ),
        pytest.param(
            with_spec(
                make_pod("p", containers=[make_container("a", cpu="1")]),
                resources={"limits": {"cpu": "4", "memory": "2Gi"}},
            ),
            1000,
            2 * Gi,
            {},
            id="pod-level-limits-default-requests-from-containers-else-limits",
        ),
        pytest.param(
            with_spec(
                make_pod("p", containers=[make_container("a", cpu="1")]),
                resources={"requests": {"memory": "1Gi"}, "limits": {"cpu": "4"}},
            ),
            1000,
            Gi,
            {},
            id="pod-level-explicit-request-kept",
        ),
        pytest.param(
            with_status(
                make_pod("p", containers=[make_container("a", cpu="1")], node_name="n"),
                containerStatuses=[
                    {
                        "name": "a",
                        "allocatedResources": {"cpu": "2"},
                        "resources": {"requests": {"cpu": "1500m"}},
                    }
                ],
            ),
            2000,
            0,
            {},
            id="resize-in-progress-takes-the-max",
        ),
        pytest.param(
            with_status(
                make_pod("p", containers=[make_container("a", cpu="4")], node_name="n"),
                containerStatuses=[{"name": "a", "allocatedResources": {"cpu": "2"}}],
                conditions=[{"type": "PodResizePending", "reason": "Infeasible"}],
            ),
            2000,
            0,
            {},
            id="infeasible-resize-ignores-the-spec",
        ),
    ],
)
def test_requests(raw: Raw, cpu: int, memory: int, scalar: dict[str, int]) -> None:
    """Effective requests follow kube's init/sidecar/overhead rule, rounded once."""
    pod = pod_from_raw(raw)
    assert pod.requests.milli_cpu == cpu
    assert pod.requests.memory == memory
    assert pod.requests.scalar == scalar


def test_ephemeral_storage_request() -> None:
    """ephemeral-storage lands in its own field, in bytes."""
    pod = pod_from_raw(
        make_pod("p", containers=[make_container(requests={"ephemeral-storage": "1Gi"})])
    )
    assert pod.requests.ephemeral_storage == Gi


@pytest.mark.parametrize(
    ("raw", "cpu", "memory"),
    [
        pytest.param(make_pod("p"), DEFAULT_CPU, DEFAULT_MEM, id="no-requests-get-both-defaults"),
        pytest.param(make_pod("p", cpu="1"), 1000, DEFAULT_MEM, id="missing-memory-defaulted"),
        pytest.param(make_pod("p", cpu="0", memory="0"), 0, 0, id="explicit-zero-is-kept"),
        pytest.param(
            make_pod("p", containers=[make_container("a", cpu="1"), make_container("b")]),
            1000 + DEFAULT_CPU,
            2 * DEFAULT_MEM,
            id="defaults-per-container",
        ),
        pytest.param(
            make_pod(
                "p",
                containers=[make_container("a", cpu="50m")],
                init_containers=[make_container("i")],
            ),
            DEFAULT_CPU,
            DEFAULT_MEM,
            id="init-container-default-in-the-max",
        ),
        pytest.param(
            make_pod(
                "p",
                containers=[make_container("a", cpu="50m")],
                init_containers=[make_container("s", restart_policy="Always")],
            ),
            50 + DEFAULT_CPU,
            2 * DEFAULT_MEM,
            id="sidecar-default-in-the-sum",
        ),
        pytest.param(
            make_pod("p", overhead={"cpu": "10m"}),
            DEFAULT_CPU + 10,
            DEFAULT_MEM,
            id="overhead-on-top-of-defaults",
        ),
        pytest.param(
            with_spec(
                make_pod("p", containers=[make_container("a")]),
                resources={"requests": {"cpu": "2"}},
            ),
            2000,
            DEFAULT_MEM,
            id="pod-level-cpu-set-memory-defaulted",
        ),
        pytest.param(
            with_spec(
                make_pod("p", containers=[make_container("a", memory="1Gi"), make_container("b")]),
                resources={"requests": {"cpu": "2"}},
            ),
            2000,
            Gi,
            id="pod-level-set-no-default-where-the-pod-has-the-key",
        ),
    ],
)
def test_non_zero_requests(raw: Raw, cpu: int, memory: int) -> None:
    """Non-zero requests use 100m/200Mi per container missing a request."""
    pod = pod_from_raw(raw)
    assert (pod.non_zero_milli_cpu, pod.non_zero_memory) == (cpu, memory)


# -- ports, images, tolerations -------------------------------------------------------------


def test_host_ports() -> None:
    """hostPort > 0 from containers and sidecars, with 0.0.0.0/TCP defaults."""
    c = make_container("c")
    c["ports"] = [
        {"containerPort": 80, "hostPort": 8080},
        {"containerPort": 53, "hostPort": 53, "protocol": "UDP", "hostIP": "10.0.0.1"},
        {"containerPort": 9000},
        {"containerPort": 9001, "hostPort": 0},
    ]
    sidecar = make_container("s", host_ports=[7000], restart_policy="Always")
    init = make_container("i", host_ports=[6000])
    pod = pod_from_raw(make_pod("p", containers=[c], init_containers=[init, sidecar]))
    assert pod.host_ports == (
        HostPort("0.0.0.0", "TCP", 7000),
        HostPort("0.0.0.0", "TCP", 8080),
        HostPort("10.0.0.1", "UDP", 53),
    )


@pytest.mark.parametrize(
    ("image", "normalized"),
    [
        pytest.param("nginx", "nginx:latest", id="bare-name-gets-latest"),
        pytest.param("nginx:1.25", "nginx:1.25", id="tag-kept"),
        pytest.param("foo/bar", "foo/bar:latest", id="path-gets-latest"),
        pytest.param(
            "localhost:5000/app", "localhost:5000/app:latest", id="registry-port-is-not-a-tag"
        ),
        pytest.param(
            "registry.k8s.io/pause:3.10", "registry.k8s.io/pause:3.10", id="full-name-kept"
        ),
        pytest.param("app@sha256:abcd", "app@sha256:abcd", id="digest-kept"),
    ],
)
def test_image_normalization(image: str, normalized: str) -> None:
    """Images get :latest when untagged, as kube's ImageLocality; nothing else changes."""
    assert pod_from_raw(make_pod("p", image=image)).images == (normalized,)


def test_images_cover_init_containers_first() -> None:
    """Init containers' images come first, then containers', duplicates kept."""
    pod = pod_from_raw(
        make_pod(
            "p",
            containers=[make_container("a", image="a"), make_container("b", image="a")],
            init_containers=[make_container("i", image="i:1")],
        )
    )
    assert pod.images == ("i:1", "a:latest", "a:latest")


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        pytest.param(
            toleration("k", "v"), Toleration("k", "Equal", "v", None), id="equal-any-effect"
        ),
        pytest.param(
            {"key": "k", "value": "v"},
            Toleration("k", "Equal", "v", None),
            id="operator-defaults-to-equal",
        ),
        pytest.param(
            toleration("k", operator="Exists", effect="NoExecute"),
            Toleration("k", "Exists", "", Effect.NO_EXECUTE),
            id="exists-with-effect",
        ),
        pytest.param(
            {"operator": "Exists", "effect": "", "tolerationSeconds": 30},
            Toleration("", "Exists", "", None, 30),
            id="empty-key-exists-with-seconds",
        ),
    ],
)
def test_tolerations(raw: Raw, expected: Toleration) -> None:
    """Tolerations read with kube's defaults."""
    assert pod_from_raw(make_pod("p", tolerations=[raw])).tolerations == (expected,)


# -- affinity and spread -----------------------------------------------------------------------


def anti(term: Raw) -> Raw:
    return {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}


@pytest.mark.parametrize(
    ("term", "selector", "namespaces", "ns_selector"),
    [
        pytest.param(
            {"labelSelector": {"matchLabels": {"app": "x"}}, "topologyKey": "zone"},
            LabelSelector((Requirement("app", Operator.IN, ("x",)),)),
            frozenset({"team"}),
            None,
            id="own-namespace-by-default",
        ),
        pytest.param(
            {"topologyKey": "zone", "namespaces": ["a", "b"]},
            None,
            frozenset({"a", "b"}),
            None,
            id="nil-selector-stays-nil",
        ),
        pytest.param(
            {"labelSelector": {}, "topologyKey": "zone", "namespaceSelector": {}},
            LabelSelector(),
            frozenset(),
            LabelSelector(),
            id="empty-namespace-selector-means-all",
        ),
        pytest.param(
            {
                "labelSelector": {"matchLabels": {"app": "x"}},
                "topologyKey": "zone",
                "matchLabelKeys": ["rev", "absent"],
                "mismatchLabelKeys": ["tenant"],
            },
            LabelSelector(
                (
                    Requirement("app", Operator.IN, ("x",)),
                    Requirement("rev", Operator.IN, ("7",)),
                    Requirement("tenant", Operator.NOT_IN, ("t1",)),
                )
            ),
            frozenset({"team"}),
            None,
            id="match-and-mismatch-label-keys-merged",
        ),
    ],
)
def test_pod_affinity_terms(
    term: Raw,
    selector: LabelSelector | None,
    namespaces: frozenset[str],
    ns_selector: LabelSelector | None,
) -> None:
    """Affinity terms resolve namespaces and merge label keys as kube-apiserver does."""
    raw = make_pod("p", namespace="team", labels={"rev": "7", "tenant": "t1"}, affinity=anti(term))
    (parsed,) = pod_from_raw(raw).required_pod_anti_affinity
    assert parsed.label_selector == selector
    assert parsed.namespaces == namespaces
    assert parsed.namespace_selector == ns_selector
    assert parsed.topology_key == "zone"


def test_preferred_affinity_and_node_affinity() -> None:
    """Preferred terms keep weights; node affinity parses required and preferred."""
    affinity = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [{"matchExpressions": [{"key": "gpu", "operator": "Exists"}]}]
            },
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {
                    "weight": 5,
                    "preference": {
                        "matchFields": [
                            {"key": "metadata.name", "operator": "In", "values": ["n1"]}
                        ]
                    },
                }
            ],
        },
        "podAffinity": {
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": 40, "podAffinityTerm": {"labelSelector": {}, "topologyKey": "zone"}}
            ]
        },
    }
    pod = pod_from_raw(make_pod("p", affinity=affinity))
    assert pod.required_node_affinity is not None
    assert pod.required_node_affinity.matches({"gpu": ""}, "any")
    assert not pod.required_node_affinity.matches({}, "any")
    (pref,) = pod.preferred_node_affinity
    assert pref.weight == 5
    assert pref.term.matches({}, "n1")
    assert not pref.term.matches({}, "n2")
    (weighted,) = pod.preferred_pod_affinity
    assert weighted.weight == 40
    assert pod.has_pod_affinity
    assert not pod.has_pod_anti_affinity


def test_topology_spread_defaults_and_label_keys() -> None:
    """Spread constraints get Honor/Ignore defaults and merge matchLabelKeys."""
    tsc = {
        "maxSkew": 2,
        "topologyKey": "zone",
        "whenUnsatisfiable": "DoNotSchedule",
        "labelSelector": {"matchLabels": {"app": "x"}},
        "matchLabelKeys": ["pod-template-hash"],
        "minDomains": 3,
    }
    pod = pod_from_raw(make_pod("p", labels={"pod-template-hash": "abc"}, topology_spread=[tsc]))
    (c,) = pod.topology_spread_constraints
    assert (c.max_skew, c.topology_key, c.when_unsatisfiable, c.min_domains) == (
        2,
        "zone",
        "DoNotSchedule",
        3,
    )
    assert (c.node_affinity_policy, c.node_taints_policy) == ("Honor", "Ignore")
    assert c.label_selector == LabelSelector(
        (
            Requirement("app", Operator.IN, ("x",)),
            Requirement("pod-template-hash", Operator.IN, ("abc",)),
        )
    )


# -- plain fields ----------------------------------------------------------------------------


def test_plain_fields_and_defaults() -> None:
    """Identity, defaults for absent fields, and the boolean summaries."""
    raw = make_pod("p", namespace="ns", priority=None, node_name=None, labels={"a": "b"})
    del raw["spec"]["schedulerName"]
    pod = pod_from_raw(raw)
    assert (pod.key, pod.name, pod.namespace, pod.uid) == ("ns/p", "p", "ns", "uid-ns-p")
    assert (pod.priority, pod.node_name, pod.scheduler_name) == (0, "", "default-scheduler")
    assert (pod.deleting, pod.claim_names, pod.has_resource_claims) == (False, (), False)
    assert pod.labels == {"a": "b"}
    assert pod.phase == "Pending"


def test_flags_from_volumes_claims_and_deletion() -> None:
    """PVC and ephemeral volumes, resource claims, deletionTimestamp and nomination are read."""
    raw = make_pod(
        "p",
        priority=1000,
        node_name="n1",
        batching=True,
        volumes=[{"name": "v", "ephemeral": {"volumeClaimTemplate": {}}}],
    )
    raw["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:01Z"
    raw["spec"]["resourceClaims"] = [{"name": "gpu", "resourceClaimTemplateName": "t"}]
    raw["status"]["resourceClaimStatuses"] = [{"name": "gpu", "resourceClaimName": "p-gpu-x"}]
    raw["status"]["nominatedNodeName"] = "n2"
    pod = pod_from_raw(raw)
    assert (pod.priority, pod.node_name, pod.batching_annotation) == (1000, "n1", "true")
    assert (pod.deleting, pod.claim_names, pod.has_resource_claims) == (True, ("p-v",), True)
    assert pod.nominated_node_name == "n2"
    assert [(c.name, c.resource_claim_template_name) for c in pod.resource_claims] == [("gpu", "t")]
    assert [(s.name, s.resource_claim_name) for s in pod.resource_claim_statuses] == [
        ("gpu", "p-gpu-x")
    ]
    pvc = pod_from_raw(
        make_pod("p", volumes=[{"name": "v", "persistentVolumeClaim": {"claimName": "c"}}])
    )
    assert pvc.claim_names == ("c",)


# -- errors ------------------------------------------------------------------------------------

Mutate = Callable[[Raw], object]


def _set(path: str, value: object) -> Mutate:
    """A mutation that sets a dotted path (integers index lists) in the raw pod."""

    def mutate(raw: Raw) -> None:
        parts = path.split(".")
        node: Any = raw
        for part in parts[:-1]:
            node = node[int(part)] if part.isdigit() else node.setdefault(part, {})
        last = parts[-1]
        if last.isdigit():
            node[int(last)] = value
        else:
            node[last] = value

    return mutate


def _expr(key: str, op: str, values: list[str] | None = None) -> Raw:
    out: Raw = {"key": key, "operator": op}
    if values is not None:
        out["values"] = values
    return out


def _node_term(expr: Raw, kind: str = "matchExpressions") -> Raw:
    return {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [{kind: [expr]}]
            }
        }
    }


NA = (
    "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]"
)
AA = "spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0]"
TSC = {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"}


@pytest.mark.parametrize(
    ("mutate", "field", "fragment"),
    [
        pytest.param(_set("metadata.name", None), "metadata.name", "required", id="missing-name"),
        pytest.param(
            _set("metadata", ["x"]), "metadata", "expected an object", id="metadata-is-a-list"
        ),
        pytest.param(
            _set("metadata.labels", {"a": 1}),
            "metadata.labels.a",
            "expected a string",
            id="label-value-int",
        ),
        pytest.param(
            _set("spec.containers", {"c": {}}),
            "spec.containers",
            "expected a list",
            id="containers-is-a-dict",
        ),
        pytest.param(
            _set("spec.containers.0", "c"),
            "spec.containers[0]",
            "expected an object",
            id="container-is-a-string",
        ),
        pytest.param(
            _set("spec.containers.0.resources", {"requests": {"cpu": "1K"}}),
            "spec.containers[0].resources.requests.cpu",
            "'1K'",
            id="malformed-quantity",
        ),
        pytest.param(
            _set("spec.containers.0.resources", {"requests": {"memory": "-1Gi"}}),
            "spec.containers[0].resources.requests.memory",
            "negative",
            id="negative-request",
        ),
        pytest.param(
            _set("spec.containers.0.resources", {"limits": {"cpu": "lots"}}),
            "spec.containers[0].resources.limits.cpu",
            "'lots'",
            id="malformed-limit",
        ),
        pytest.param(
            _set("spec.overhead", {"cpu": True}), "spec.overhead.cpu", "number", id="overhead-bool"
        ),
        pytest.param(
            _set("spec.priority", "high"),
            "spec.priority",
            "expected an integer",
            id="priority-string",
        ),
        pytest.param(
            _set("spec.priority", 1.5), "spec.priority", "expected an integer", id="priority-float"
        ),
        pytest.param(
            _set("spec.containers.0.ports", [{"hostPort": "80"}]),
            "spec.containers[0].ports[0].hostPort",
            "expected an integer",
            id="host-port-string",
        ),
        pytest.param(
            _set("spec.nodeSelector", {"a": 1}),
            "spec.nodeSelector.a",
            "expected a string",
            id="node-selector-int",
        ),
        pytest.param(
            _set("spec.affinity", _node_term(_expr("k", "Near", ["a"]))),
            f"{NA}.matchExpressions[0].operator",
            "unknown operator",
            id="unknown-operator",
        ),
        pytest.param(
            _set("spec.affinity", _node_term(_expr("k", "Gt", ["1", "2"]))),
            f"{NA}.matchExpressions[0].values",
            "exactly one",
            id="gt-two-values",
        ),
        pytest.param(
            _set("spec.affinity", _node_term(_expr("k", "Lt", ["x"]))),
            f"{NA}.matchExpressions[0].values[0]",
            "integer",
            id="lt-non-integer",
        ),
        pytest.param(
            _set("spec.affinity", _node_term(_expr("k", "Lt", ["1_0"]))),
            f"{NA}.matchExpressions[0].values[0]",
            "integer",
            id="lt-python-only-integer",
        ),
        pytest.param(
            _set("spec.affinity", _node_term(_expr("k", "In", []))),
            f"{NA}.matchExpressions[0].values",
            "non-empty",
            id="in-without-values",
        ),
        pytest.param(
            _set("spec.affinity", _node_term(_expr("k", "NotIn"))),
            f"{NA}.matchExpressions[0].values",
            "non-empty",
            id="notin-without-values",
        ),
        pytest.param(
            _set("spec.affinity", _node_term(_expr("k", "Exists", ["a"]))),
            f"{NA}.matchExpressions[0].values",
            "empty",
            id="exists-with-values",
        ),
        pytest.param(
            _set("spec.affinity", _node_term(_expr("k", "DoesNotExist", ["a"]))),
            f"{NA}.matchExpressions[0].values",
            "empty",
            id="doesnotexist-with-values",
        ),
        pytest.param(
            _set("spec.affinity", _node_term(_expr("Bad Key!", "Exists"))),
            f"{NA}.matchExpressions[0].key",
            "invalid label key",
            id="invalid-key",
        ),
        pytest.param(
            _set("spec.affinity", _node_term(_expr("k", "In", ["no spaces"]))),
            f"{NA}.matchExpressions[0].values[0]",
            "invalid label value",
            id="invalid-value",
        ),
        pytest.param(
            _set("spec.affinity", _node_term(_expr("metadata.uid", "In", ["u"]), "matchFields")),
            f"{NA}.matchFields[0].key",
            "metadata.name",
            id="match-fields-other-key",
        ),
        pytest.param(
            _set("spec.affinity", _node_term(_expr("metadata.name", "Exists"), "matchFields")),
            f"{NA}.matchFields[0].operator",
            "unknown operator",
            id="match-fields-exists",
        ),
        pytest.param(
            _set(
                "spec.affinity", _node_term(_expr("metadata.name", "In", ["a", "b"]), "matchFields")
            ),
            f"{NA}.matchFields[0].values",
            "exactly one",
            id="match-fields-two-values",
        ),
        pytest.param(
            _set(
                "spec.affinity",
                {
                    "nodeAffinity": {
                        "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": []}
                    }
                },
            ),
            "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms",
            "at least one",
            id="no-node-selector-terms",
        ),
        pytest.param(
            _set(
                "spec.affinity",
                {
                    "nodeAffinity": {
                        "preferredDuringSchedulingIgnoredDuringExecution": [
                            {"weight": 0, "preference": {}}
                        ]
                    }
                },
            ),
            "spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight",
            "1-100",
            id="preferred-weight-zero",
        ),
        pytest.param(
            _set("spec.tolerations", [{"key": "k", "effect": "Sometimes"}]),
            "spec.tolerations[0].effect",
            "unknown effect",
            id="bad-toleration-effect",
        ),
        pytest.param(
            _set("spec.tolerations", [{"key": "k", "operator": "Exists", "value": "v"}]),
            "spec.tolerations[0].value",
            "empty",
            id="exists-toleration-with-value",
        ),
        pytest.param(
            _set("spec.tolerations", [{"key": "k", "operator": "Gt", "value": "1"}]),
            "spec.tolerations[0].operator",
            "unknown operator",
            id="bad-toleration-operator",
        ),
        pytest.param(
            _set("spec.tolerations", [{"value": "v"}]),
            "spec.tolerations[0].operator",
            "Exists",
            id="empty-key-needs-exists",
        ),
        pytest.param(
            _set("spec.tolerations", [{"key": "k", "tolerationSeconds": "30"}]),
            "spec.tolerations[0].tolerationSeconds",
            "integer",
            id="toleration-seconds-string",
        ),
        pytest.param(
            _set("spec.affinity", anti({"labelSelector": {}})),
            f"{AA}.topologyKey",
            "required",
            id="affinity-without-topology-key",
        ),
        pytest.param(
            _set(
                "spec.affinity",
                anti(
                    {
                        "topologyKey": "z",
                        "labelSelector": {"matchExpressions": [_expr("a", "Gt", ["1"])]},
                    }
                ),
            ),
            f"{AA}.labelSelector.matchExpressions[0].operator",
            "unknown operator",
            id="label-selector-has-no-gt",
        ),
        pytest.param(
            _set(
                "spec.affinity",
                anti({"topologyKey": "z", "labelSelector": {"matchLabels": {"a/b/c": "x"}}}),
            ),
            f"{AA}.labelSelector.matchLabels",
            "invalid label key",
            id="match-labels-bad-key",
        ),
        pytest.param(
            _set(
                "spec.affinity",
                anti(
                    {
                        "topologyKey": "z",
                        "labelSelector": {},
                        "matchLabelKeys": ["a"],
                        "mismatchLabelKeys": ["a"],
                    }
                ),
            ),
            f"{AA}.mismatchLabelKeys",
            "must not also be",
            id="label-key-in-match-and-mismatch",
        ),
        pytest.param(
            _set(
                "spec.affinity",
                {
                    "podAffinity": {
                        "preferredDuringSchedulingIgnoredDuringExecution": [
                            {"weight": 101, "podAffinityTerm": {"topologyKey": "z"}}
                        ]
                    }
                },
            ),
            "spec.affinity.podAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight",
            "1-100",
            id="pod-affinity-weight-too-big",
        ),
        pytest.param(
            _set("spec.topologySpreadConstraints", [{**TSC, "maxSkew": 0}]),
            "spec.topologySpreadConstraints[0].maxSkew",
            "greater than zero",
            id="max-skew-zero",
        ),
        pytest.param(
            _set("spec.topologySpreadConstraints", [{**TSC, "whenUnsatisfiable": "Maybe"}]),
            "spec.topologySpreadConstraints[0].whenUnsatisfiable",
            "unknown value",
            id="bad-when-unsatisfiable",
        ),
        pytest.param(
            _set("spec.topologySpreadConstraints", [{**TSC, "minDomains": 0}]),
            "spec.topologySpreadConstraints[0].minDomains",
            "greater than zero",
            id="min-domains-zero",
        ),
        pytest.param(
            _set(
                "spec.topologySpreadConstraints",
                [{**TSC, "whenUnsatisfiable": "ScheduleAnyway", "minDomains": 2}],
            ),
            "spec.topologySpreadConstraints[0].minDomains",
            "DoNotSchedule",
            id="min-domains-needs-do-not-schedule",
        ),
        pytest.param(
            _set("spec.topologySpreadConstraints", [{**TSC, "nodeTaintsPolicy": "Sometimes"}]),
            "spec.topologySpreadConstraints[0].nodeTaintsPolicy",
            "unknown policy",
            id="bad-taints-policy",
        ),
        pytest.param(
            _set("spec.topologySpreadConstraints", [{**TSC, "topologyKey": ""}]),
            "spec.topologySpreadConstraints[0].topologyKey",
            "required",
            id="spread-without-topology-key",
        ),
        pytest.param(
            _set("status.containerStatuses", [{"name": "c", "allocatedResources": {"cpu": "x"}}]),
            "status.containerStatuses[0].allocatedResources.cpu",
            "'x'",
            id="bad-allocated-resources",
        ),
    ],
)
def test_errors_name_the_field(mutate: Mutate, field: str, fragment: str) -> None:
    """Bad input raises ModelError naming the pod, the field path and the problem."""
    raw = make_pod("p")
    mutate(raw)
    with pytest.raises(ModelError) as info:
        pod_from_raw(raw)
    assert info.value.field == field
    assert fragment in info.value.message
    assert info.value.obj in ("Pod default/p", "Pod default/<unnamed>", "Pod <unnamed>")
    assert field in str(info.value)


def test_error_names_the_pod() -> None:
    """The object in the error is ``Pod namespace/name``."""
    raw = make_pod("web-1", namespace="shop", cpu="oops")
    with pytest.raises(ModelError) as info:
        pod_from_raw(raw)
    assert info.value.obj == "Pod shop/web-1"
    assert str(info.value).startswith("Pod shop/web-1: spec.containers[0].resources.requests.cpu:")


def test_not_a_mapping() -> None:
    """A pod that is not an object at all is a ModelError too."""
    with pytest.raises(ModelError):
        pod_from_raw(["not", "a", "pod"])  # type: ignore[arg-type]


def test_huge_integers_are_fine() -> None:
    """Python ints have no int64 limit: a huge priority or request still parses."""
    pod = pod_from_raw(
        make_pod(
            "p",
            priority=2**70,
            containers=[make_container(requests={"example.com/x": str(10**25)})],
        )
    )
    assert pod.priority == 2**70
    assert pod.requests.scalar == {"example.com/x": 10**25}


# -- pod_with_status: an update of status members (or labels) applied to a parsed record --


def _running(raw: dict[str, Any], **status: Any) -> dict[str, Any]:
    out = copy.deepcopy(raw)
    out["metadata"]["resourceVersion"] = "2"
    out["status"] = {**out.get("status", {}), **status}
    return out


@pytest.mark.parametrize(
    "status",
    [
        pytest.param({"phase": "Running", "startTime": "2026-01-01T00:00:05Z"}, id="running"),
        pytest.param({"nominatedNodeName": "n2"}, id="nominated"),
        pytest.param(
            {
                "conditions": [
                    {
                        "type": "DisruptionTarget",
                        "status": "True",
                        "reason": "PreemptionByScheduler",
                    }
                ]
            },
            id="preempted",
        ),
    ],
)
def test_pod_with_status_equals_a_full_parse(status: dict[str, Any]) -> None:
    raw = make_pod("p", cpu="1", node_name="n1")
    updated = _running(raw, **status)
    record = pod_with_status(pod_from_raw(raw), updated["status"], "2")
    assert record == pod_from_raw(updated)


def test_pod_with_status_names_a_bad_field() -> None:
    with pytest.raises(ModelError) as caught:
        pod_with_status(pod_from_raw(make_pod("p", cpu="1")), {"startTime": "yesterday"}, "2")
    assert caught.value.field == "status.startTime"
    assert "default/p" in str(caught.value)


def test_pod_with_new_labels_unless_a_term_reads_them() -> None:
    """Labels are swapped in for a plain pod; a pod whose spread constraints resolve
    matchLabelKeys against its labels is left to the full parse (None)."""
    plain = pod_from_raw(make_pod("p", cpu="1", labels={"app": "a"}))
    relabelled = pod_with_status(plain, {}, "2", labels={"app": "b"}, relabel=True)
    assert relabelled is not None
    assert relabelled.labels == {"app": "b"}
    spread = [
        {
            "maxSkew": 1,
            "topologyKey": "zone",
            "whenUnsatisfiable": "DoNotSchedule",
            "labelSelector": {"matchLabels": {"app": "a"}},
            "matchLabelKeys": ["app"],
        }
    ]
    spreading = pod_from_raw(make_pod("q", cpu="1", labels={"app": "a"}, topology_spread=spread))
    assert pod_with_status(spreading, {}, "2", labels={"app": "b"}, relabel=True) is None
