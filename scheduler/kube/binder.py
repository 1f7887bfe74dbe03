"""Binder: the cycle's ``BindDispatcher`` against the API (``POST pods/{name}/binding``).

kube-scheduler runs each binding cycle in its own goroutine so the scheduling cycle never
waits for the API; this is that, with a bound on concurrency (a thundering herd of binds
only queues up in the API server's priority-and-fairness anyway). ``dispatch`` hands the
bind to a ``workers.WorkerPool`` of ``concurrency`` tasks; each worker POSTs one Binding at
a time.

Outcomes (``cycle.ports.BindResult``):

- 201/200 → BOUND.
- 409 → BOUND when the pod is "already assigned to node X" and X is our node: an earlier
  attempt of ours succeeded server-side but its response was lost (timeout, reset);
  otherwise CONFLICT (bound elsewhere, UID precondition failed, pod terminating).
- 404 → GONE.
- 429, 5xx, timeouts, lost connections → retried (jittered backoff, ``Retry-After``
  honoured up to a cap; a 429 up to ``throttled_retries`` times, the rest ``retries``), then
  ERROR; once a request may have reached the server unanswered
  (a timeout, a reset), retried until an answer or ``unanswered_timeout`` (401/403
  included: a restarted API server refuses all until its authorizer syncs): the pod may
  be bound already, and only the server's answer says so. Retrying a POST is safe here
  because of the 409 rule above: a duplicate bind cannot move a pod, it can only be told it
  is already there. The retries (``bind_retry``) and the ERROR after them (``bind_failed``)
  go to the client's ``retry_log``: a warning at most every 30 s, the rest at debug.
- anything else (400, 401/403, 422) → ERROR at once.
- the node gone from the cache when the bind's turn comes (``node_exists``), or before a
  retry while every attempt was refused unprocessed (``did_not_land``: 429, no connection)
  → ERROR without a request: binds queue behind ``concurrency``, and kube-apiserver accepts
  a Binding to a deleted node, so a bind decided before the node's deletion reached the
  cache would bind a pod to nowhere (issue 37's chaos suite saw one); the pod is decided
  again. What no scheduler can close is a bind sent before the deletion reached the cache
  (the watch lags the API server): ``binds_on_wire`` names the unanswered ones for the node
  controller's ``node_deleted`` line (kube-controller-manager's pod GC deletes pods bound to
  a node that does not exist).

``done`` runs exactly once per dispatch, on the event loop, and its exceptions are logged
and swallowed: a bug in the caller must not kill a worker and strand later binds.
Metrics are recorded by the caller (``Scheduler.bind_finished``).

Neighbours: ``client`` (transport, ``backoff_delay``), ``errors`` and ``workers``; independent of
``reporter``, ``leader`` and ``controller``.
"""

from __future__ import annotations

import asyncio
import re
from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import orjson

from scheduler import logs
from scheduler.cycle.ports import BindDone, BindRequest, BindResult
from scheduler.kube import client, errors, workers

if TYPE_CHECKING:
    from collections.abc import Callable

    from scheduler.kube.client import ApiClient

__all__ = ["BINDS_PER_PARALLELISM", "Binder", "assigned_node", "did_not_land", "may_have_landed"]

log = logs.get_logger(__name__)

_Job = tuple[BindRequest, BindDone]


def _describe(job: _Job) -> dict[str, object]:
    return {"pod": job[0].pod.key, "node": job[0].node}


_ASSIGNED = re.compile(r'already assigned to node "([^"]*)"')


def assigned_node(message: str) -> str | None:
    """The node named by kube's ``pod x is already assigned to node "n"`` 409, else None."""
    m = _ASSIGNED.search(message)
    return m.group(1) if m else None


def may_have_landed(error: errors.ApiError) -> bool:
    """The request may have reached the server, which gave no answer: a timeout, a reset or
    a disconnect (a refused connection sent nothing)."""
    return isinstance(error, errors.TransportError) and not error.reason.startswith(
        "ClientConnector"
    )


def did_not_land(error: errors.ApiError) -> bool:
    """The request surely changed nothing: a 429 (refused before any handler ran) or a
    connection never made. A 5xx may come after the write (a 504 from the timeout filter)."""
    return isinstance(error, errors.TooManyRequests) or (
        isinstance(error, errors.TransportError) and not may_have_landed(error)
    )


def binding_body(request: BindRequest) -> dict[str, Any]:
    """The v1 Binding for ``request``; the UID makes a recreated same-name pod a 409."""
    pod = request.pod
    return {
        "apiVersion": "v1",
        "kind": "Binding",
        "metadata": {"name": pod.name, "namespace": pod.namespace, "uid": str(pod.uid)},
        "target": {"apiVersion": "v1", "kind": "Node", "name": request.node},
    }


BINDS_PER_PARALLELISM = 4
"""Bind calls in flight per unit of the configuration's ``parallelism`` (16 → 64).
kube-scheduler binds each pod on a goroutine of its own, without bound, over one HTTP/2
connection; ours holds an HTTP/1.1 connection per bind in flight, so it keeps a bound.
Measured at 5000 nodes with kubelets' status updates loading the API server: 16 in flight
held ours to 222 pods/s (binds queued behind slower answers), 48 gave 294, 64 gave 252 in
multi-pod-per-node where kube-scheduler reached 226 and 210 (docs/performance.md)."""


@dataclass(frozen=True, slots=True)
class BinderOptions:
    """The binder's knobs (``SchedulerSettings.binder``); the one source of their defaults."""

    concurrency: int = BINDS_PER_PARALLELISM * 16
    """Bind calls in flight at once (:data:`BINDS_PER_PARALLELISM` × kube's default
    parallelism). More hides API latency; too many trips API priority and fairness (429s,
    retried with backoff)."""
    retries: int = 3
    """Attempts after the first for a retriable failure (5xx, a lost connection)."""
    throttled_retries: int = 10
    """Attempts after the first while the server answers 429 (client-go's rest client
    retries a 429 up to 10 times, honouring ``Retry-After``): a throttled bind never
    landed, and sending it back to the queue only costs a second decision."""
    timeout: float = 10.0
    """Seconds one bind call may take."""
    backoff_base: float = 0.05
    """Seconds before the first retry; doubles per attempt, with jitter."""
    backoff_cap: float = 1.0
    """Longest wait between two attempts, in seconds."""
    retry_after_cap: float = 2.0
    """Longest ``Retry-After`` honoured, in seconds."""
    unanswered_timeout: float = 30.0
    """Seconds a bind is retried past ``retries`` once a request of it may have reached the
    server unanswered (reset, disconnected, timed out; not a refused connection): it may be
    bound already, and an ERROR would have the pod decided again — a second decision, and
    its node's usage missing from the cache until the watch shows the bind. The retry ends
    it: 409 "already assigned" to this node is BOUND (issue 37: a kube-apiserver SIGKILL
    mid-burst)."""


class Binder:
    """Bounded-concurrency asynchronous binds; implements ``cycle.ports.BindDispatcher``."""

    def __init__(
        self,
        api: ApiClient,
        options: BinderOptions | None = None,
        *,
        node_exists: Callable[[str], bool] | None = None,
    ) -> None:
        o = options or BinderOptions()
        self.node_exists = node_exists
        """Whether the cache still has the node (None: not checked); asked before a bind's
        first request, and before a retry while no attempt can have landed."""
        if o.concurrency < 1:
            raise ValueError(f"bind concurrency must be >= 1, got {o.concurrency}")
        self._api = api
        self.concurrency = o.concurrency
        self.retries = o.retries
        self.throttled_retries = o.throttled_retries
        self.timeout = o.timeout
        self.backoff_base = o.backoff_base
        self.backoff_cap = o.backoff_cap
        self.retry_after_cap = o.retry_after_cap
        self.unanswered_timeout = o.unanswered_timeout
        self._pool: workers.WorkerPool[_Job] = workers.WorkerPool(
            "bind", self._work, limit=o.concurrency, describe=_describe
        )
        self._on_wire: dict[str, Counter[str]] = {}
        """node → pod key → binds past the node check and unanswered (a pod recreated under
        its name can have two)."""

    @property
    def in_flight(self) -> int:
        """Dispatched binds whose ``done`` has not run yet (queued or on the wire)."""
        return self._pool.pending + self._pool.busy

    @property
    def running(self) -> int:
        """Worker tasks alive now (<= ``concurrency``)."""
        return self._pool.live

    def dispatch(self, request: BindRequest, done: BindDone) -> None:
        """Queue the bind and return at once; ``done`` is called later on the loop."""
        if not self._pool.submit((request, done)):
            self._finish(request, done, BindResult.ERROR, "binder is shut down")

    async def drain(self, timeout: float) -> bool:  # noqa: ASYNC109 - the port's API
        """Wait up to ``timeout`` s for every dispatched bind to finish; True if all did."""
        if await self._pool.drain(timeout):
            return True
        log.warning("bind_drain_timeout", in_flight=self.in_flight)
        return False

    async def close(self) -> None:
        """Stop: refuse new binds, cancel the workers; unfinished binds end as ERROR."""
        for request, done in await self._pool.stop():
            self._finish(request, done, BindResult.ERROR, "binder is shut down")

    async def _work(self, job: _Job) -> None:
        request, done = job
        try:
            result, message = await self._bind(request)
        except asyncio.CancelledError:
            self._finish(request, done, BindResult.ERROR, "bind cancelled")
            raise
        except Exception as e:  # a bug below must not strand the pod without an outcome
            log.exception("bind_crashed", pod=request.pod.key, node=request.node)
            result, message = BindResult.ERROR, f"bind failed: {e!r}"
        self._finish(request, done, result, message)

    @staticmethod
    def _finish(request: BindRequest, done: BindDone, result: BindResult, message: str) -> None:
        try:
            done(request, result, message)
        except Exception:
            log.exception("bind_done_callback_failed", pod=request.pod.key, result=str(result))

    def binds_on_wire(self, node: str) -> list[str]:
        """The pods (``namespace/name``) whose binds to ``node`` are past the node check
        and not answered yet: the ones that may still land after the node's deletion
        reaches the cache."""
        return sorted(self._on_wire.get(node, ()))

    def _node_deleted(self, request: BindRequest) -> bool:
        if self.node_exists is None or self.node_exists(request.node):
            return False
        log.info("bind_node_deleted", pod=request.pod.key, node=request.node)
        return True

    async def _bind(self, request: BindRequest) -> tuple[BindResult, str]:
        if self._node_deleted(request):
            return BindResult.ERROR, f'node "{request.node}" was deleted before the bind'
        key = request.pod.key
        on_wire = self._on_wire.setdefault(request.node, Counter())
        on_wire[key] += 1
        try:
            return await self._send(request)
        finally:
            on_wire[key] -= 1
            if not on_wire[key]:
                del on_wire[key]
            if not on_wire and self._on_wire.get(request.node) is on_wire:
                del self._on_wire[request.node]

    async def _send(self, request: BindRequest) -> tuple[BindResult, str]:
        pod = request.pod
        path = f"/api/v1/namespaces/{pod.namespace}/pods/{pod.name}/binding"
        data = orjson.dumps(binding_body(request))  # once, not per attempt
        attempt = 0
        loop = asyncio.get_running_loop()
        unanswered_until: float | None = None
        landed_maybe = False
        while True:
            try:
                await self._api.request("POST", path, data=data, timeout=self.timeout, decode=False)
            except errors.Conflict as e:
                if assigned_node(e.message) == request.node:
                    log.info("bind_already_done", pod=pod.key, node=request.node, attempt=attempt)
                    return BindResult.BOUND, ""
                return BindResult.CONFLICT, e.message
            except errors.NotFound as e:
                return BindResult.GONE, e.message
            except errors.ApiError as e:
                # Retries, here and from the queue after ERROR: rate-limited per binder, the
                # rest at debug (``retry_log``), so an outage mid-burst is a few lines.
                retry_log = self._api.retry_log
                landed_maybe = landed_maybe or not did_not_land(e)
                if unanswered_until is None and may_have_landed(e):
                    unanswered_until = loop.time() + self.unanswered_timeout
                unsettled = unanswered_until is not None and loop.time() < unanswered_until
                # Once a request may have landed, a 401/403 does not settle it: a restarted
                # API server refuses everything until its authorizer has synced.
                if not isinstance(e, errors.TRANSIENT) and not (
                    unsettled and isinstance(e, errors.Unauthorized)
                ):
                    log.warning("bind_rejected", pod=pod.key, node=request.node, error=str(e))
                    return BindResult.ERROR, str(e)
                limit = (
                    self.throttled_retries
                    if isinstance(e, errors.TooManyRequests)
                    else self.retries
                )
                if attempt >= limit and not unsettled:
                    retry_log.retrying(
                        "bind_failed",
                        source="binder",
                        logger=log,
                        pod=pod.key,
                        node=request.node,
                        attempts=attempt + 1,
                        error=str(e),
                    )
                    return BindResult.ERROR, str(e)
                delay = client.backoff_delay(
                    attempt,
                    base=self.backoff_base,
                    cap=self.backoff_cap,
                    retry_after=e.retry_after,
                    retry_after_cap=self.retry_after_cap,
                )
                attempt += 1
                retry_log.retrying(
                    "bind_retry",
                    source="binder",
                    logger=log,
                    pod=pod.key,
                    node=request.node,
                    attempt=attempt,
                    status=e.status,
                )
                await asyncio.sleep(delay)
                if not landed_maybe and self._node_deleted(request):
                    # No attempt can have landed: the pod is decided again, not bound to nowhere.
                    return BindResult.ERROR, f'node "{request.node}" was deleted before the bind'
            else:
                return BindResult.BOUND, ""
