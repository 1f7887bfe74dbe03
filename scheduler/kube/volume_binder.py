"""VolumeBinding's PreBind against the API: write the volume bindings, wait for them, then bind.

kube-scheduler's VolumeBinding PreBind (``BindPodVolumes``) runs before the pod's Binding
is posted: for each static binding it writes the PV's ``claimRef`` (and the
``pv.kubernetes.io/bound-by-controller`` annotation), for each claim to provision the
``volume.kubernetes.io/selected-node`` annotation; then it polls its caches until the PV
controller has bound every claim (``volumeName`` plus ``pv.kubernetes.io/bind-completed``),
a provisioner included, or fails after ``bindTimeoutSeconds`` (600 s by default).

Here the writes are merge patches carrying the cached ``resourceVersion`` (a 409 when the
object changed since, as kube's Update), and the wait reads ``cache.volumes``, which the
watch keeps current. :class:`PreBindingDispatcher` wraps the Binder: a request whose
plan is empty goes straight to it; the others get their volumes bound first, each in a
worker of its own (``workers.WorkerPool``, unbounded), and a failure restores what Reserve
assumed and ends the request as an error (the pod is requeued with backoff, as kube's
PreBind failure).

Neighbours: ``plugins.volume_binding`` (Reserve's plan), ``cache.volumes`` (assumed and
API objects), ``binder`` (the Binding POST), ``workers``.
"""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING, Any

from scheduler import logs
from scheduler.cycle.ports import BindResult
from scheduler.kube import errors, workers
from scheduler.model.volumes import ANN_BOUND_BY_CONTROLLER, ANN_SELECTED_NODE
from scheduler.plugins.volume_binding import DEFAULT_BIND_TIMEOUT_SECONDS, VolumeBinding

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping

    from scheduler.cache.snapshot import Snapshot
    from scheduler.cache.volumes import Volumes
    from scheduler.cycle.ports import BindDispatcher, BindDone, BindRequest
    from scheduler.framework.profile import Profile
    from scheduler.kube.client import ApiClient
    from scheduler.model.pod import Pod
    from scheduler.model.volumes import PersistentVolume, PersistentVolumeClaim
    from scheduler.plugins.volume_binding import PodVolumes

__all__ = [
    "PreBindingDispatcher",
    "VolumeBinder",
    "VolumeBindingError",
    "bind_timeout",
    "node_labels_in",
]

log = logs.get_logger(__name__)

PV_PATH = "/api/v1/persistentvolumes/{}"
PVC_PATH = "/api/v1/namespaces/{}/persistentvolumeclaims/{}"
DEFAULT_POLL_SECONDS = 0.2
"""kube polls every second; cache reads are cheap, so we look more often."""


def bind_timeout(profiles: Iterable[Profile]) -> float:
    """The longest ``bindTimeoutSeconds`` among the profiles' VolumeBinding plugins."""
    timeouts = [
        plugin.bind_timeout_seconds
        for profile in profiles
        for plugin in profile.plugins
        if isinstance(plugin, VolumeBinding)
    ]
    return float(max(timeouts, default=DEFAULT_BIND_TIMEOUT_SECONDS))


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
        timeout: float,
        poll: float = DEFAULT_POLL_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.api = api
        self.volumes = volumes
        self.timeout = timeout
        self.poll = poll
        self.clock = clock

    async def bind(
        self, pod: Pod, node: str, node_labels: Mapping[str, str], plan: PodVolumes
    ) -> None:
        """kube's BindPodVolumes: API writes, then wait; :class:`VolumeBindingError` on failure."""
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
        deadline = self.clock() + self.timeout
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

    def restore(self, plan: PodVolumes) -> None:
        """Drop what Reserve assumed (kube's revertAssumedPVs/PVCs)."""
        plan.restore(self.volumes)


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


class PreBindingDispatcher:
    """A ``BindDispatcher`` that runs VolumeBinding's PreBind before the inner Binder.

    ``plan_of`` returns the request's volume plan (None: nothing to bind, the request goes
    to ``inner`` at once); ``node_labels`` the labels of a node (None if it is gone)."""

    def __init__(
        self,
        inner: BindDispatcher,
        binder: VolumeBinder,
        *,
        plan_of: Callable[[BindRequest], PodVolumes | None],
        node_labels: Callable[[str], Mapping[str, str] | None],
    ) -> None:
        self.inner = inner
        self.binder = binder
        self.plan_of = plan_of
        self.node_labels = node_labels
        # No bound, as kube runs each binding cycle in a goroutine of its own: a PreBind
        # waits for the PV controller up to bindTimeoutSeconds, and a bounded pool would let
        # such waits hold up the volume bindings behind them.
        self._pool: workers.WorkerPool[_PreBind] = workers.WorkerPool(
            "pre-bind", self._pre_bind, limit=None, describe=_describe
        )

    @property
    def in_flight(self) -> int:
        """Requests still binding their volumes (the inner Binder counts its own)."""
        return self._pool.pending + self._pool.busy

    def dispatch(self, request: BindRequest, done: BindDone) -> None:
        plan = self.plan_of(request)
        if plan is None or not (plan.static_bindings or plan.provisions):
            self.inner.dispatch(request, done)
            return
        if not self._pool.submit((request, plan, done)):
            self.binder.restore(plan)
            _finish(request, done, BindResult.ERROR, "binder is shut down")

    async def _pre_bind(self, job: _PreBind) -> None:
        request, plan, done = job
        labels = self.node_labels(request.node)
        try:
            if labels is None:
                raise VolumeBindingError(f'failed to get node "{request.node}": not found')
            await self.binder.bind(request.pod, request.node, labels, plan)
        except VolumeBindingError as exc:
            self.binder.restore(plan)
            log.info(
                "volume_binding_failed", pod=request.pod.key, node=request.node, error=str(exc)
            )
            _finish(request, done, BindResult.ERROR, str(exc))
            return
        except asyncio.CancelledError:
            self.binder.restore(plan)
            _finish(request, done, BindResult.ERROR, "volume binding cancelled")
            raise
        except Exception as exc:  # a bug must not leave the pod assumed forever
            self.binder.restore(plan)
            log.exception("volume_binding_crashed", pod=request.pod.key, node=request.node)
            _finish(request, done, BindResult.ERROR, f"volume binding failed: {exc}")
            return
        self.inner.dispatch(request, done)

    async def drain_pending(self) -> None:
        """Wait until every dispatched request has passed its volume binding (tests)."""
        await self._pool.drain(None)

    async def drain(self, timeout: float) -> bool:  # noqa: ASYNC109 - the port's API
        """Cancel pending volume bindings (their pods are requeued) and refuse new ones, then
        drain the Binder."""
        for request, plan, done in await self._pool.stop():
            self.binder.restore(plan)
            _finish(request, done, BindResult.ERROR, "volume binding cancelled")
        drain = getattr(self.inner, "drain", None)
        return True if drain is None else bool(await drain(timeout))


_PreBind = tuple["BindRequest", "PodVolumes", "BindDone"]


def _describe(job: _PreBind) -> dict[str, object]:
    return {"pod": job[0].pod.key, "node": job[0].node}


def _finish(request: BindRequest, done: BindDone, result: BindResult, message: str) -> None:
    try:
        done(request, result, message)
    except Exception:  # a bug in the caller must not kill the task silently
        log.exception("bind_done_failed", pod=request.pod.key)
