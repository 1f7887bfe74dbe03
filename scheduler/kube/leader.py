"""Lease-based leader election (coordination.k8s.io/v1), client-go's ``leaderelection``.

Several replicas may run; only the one holding the Lease schedules. The loop reads this
object through the ``Gate`` protocol (``is_open`` = leading, ``wait_open``).

The rules, as client-go's ``tryAcquireOrRenew``:

- Acquire when the Lease is absent (create it), released (``holderIdentity`` empty),
  ours, or expired. Expired is judged on OUR monotonic clock: the time we first saw the
  current record (``observed_time``, reset whenever the record changes) plus its
  ``leaseDurationSeconds`` has passed. Remote timestamps are never compared with our wall
  clock, so clock skew between replicas cannot cause two leaders.
- Writes are optimistic: PUT with ``metadata.resourceVersion``; a 409 means someone else
  wrote first, and we have not acquired.
- The leader renews every ``retry_period``. If no renewal succeeds for ``renew_deadline``
  (measured from the moment the last successful write was *sent*), or another holder is
  seen, leadership ends at once. ``is_open`` checks that deadline itself, so even a starved
  loop never believes it still leads after the deadline.
- Safety margin: a follower waits ``leaseDuration`` from when it observed our last write,
  which is after we sent it, and ``renew_deadline < lease_duration``; so the old leader
  has stopped before anyone else may start.
- On cancellation the Lease is released (``holderIdentity: ""``), like client-go's
  ``ReleaseOnCancel``, so a follower takes over on its next retry instead of waiting for
  expiry.

After losing, the elector contends again (the loop requeues undecided pods and waits on
the gate); ``lost`` and ``leading_changed`` let the app react (metrics, or exit as
kube-scheduler does).

Neighbours: ``client``/``errors`` for I/O, ``framework.config.LeaderElectionConfig`` for
durations, ``scheduler.clock`` for time; independent of ``binder``, ``reporter``,
``controller``.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import random
import socket
import uuid
from typing import TYPE_CHECKING, Any

from scheduler import clock as clocks
from scheduler import logs
from scheduler.kube import errors
from scheduler.kube.timestamps import rfc3339

if TYPE_CHECKING:
    from collections.abc import Callable

    from scheduler.framework.config import LeaderElectionConfig
    from scheduler.kube.client import ApiClient

__all__ = ["LeaderElector", "default_identity"]

log = logs.get_logger(__name__)

JITTER_FACTOR = 1.2
"""client-go's acquire-loop jitter: waits are ``retry_period * (1 + rand * 1.2)``."""


def default_identity() -> str:
    """``<hostname>_<uuid>``, unique per process, as kube-scheduler's."""
    return f"{socket.gethostname()}_{uuid.uuid4()}"


class LeaderElector:
    """Contend for one Lease; a ``Gate`` that is open while this replica leads."""

    def __init__(
        self,
        api: ApiClient,
        config: LeaderElectionConfig,
        *,
        identity: str | None = None,
        clock: clocks.Clock | None = None,
        leading_changed: Callable[[bool], None] | None = None,
        release_on_cancel: bool = True,
    ) -> None:
        if not config.lease_duration > config.renew_deadline > config.retry_period > 0:
            raise ValueError("need lease_duration > renew_deadline > retry_period > 0")
        self._api = api
        self.config = config
        self.identity = identity or default_identity()
        self._clock = clock or clocks.LoopClock()
        self._leading_changed = leading_changed
        self.release_on_cancel = release_on_cancel
        self._path = (
            f"/apis/coordination.k8s.io/v1/namespaces/{config.resource_namespace}"
            f"/leases/{config.resource_name}"
        )
        self._open = asyncio.Event()
        self.lost = asyncio.Event()
        """Set when leadership ends (cleared when it is acquired again)."""
        self._leading = False
        self._renewed_at = -math.inf  # our clock, when the last successful write was sent
        self._observed_spec: dict[str, Any] | None = None
        self._observed_time = -math.inf
        self._observed_rv: str | None = None
        self._rng = random.Random()
        self.transitions = 0
        """Times this elector became leader."""

    # -- Gate -----------------------------------------------------------------------------

    def is_open(self) -> bool:
        """True while we lead and the last renewal is younger than ``renew_deadline``."""
        if not self._leading:
            return False
        if self._clock.now() - self._renewed_at >= self.config.renew_deadline:
            self._set_leading(False, "renew_deadline_passed")
            return False
        return True

    async def wait_open(self) -> None:
        """Return once this replica leads."""
        while not self.is_open():
            await self._open.wait()

    @property
    def holder(self) -> str | None:
        """The holder identity last observed on the Lease ("" = released, None = unknown)."""
        spec = self._observed_spec
        return None if spec is None else str(spec.get("holderIdentity") or "")

    # -- the election loop ----------------------------------------------------------------

    async def run(self) -> None:
        """Contend, lead, renew, contend again... until cancelled; then release if leading."""
        log.info("leader_election_started", identity=self.identity, lease=self._path)
        try:
            while True:
                await self._acquire()
                await self._renew()
        finally:
            was_leading = self._leading
            self._set_leading(False, "stopped")
            if was_leading and self.release_on_cancel:
                await self._release()

    async def _acquire(self) -> None:
        while True:
            if await self._try_acquire_or_renew(timeout=self.config.renew_deadline):
                self._set_leading(True, "acquired")
                return
            await asyncio.sleep(self.config.retry_period * (1 + self._rng.random() * JITTER_FACTOR))

    async def _renew(self) -> None:
        """Renew every ``retry_period`` until the deadline passes or someone else holds."""
        while True:
            await asyncio.sleep(self.config.retry_period)
            if not self._leading:
                return  # is_open() saw the deadline pass while we slept: contend afresh
            remaining = self.config.renew_deadline - (self._clock.now() - self._renewed_at)
            renewed = False
            if remaining > 0:
                # The attempt may not outlive the deadline: a hung request is a lost lease.
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(remaining):
                        renewed = await self._try_acquire_or_renew(timeout=remaining)
            if renewed:
                continue
            if self.holder not in (None, "", self.identity):
                self._set_leading(False, "taken_over")
                return
            if self._clock.now() - self._renewed_at >= self.config.renew_deadline:
                self._set_leading(False, "renew_deadline_passed")
                return

    async def _try_acquire_or_renew(self, *, timeout: float) -> bool:  # noqa: ASYNC109 - per request
        sent = self._clock.now()
        wall = rfc3339(micro=True)
        try:
            lease = await self._api.request("GET", self._path, timeout=timeout, retries=0)
        except errors.NotFound:
            return await self._create(sent, wall, limit=timeout)
        except errors.ApiError as e:
            self._failed("lease_get_failed", e)
            return False
        meta = lease.get("metadata") or {}
        spec = dict(lease.get("spec") or {})
        if spec != self._observed_spec:
            # client-go's observedTime: expiry counts from when WE saw this record.
            self._observed_spec = spec
            self._observed_time = sent
        self._observed_rv = meta.get("resourceVersion")
        holder = str(spec.get("holderIdentity") or "")
        duration = float(spec.get("leaseDurationSeconds") or self.config.lease_duration)
        ours = holder == self.identity
        if holder and not ours and sent < self._observed_time + duration:
            return False  # held by someone else and not expired
        transitions = int(spec.get("leaseTransitions") or 0)
        new_spec = {
            "holderIdentity": self.identity,
            "leaseDurationSeconds": self._duration_seconds(),
            "acquireTime": spec.get("acquireTime") if ours else wall,
            "renewTime": wall,
            "leaseTransitions": transitions if ours else transitions + 1,
        }
        body = self._lease_body(new_spec)
        try:
            written = await self._api.request(
                "PUT", self._path, body=body, timeout=timeout, retries=0
            )
        except errors.ApiError as e:
            self._failed("lease_update_failed", e, conflict=isinstance(e, errors.Conflict))
            return False
        self._observe_written(written, new_spec, sent)
        return True

    async def _create(self, sent: float, wall: str, limit: float) -> bool:
        spec = {
            "holderIdentity": self.identity,
            "leaseDurationSeconds": self._duration_seconds(),
            "acquireTime": wall,
            "renewTime": wall,
            "leaseTransitions": 0,
        }
        body = {
            "apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease",
            "metadata": {
                "name": self.config.resource_name,
                "namespace": self.config.resource_namespace,
            },
            "spec": spec,
        }
        collection = self._path.rsplit("/", 1)[0]
        try:
            written = await self._api.request("POST", collection, body=body, timeout=limit)
        except errors.ApiError as e:
            self._failed("lease_create_failed", e)
            return False
        self._observe_written(written, spec, sent)
        return True

    def _observe_written(self, written: dict[str, Any], spec: dict[str, Any], sent: float) -> None:
        self._observed_spec = dict(written.get("spec") or spec)
        self._observed_time = sent
        self._observed_rv = (written.get("metadata") or {}).get("resourceVersion")
        self._renewed_at = sent

    def _lease_body(self, spec: dict[str, Any]) -> dict[str, Any]:
        """A Lease to PUT over the one we observed (its resourceVersion: optimistic lock)."""
        return {
            "apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease",
            "metadata": {
                "name": self.config.resource_name,
                "namespace": self.config.resource_namespace,
                "resourceVersion": self._observed_rv,
            },
            "spec": spec,
        }

    async def _release(self) -> None:
        """Give the Lease up so a follower need not wait for expiry (best effort)."""
        spec = dict(self._observed_spec or {})
        if spec.get("holderIdentity") != self.identity:
            return
        wall = rfc3339(micro=True)
        spec.update(holderIdentity="", leaseDurationSeconds=1, renewTime=wall, acquireTime=wall)
        body = self._lease_body(spec)
        try:
            await self._api.request(
                "PUT", self._path, body=body, timeout=self.config.retry_period, retries=0
            )
        except errors.ApiError as e:
            log.warning("lease_release_failed", error=str(e))
        else:
            log.info("lease_released", identity=self.identity)

    def _failed(self, event: str, error: errors.ApiError, **fields: object) -> None:
        """A Lease request failed: a retry while the API server is away or throttles (the
        client's rate-limited ``retry_log``), else an answer worth its info line (a 409:
        another replica wrote first; a 403)."""
        if isinstance(error, errors.TRANSIENT):
            self._api.retry_log.retrying(
                event, source="leader", logger=log, error=str(error), **fields
            )
        else:
            log.info(event, error=str(error), **fields)

    # -- state ----------------------------------------------------------------------------

    def _duration_seconds(self) -> int:
        # The API field is whole seconds; rounding up keeps followers at least as patient as
        # our renew deadline assumes.
        return max(1, math.ceil(self.config.lease_duration))

    def _set_leading(self, leading: bool, why: str) -> None:
        if leading == self._leading:
            return
        self._leading = leading
        if leading:
            self.transitions += 1
            self.lost.clear()
            self._open.set()
            log.info("leadership_acquired", identity=self.identity)
        else:
            self._open.clear()
            self.lost.set()
            log.warning("leadership_lost", identity=self.identity, reason=why)
        if self._leading_changed is not None:
            try:
                self._leading_changed(leading)
            except Exception:
                log.exception("leading_changed_hook_failed")
