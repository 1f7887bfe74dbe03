"""NodeVolumeLimits: kube's csi_test.go cases that do not need in-tree migration, in our words."""

from __future__ import annotations

from typing import Any

import pytest

from scheduler.framework import status as st
from scheduler.model.parse_volumes import pvc_from_raw
from scheduler.plugins import node_volume_limits as nvl
from scheduler.plugins.node_volume_limits import NodeVolumeLimits
from tests.builders import make_node, make_pod
from tests.unit.plugins.volume_env import Env
from tests.volume_builders import (
    claim_volume,
    ephemeral_volume,
    make_csi_node,
    make_pv,
    make_pvc,
    make_storage_class,
)

Raw = dict[str, Any]
EBS = "ebs.csi.aws.com"
GCE = "pd.csi.storage.gke.io"
EXCEEDED = st.unschedulable(nvl.ERR_MAX_VOLUME_COUNT)


def csi_pv(name: str, driver: str = EBS) -> Raw:
    return make_pv(name, "csi-sc", phase="Bound", csi=(driver, f"handle-{name}"))


def bound_pvc(name: str, pv: str) -> Raw:
    return make_pvc(name, "csi-sc", volume_name=pv, bound=True)


CLASSES = [
    make_storage_class("csi-sc", provisioner=EBS),
    make_storage_class("gce-sc", provisioner=GCE),
]


def run(
    new_claims: list[str],
    existing_claims: list[str],
    *,
    limit: int | None,
    extra_pvcs: tuple[Raw, ...] | list[Raw] = (),
    driver: str = EBS,
) -> st.Status:
    pvs = [csi_pv(f"pv-{i}") for i in range(6)] + [csi_pv("pv-gce", GCE)]
    pvcs = [bound_pvc(f"claim-{i}", f"pv-{i}") for i in range(6)]
    pvcs += [bound_pvc("claim-gce", "pv-gce"), *extra_pvcs]
    pods = (
        [make_pod("old", node_name="node-a", volumes=[claim_volume(c) for c in existing_claims])]
        if existing_claims
        else []
    )
    env = Env(
        [make_node("node-a")],
        pods=pods,
        pvs=pvs,
        pvcs=pvcs,
        classes=CLASSES,
        csi_nodes=[make_csi_node("node-a", {driver: limit})],
    )
    pod = make_pod("new", volumes=[claim_volume(c) for c in new_claims])
    out = env.run(NodeVolumeLimits({}, env.handle), pod)  # type: ignore[arg-type]
    if out.pre_filter.is_skip:
        return st.SUCCESS
    return out.filters[0]


CASES = [
    pytest.param(["claim-0", "claim-1"], ["claim-2", "claim-3"], 4, st.SUCCESS, id="fits at limit"),
    pytest.param(["claim-0", "claim-1"], ["claim-2", "claim-3"], 3, EXCEEDED, id="over limit"),
    pytest.param(["claim-0", "claim-1"], ["claim-2", "claim-3"], None, st.SUCCESS, id="no limit"),
    pytest.param(["claim-0"], ["claim-0", "claim-1"], 2, st.SUCCESS, id="already attached"),
    pytest.param(["claim-gce"], ["claim-0", "claim-1"], 2, st.SUCCESS, id="other driver"),
]


@pytest.mark.parametrize(("new", "existing", "limit", "want"), CASES)
def test_limits(new: list[str], existing: list[str], limit: int | None, want: st.Status) -> None:
    assert run(new, existing, limit=limit) == want


def test_pending_claims_count_under_their_class_provisioner() -> None:
    pending = [make_pvc("pending-0", "csi-sc"), make_pvc("pending-1", "csi-sc")]
    assert run(["pending-0", "pending-1"], ["claim-0"], limit=3, extra_pvcs=pending) == st.SUCCESS
    assert run(["pending-0", "pending-1"], ["claim-0"], limit=2, extra_pvcs=pending) == EXCEEDED


def test_claim_with_missing_pv_falls_back_to_class() -> None:
    broken = [make_pvc("broken", "csi-sc", volume_name="nowhere", bound=True)]
    assert run(["broken"], ["claim-0"], limit=1, extra_pvcs=broken) == EXCEEDED


def test_claims_without_class_are_not_counted() -> None:
    classless = [make_pvc("free", "missing-sc")]
    assert run(["free"], ["claim-0"], limit=1, extra_pvcs=classless) == st.SUCCESS


def test_pod_without_claims_skips() -> None:
    assert run([], ["claim-0"], limit=0) == st.SUCCESS


def test_missing_claim_and_ephemeral_owner() -> None:
    env = Env([make_node("node-a")], csi_nodes=[make_csi_node("node-a", {EBS: 1})])
    plugin = NodeVolumeLimits({}, env.handle)  # type: ignore[arg-type]
    missing = env.run(plugin, make_pod("abc", namespace="test", volumes=[ephemeral_volume("xyz")]))
    assert missing.filters == [
        st.unresolvable('looking up PVC test/abc-xyz: persistentvolumeclaim "abc-xyz" not found')
    ]
    env.snapshot.volumes.set_pvc(
        pvc_from_raw(make_pvc("abc-xyz", namespace="test", owner_uid="someone-else"))
    )
    stranger = env.run(plugin, make_pod("abc", namespace="test", volumes=[ephemeral_volume("xyz")]))
    assert stranger.filters == [
        st.error("PVC test/abc-xyz was not created for pod test/abc (pod is not owner)")
    ]
