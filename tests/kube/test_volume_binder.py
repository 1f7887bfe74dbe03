"""VolumeBinding's PreBind against the emulator: the PV controller's binding, waits, failures.

The emulator plays the binding half of kube's PV controller (``sim/volumes.py``): a PV whose
claimRef the scheduler writes is bound both ways. A small poller stands in for the watch
that keeps ``cache.volumes`` current in ``run``.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import TYPE_CHECKING, Any

import pytest

from scheduler.cache.volumes import Volumes
from scheduler.framework import status as st
from scheduler.kube.volume_binder import VolumeBinder, VolumeBindingError
from scheduler.model import parse
from scheduler.model.parse_volumes import pv_from_raw, pvc_from_raw, storage_class_from_raw
from scheduler.plugins.volume_binding import PodVolumes
from tests.builders import make_pod
from tests.volume_builders import make_pv, make_pvc, make_storage_class

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from scheduler.kube.client import ApiClient

HOST = {"kubernetes.io/hostname": "node-0"}


def _body(raw: dict[str, Any]) -> dict[str, Any]:
    """A builder's object as a user would POST it (no resourceVersion, status dropped)."""
    body = {k: v for k, v in raw.items() if k != "status"}
    body["metadata"] = {
        k: v for k, v in raw["metadata"].items() if k not in ("resourceVersion", "uid")
    }
    return body


async def _refresh(api: ApiClient, volumes: Volumes) -> None:
    """Copy the API's PVs and claims into ``volumes`` (what the watch does in ``run``)."""
    for item in (await api.request("GET", "/api/v1/persistentvolumes"))["items"]:
        pv = pv_from_raw(item)
        held = volumes.api_pv(pv.name)
        if held is None or held.resource_version != pv.resource_version:
            volumes.set_pv(pv)
    for item in (await api.request("GET", "/api/v1/persistentvolumeclaims"))["items"]:
        pvc = pvc_from_raw(item)
        held_claim = volumes.api_pvc(pvc.namespace, pvc.name)
        if held_claim is None or held_claim.resource_version != pvc.resource_version:
            volumes.set_pvc(pvc)


@pytest.fixture
async def volumes(api: ApiClient) -> AsyncIterator[Volumes]:
    await api.request(
        "POST",
        "/api/v1/persistentvolumes",
        body=_body(make_pv("pv-1", node_affinity={"kubernetes.io/hostname": ["node-0"]})),
    )
    await api.request(
        "POST", "/api/v1/namespaces/default/persistentvolumeclaims", body=_body(make_pvc("data"))
    )
    store = Volumes()
    store.set_storage_class(storage_class_from_raw(make_storage_class("wait-sc")))

    async def poll() -> None:
        while True:
            await _refresh(api, store)
            await asyncio.sleep(0.05)

    await _refresh(api, store)
    task = asyncio.create_task(poll())
    yield store
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task


def _static_plan(volumes: Volumes) -> PodVolumes:
    pv, pvc = volumes.pv("pv-1"), volumes.pvc("default", "data")
    assert pv is not None
    assert pvc is not None
    assumed = pv.with_claim(pvc)
    volumes.assume_pv(assumed)
    return PodVolumes(static_bindings=((assumed, pvc),))


POD = parse.pod_from_raw(make_pod("web-0"))


async def test_pv_becomes_available_and_static_binding_completes(
    api: ApiClient, volumes: Volumes
) -> None:
    pv = volumes.api_pv("pv-1")
    assert pv is not None
    assert pv.phase == "Available"
    binder = VolumeBinder(api, volumes, timeout=5.0, poll=0.02)
    await binder.bind(POD, "node-0", HOST, _static_plan(volumes))
    claim = volumes.api_pvc("default", "data")
    assert claim is not None
    assert (claim.volume_name, claim.fully_bound, claim.phase) == ("pv-1", True, "Bound")
    bound = volumes.api_pv("pv-1")
    assert bound is not None
    assert bound.claim_ref is not None
    assert (bound.phase, bound.claim_ref.uid) == ("Bound", claim.uid)


async def test_stale_pv_is_a_conflict(api: ApiClient, volumes: Volumes) -> None:
    plan = _static_plan(volumes)
    await api.request(
        "PATCH", "/api/v1/persistentvolumes/pv-1", body={"metadata": {"labels": {"x": "y"}}}
    )
    binder = VolumeBinder(api, volumes, timeout=1.0, poll=0.02)
    with pytest.raises(VolumeBindingError, match=r"409|Conflict|modified"):
        await binder.bind(POD, "node-0", HOST, plan)


async def test_provisioning_without_a_provisioner_times_out(
    api: ApiClient, volumes: Volumes
) -> None:
    pvc = volumes.pvc("default", "data")
    assert pvc is not None
    binder = VolumeBinder(api, volumes, timeout=0.3, poll=0.02)
    plan = PodVolumes(provisions=(pvc.with_selected_node("node-0"),))
    with pytest.raises(VolumeBindingError, match="timed out"):
        await binder.bind(POD, "node-0", HOST, plan)
    claim = await api.request("GET", "/api/v1/namespaces/default/persistentvolumeclaims/data")
    assert claim["metadata"]["annotations"]["volume.kubernetes.io/selected-node"] == "node-0"


async def test_the_port_binds_for_the_nodes_labels_and_answers_a_status(
    api: ApiClient, volumes: Volumes
) -> None:
    """``bind_pod_volumes`` (VolumeBinding's PreBind port): success, and failures as an
    Error status naming the cause, never an exception."""
    binder = VolumeBinder(
        api, volumes, node_labels=lambda name: HOST if name == "node-0" else None, poll=0.02
    )
    status = await binder.bind_pod_volumes(POD, "node-0", _static_plan(volumes), timeout=5.0)
    assert status.is_success
    claim = volumes.api_pvc("default", "data")
    assert claim is not None
    assert claim.fully_bound
    gone = await binder.bind_pod_volumes(POD, "gone", PodVolumes(), timeout=1.0)
    assert (gone.code, gone.message()) == (st.Code.ERROR, 'failed to get node "gone": not found')
