"""Parsing storage objects and pod volumes: fields read, defaults, errors naming the field."""

from __future__ import annotations

from typing import Any

import pytest

from scheduler.model import parse
from scheduler.model.errors import ModelError
from scheduler.model.parse_volumes import (
    csi_node_from_raw,
    pv_from_raw,
    pvc_from_raw,
    storage_class_from_raw,
)
from tests.builders import make_pod
from tests.volume_builders import (
    claim_volume,
    ephemeral_volume,
    make_csi_node,
    make_pv,
    make_pvc,
    make_storage_class,
)

Raw = dict[str, Any]


def test_pv_fields() -> None:
    pv = pv_from_raw(
        make_pv(
            "pv-1",
            capacity="1.5Gi",
            node_affinity={"kubernetes.io/hostname": ["n1"]},
            labels={"topology.kubernetes.io/zone": "z1"},
            claim=("ns", "c", "u1"),
            csi=("ebs.csi.aws.com", "vol-1"),
        )
    )
    assert pv.capacity == 3 * 2**29
    assert pv.claim_ref is not None
    assert (pv.claim_ref.namespace, pv.claim_ref.uid) == ("ns", "u1")
    assert pv.fits_node({"kubernetes.io/hostname": "n1"})
    assert not pv.fits_node({"kubernetes.io/hostname": "n2"})
    assert (pv.csi_driver, pv.csi_handle, pv.volume_mode) == (
        "ebs.csi.aws.com",
        "vol-1",
        "Filesystem",
    )


def test_beta_class_annotation_wins() -> None:
    raw = make_pvc("c", "from-spec")
    raw["metadata"]["annotations"]["volume.beta.kubernetes.io/storage-class"] = "from-annotation"
    assert pvc_from_raw(raw).storage_class == "from-annotation"


def test_pvc_fields() -> None:
    pvc = pvc_from_raw(
        make_pvc(
            "c",
            request="10Gi",
            volume_name="pv-1",
            bound=True,
            annotations={"volume.kubernetes.io/selected-node": "n1"},
            owner_uid="pod-uid",
        )
    )
    assert (pvc.request, pvc.fully_bound, pvc.selected_node) == (10 * 2**30, True, "n1")
    assert pvc.controller_uid == "pod-uid"
    assert pvc_from_raw(make_pvc("c")).selected_node is None


def test_storage_class_and_csi_node() -> None:
    sc = storage_class_from_raw(
        make_storage_class("fast", "Immediate", provisioner="x", allowed_topologies=[{"z": ["a"]}])
    )
    assert (sc.binding_mode, sc.provisioner) == ("Immediate", "x")
    assert sc.topology_allows({"z": "a"})
    assert not sc.topology_allows({"z": "b"})
    assert storage_class_from_raw(make_storage_class("s", None)).binding_mode is None
    node = csi_node_from_raw(make_csi_node("n1", {"a": 3, "b": None}))
    assert dict(node.limits) == {"a": 3}


BAD = [
    pytest.param(
        pv_from_raw, make_pv("pv", capacity="lots"), "spec.capacity.storage", id="pv capacity"
    ),
    pytest.param(
        pvc_from_raw,
        make_pvc("c", request="-1Gi"),
        "spec.resources.requests.storage",
        id="negative request",
    ),
    pytest.param(
        csi_node_from_raw,
        make_csi_node("n", {"d": -1}),
        "spec.drivers[0].allocatable.count",
        id="negative count",
    ),
    pytest.param(pv_from_raw, {"metadata": {}}, "metadata.name", id="nameless pv"),
]


@pytest.mark.parametrize(("parser", "raw", "field"), BAD)
def test_bad_input_names_the_field(parser: Any, raw: Raw, field: str) -> None:
    with pytest.raises(ModelError) as info:
        parser(raw)
    assert info.value.field == field


def test_pod_volumes() -> None:
    raw = make_pod(
        "p",
        volumes=[
            claim_volume("data"),
            ephemeral_volume("scratch"),
            {"name": "cfg", "configMap": {"name": "x"}},
            {"name": "tok", "secret": {"secretName": "y"}},
            {"name": "tmp", "emptyDir": {}},
            {"name": "pd", "gcePersistentDisk": {"pdName": "disk", "readOnly": True}},
        ],
    )
    pod = parse.pod_from_raw(raw)
    assert pod.claim_names == ("data", "p-scratch")
    assert [v.source_fragment is None for v in pod.volumes] == [
        False,
        False,
        True,
        True,
        False,
        False,
    ]
    disk = pod.volumes[5].disk
    assert disk is not None
    assert (disk.kind, disk.ident, disk.read_only) == (
        "gcePersistentDisk",
        "disk",
        True,
    )
    bad = make_pod("p", volumes=[{"name": "x", "persistentVolumeClaim": {}}])
    with pytest.raises(ModelError, match=r"spec\.volumes\[0\]\.persistentVolumeClaim\.claimName"):
        parse.pod_from_raw(bad)
