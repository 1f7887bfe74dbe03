"""VolumeBinding: kube's volume_binding_test.go and binder_test.go cases, in our words."""

from __future__ import annotations

from typing import Any

import pytest

from scheduler.framework import status as st
from scheduler.model import parse
from scheduler.plugins import volume_binding as vb
from scheduler.plugins.volume_binding import VolumeBinding
from tests.builders import make_node, make_pod
from tests.unit.plugins.volume_env import Env
from tests.volume_builders import (
    IMMEDIATE,
    WAIT,
    claim_volume,
    ephemeral_volume,
    make_pv,
    make_pvc,
    make_storage_class,
)

HOST = "kubernetes.io/hostname"
Raw = dict[str, Any]


def pod_with(*claims: str, **kw: Any) -> Raw:
    return make_pod("pod-a", volumes=[claim_volume(c) for c in claims], **kw)


def plugin(env: Env, **args: Any) -> VolumeBinding:
    return VolumeBinding(args, env.handle)  # type: ignore[arg-type]


def test_pod_without_claims_skips_prefilter_and_prescore() -> None:
    env = Env([make_node("node-a")])
    p = plugin(env)
    out = env.run(p, make_pod("pod-a"))
    assert out.pre_filter.is_skip
    pod = parse.pod_from_raw(make_pod("pod-a"))
    assert p.pre_score(out.state, pod, env.snapshot.node_infos).is_skip


PRE_FILTER_CASES = [
    pytest.param(
        [make_pvc("pvc-a", volume_name="pv-a", bound=True)],
        ["pvc-a"],
        st.SUCCESS,
        id="all bound",
    ),
    pytest.param(
        [], ["pvc-a"], st.unresolvable('persistentvolumeclaim "pvc-a" not found'), id="no claim"
    ),
    pytest.param(
        [make_pvc("pvc-a", volume_name="pv-a", bound=True)],
        ["pvc-a", "pvc-b"],
        st.unresolvable('persistentvolumeclaim "pvc-b" not found'),
        id="one of two claims missing",
    ),
    pytest.param(
        [make_pvc("pvc-a", IMMEDIATE)],
        ["pvc-a"],
        st.unresolvable(vb.ERR_UNBOUND_IMMEDIATE),
        id="immediate claim not bound",
    ),
    pytest.param(
        [make_pvc("pvc-a", None)],
        ["pvc-a"],
        st.unresolvable(vb.ERR_UNBOUND_IMMEDIATE),
        id="claim without class counts as immediate",
    ),
    pytest.param(
        [make_pvc("pvc-a", WAIT, volume_name="pv-a", bound=True, phase="Lost")],
        ["pvc-a"],
        st.unresolvable(
            'persistentvolumeclaim "pvc-a" bound to non-existent persistentvolume "pv-a"'
        ),
        id="claim lost",
    ),
    pytest.param(
        [make_pvc("pvc-a", deleting=True)],
        ["pvc-a"],
        st.unresolvable('persistentvolumeclaim "pvc-a" is being deleted'),
        id="claim being deleted",
    ),
    pytest.param(
        [make_pvc("pvc-a", "no-mode")],
        ["pvc-a"],
        st.error('VolumeBindingMode not set for StorageClass "no-mode"'),
        id="class without binding mode",
    ),
]


@pytest.mark.parametrize(("pvcs", "claims", "want"), PRE_FILTER_CASES)
def test_pre_filter(pvcs: list[Raw], claims: list[str], want: st.Status) -> None:
    classes = [
        make_storage_class(WAIT),
        make_storage_class(IMMEDIATE, "Immediate"),
        make_storage_class("no-mode", None),
    ]
    env = Env([make_node("node-a")], pvcs=pvcs, pvs=[make_pv("pv-a")], classes=classes)
    assert env.run(plugin(env), pod_with(*claims)).pre_filter == want


def test_ephemeral_claim_waits_for_its_controller_and_must_be_owned() -> None:
    pod = make_pod("pod-a", volumes=[ephemeral_volume("data")], uid="uid-pod-a")
    env = Env([make_node("node-a")])
    assert env.run(plugin(env), pod).pre_filter == st.unresolvable(
        'waiting for ephemeral volume controller to create the persistentvolumeclaim "pod-a-data"'
    )
    stranger = Env([make_node("node-a")], pvcs=[make_pvc("pod-a-data", owner_uid="other")])
    assert stranger.run(plugin(stranger), pod).pre_filter == st.unresolvable(
        "PVC default/pod-a-data was not created for pod default/pod-a (pod is not owner)"
    )
    owned = Env(
        [make_node("node-a")],
        pvcs=[make_pvc("pod-a-data", owner_uid="uid-pod-a")],
        pvs=[make_pv("pv-1", node_affinity={HOST: ["node-a"]})],
    )
    out = owned.run(plugin(owned), pod)
    assert out.pre_filter.is_success
    assert out.filters == [st.SUCCESS]


BIND = st.unresolvable(vb.ERR_BIND_CONFLICT)

FILTER_CASES = [
    pytest.param(
        [make_pvc("pvc-a")],
        [],
        [make_node("node-a")],
        [BIND],
        id="unbound claim without matching PV",
    ),
    pytest.param(
        [make_pvc("pvc-a", volume_name="pv-a", bound=True), make_pvc("pvc-b")],
        [make_pv("pv-a", node_affinity={"foo": ["bar"]})],
        [make_node("node-a", labels={"foo": "barbar"})],
        [st.unresolvable(vb.ERR_NODE_CONFLICT, vb.ERR_BIND_CONFLICT)],
        id="bound and unbound both unsatisfied",
    ),
    pytest.param(
        [make_pvc("pvc-a", volume_name="pv-a", bound=True)],
        [],
        [make_node("node-a")],
        [st.unresolvable(vb.ERR_PV_NOT_EXIST)],
        id="bound PV missing",
    ),
    pytest.param(
        [make_pvc("pvc-a", volume_name="pv-a", bound=True)],
        [make_pv("pv-a", node_affinity={HOST: ["node-b"]}, phase="Bound")],
        [make_node("node-a"), make_node("node-b")],
        [st.unresolvable(vb.ERR_NODE_CONFLICT), st.SUCCESS],
        id="bound PV node affinity",
    ),
    pytest.param(
        [make_pvc("pvc-a", request="5Gi")],
        [
            make_pv("small", capacity="1Gi", node_affinity={HOST: ["node-a"]}),
            make_pv("big", capacity="10Gi", node_affinity={HOST: ["node-b"]}),
        ],
        [make_node("node-a"), make_node("node-b")],
        [BIND, st.SUCCESS],
        id="PV too small",
    ),
    pytest.param(
        [make_pvc("pvc-a", access_modes=("ReadWriteMany",))],
        [make_pv("pv-1", node_affinity={HOST: ["node-a"]})],
        [make_node("node-a")],
        [BIND],
        id="access modes not offered",
    ),
    pytest.param(
        [make_pvc("pvc-a")],
        [make_pv("pv-1", claim=("default", "other", "u"))],
        [make_node("node-a")],
        [BIND],
        id="PV claimed by another claim",
    ),
    pytest.param(
        [make_pvc("pvc-a")],
        [make_pv("pv-1", phase="Released")],
        [make_node("node-a")],
        [BIND],
        id="PV not available",
    ),
    pytest.param(
        [make_pvc("pvc-a", annotations={"volume.kubernetes.io/selected-node": "node-b"})],
        [],
        [make_node("node-a")],
        [BIND],
        id="claim selected for another node",
    ),
]


@pytest.mark.parametrize(("pvcs", "pvs", "nodes", "want"), FILTER_CASES)
def test_filter(pvcs: list[Raw], pvs: list[Raw], nodes: list[Raw], want: list[st.Status]) -> None:
    env = Env(nodes, pvcs=pvcs, pvs=pvs)
    claims = [c["metadata"]["name"] for c in pvcs]
    out = env.run(plugin(env), pod_with(*claims))
    assert out.pre_filter.is_success
    assert out.filters == want


def test_dynamic_provisioning_follows_allowed_topologies() -> None:
    fast = make_storage_class(
        "fast", provisioner="csi.example.com", allowed_topologies=[{"zone": ["z1"]}]
    )
    env = Env(
        [make_node("node-a", labels={"zone": "z1"}), make_node("node-b", labels={"zone": "z2"})],
        pvcs=[make_pvc("pvc-a", "fast")],
        classes=[fast],
    )
    out = env.run(plugin(env), pod_with("pvc-a"))
    assert out.filters == [st.SUCCESS, BIND]


def test_missing_class_while_provisioning_is_an_error() -> None:
    env = Env(
        [make_node("node-a")],
        pvcs=[make_pvc("pvc-a", WAIT)],
        classes=[make_storage_class(WAIT)],
    )
    env.snapshot.volumes.remove_storage_class(WAIT)
    # Without its class the claim is not delayed: it is an unbound immediate claim.
    assert env.run(plugin(env), pod_with("pvc-a")).pre_filter == st.unresolvable(
        vb.ERR_UNBOUND_IMMEDIATE
    )


def local_pvs() -> list[Raw]:
    return [
        make_pv("pv-a-0", capacity="200Gi", node_affinity={HOST: ["node-a"]}),
        make_pv("pv-a-1", capacity="200Gi", node_affinity={HOST: ["node-a"]}),
        make_pv("pv-b-0", capacity="100Gi", node_affinity={HOST: ["node-b"]}),
        make_pv("pv-b-1", capacity="100Gi", node_affinity={HOST: ["node-b"]}),
    ]


def test_local_volumes_with_close_capacity_are_preferred() -> None:
    env = Env(
        [make_node("node-a"), make_node("node-b"), make_node("node-c")],
        pvcs=[make_pvc("pvc-a", request="50Gi")],
        pvs=local_pvs(),
    )
    p = plugin(env)
    pod = parse.pod_from_raw(pod_with("pvc-a"))
    out = env.run(p, pod)
    assert out.filters == [st.SUCCESS, st.SUCCESS, BIND]
    assert p.pre_score(out.state, pod, env.snapshot.node_infos).is_success
    assert [p.score(out.state, pod, info) for info in env.snapshot.node_infos] == [75, 50, 0]


def test_local_volumes_several_claims_score_per_class() -> None:
    env = Env(
        [make_node("node-a"), make_node("node-b"), make_node("node-c")],
        pvcs=[make_pvc("pvc-0", request="50Gi"), make_pvc("pvc-1", request="100Gi")],
        pvs=local_pvs(),
    )
    p = plugin(env)
    pod = parse.pod_from_raw(pod_with("pvc-0", "pvc-1"))
    out = env.run(p, pod)
    assert out.filters == [st.SUCCESS, st.SUCCESS, BIND]
    # node-a: 150Gi of 400Gi → 37 % → 63; node-b: 150Gi of 200Gi → 75 % → 25.
    assert [p.score(out.state, pod, info) for info in env.snapshot.node_infos] == [63, 25, 0]


def test_smallest_matching_pv_is_chosen_and_not_twice() -> None:
    env = Env(
        [make_node("node-a")],
        pvcs=[make_pvc("pvc-0", request="1Gi"), make_pvc("pvc-1", request="1Gi")],
        pvs=[make_pv("pv-big", capacity="5Gi"), make_pv("pv-small", capacity="2Gi")],
    )
    p = plugin(env)
    pod = parse.pod_from_raw(pod_with("pvc-0", "pvc-1"))
    out = env.run(p, pod)
    assert out.filters == [st.SUCCESS]
    assert p.reserve(out.state, pod, "node-a").is_success
    plan = p.bind_plan(out.state)
    assert plan is not None
    assert [(pv.name, pvc.name) for pv, pvc in plan.static_bindings] == [
        ("pv-small", "pvc-0"),
        ("pv-big", "pvc-1"),
    ]


def test_reserve_assumes_and_unreserve_restores() -> None:
    env = Env(
        [make_node("node-a")],
        pvcs=[make_pvc("pvc-a"), make_pvc("pvc-b")],
        pvs=[make_pv("pv-1", node_affinity={HOST: ["node-a"]})],
    )
    p = plugin(env)
    volumes = env.snapshot.volumes
    pod = parse.pod_from_raw(pod_with("pvc-a"))
    out = env.run(p, pod)
    assert p.reserve(out.state, pod, "node-a").is_success
    assumed = volumes.pv("pv-1")
    assert assumed is not None
    assert assumed.claim_ref is not None
    assert (assumed.claim_ref.name, assumed.bound_by_controller) == ("pvc-a", True)
    api = volumes.api_pv("pv-1")
    assert api is not None
    assert api.claim_ref is None
    # The next pod's claim cannot take the assumed PV.
    other = env.run(plugin(env), make_pod("pod-b", volumes=[claim_volume("pvc-b")]))
    assert other.filters == [BIND]
    p.unreserve(out.state, pod, "node-a")
    restored = volumes.pv("pv-1")
    assert restored is not None
    assert restored.claim_ref is None
    assert p.bind_plan(out.state) is None


def test_reserve_provisioning_sets_selected_node() -> None:
    fast = make_storage_class("fast", provisioner="csi.example.com")
    env = Env([make_node("node-a")], pvcs=[make_pvc("pvc-a", "fast")], classes=[fast])
    p = plugin(env)
    pod = parse.pod_from_raw(pod_with("pvc-a"))
    out = env.run(p, pod)
    assert p.reserve(out.state, pod, "node-a").is_success
    plan = p.bind_plan(out.state)
    assert plan is not None
    assert [c.selected_node for c in plan.provisions] == ["node-a"]
    claim = env.snapshot.volumes.pvc("default", "pvc-a")
    assert claim is not None
    assert claim.selected_node == "node-a"
    # Another node is no longer possible for this claim.
    again = env.run(plugin(env), pod)
    assert again.filters == [st.SUCCESS]


def test_reserve_with_every_claim_bound_has_nothing_to_write() -> None:
    env = Env(
        [make_node("node-a")],
        pvcs=[make_pvc("pvc-a", volume_name="pv-a", bound=True)],
        pvs=[make_pv("pv-a", phase="Bound", claim=("default", "pvc-a", "uid-pvc-default-pvc-a"))],
    )
    p = plugin(env)
    pod = parse.pod_from_raw(pod_with("pvc-a"))
    out = env.run(p, pod)
    assert p.reserve(out.state, pod, "node-a").is_success
    assert p.bind_plan(out.state) is None


def test_watch_update_replaces_assumed_pv() -> None:
    env = Env([make_node("node-a")], pvcs=[make_pvc("pvc-a")], pvs=[make_pv("pv-1")])
    p = plugin(env)
    pod = parse.pod_from_raw(pod_with("pvc-a"))
    out = env.run(p, pod)
    p.reserve(out.state, pod, "node-a")
    volumes = env.snapshot.volumes
    volumes.set_pv(parse_pv(make_pv("pv-1", resource_version="2", phase="Bound")))
    current = volumes.pv("pv-1")
    assert current is not None
    assert (current.resource_version, current.claim_ref) == ("2", None)
    assert volumes.pvs_of_class(WAIT) == [current]


def parse_pv(raw: Raw) -> Any:
    from scheduler.model.parse_volumes import pv_from_raw

    return pv_from_raw(raw)


def test_args() -> None:
    env = Env([make_node("node-a")])
    assert plugin(env, bindTimeoutSeconds=30).bind_timeout_seconds == 30
    assert plugin(env).bind_timeout_seconds == vb.DEFAULT_BIND_TIMEOUT_SECONDS
    with pytest.raises(ValueError, match="bindTimeoutSeconds"):
        plugin(env, bindTimeoutSeconds="soon")
    with pytest.raises(ValueError, match="shape"):
        plugin(env, shape=[])
