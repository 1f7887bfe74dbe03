"""VolumeZone: kube's volume_zone_test.go cases, in our words."""

from __future__ import annotations

from typing import Any

import pytest

from scheduler.framework import status as st
from scheduler.plugins import volume_zone as vz
from scheduler.plugins.volume_zone import VolumeZone
from tests.builders import make_node, make_pod
from tests.unit.plugins.volume_env import Env
from tests.volume_builders import IMMEDIATE, WAIT, claim_volume, make_pv, make_pvc

Raw = dict[str, Any]
CONFLICT = st.unresolvable(vz.ERR_REASON_CONFLICT)
BZ, BR, Z, R = vz.BETA_ZONE, vz.BETA_REGION, vz.ZONE, vz.REGION


def run(pv_labels: dict[str, str], node_labels: dict[str, str]) -> st.Status:
    env = Env(
        [make_node("node-a", labels=node_labels)],
        pvs=[make_pv("pv-a", labels=pv_labels, phase="Bound")],
        pvcs=[make_pvc("pvc-a", volume_name="pv-a", bound=True)],
    )
    out = env.run(VolumeZone({}, env.handle), make_pod("p", volumes=[claim_volume("pvc-a")]))  # type: ignore[arg-type]
    if out.pre_filter.is_skip:
        return st.SUCCESS
    assert out.pre_filter.is_success
    return out.filters[0]


CASES = [
    pytest.param({BZ: "us-west1-a"}, {}, st.SUCCESS, id="node without labels"),
    pytest.param(
        {BZ: "us-west1-a"},
        {BZ: "us-west1-a", "uselessLabel": "none"},
        st.SUCCESS,
        id="beta zone matched",
    ),
    pytest.param({BR: "us-west1"}, {BR: "us-west1"}, st.SUCCESS, id="beta region matched"),
    pytest.param({BR: "us-west1"}, {BR: "us-east1"}, CONFLICT, id="beta region mismatch"),
    pytest.param({BZ: "us-west1-a"}, {BZ: "us-west1-b"}, CONFLICT, id="beta zone mismatch"),
    pytest.param({Z: "us-west1-a"}, {Z: "us-west1-a"}, st.SUCCESS, id="zone matched"),
    pytest.param({R: "us-west1"}, {R: "us-west1"}, st.SUCCESS, id="region matched"),
    pytest.param({R: "us-west1"}, {R: "us-east1"}, CONFLICT, id="region mismatch"),
    pytest.param({Z: "us-west1-a"}, {Z: "us-west1-b"}, CONFLICT, id="zone mismatch"),
    pytest.param(
        {Z: "us-west1-a", R: "us-west1"},
        {Z: "us-west1-a"},
        CONFLICT,
        id="pv zone+region, node zone",
    ),
    pytest.param({Z: "us-west1-a"}, {BZ: "us-west1-a"}, CONFLICT, id="pv ga zone, node beta zone"),
    pytest.param({BZ: "us-west1-a"}, {Z: "us-west1-a"}, st.SUCCESS, id="pv beta, node ga, matched"),
    pytest.param({BZ: "us-west1-a"}, {Z: "us-west1-b"}, CONFLICT, id="pv beta, node ga, mismatch"),
    pytest.param(
        {Z: "us-west1-a__us-west1-b"}, {Z: "us-west1-b"}, st.SUCCESS, id="multi-zone value"
    ),
    pytest.param({Z: "us-west1-a__"}, {Z: "elsewhere"}, st.SUCCESS, id="malformed value ignored"),
]


@pytest.mark.parametrize(("pv_labels", "node_labels", "want"), CASES)
def test_zone_labels(
    pv_labels: dict[str, str], node_labels: dict[str, str], want: st.Status
) -> None:
    assert run(pv_labels, node_labels) == want


UNBOUND_CASES = [
    pytest.param(
        make_pvc("pvc-a", ""),
        st.unresolvable("PersistentVolumeClaim had no pv name and storageClass name"),
        id="empty class",
    ),
    pytest.param(
        make_pvc("pvc-a", None),
        st.unresolvable("PersistentVolumeClaim had no pv name and storageClass name"),
        id="no class",
    ),
    pytest.param(
        make_pvc("pvc-a", IMMEDIATE),
        st.unresolvable("PersistentVolume had no name"),
        id="immediate class",
    ),
    pytest.param(make_pvc("pvc-a", WAIT), st.SKIP, id="wait class"),
    pytest.param(
        make_pvc("pvc-a", "gone"),
        st.unresolvable('storageclass.storage.k8s.io "gone" not found'),
        id="missing class",
    ),
    pytest.param(
        make_pvc("pvc-a", volume_name="pv-x", bound=True),
        st.unresolvable('persistentvolume "pv-x" not found'),
        id="missing pv",
    ),
]


@pytest.mark.parametrize(("pvc", "want"), UNBOUND_CASES)
def test_pre_filter_with_unbound_or_missing_objects(pvc: Raw, want: st.Status) -> None:
    env = Env([make_node("node-a")], pvcs=[pvc])
    out = env.run(VolumeZone({}, env.handle), make_pod("p", volumes=[claim_volume("pvc-a")]))  # type: ignore[arg-type]
    assert out.pre_filter == want


def test_several_nodes() -> None:
    env = Env(
        [
            make_node("a", labels={Z: "z1"}),
            make_node("b", labels={Z: "z2"}),
            make_node("c"),
        ],
        pvs=[make_pv("pv-a", labels={Z: "z1"}, phase="Bound")],
        pvcs=[make_pvc("pvc-a", volume_name="pv-a", bound=True)],
    )
    out = env.run(VolumeZone({}, env.handle), make_pod("p", volumes=[claim_volume("pvc-a")]))  # type: ignore[arg-type]
    assert out.filters == [st.SUCCESS, CONFLICT, st.SUCCESS]
