"""DynamicResources point by point, against kube v1.37.2's ``TestPlugin`` table.

Cases ported in our own words from ``plugins/dynamicresources/dynamicresources_test.go``
(names kept; the fixtures are kube's: pod ``default/my-pod`` uid 1234, claim
``my-pod-my-resource`` with request ``req-1`` of class ``my-resource-class``, driver
``some-driver``, node ``worker`` with device ``instance-1``). As kube's driver does, each case
runs PreEnqueue, PreFilter, Filter on every node, Score and NormalizeScore when more than one
node fits, then Reserve and PreBind on the best node, or PostFilter when none fits; the
claim writer is a recorder (its API side has tests of its own: tests/kube). Cases kube has
for features off by default (PodGroup claims, extended resources, node-allocatable
resources) or for what we do not port yet (binding conditions, the filter timeout) are
left out; docs/dra.md lists them.
"""

from __future__ import annotations

import copy
import random
from dataclasses import dataclass, field
from typing import Any

import pytest

from scheduler.cache.cluster_state import ClusterState
from scheduler.framework import status as st
from scheduler.framework.config import default_config
from scheduler.framework.cycle_state import CycleState
from scheduler.framework.diagnosis import Diagnosis, FitError
from scheduler.framework.profile import build_profile
from scheduler.model.parse import node_from_raw, pod_from_raw
from scheduler.model.parse_dra_claims import device_class_from_raw, resource_claim_from_raw
from scheduler.model.parse_dra_slices import resource_slice_from_raw
from scheduler.plugins import in_tree_registry, names
from scheduler.plugins.dynamic_resources.claim_binding import CLAIM_WRITER
from scheduler.plugins.dynamic_resources.plugin import DynamicResources
from tests.builders import make_node, make_pod

J = dict[str, Any]
NODE, NODE2, NODE3 = "worker", "worker-2", "worker-3"
DRIVER = "some-driver"
POD, POD_UID = "my-pod", "1234"
RESOURCE = "my-resource"
CLAIM, CLAIM2 = f"{POD}-{RESOURCE}", f"{POD}-{RESOURCE}-2"
CLASS = "my-resource-class"
ATTR = "healthy"
BROKEN = {"cel": {"expression": f'device.attributes["{DRIVER}"].{ATTR}'}}
NO_SUCH_KEY = (
    f"CEL runtime error: no such key: {ATTR}. consider using CEL optional chaining (.? "
    "followed by orValue()) or guarding the check with has() for optional fields"
)


# -- kube's fixtures --------------------------------------------------------------------------


def pod(*claims: tuple[str, str], template: bool = False, in_status: bool = False) -> J:
    """``my-pod`` with ``claims`` (pod claim name, claim or template name)."""
    raw = make_pod(POD, uid=POD_UID)
    key = "resourceClaimTemplateName" if template else "resourceClaimName"
    raw["spec"]["resourceClaims"] = [{"name": name, key: source} for name, source in claims]
    if in_status:
        raw["status"]["resourceClaimStatuses"] = [
            {"name": name, "resourceClaimName": source} for name, source in claims
        ]
    return raw


POD_WITH_CLAIM_NAME = pod((RESOURCE, CLAIM))
POD_WITH_TWO_CLAIM_NAMES = pod((RESOURCE, CLAIM), (f"{RESOURCE}-2", CLAIM2))
POD_WITH_CLAIM_TEMPLATE = pod((RESOURCE, CLAIM), template=True)
POD_WITH_CLAIM_TEMPLATE_IN_STATUS = pod((RESOURCE, CLAIM), template=True, in_status=True)


def request(name: str = "req-1", count: int = 1, *selectors: J, admin: bool = False) -> J:
    exactly: J = {"deviceClassName": CLASS, "count": count}
    if selectors:
        exactly["selectors"] = list(selectors)
    if admin:
        exactly["adminAccess"] = True
    return {"name": name, "exactly": exactly}


def sub(name: str, count: int = 1, *selectors: J) -> J:
    out: J = {"name": name, "deviceClassName": CLASS, "count": count}
    if selectors:
        out["selectors"] = list(selectors)
    return out


def claim(name: str = CLAIM, *requests: J, owned: bool = True, uid: str = "") -> J:
    meta: J = {"name": name, "namespace": "default", "uid": uid or f"uid-{name}"}
    if owned:
        meta["ownerReferences"] = [
            {"apiVersion": "v1", "kind": "Pod", "name": POD, "uid": POD_UID, "controller": True}
        ]
    return {"metadata": meta, "spec": {"devices": {"requests": list(requests) or [request()]}}}


def by_name(node: str) -> J:
    return {
        "nodeSelectorTerms": [
            {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}
        ]
    }


def allocated(
    raw: J, *devices: tuple[str, str], selector: J | None = None, admin: bool = False
) -> J:
    """``raw`` allocated ``(request, device)`` on ``worker`` (or with ``selector``)."""
    out = copy.deepcopy(raw)
    results = [
        {
            "request": req,
            "driver": DRIVER,
            "pool": NODE,
            "device": dev,
            **({"adminAccess": True} if admin else {}),
        }
        for req, dev in devices
    ]
    out["status"] = {
        "allocation": {
            "devices": {"results": results} if results else {},
            "nodeSelector": by_name(NODE) if selector is None else selector,
        }
    }
    return out


def reserved(raw: J, *pods: tuple[str, str]) -> J:
    out = copy.deepcopy(raw)
    out.setdefault("status", {})["reservedFor"] = [
        {"resource": "pods", "name": name, "uid": uid} for name, uid in pods
    ]
    return out


def deleting(raw: J) -> J:
    out = copy.deepcopy(raw)
    out["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    return out


def not_owned(raw: J) -> J:
    out = copy.deepcopy(raw)
    out["metadata"]["ownerReferences"][0]["uid"] += "123"
    return out


PENDING = claim()
ALLOCATED = allocated(PENDING, ("req-1", "instance-1"))
IN_USE = reserved(ALLOCATED, (POD, POD_UID))
OTHER = claim("not-my-claim", owned=False)
OTHER_ALLOCATED = allocated(OTHER, ("req-1", "instance-1"))
OTHER_ALLOCATED_OTHER_DEVICE = allocated(OTHER, ("req-1", "instance-1-other"))


def device_class(*selectors: J) -> J:
    return {"metadata": {"name": CLASS}, "spec": {"selectors": list(selectors)}}


def slice_(node: str, *devices: str | tuple[str, bool], tainted: bool = False) -> J:
    items: list[J] = []
    for device in devices:
        name, healthy = device if isinstance(device, tuple) else (device, None)
        item: J = {"name": name}
        if healthy is not None:
            item["attributes"] = {ATTR: {"bool": healthy}}
        if tainted:
            item["taints"] = [{"key": "example.com/taint", "effect": "NoSchedule"}]
        items.append(item)
    return {
        "metadata": {"name": f"{node}-{DRIVER}"},
        "spec": {
            "driver": DRIVER,
            "nodeName": node,
            "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
            "devices": items,
        },
    }


WORKER_SLICE = slice_(NODE, "instance-1")


# -- the driver --------------------------------------------------------------------------------


class Recorder:
    """The claim writer: remembers what the plugin asked for."""

    def __init__(self) -> None:
        self.bound: list[tuple[str, tuple[str, ...] | None]] = []
        self.unreserved: list[str] = []
        self.deallocated: list[str] = []

    def bind_claims(self, pod: Any, node_name: str, bindings: Any) -> st.Status:
        for b in bindings:
            devices = (
                None
                if b.allocation is None
                else tuple(f"{r.request}={r.device}" for r in b.allocation.results)
            )
            self.bound.append((b.claim.name, devices))
        return st.SUCCESS

    def unreserve(self, claim: Any, pod: Any) -> None:
        self.unreserved.append(claim.name)

    def deallocate(self, claim: Any) -> None:
        self.deallocated.append(claim.name)


def _status(status: st.Status) -> tuple[str, str]:
    return status.code.name, status.message()


@dataclass
class Case:
    pod: J
    claims: list[J] = field(default_factory=list)
    classes: list[J] = field(default_factory=lambda: [device_class()])
    slices: list[J] = field(default_factory=list)
    nodes: tuple[str, ...] = (NODE,)
    in_flight: list[J] = field(default_factory=list)
    want: J = field(default_factory=dict)


def run(case: Case) -> J:
    """kube's testPlugin driver: the points in order; what each answered or did."""
    cluster = ClusterState()
    for name in case.nodes:
        cluster.add_node(node_from_raw(make_node(name, labels={"kubernetes.io/hostname": name})))
    dra = cluster.dra
    for raw in case.classes:
        dra.set_class(device_class_from_raw(raw))
    for raw in case.slices:
        dra.set_slice(resource_slice_from_raw(raw))
    for raw in case.claims:
        dra.set_claim(resource_claim_from_raw(raw))
    for raw in case.in_flight:
        dra.signal_pending_allocation(resource_claim_from_raw(raw))
    config = default_config()
    profile = build_profile(
        config.profiles[0],
        registry=in_tree_registry(),
        snapshot=cluster.snapshot,
        default_percentage=config.percentage_of_nodes_to_score,
        rng=random.Random(0),
    )
    writer = Recorder()
    profile.provide(CLAIM_WRITER, writer)
    (plugin,) = [p for p in profile.plugins if isinstance(p, DynamicResources)]
    the_pod = pod_from_raw(case.pod)
    trace: J = {"pre_enqueue": _status(plugin.pre_enqueue(the_pod))}
    if trace["pre_enqueue"][0] != "SUCCESS":
        return trace
    state = CycleState()
    _, status = plugin.pre_filter(state, the_pod, cluster.snapshot)
    trace["pre_filter"] = _status(status)
    feasible: list[str] = []
    if status.code in (st.Code.SUCCESS, st.Code.SKIP):
        trace["filter"] = {}
        for name in case.nodes:
            info = cluster.snapshot.get(name)
            assert info is not None
            found = (
                st.SUCCESS if status.code is st.Code.SKIP else plugin.filter(state, the_pod, info)
            )
            trace["filter"][name] = _status(found)
            if found.is_success:
                feasible.append(name)
            if found.code is st.Code.ERROR:
                return trace  # an error aborts scheduling
    if not feasible:
        result = plugin.post_filter(state, the_pod, FitError(the_pod.key, 0, Diagnosis()))
        trace["post_filter"] = _status(result.status)
        trace["deallocated"] = writer.deallocated
        return trace
    best = feasible[0]
    if len(feasible) > 1 and plugin.pre_score(state, the_pod, []).is_success:
        infos = [cluster.snapshot.get(n) for n in feasible]
        scores = [plugin.score(state, the_pod, info) for info in infos if info is not None]
        trace["score"] = dict(zip(feasible, scores, strict=True))
        plugin.normalize_score(state, the_pod, [], scores)
        trace["normalized"] = dict(zip(feasible, scores, strict=True))
        best = feasible[scores.index(max(scores))]
    trace["node"] = best
    trace["reserve"] = _status(plugin.reserve(state, the_pod, best))
    trace["in_flight"] = sorted(
        f"{r.request}={r.device}" for a in dra.allocations() for r in a.results
    )
    trace["pre_bind_pre_flight"] = plugin.pre_bind_pre_flight(state, the_pod, best).code.name
    pre_bind = plugin.pre_bind(state, the_pod, best)
    assert isinstance(pre_bind, st.Status)
    trace["pre_bind"] = _status(pre_bind)
    trace["bound"] = writer.bound
    return trace


OK = ("SUCCESS", "")
UNRESOLVABLE = "UNSCHEDULABLE_AND_UNRESOLVABLE"
CANNOT = (UNRESOLVABLE, "cannot allocate all claims")

CASES = [
    pytest.param(
        Case(make_pod(POD, uid=POD_UID)),
        {"pre_filter": ("SKIP", ""), "pre_bind_pre_flight": "SKIP", "bound": []},
        id="empty",
    ),
    pytest.param(
        Case(POD_WITH_CLAIM_NAME, claims=[ALLOCATED, OTHER]),
        {"filter": {NODE: OK}, "reserve": OK, "bound": [(CLAIM, None)]},
        id="claim-reference",
    ),
    pytest.param(
        Case(POD_WITH_CLAIM_TEMPLATE_IN_STATUS, claims=[ALLOCATED, OTHER]),
        {"filter": {NODE: OK}, "bound": [(CLAIM, None)]},
        id="claim-template",
    ),
    pytest.param(
        Case(POD_WITH_CLAIM_TEMPLATE, claims=[ALLOCATED, OTHER]),
        {"pre_enqueue": (UNRESOLVABLE, 'pod "default/my-pod": ResourceClaim not created yet')},
        id="missing-claim",
    ),
    pytest.param(
        Case(POD_WITH_CLAIM_TEMPLATE_IN_STATUS, claims=[deleting(ALLOCATED)]),
        {"pre_enqueue": (UNRESOLVABLE, 'resourceclaim "my-pod-my-resource" is being deleted')},
        id="deleted-claim",
    ),
    pytest.param(
        Case(POD_WITH_CLAIM_TEMPLATE_IN_STATUS, claims=[not_owned(ALLOCATED)]),
        {
            "pre_enqueue": (
                UNRESOLVABLE,
                "ResourceClaim default/my-pod-my-resource was not created for Pod "
                "default/my-pod (Pod is not owner)",
            )
        },
        id="wrong-claim",
    ),
    pytest.param(
        Case(POD_WITH_CLAIM_NAME, claims=[PENDING]),
        {"filter": {NODE: CANNOT}, "post_filter": ("UNSCHEDULABLE", "")},
        id="no-resources",
    ),
    pytest.param(
        Case(POD_WITH_CLAIM_NAME, claims=[PENDING], slices=[WORKER_SLICE]),
        {
            "filter": {NODE: OK},
            "reserve": OK,
            "in_flight": ["req-1=instance-1"],
            "pre_bind_pre_flight": "SUCCESS",
            "bound": [(CLAIM, ("req-1=instance-1",))],
        },
        id="with-resources",
    ),
    pytest.param(
        Case(POD_WITH_CLAIM_NAME, claims=[PENDING, OTHER_ALLOCATED], slices=[WORKER_SLICE]),
        {"filter": {NODE: CANNOT}, "post_filter": ("UNSCHEDULABLE", "")},
        id="exhausted-resources-in-informer-cache",
    ),
    pytest.param(
        Case(
            POD_WITH_CLAIM_NAME,
            claims=[PENDING, OTHER],
            in_flight=[OTHER_ALLOCATED],
            slices=[WORKER_SLICE],
        ),
        {"filter": {NODE: CANNOT}, "post_filter": ("UNSCHEDULABLE", "")},
        id="exhausted-resources-in-flight-claim",
    ),
    pytest.param(
        Case(
            POD_WITH_CLAIM_NAME,
            claims=[PENDING, OTHER],
            in_flight=[OTHER_ALLOCATED_OTHER_DEVICE],
            slices=[WORKER_SLICE],
        ),
        {
            "filter": {NODE: OK},
            "in_flight": ["req-1=instance-1", "req-1=instance-1-other"],
            "bound": [(CLAIM, ("req-1=instance-1",))],
        },
        id="other-resources-in-flight-claim",
    ),
    pytest.param(
        Case(
            POD_WITH_CLAIM_NAME, claims=[PENDING], slices=[slice_(NODE, "instance-1", tainted=True)]
        ),
        {"filter": {NODE: CANNOT}},
        id="tainted-device-enabled",
    ),
    pytest.param(
        Case(
            POD_WITH_CLAIM_NAME,
            claims=[claim(CLAIM, request(admin=True)), OTHER_ALLOCATED],
            slices=[WORKER_SLICE],
        ),
        {"filter": {NODE: OK}, "bound": [(CLAIM, ("req-1=instance-1",))]},
        id="request-admin-access-with-DRAAdminAccess-featuregate",
    ),
    pytest.param(
        Case(
            POD_WITH_CLAIM_NAME,
            claims=[PENDING, allocated(OTHER, ("req-1", "instance-1"), admin=True)],
            slices=[WORKER_SLICE],
        ),
        {"filter": {NODE: OK}, "bound": [(CLAIM, ("req-1=instance-1",))]},
        id="structured-ignore-allocated-admin-access",
    ),
    pytest.param(
        Case(
            POD_WITH_CLAIM_NAME,
            claims=[claim(CLAIM, request("req-1", 1, BROKEN))],
            slices=[WORKER_SLICE],
        ),
        {
            "filter": {
                NODE: (
                    "ERROR",
                    "claim default/my-pod-my-resource: selector #0 on device "
                    f"some-driver/worker/instance-1: {NO_SUCH_KEY}",
                )
            }
        },
        id="claim-parameters-CEL-runtime-error",
    ),
    pytest.param(
        Case(
            POD_WITH_CLAIM_NAME,
            claims=[PENDING],
            classes=[device_class(BROKEN)],
            slices=[WORKER_SLICE],
        ),
        {
            "filter": {
                NODE: (
                    "ERROR",
                    "class my-resource-class: selector #0 on device "
                    f"some-driver/worker/instance-1: {NO_SUCH_KEY}",
                )
            }
        },
        id="class-parameters-CEL-runtime-error",
    ),
    pytest.param(
        Case(
            POD_WITH_CLAIM_NAME,
            claims=[claim(CLAIM, request("req-1", 1, BROKEN))],
            nodes=(NODE, NODE2),
            slices=[WORKER_SLICE, slice_(NODE2, ("instance-1", True))],
        ),
        {
            "filter": {
                NODE: (
                    "ERROR",
                    "claim default/my-pod-my-resource: selector #0 on device "
                    f"some-driver/worker/instance-1: {NO_SUCH_KEY}",
                )
            }
        },
        id="CEL-runtime-error-for-one-of-two-nodes",
    ),
    pytest.param(
        Case(POD_WITH_CLAIM_NAME, claims=[PENDING], classes=[]),
        {
            "pre_filter": (UNRESOLVABLE, f"request req-1: device class {CLASS} does not exist"),
            "post_filter": ("UNSCHEDULABLE", ""),
        },
        id="missing-class",
    ),
    pytest.param(
        Case(
            POD_WITH_CLAIM_NAME,
            claims=[
                allocated(
                    PENDING,
                    selector={
                        "nodeSelectorTerms": [
                            {
                                "matchExpressions": [
                                    {"key": "no-such-label", "operator": "In", "values": ["x"]}
                                ]
                            }
                        ]
                    },
                )
            ],
        ),
        {
            "filter": {NODE: (UNRESOLVABLE, "resourceclaim not available on the node")},
            "post_filter": ("UNSCHEDULABLE", "deallocation of ResourceClaim completed"),
            "deallocated": [CLAIM],
        },
        id="wrong-topology",
    ),
    pytest.param(
        Case(
            POD_WITH_CLAIM_NAME,
            claims=[
                allocated(
                    PENDING,
                    selector={
                        "nodeSelectorTerms": [
                            {
                                "matchExpressions": [
                                    {
                                        "key": "kubernetes.io/hostname",
                                        "operator": "In",
                                        "values": [NODE],
                                    }
                                ]
                            }
                        ]
                    },
                )
            ],
        ),
        {"filter": {NODE: OK}, "bound": [(CLAIM, None)]},
        id="good-topology",
    ),
    pytest.param(
        Case(POD_WITH_CLAIM_NAME, claims=[IN_USE]),
        {"filter": {NODE: OK}, "pre_bind": OK, "bound": []},
        id="reserved-okay",
    ),
    pytest.param(
        Case(
            POD_WITH_CLAIM_NAME,
            claims=[
                claim(
                    CLAIM,
                    {"name": "req-1", "exactly": {"deviceClassName": "does-not-exist"}},
                    owned=False,
                )
            ],
        ),
        {"pre_filter": (UNRESOLVABLE, "request req-1: device class does-not-exist does not exist")},
        id="claim-with-request-with-unknown-device-class",
    ),
    pytest.param(
        Case(
            POD_WITH_CLAIM_NAME,
            claims=[
                claim(
                    CLAIM,
                    {
                        "name": "req-1",
                        "firstAvailable": [
                            {"name": "subreq-1", "deviceClassName": "does-not-exist"}
                        ],
                    },
                )
            ],
        ),
        {
            "pre_filter": (
                UNRESOLVABLE,
                "request req-1/subreq-1: device class does-not-exist does not exist",
            )
        },
        id="claim-with-prioritized-list-unknown-device-class",
    ),
    pytest.param(
        Case(
            POD_WITH_CLAIM_NAME,
            claims=[claim(CLAIM, {"name": "req-1", "firstAvailable": [sub("subreq-1")]})],
            slices=[WORKER_SLICE],
        ),
        {"bound": [(CLAIM, ("req-1/subreq-1=instance-1",))]},
        id="claim-with-prioritized-list",
    ),
    pytest.param(
        Case(
            POD_WITH_CLAIM_NAME,
            claims=[
                claim(
                    CLAIM,
                    {
                        "name": "req-1",
                        "firstAvailable": [
                            sub(
                                "subreq-1",
                                1,
                                {"cel": {"expression": f'device.attributes["{DRIVER}"].{ATTR}'}},
                            ),
                            sub("subreq-2"),
                        ],
                    },
                )
            ],
            nodes=(NODE, NODE2),
            slices=[slice_(NODE, ("instance-1", True)), slice_(NODE2, ("instance-1", False))],
        ),
        {
            "score": {NODE: 8, NODE2: 7},
            "normalized": {NODE: 100, NODE2: 87},
            "node": NODE,
            "bound": [(CLAIM, ("req-1/subreq-1=instance-1",))],
        },
        id="single-claim-prioritized-list-scoring",
    ),
    pytest.param(
        Case(
            POD_WITH_TWO_CLAIM_NAMES,
            claims=[
                claim(CLAIM, {"name": "req-1", "firstAvailable": [sub("subreq-1")]}),
                claim(
                    CLAIM2,
                    {
                        "name": "req-1",
                        "firstAvailable": [
                            sub("subreq-1", 4),
                            sub("subreq-2", 3),
                            sub("subreq-3", 2),
                            sub("subreq-4", 1),
                        ],
                    },
                ),
            ],
            nodes=(NODE, NODE2, NODE3),
            slices=[
                slice_(NODE, *(f"instance-{i}" for i in range(1, 5))),
                slice_(NODE2, "instance-1", "instance-2"),
                slice_(NODE3, "instance-1"),
            ],
        ),
        {
            "filter": {NODE: OK, NODE2: OK, NODE3: CANNOT},
            "score": {NODE: 15, NODE2: 13},
            "normalized": {NODE: 100, NODE2: 86},
            "node": NODE,
        },
        id="multiple-claims-prioritized-list-scoring",
    ),
    pytest.param(
        Case(
            POD_WITH_CLAIM_NAME,
            claims=[
                claim(
                    CLAIM,
                    {"name": "req-1", "firstAvailable": [sub("subreq-1", 2), sub("subreq-2", 1)]},
                    {"name": "req-2", "firstAvailable": [sub("subreq-1", 2), sub("subreq-2", 1)]},
                )
            ],
            nodes=(NODE, NODE2, NODE3),
            slices=[
                slice_(NODE, *(f"instance-{i}" for i in range(1, 5))),
                slice_(NODE2, "instance-1", "instance-2", "instance-3"),
                slice_(NODE3, "instance-1", "instance-2"),
            ],
        ),
        {
            "score": {NODE: 16, NODE2: 15, NODE3: 14},
            "normalized": {NODE: 100, NODE2: 93, NODE3: 87},
            "node": NODE,
        },
        id="multiple-requests-prioritized-list-scoring",
    ),
    pytest.param(
        Case(
            POD_WITH_CLAIM_NAME,
            claims=[PENDING, OTHER],
            in_flight=[allocated(PENDING, ("req-1", "instance-1"))],
            slices=[WORKER_SLICE],
        ),
        {
            "pre_filter": (
                UNRESOLVABLE,
                "resource claim default/my-pod-my-resource is in the process of being allocated",
            )
        },
        id="in-flight-claim-of-another-pod-waits",
    ),
]


@pytest.mark.parametrize(("case", "want"), CASES)
def test_plugin(case: Case, want: J) -> None:
    """Each point answers as kube's, and Reserve and PreBind do what kube's do."""
    trace = run(case)
    assert {key: trace.get(key) for key in want} == want


def test_post_filter_no_op_status_has_no_user_visible_reason() -> None:
    """kube's TestPostFilterNoOpStatusHasNoUserVisibleReason: for a pod without claims
    PostFilter is Unschedulable with no reason (nothing added to the pod's message)."""
    profile = build_profile(
        default_config().profiles[0], registry=in_tree_registry(), snapshot=ClusterState().snapshot
    )
    plugin = DynamicResources({}, profile)
    state = CycleState()
    the_pod = pod_from_raw(make_pod(POD))
    plugin.pre_filter(state, the_pod, profile.snapshot)
    result = plugin.post_filter(state, the_pod, FitError(the_pod.key, 1, Diagnosis()))
    assert (result.status.code, result.status.reasons) == (st.Code.UNSCHEDULABLE, ())


def test_sign_refuses_pods_with_claims() -> None:
    """kube: "pods with dra resource claims are not signable"; a pod without claims signs."""
    plugin = DynamicResources(
        {},
        build_profile(
            default_config().profiles[0],
            registry=in_tree_registry(),
            snapshot=ClusterState().snapshot,
        ),
    )
    assert plugin.sign_pod(pod_from_raw(POD_WITH_CLAIM_NAME)) is None
    assert plugin.sign_pod(pod_from_raw(make_pod("p"))) == ()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        pytest.param({"filterTimeout": "-1s"}, "filterTimeout", id="negative-filter-timeout"),
        pytest.param(
            {"bindingTimeout": "500ms"}, "at least 1 second", id="binding-timeout-too-short"
        ),
        pytest.param({"filterTimeot": "1s"}, "filterTimeot", id="unknown-field"),
    ],
)
def test_bad_args_are_refused_by_field(args: J, message: str) -> None:
    """DynamicResourcesArgs are validated as kube validates them, naming the field."""
    profile = build_profile(
        default_config().profiles[0], registry=in_tree_registry(), snapshot=ClusterState().snapshot
    )
    with pytest.raises(ValueError, match=message):
        DynamicResources(args, profile)


def test_kube_written_args_load() -> None:
    """kube-scheduler writes filterTimeout 10s and bindingTimeout 10m0s."""
    profile = build_profile(
        default_config().profiles[0], registry=in_tree_registry(), snapshot=ClusterState().snapshot
    )
    plugin = DynamicResources({"filterTimeout": "10s", "bindingTimeout": "10m0s"}, profile)
    assert (plugin.filter_timeout, plugin.binding_timeout) == (10.0, 600.0)
    assert plugin.name == names.DYNAMIC_RESOURCES
