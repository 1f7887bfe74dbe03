"""Bad input, property-based: malformed pods, nodes and configuration files.

Each example takes a valid, feature-rich object and puts arbitrary JSON (junk quantities,
unknown operators, wrong types, huge numbers, missing fields) at one of the paths the
scheduler reads. Whatever arrives, the watch side never raises: a pod either parses and
is scheduled or reported, or is reported as unreadable with the field named; a node either
parses or is skipped (and out of the cache); scheduling what was accepted never raises
either. A configuration either loads or raises ConfigError naming the field.
"""

from __future__ import annotations

import copy
import math
from typing import TYPE_CHECKING, Any, TypeVar

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scheduler.cycle.eventhandlers import EventHandlers
from scheduler.framework.config import ConfigError, load_config
from scheduler.kube.controller.nodes import NodeEvents
from scheduler.kube.controller.pods import PodEvents
from scheduler.model.errors import ModelError
from scheduler.model.parse import node_from_raw, pod_from_raw
from scheduler.sim import workload as simwork
from scheduler.sim.faults import FaultConfig
from tests.builders import make_container, make_node, make_pod, taint, toleration
from tests.harness import drain, scheduler_for
from tests.reliability import invariants
from tests.reliability.support import Figures, MakeSim, bound_count, create_paced
from tests.scheduler_process import BATCHING, SCHEDULER, SchedulerProc, wait_for

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path as PathLike

T = TypeVar("T")

pytestmark = pytest.mark.reliability

Path = tuple[str | int, ...]

JUNK_TEXT = [
    "NaN", "Inf", "1_000", "1K", "--1", "1e400", "9" * 40, "99999999999999999999Ei", "0.1m",
    "-1", "1.5.5", "", " 1", "Gi", "In", "NotIn", "Exists", "Gt", "Lt", "Near", "NoSchedule",
    "Sometimes", "a/b/c", "x" * 300, "\u00e9\u00e8", "null",
]  # fmt: skip
SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**80), max_value=2**80)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.sampled_from(JUNK_TEXT)
    | st.text(max_size=6)
)
JSON = st.recursive(
    SCALARS,
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(
            st.sampled_from(["key", "operator", "values", "cpu", "x"]), inner, max_size=3
        )
    ),
    max_leaves=6,
)
DELETE = object()
"""Sentinel value: remove the key (or list item) instead of replacing it."""

ZONE_TERM = {
    "matchExpressions": [
        {"key": "zone", "operator": "In", "values": ["a", "b"]},
        {"key": "cores", "operator": "Gt", "values": ["1"]},
    ]
}
POD_BASE = make_pod(
    "rich",
    containers=[
        make_container(cpu="500m", memory="1Gi", host_ports=[8080]),
        make_container("side", requests={"cpu": "100m", "example.com/gpu": "1"}),
    ],
    init_containers=[make_container("init", cpu="1", memory="2Gi")],
    overhead={"cpu": "10m"},
    priority=5,
    labels={"app": "rich"},
    batching=True,
    node_selector={"pool": "general"},
    affinity={
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [ZONE_TERM]},
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": 10, "preference": ZONE_TERM}
            ],
        },
        "podAntiAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {
                    "labelSelector": {"matchLabels": {"app": "rich"}},
                    "topologyKey": "kubernetes.io/hostname",
                }
            ]
        },
    },
    tolerations=[toleration("dedicated", "batch"), toleration(operator="Exists")],
    topology_spread=[
        {
            "maxSkew": 1,
            "topologyKey": "zone",
            "whenUnsatisfiable": "ScheduleAnyway",
            "labelSelector": {"matchExpressions": [{"key": "app", "operator": "Exists"}]},
        }
    ],
)
C0 = ("spec", "containers", 0)
AFFINITY = ("spec", "affinity", "nodeAffinity")
REQUIRED = (*AFFINITY, "requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms")
POD_PATHS: list[Path] = [
    ("metadata",),
    ("metadata", "name"),
    ("metadata", "uid"),
    ("metadata", "labels"),
    ("metadata", "labels", "app"),
    ("metadata", "annotations"),
    ("metadata", "annotations", "batch-scheduler.io/batching"),
    ("metadata", "creationTimestamp"),
    ("spec",),
    ("spec", "schedulingGates"),
    ("spec", "containers"),
    C0,
    (*C0, "image"),
    (*C0, "resources"),
    (*C0, "resources", "requests"),
    (*C0, "resources", "requests", "cpu"),
    (*C0, "resources", "requests", "memory"),
    (*C0, "ports"),
    (*C0, "ports", 0, "hostPort"),
    (*C0, "ports", 0, "protocol"),
    ("spec", "containers", 1, "resources", "requests", "example.com/gpu"),
    ("spec", "initContainers"),
    ("spec", "initContainers", 0, "resources", "requests", "memory"),
    ("spec", "overhead"),
    ("spec", "overhead", "cpu"),
    ("spec", "priority"),
    ("spec", "nodeSelector"),
    ("spec", "nodeSelector", "pool"),
    ("spec", "nodeName"),
    ("spec", "affinity"),
    AFFINITY,
    REQUIRED,
    (*REQUIRED, 0, "matchExpressions"),
    (*REQUIRED, 0, "matchExpressions", 0, "operator"),
    (*REQUIRED, 0, "matchExpressions", 0, "values"),
    (*REQUIRED, 0, "matchExpressions", 1, "values", 0),
    (*AFFINITY, "preferredDuringSchedulingIgnoredDuringExecution", 0, "weight"),
    ("spec", "affinity", "podAntiAffinity", "requiredDuringSchedulingIgnoredDuringExecution"),
    (
        "spec",
        "affinity",
        "podAntiAffinity",
        "requiredDuringSchedulingIgnoredDuringExecution",
        0,
        "labelSelector",
    ),
    ("spec", "tolerations"),
    ("spec", "tolerations", 0, "operator"),
    ("spec", "tolerations", 0, "effect"),
    ("spec", "tolerations", 1, "tolerationSeconds"),
    ("spec", "topologySpreadConstraints"),
    ("spec", "topologySpreadConstraints", 0, "maxSkew"),
    ("spec", "topologySpreadConstraints", 0, "whenUnsatisfiable"),
    ("spec", "topologySpreadConstraints", 0, "labelSelector", "matchExpressions", 0, "operator"),
    ("status",),
    ("status", "phase"),
]
NODE_BASE = make_node(
    "n-rich",
    extra={"example.com/gpu": "4"},
    labels={"pool": "general", "zone": "a", "cores": "8"},
    taints=[taint("dedicated", "batch")],
    images=[(["registry.k8s.io/pause:3.10"], 700_000)],
)
NODE_PATHS: list[Path] = [
    ("metadata",),
    ("metadata", "name"),
    ("metadata", "labels"),
    ("metadata", "labels", "zone"),
    ("spec",),
    ("spec", "unschedulable"),
    ("spec", "taints"),
    ("spec", "taints", 0),
    ("spec", "taints", 0, "effect"),
    ("spec", "taints", 0, "key"),
    ("status",),
    ("status", "allocatable"),
    ("status", "allocatable", "cpu"),
    ("status", "allocatable", "memory"),
    ("status", "allocatable", "pods"),
    ("status", "allocatable", "example.com/gpu"),
    ("status", "capacity"),
    ("status", "images"),
    ("status", "images", 0, "names"),
    ("status", "images", 0, "sizeBytes"),
]
CONFIG_BASE: dict[str, Any] = {
    "apiVersion": "kubescheduler.config.k8s.io/v1",
    "kind": "KubeSchedulerConfiguration",
    "percentageOfNodesToScore": 50,
    "podInitialBackoffSeconds": 1,
    "podMaxBackoffSeconds": 10,
    "leaderElection": {"leaderElect": False, "leaseDuration": "15s"},
    "profiles": [
        {
            "schedulerName": "batch-scheduler",
            "plugins": {
                "score": {"disabled": [{"name": "ImageLocality"}], "enabled": []},
            },
            "pluginConfig": [
                {
                    "name": "NodeResourcesFit",
                    "args": {
                        "scoringStrategy": {
                            "type": "LeastAllocated",
                            "resources": [{"name": "cpu", "weight": 1}],
                        }
                    },
                }
            ],
        }
    ],
}
CONFIG_PATHS: list[Path] = [
    ("apiVersion",),
    ("kind",),
    ("percentageOfNodesToScore",),
    ("podInitialBackoffSeconds",),
    ("podMaxBackoffSeconds",),
    ("leaderElection",),
    ("leaderElection", "leaseDuration"),
    ("leaderElection", "leaderElect"),
    ("leaderElection", "renewDeadline"),
    ("leaderElection", "retryPeriod"),
    ("profiles", 0, "plugins", "score", "enabled"),
    ("profiles",),
    ("profiles", 0),
    ("profiles", 0, "schedulerName"),
    ("profiles", 0, "plugins"),
    ("profiles", 0, "plugins", "score"),
    ("profiles", 0, "plugins", "score", "disabled", 0, "name"),
    ("profiles", 0, "pluginConfig", 0, "name"),
    ("profiles", 0, "pluginConfig", 0, "args"),
    ("profiles", 0, "pluginConfig", 0, "args", "scoringStrategy", "type"),
    ("profiles", 0, "pluginConfig", 0, "args", "scoringStrategy", "resources", 0, "weight"),
]

MUTATION_SETTINGS = settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


def mutated(base: dict[str, Any], path: Path, value: object) -> dict[str, Any]:
    """A deep copy of ``base`` with ``value`` at ``path`` (``DELETE`` removes it)."""
    out = copy.deepcopy(base)
    parent: Any = out
    for step in path[:-1]:
        parent = parent[step]
    last = path[-1]
    if value is DELETE:
        del parent[last]
    else:
        parent[last] = value
    return out


def mutations(base: dict[str, Any], paths: list[Path]) -> st.SearchStrategy[dict[str, Any]]:
    """One path replaced by arbitrary JSON or deleted; sometimes two such changes."""

    def one(obj: dict[str, Any]) -> st.SearchStrategy[dict[str, Any]]:
        return st.tuples(st.sampled_from(paths), JSON | st.just(DELETE)).map(
            lambda change: _apply_if_reachable(obj, *change)
        )

    return one(base) | one(base).flatmap(one)


def _apply_if_reachable(obj: dict[str, Any], path: Path, value: object) -> dict[str, Any]:
    try:
        return mutated(obj, path, value)
    except (KeyError, IndexError, TypeError):
        return obj  # an earlier change removed or retyped the path: keep what we have


def _parsed(parse: Callable[[Any], T], raw: dict[str, Any]) -> tuple[T | None, ModelError | None]:
    try:
        return parse(raw), None
    except ModelError as exc:
        return None, exc


def _text_at(raw: dict[str, Any], *path: str) -> str:
    value: Any = raw
    for step in path:
        value = value.get(step) if isinstance(value, dict) else None
    return value if isinstance(value, str) else ""


@MUTATION_SETTINGS
@given(mutations(POD_BASE, POD_PATHS))
def test_any_malformed_pod_is_scheduled_or_reported_never_raised(raw: dict[str, Any]) -> None:
    nodes = [NODE_BASE, make_node("n-plain", labels={"pool": "general", "zone": "b"})]
    scheduler, _, reporter = scheduler_for(nodes)
    events = PodEvents(EventHandlers(scheduler), metrics=scheduler.metrics, reporter=reporter)  # type: ignore[arg-type]
    events.apply("ADDED", raw)
    events.apply("MODIFIED", raw)  # the same problem is reported once
    pod, exc = _parsed(pod_from_raw, raw)
    if exc is not None:
        assert exc.field, "a model error must name the field"
        assert exc.obj.startswith("Pod "), exc.obj
        name, ns = _text_at(raw, "metadata", "name"), _text_at(raw, "metadata", "namespace")
        # Ours as far as can be read: named our scheduler and not assigned. (Whose a pod
        # is without a readable spec nobody can tell; it is logged and counted only.)
        ours = _text_at(raw, "spec", "schedulerName") == "batch-scheduler" and not (
            _text_at(raw, "spec", "nodeName")
        )
        if ours and name and _text_at(raw, "metadata", "uid"):
            message = reporter.unschedulable_messages[f"{ns}/{name}"]
            assert exc.field in message, (message, exc.field)
        assert len(scheduler.queue) == 0
        return
    assert pod is not None
    drain(scheduler)  # whatever parsed must schedule without raising
    if scheduler.owns(pod) and not pod.node_name and not pod.terminal and not pod.deleting:
        placed = scheduler.cluster.get_pod(pod.uid)
        assert (
            placed is not None
            or pod.key in reporter.unschedulable_messages
            or (pod.key in reporter.failures)
        ), "an accepted pod was neither placed nor reported"


@MUTATION_SETTINGS
@given(mutations(NODE_BASE, NODE_PATHS))
def test_any_malformed_node_is_cached_or_skipped_never_raised(raw: dict[str, Any]) -> None:
    scheduler, _, reporter = scheduler_for([])
    nodes = NodeEvents(EventHandlers(scheduler), metrics=scheduler.metrics)
    nodes.apply("ADDED", NODE_BASE)  # a good version first: a bad update must evict it
    nodes.apply("MODIFIED", raw)
    node, exc = _parsed(node_from_raw, raw)
    if exc is not None:
        assert exc.field, exc
        assert exc.obj.startswith("Node "), exc
        name = _text_at(raw, "metadata", "name")
        if name == NODE_BASE["metadata"]["name"]:  # its good version is evicted
            assert scheduler.cluster.node_info(name) is None
        assert name not in nodes.versions
        return
    assert node is not None
    assert nodes.versions[node.name] == node.resource_version
    cached = scheduler.cluster.node_info(node.name)
    assert cached is not None
    assert cached.node == node
    # Whatever node parsed, a pod can be scheduled against it without raising.
    PodEvents(EventHandlers(scheduler), metrics=scheduler.metrics, reporter=reporter).apply(
        "ADDED", make_pod("p", cpu="100m", tolerations=[toleration("dedicated", "batch")])
    )
    drain(scheduler)


@settings(max_examples=300, deadline=None)
@given(mutations(CONFIG_BASE, CONFIG_PATHS))
def test_any_malformed_config_loads_or_names_the_field(doc: dict[str, Any]) -> None:
    try:
        config = load_config(doc)
    except ConfigError as exc:
        error = exc
    else:
        assert 0 <= config.percentage_of_nodes_to_score <= 100
        assert math.isfinite(config.pod_max_backoff_seconds)
        return
    assert error.path, f"no field path in {error}"
    assert str(error).startswith(error.path), str(error)


# -- end to end: the real scheduler against the emulator ---------------------------------------

BAD_PODS: dict[str, tuple[Path, object, str]] = {
    "nan-cpu": ((*C0, "resources", "requests", "cpu"), "NaN", "spec.containers[0].resources"),
    "underscore-memory": (
        (*C0, "resources", "requests", "memory"),
        "1_000",
        "spec.containers[0].resources.requests.memory",
    ),
    "double-sign-cpu": (
        (*C0, "resources", "requests", "cpu"),
        "--1",
        "spec.containers[0].resources",
    ),
    "number-selector": (("spec", "nodeSelector"), {"pool": 5}, "spec.nodeSelector.pool"),
    "near-operator": (
        ("spec", "affinity"),
        {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {"matchExpressions": [{"key": "zone", "operator": "Near", "values": []}]}
                    ]
                }
            }
        },
        "operator",
    ),
    "string-tolerations": (("spec", "tolerations"), "everything", "spec.tolerations"),
    # Not silently held back as if gated: reported, naming the field.
    "string-gates": (("spec", "schedulingGates"), "example.com/gate", "spec.schedulingGates"),
}
"""Pod name → (path, bad value, what the reported message must name)."""
BAD_NODES: dict[str, tuple[Path, object, str]] = {
    "bad-cpu": (("status", "allocatable", "cpu"), "lots", "status.allocatable.cpu"),
    "bad-effect": (
        ("spec", "taints"),
        [{"key": "k", "effect": "Sometimes"}],
        "spec.taints[0].effect",
    ),
}


def test_bad_pods_and_nodes_are_reported_and_everything_else_scheduled(
    make_sim: MakeSim, tmp_path: PathLike, figures: Figures
) -> None:
    # kube-apiserver refuses most of these objects (400/422, tests/cluster/test_conformance.py);
    # the emulator stores them anyway, so the scheduler's own defences are what is tested.
    _, api, kubeconfig = make_sim(faults=FaultConfig(accept_invalid=True))
    good_nodes = simwork.make_nodes(4, prefix="good-", labels={"pool": "general"})
    turned_bad = simwork.make_nodes(1, prefix="turned-bad-", labels={"pool": "general"})[0]
    bad_nodes = []
    for name, (path, value, _) in BAD_NODES.items():
        node = simwork.make_nodes(1, prefix=f"{name}-", labels={"pool": "general"})[0]
        bad_nodes.append(mutated(node, path, value))
    create_paced(api, [*good_nodes, turned_bad, *bad_nodes])
    proc = SchedulerProc(kubeconfig, tmp_path / "scheduler.log")
    try:
        proc.wait_ready()
        # A good node whose update we cannot read: evicted, not kept at its old version.
        api.write(
            "PATCH",
            f"/api/v1/nodes/{turned_bad['metadata']['name']}/status",
            {"status": {"allocatable": {"pods": "x"}}},
            ctype="application/merge-patch+json",
        )
        bad_node_names = [n["metadata"]["name"] for n in bad_nodes] + [
            turned_bad["metadata"]["name"]
        ]
        assert wait_for(lambda: len(proc.events("bad_node_skipped")) == len(bad_node_names), 10), (
            proc.events("bad_node_skipped")
        )

        template = simwork.make_pods(
            1, prefix="t-", scheduler_name=SCHEDULER, node_selector={"pool": "general"}
        )[0]
        bad_pods = []
        for name, (path, value, _) in BAD_PODS.items():
            pod = mutated(template, path, value)
            pod["metadata"]["name"] = name
            bad_pods.append(pod)
        good_pods = simwork.make_pods(
            40,
            prefix="ok-",
            scheduler_name=SCHEDULER,
            node_selector={"pool": "general"},
            annotations=BATCHING,
        )
        create_paced(api, bad_pods[:3] + good_pods + bad_pods[3:])

        def conditions() -> dict[str, dict[str, Any]]:
            out = {}
            for pod in api.pods():
                name = pod["metadata"]["name"]
                cond = invariants.scheduled_condition(pod)
                if name in BAD_PODS and cond and cond.get("status") == "False":
                    out[name] = cond
            return out

        reported = wait_for(lambda: len(c := conditions()) == len(BAD_PODS) and c, 20)
        assert reported, conditions()
        for name, (_, _, named) in BAD_PODS.items():
            assert named in reported[name]["message"], (name, reported[name])

        def failed_scheduling() -> set[str]:
            events = api.request("GET", "/api/v1/namespaces/default/events")["items"]
            return {
                e["involvedObject"]["name"] for e in events if e.get("reason") == "FailedScheduling"
            }

        # Conditions are written first; the Events follow (the reporter's own order).
        assert wait_for(lambda: failed_scheduling() >= set(BAD_PODS), 10), failed_scheduling()

        good_keys = {invariants.pod_key(p) for p in good_pods}
        assert wait_for(lambda: bound_count(api, good_keys) == len(good_pods), 30)
        placed = {(p.get("spec") or {}).get("nodeName") for p in api.pods()}
        assert not placed & set(bad_node_names), placed
        skipped = {r["node"]: r["field"] for r in proc.events("bad_node_skipped")}
        for node in bad_nodes:
            name = node["metadata"]["name"]
            assert BAD_NODES[name.rsplit("-", 1)[0]][2] in skipped[name], skipped
        assert skipped[turned_bad["metadata"]["name"]] == "status.allocatable.pods"
        assert proc.metric("batch_scheduler_bad_objects_total", kind="Pod") == len(BAD_PODS)
        assert proc.metric("batch_scheduler_bad_objects_total", kind="Node") == len(bad_node_names)
        assert proc.alive()
        figures.record(
            bad_pods=len(BAD_PODS),
            bad_pods_reported=len(reported),
            bad_nodes=len(bad_node_names),
            bad_nodes_skipped=len(skipped),
            good_pods=len(good_pods),
            good_bound=len(good_pods),
            bound_to_bad_nodes=0,
        )
    finally:
        code = proc.terminate()
    proc.assert_clean_exit(code)
