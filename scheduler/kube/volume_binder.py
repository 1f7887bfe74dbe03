"""VolumeBinding's volume binder against the API: write the volume bindings, wait for them.

kube-scheduler's VolumeBinding PreBind (``BindPodVolumes``) runs before the pod's Binding
is posted: for each static binding it writes the PV's ``claimRef`` (and the
``pv.kubernetes.io/bound-by-controller`` annotation), for each claim to provision the
``volume.kubernetes.io/selected-node`` annotation; then it polls its caches until the PV
controller has bound every claim (``volumeName`` plus ``pv.kubernetes.io/bind-completed``),
a provisioner included, or fails after ``bindTimeoutSeconds`` (600 s by default).

Here the writes are merge patches carrying the cached ``resourceVersion`` (a 409 when the
object changed since, as kube's Update), and the wait reads ``cache.volumes``, which the
watch keeps current. :class:`VolumeBinder` is the port the plugin's PreBind calls
(``plugins.volume_binding.VolumeBinderPort``, lent through the Handle by ``app.runtime``):
``bind_pod_volumes`` returns a coroutine that the binding cycle awaits in a task of its own
(cycle/binding_cycle.py), so a wait for the PV controller holds up no other pod. A failure
is an Error status; the binding cycle then runs Unreserve (which restores what Reserve
assumed) and retries the pod with backoff, as kube's PreBind failure.

Neighbours: ``plugins.volume_binding`` (Reserve's plan, the port), ``cache.volumes``
(assumed and API objects).
"""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING, Any

from scheduler import logs
from scheduler.framework import status as st
from scheduler.kube import errors
from scheduler.model.volumes import ANN_BOUND_BY_CONTROLLER, ANN_SELECTED_NODE
from scheduler.plugins.volume_binding import DEFAULT_BIND_TIMEOUT_SECONDS

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from scheduler.cache.snapshot import Snapshot
    from scheduler.cache.volumes import Volumes
    from scheduler.kube.client import ApiClient
    from scheduler.model.pod import Pod
    from scheduler.model.volumes import PersistentVolume, PersistentVolumeClaim
    from scheduler.plugins.volume_binding import PodVolumes

__all__ = ["VolumeBinder", "VolumeBindingError", "node_labels_in"]

log = logs.get_logger(__name__)

PV_PATH = "/api/v1/persistentvolumes/{}"
PVC_PATH = "/api/v1/namespaces/{}/persistentvolumeclaims/{}"
DEFAULT_POLL_SECONDS = 0.2
"""kube polls every second; cache reads are cheap, so we look more often."""


def node_labels_in(snapshot: Snapshot) -> Callable[[str], Mapping[str, str] | None]:
    """A lookup of a node's labels in ``snapshot`` (None when the node is gone)."""

    def labels(name: str) -> Mapping[str, str] | None:
        info = snapshot.get(name)
        return None if info is None or info.node is None else info.node.labels

    return labels


class VolumeBindingError(Exception):
    """PreBind failed: the message says why, in kube's words where it has some."""


def _version(value: str) -> int:
    try:
        return int(value)
    except ValueError:
        return 0


class VolumeBinder:
    """Writes one pod's volume bindings and waits until the PV controller completed them."""

    def __init__(
        self,
        api: ApiClient,
        volumes: Volumes,
        *,
        node_labels: Callable[[str], Mapping[str, str] | None] | None = None,
        timeout: float = DEFAULT_BIND_TIMEOUT_SECONDS,
        poll: float = DEFAULT_POLL_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """``node_labels``: a node's labels (None: the node is gone), e.g.
        :func:`node_labels_in`; ``timeout``: the wait when the caller names none."""
        self.api = api
        self.volumes = volumes
        self.node_labels = node_labels or (lambda _name: None)
        self.timeout = timeout
        self.poll = poll
        self.clock = clock

    async def bind_pod_volumes(
        self,
        pod: Pod,
        node_name: str,
        plan: PodVolumes,
        *,
        timeout: float,  # noqa: ASYNC109 - the port's API
    ) -> st.Status:
        """The port's call: :meth:`bind` for the node's labels; an Error status on failure."""
        labels = self.node_labels(node_name)
        try:
            if labels is None:
                raise VolumeBindingError(f'failed to get node "{node_name}": not found')
            await self.bind(pod, node_name, labels, plan, timeout=timeout)
        except VolumeBindingError as exc:
            log.info("volume_binding_failed", pod=pod.key, node=node_name, error=str(exc))
            return st.error(str(exc))
        return st.SUCCESS

    async def bind(
        self,
        pod: Pod,
        node: str,
        node_labels: Mapping[str, str],
        plan: PodVolumes,
        *,
        timeout: float | None = None,  # noqa: ASYNC109 - the port's API
    ) -> None:
        """kube's BindPodVolumes: API writes, then wait up to ``timeout`` s (the binder's
        own when None); :class:`VolumeBindingError` on failure."""
        written: dict[str, int] = {}
        try:
            for pv, pvc in plan.static_bindings:
                reply = await self.api.request(
                    "PATCH", PV_PATH.format(pv.name), body=_claim_ref_patch(pv, pvc)
                )
                written[f"pv/{pv.name}"] = _version(_rv(reply))
            for pvc in plan.provisions:
                reply = await self.api.request(
                    "PATCH",
                    PVC_PATH.format(pvc.namespace, pvc.name),
                    body=_selected_node_patch(pvc, node),
                )
                written[f"pvc/{pvc.namespace}/{pvc.name}"] = _version(_rv(reply))
        except errors.ApiError as exc:
            raise VolumeBindingError(str(exc)) from exc
        log.debug("volume_bindings_written", pod=pod.key, node=node, objects=len(written))
        deadline = self.clock() + (self.timeout if timeout is None else timeout)
        while not self._bound(node, node_labels, plan, written):
            if self.clock() >= deadline:
                raise VolumeBindingError("binding volumes: timed out waiting for the condition")
            await asyncio.sleep(self.poll)

    def _bound(
        self,
        node: str,
        node_labels: Mapping[str, str],
        plan: PodVolumes,
        written: Mapping[str, int],
    ) -> bool:
        """kube's checkBindings against the watched objects: False to keep waiting, an
        error when the binding can no longer complete."""
        volumes = self.volumes
        for pv, pvc in plan.static_bindings:
            current = volumes.api_pv(pv.name)
            claim = volumes.api_pvc(pvc.namespace, pvc.name)
            if current is None or claim is None:
                missing = (
                    f'persistentvolume "{pv.name}"'
                    if current is None
                    else (f'persistentvolumeclaim "{pvc.name}"')
                )
                raise VolumeBindingError(f"failed to check binding: {missing} not found")
            if _version(current.resource_version) < written.get(f"pv/{pv.name}", 0):
                return False
            if not current.fits_node(node_labels):
                raise VolumeBindingError(
                    f'pv "{pv.name}" node affinity doesn\'t match node "{node}"'
                )
            if current.claim_ref is None or not current.claim_ref.uid:
                raise VolumeBindingError(f'ClaimRef got reset for pv "{pv.name}"')
            if not claim.fully_bound:
                return False
        for pvc in plan.provisions:
            claim = volumes.api_pvc(pvc.namespace, pvc.name)
            if claim is None:
                raise VolumeBindingError(
                    f'failed to check provisioning pvc: persistentvolumeclaim "{pvc.name}" '
                    "not found"
                )
            if _version(claim.resource_version) < written.get(f"pvc/{pvc.namespace}/{pvc.name}", 0):
                return False
            if claim.selected_node is None:
                raise VolumeBindingError(f'selectedNode annotation reset for PVC "{pvc.name}"')
            if claim.selected_node != node:
                raise VolumeBindingError(f'provisioning failed for PVC "{pvc.name}"')
            if claim.volume_name:
                volume = volumes.api_pv(claim.volume_name)
                if volume is None:
                    return False
                if not volume.fits_node(node_labels):
                    raise VolumeBindingError(
                        f'pv "{volume.name}" node affinity doesn\'t match node "{node}"'
                    )
            if not claim.fully_bound:
                return False
        return True


def _rv(reply: Mapping[str, Any]) -> str:
    meta = reply.get("metadata")
    version = meta.get("resourceVersion") if isinstance(meta, dict) else None
    return version if isinstance(version, str) else ""


def _claim_ref_patch(pv: PersistentVolume, pvc: PersistentVolumeClaim) -> dict[str, Any]:
    return {
        "metadata": {
            "resourceVersion": pv.resource_version,
            "annotations": {ANN_BOUND_BY_CONTROLLER: "yes"},
        },
        "spec": {
            "claimRef": {
                "kind": "PersistentVolumeClaim",
                "apiVersion": "v1",
                "namespace": pvc.namespace,
                "name": pvc.name,
                "uid": pvc.uid,
                "resourceVersion": pvc.resource_version,
            }
        },
    }


def _selected_node_patch(pvc: PersistentVolumeClaim, node: str) -> dict[str, Any]:
    return {
        "metadata": {
            "resourceVersion": pvc.resource_version,
            "annotations": {ANN_SELECTED_NODE: node},
        }
    }
