"""simulate with storage: the snapshot's PVs, claims, classes and CSINodes reach the volume
plugins, and bindings made during the run are seen by later pods."""

from __future__ import annotations

from typing import Any

import pytest

from scheduler.app.simulate import commit_volumes, simulate
from scheduler.app.snapshot_file import snapshot_from_documents
from scheduler.batching.signature import BatchingMode
from scheduler.cycle.eventhandlers import EventHandlers
from scheduler.framework.config import default_config
from scheduler.model.parse_volumes import pv_from_raw, pvc_from_raw
from scheduler.plugins import names
from scheduler.plugins.volume_binding import PodVolumes
from tests.builders import make_node, make_pod
from tests.harness import scheduler_for
from tests.volume_builders import (
    IMMEDIATE,
    claim_volume,
    make_csi_node,
    make_pv,
    make_pvc,
    make_storage_class,
)

Raw = dict[str, Any]
OURS = {"batch-scheduler"}
HOST = "kubernetes.io/hostname"
integrated = pytest.mark.skipif(
    "VolumeBinding" not in getattr(names, "IN_TREE", ()),
    reason="the volume plugins are not in the default profile yet",
)


def local_cluster() -> list[Raw]:
    """Three nodes, a WaitForFirstConsumer class and one local PV per node, listed in the
    reverse order of the nodes (a PV's node, not its position, must decide)."""
    docs: list[Raw] = [make_node(f"node-{i}") for i in range(3)]
    docs.append(make_storage_class("wait-sc"))
    docs.append(make_storage_class(IMMEDIATE, "Immediate"))
    docs += [make_pv(f"local-{i}", node_affinity={HOST: [f"node-{i}"]}) for i in (2, 1, 0)]
    docs.append(make_csi_node("node-0", {"ebs.csi.aws.com": 1}))
    return docs


def test_storage_kinds_are_read_not_ignored() -> None:
    docs = [*local_cluster(), make_pvc("data-web-0", namespace="team")]
    snapshot = snapshot_from_documents(docs, OURS)
    assert [pv.name for pv in snapshot.pvs] == ["local-2", "local-1", "local-0"]
    assert [(c.namespace, c.name) for c in snapshot.pvcs] == [("team", "data-web-0")]
    assert [c.name for c in snapshot.storage_classes] == ["wait-sc", IMMEDIATE]
    assert [n.name for n in snapshot.csi_nodes] == ["node-0"]
    assert snapshot.ignored == {}
    assert "team" in {ns.name for ns in snapshot.namespaces}


def test_commit_volumes_binds_both_ways() -> None:
    scheduler, _, _ = scheduler_for([])
    volumes = scheduler.cluster.volumes
    pv, pvc = pv_from_raw(make_pv("local-0")), pvc_from_raw(make_pvc("data"))
    volumes.set_pv(pv)
    volumes.set_pvc(pvc)
    fast = pvc_from_raw(make_pvc("fast", "fast-sc"))
    volumes.set_pvc(fast)
    commit_volumes(EventHandlers(scheduler), PodVolumes(((pv, pvc),), (fast,)), "node-0")
    bound_pv, bound_claim = volumes.api_pv("local-0"), volumes.api_pvc("default", "data")
    assert bound_pv is not None
    assert bound_pv.claim_ref is not None
    assert (bound_pv.phase, bound_pv.claim_ref.name) == ("Bound", "data")
    assert bound_claim is not None
    assert (bound_claim.volume_name, bound_claim.fully_bound) == ("local-0", True)
    provisioned = volumes.api_pvc("default", "fast")
    assert provisioned is not None
    assert provisioned.selected_node == "node-0"


def _pod(name: str, claim: str, **kw: Any) -> Raw:
    return make_pod(name, cpu="100m", volumes=[claim_volume(claim)], **kw)


@integrated
@pytest.mark.parametrize("mode", [BatchingMode.OFF, BatchingMode.ALL])
def test_each_replica_lands_on_the_node_of_its_local_pv(mode: BatchingMode) -> None:
    docs = local_cluster()
    docs += [make_pvc(f"data-web-{i}") for i in range(3)]
    docs += [_pod(f"web-{i}", f"data-web-{i}") for i in range(3)]
    # A fourth pod shares web-1's claim: it follows the binding made during the run.
    docs.append(_pod("reader", "data-web-1"))
    report = simulate(
        snapshot_from_documents(docs, OURS), default_config("batch-scheduler"), mode=mode
    )
    placed = {p["pod"]: p["node"] for p in report["placements"]}
    nodes = [placed[f"default/web-{i}"] for i in range(3)]
    assert sorted(nodes) == ["node-0", "node-1", "node-2"]
    assert placed["default/reader"] == placed["default/web-1"]


@integrated
def test_claims_that_cannot_bind_are_explained() -> None:
    docs = local_cluster()
    docs += [make_pvc("instant", IMMEDIATE), make_pvc("too-big", request="5Ti")]
    docs += [_pod("a", "instant"), _pod("b", "too-big"), _pod("c", "missing")]
    report = simulate(
        snapshot_from_documents(docs, OURS),
        default_config("batch-scheduler"),
        mode=BatchingMode.OFF,
    )
    reasons = {p["pod"]: p["reason"] for p in report["placements"]}
    assert "pod has unbound immediate PersistentVolumeClaims" in reasons["default/a"]
    assert "3 node(s) didn't find available persistent volumes to bind" in reasons["default/b"]
    assert 'persistentvolumeclaim "missing" not found' in reasons["default/c"]
