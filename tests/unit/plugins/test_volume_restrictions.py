"""VolumeRestrictions: kube's volume_restrictions_test.go cases, in our words."""

from __future__ import annotations

from typing import Any

import pytest

from scheduler.framework import status as st
from scheduler.model.parse import pod_from_raw
from scheduler.model.parse_volumes import pvc_from_raw
from scheduler.plugins import volume_restrictions as vr
from scheduler.plugins.volume_restrictions import VolumeRestrictions
from tests.builders import make_node, make_pod
from tests.unit.plugins.volume_env import Env
from tests.volume_builders import claim_volume, make_pvc

Raw = dict[str, Any]
DISK = st.unschedulable(vr.ERR_DISK_CONFLICT)
RWOP = st.unschedulable(vr.ERR_RWOP_CONFLICT)


def gce(pd: str, read_only: bool = False) -> Raw:
    return {"name": f"v-{pd}", "gcePersistentDisk": {"pdName": pd, "readOnly": read_only}}


def ebs(volume_id: str, read_only: bool = False) -> Raw:
    return {
        "name": f"v-{volume_id}",
        "awsElasticBlockStore": {"volumeID": volume_id, "readOnly": read_only},
    }


def iscsi(iqn: str, read_only: bool = False) -> Raw:
    return {
        "name": f"v-{iqn}",
        "iscsi": {"targetPortal": "127.0.0.1", "iqn": iqn, "lun": 0, "readOnly": read_only},
    }


def rbd(monitors: list[str], image: str = "foo", read_only: bool = False) -> Raw:
    return {
        "name": f"v-{image}",
        "rbd": {"monitors": monitors, "pool": "foo", "image": image, "readOnly": read_only},
    }


def run(new: list[Raw], existing: list[Raw]) -> st.Status:
    env = Env(
        [make_node("node-a")],
        pods=[make_pod("old", node_name="node-a", volumes=existing)] if existing else [],
    )
    out = env.run(VolumeRestrictions({}, env.handle), make_pod("new", volumes=new))  # type: ignore[arg-type]
    if out.pre_filter.is_skip:
        return st.SUCCESS
    assert out.pre_filter.is_success
    return out.filters[0]


DISK_CASES = [
    pytest.param([gce("foo")], [], st.SUCCESS, id="gce nothing on node"),
    pytest.param([gce("foo")], [gce("foo")], DISK, id="gce same disk"),
    pytest.param([gce("foo")], [gce("bar")], st.SUCCESS, id="gce other disk"),
    pytest.param([gce("foo", True)], [gce("foo", True)], st.SUCCESS, id="gce both read-only"),
    pytest.param([gce("foo", True)], [gce("foo")], DISK, id="gce one writer"),
    pytest.param([ebs("foo")], [ebs("foo")], DISK, id="ebs same volume"),
    pytest.param([ebs("foo", True)], [ebs("foo", True)], DISK, id="ebs read-only conflicts too"),
    pytest.param([ebs("foo")], [ebs("bar")], st.SUCCESS, id="ebs other volume"),
    pytest.param([iscsi("iqn.a")], [iscsi("iqn.a")], DISK, id="iscsi same iqn"),
    pytest.param([iscsi("iqn.a")], [iscsi("iqn.b")], st.SUCCESS, id="iscsi other iqn"),
    pytest.param(
        [iscsi("iqn.a", True)], [iscsi("iqn.a", True)], st.SUCCESS, id="iscsi both read-only"
    ),
    pytest.param([rbd(["a", "b"])], [rbd(["b", "c"])], DISK, id="rbd monitors overlap"),
    pytest.param([rbd(["a", "b"])], [rbd(["c", "d"])], st.SUCCESS, id="rbd monitors apart"),
    pytest.param([rbd(["a"])], [rbd(["a"], image="bar")], st.SUCCESS, id="rbd other image"),
    pytest.param(
        [rbd(["a"], read_only=True)], [rbd(["a"], read_only=True)], st.SUCCESS, id="rbd both ro"
    ),
    pytest.param([gce("foo")], [ebs("foo")], st.SUCCESS, id="different kinds never conflict"),
]


@pytest.mark.parametrize(("new", "existing", "want"), DISK_CASES)
def test_inline_disk_conflicts(new: list[Raw], existing: list[Raw], want: st.Status) -> None:
    assert run(new, existing) == want


def rwop_env(*, used: bool, mode: str = "ReadWriteOncePod") -> Env:
    pods = [make_pod("old", node_name="node-b", volumes=[claim_volume("claim")])] if used else []
    return Env(
        [make_node("node-a"), make_node("node-b")],
        pods=pods,
        pvcs=[make_pvc("claim", access_modes=(mode,))],
    )


def test_read_write_once_pod_claim_in_use_refuses_every_node() -> None:
    env = rwop_env(used=True)
    out = env.run(
        VolumeRestrictions({}, env.handle), make_pod("new", volumes=[claim_volume("claim")])
    )  # type: ignore[arg-type]
    assert out.filters == [RWOP, RWOP]


@pytest.mark.parametrize(
    ("used", "mode"), [(False, "ReadWriteOncePod"), (True, "ReadWriteOnce")], ids=["unused", "rwo"]
)
def test_claim_without_conflict_skips(used: bool, mode: str) -> None:
    env = rwop_env(used=used, mode=mode)
    out = env.run(
        VolumeRestrictions({}, env.handle), make_pod("new", volumes=[claim_volume("claim")])
    )  # type: ignore[arg-type]
    assert out.pre_filter.is_skip


def test_claim_in_another_namespace_is_not_in_use() -> None:
    env = rwop_env(used=True)
    pod = make_pod("new", namespace="other", volumes=[claim_volume("claim")])
    env.snapshot.volumes.set_pvc(
        pvc_from_raw(make_pvc("claim", namespace="other", access_modes=("ReadWriteOncePod",)))
    )
    assert env.run(VolumeRestrictions({}, env.handle), pod).pre_filter.is_skip  # type: ignore[arg-type]


def test_missing_claim_is_unresolvable() -> None:
    env = Env([make_node("node-a")])
    out = env.run(VolumeRestrictions({}, env.handle), make_pod("new", volumes=[claim_volume("x")]))  # type: ignore[arg-type]
    assert out.pre_filter == st.unresolvable('persistentvolumeclaim "x" not found')


def test_extensions_count_a_victim_of_the_claim_off_and_on() -> None:
    """RemovePod of the pod using the ReadWriteOncePod claim frees every node; AddPod brings
    the conflict back; the original state is untouched (preemption's dry run)."""
    env = rwop_env(used=True)
    plugin = VolumeRestrictions({}, env.handle)
    pod = pod_from_raw(make_pod("new", volumes=[claim_volume("claim")]))
    out = env.run(plugin, pod)
    assert out.filters == [RWOP, RWOP]
    info = env.snapshot.get("node-b")
    assert info is not None
    (old,) = info.pods.values()
    removed = out.state.clone()
    assert plugin.remove_pod(removed, pod, old, info).is_success
    assert [plugin.filter(removed, pod, i) for i in env.snapshot.node_infos] == [st.SUCCESS] * 2
    assert [plugin.filter(out.state, pod, i).code for i in env.snapshot.node_infos] == [
        st.Code.UNSCHEDULABLE
    ] * 2
    added = removed.clone()
    assert plugin.add_pod(added, pod, old, info).is_success
    assert [plugin.filter(added, pod, i).code for i in env.snapshot.node_infos] == [
        st.Code.UNSCHEDULABLE
    ] * 2
