"""Binder against the emulator: outcomes, retries, bounded concurrency, done contract."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

import pytest

from scheduler.cycle.ports import BindRequest, BindResult
from scheduler.kube.binder import Binder, BinderOptions, assigned_node
from scheduler.kube.errors import ApiError, Conflict, TransportError, Unauthorized
from scheduler.kube.retry_log import RetryLog
from scheduler.model.parse_pod import pod_from_raw
from scheduler.sim.faults import FaultConfig
from tests.builders import make_pod
from tests.kube.kube_helpers import FailFirst, Outcomes, bind_request, create_pod

if TYPE_CHECKING:
    from scheduler.kube.client import ApiClient
    from scheduler.sim.server import SimServer


async def _node_of(api: ApiClient, name: str) -> str | None:
    pod = await api.request("GET", f"/api/v1/namespaces/default/pods/{name}")
    node: str | None = pod["spec"].get("nodeName")
    return node


async def test_bound(api: ApiClient) -> None:
    """A pending pod is bound: BOUND with an empty message, nodeName set in the API."""
    pod = await create_pod(api, "p1")
    binder, done = Binder(api), Outcomes()
    binder.dispatch(bind_request(pod, "node-1"), done)
    assert binder.in_flight == 1
    await done.wait(1)
    assert done.calls == [("p1", BindResult.BOUND, "")]
    assert await _node_of(api, "p1") == "node-1"
    assert binder.in_flight == 0


async def test_a_node_deleted_before_the_bind_gets_no_pod(api: ApiClient) -> None:
    """The cache no longer has the node when the bind's turn comes: ERROR, no request (the
    API server would accept a Binding to a deleted node), the pod still pending."""
    pod = await create_pod(api, "p1")
    binder, done = Binder(api, node_exists=lambda name: name != "node-1"), Outcomes()
    binder.dispatch(bind_request(pod, "node-1"), done)
    await done.wait(1)
    assert done.calls == [("p1", BindResult.ERROR, 'node "node-1" was deleted before the bind')]
    assert await _node_of(api, "p1") is None
    binder.dispatch(bind_request(pod, "node-2"), done)
    await done.wait(2)
    assert done.calls[1] == ("p1", BindResult.BOUND, "")


_FAST_RETRIES = BinderOptions(backoff_base=0.001, backoff_cap=0.01)


class _GoneAfterFirstCheck:
    """``node_exists`` for a node deleted right after the bind's first check."""

    def __init__(self) -> None:
        self.checks: list[str] = []

    def __call__(self, name: str) -> bool:
        self.checks.append(name)
        return len(self.checks) == 1


async def test_a_node_deleted_while_a_throttled_bind_waits_gets_no_pod(
    api: ApiClient, sim: SimServer
) -> None:
    """A bind answered 429 (it cannot have landed) whose node leaves the cache before the
    retry: ERROR without a second request, the pod still pending."""
    pod = await create_pod(api, "p1t")
    fault = FailFirst(sim, "bind", 100, 429)
    node_exists = _GoneAfterFirstCheck()
    binder, done = Binder(api, _FAST_RETRIES, node_exists=node_exists), Outcomes()
    binder.dispatch(bind_request(pod, "node-1"), done)
    await done.wait(1)
    assert done.calls == [("p1t", BindResult.ERROR, 'node "node-1" was deleted before the bind')]
    assert fault.injected == 1
    assert node_exists.checks == ["node-1", "node-1"]
    assert await _node_of(api, "p1t") is None


async def test_a_bind_answered_5xx_is_retried_though_its_node_left_the_cache(
    api: ApiClient, sim: SimServer
) -> None:
    """A 5xx may come after the write (a 504 from kube-apiserver's timeout filter): the
    retry goes on whatever the cache says, and its 409 "already assigned" here would be
    BOUND; only a 429 or no connection proves nothing landed."""
    pod = await create_pod(api, "p1x")
    fault = FailFirst(sim, "bind", 1, 503)
    node_exists = _GoneAfterFirstCheck()
    binder, done = Binder(api, _FAST_RETRIES, node_exists=node_exists), Outcomes()
    binder.dispatch(bind_request(pod, "node-1"), done)
    await done.wait(1)
    assert done.calls == [("p1x", BindResult.BOUND, "")]
    assert fault.injected == 1
    assert node_exists.checks == ["node-1"]


async def test_binds_on_wire_names_the_pods_until_answered(api: ApiClient, sim: SimServer) -> None:
    """``binds_on_wire(node)`` names the pods whose binds to the node are past the check
    and unanswered (the node controller logs them when the node is deleted)."""
    first, second = await create_pod(api, "w1"), await create_pod(api, "w2")
    sim.faults.config = FaultConfig(latency=1.0)
    checked: list[str] = []
    both_checked = asyncio.Event()

    def node_exists(name: str) -> bool:
        checked.append(name)
        if len(checked) == 2:
            both_checked.set()
        return True

    binder, done = Binder(api, node_exists=node_exists), Outcomes()
    binder.dispatch(bind_request(first, "node-1"), done)
    binder.dispatch(bind_request(second, "node-2"), done)
    await both_checked.wait()  # each bind is on the wire from its check on
    assert binder.binds_on_wire("node-1") == ["default/w1"]
    assert binder.binds_on_wire("node-2") == ["default/w2"]
    assert binder.binds_on_wire("node-0") == []
    await done.wait(2)
    assert binder.binds_on_wire("node-1") == binder.binds_on_wire("node-2") == []


async def test_bound_elsewhere_is_conflict(api: ApiClient) -> None:
    """A pod already on another node → CONFLICT naming that node; the pod is not moved."""
    pod = await create_pod(api, "p2")
    binder, done = Binder(api), Outcomes()
    binder.dispatch(bind_request(pod, "node-0"), done)
    await done.wait(1)
    binder.dispatch(bind_request(pod, "node-2"), done)
    await done.wait(2)
    _name, result, message = done.calls[1]
    assert result is BindResult.CONFLICT
    assert 'already assigned to node "node-0"' in message
    assert await _node_of(api, "p2") == "node-0"


async def test_already_on_same_node_is_bound(api: ApiClient) -> None:
    """A 409 saying the pod is already on OUR node (a lost success) counts as BOUND."""
    pod = await create_pod(api, "p3")
    binder, done = Binder(api), Outcomes()
    binder.dispatch(bind_request(pod, "node-2"), done)
    binder.dispatch(bind_request(pod, "node-2"), done)
    await done.wait(2)
    assert [r for _, r, _ in done.calls] == [BindResult.BOUND, BindResult.BOUND]


async def test_uid_mismatch_is_conflict(api: ApiClient) -> None:
    """A pod recreated under the same name (new UID) is not bound: CONFLICT."""
    old = await create_pod(api, "p4")
    await api.request("DELETE", "/api/v1/namespaces/default/pods/p4")
    await create_pod(api, "p4")
    binder, done = Binder(api), Outcomes()
    binder.dispatch(bind_request(old, "node-0"), done)
    await done.wait(1)
    assert done.calls[0][1] is BindResult.CONFLICT
    assert "Precondition failed" in done.calls[0][2]
    assert await _node_of(api, "p4") is None


async def test_deleted_pod_is_gone(api: ApiClient) -> None:
    """A pod deleted before its bind → GONE."""
    pod = await create_pod(api, "p5")
    await api.request("DELETE", "/api/v1/namespaces/default/pods/p5")
    binder, done = Binder(api), Outcomes()
    binder.dispatch(bind_request(pod, "node-0"), done)
    await done.wait(1)
    assert done.calls[0][1] is BindResult.GONE


@pytest.mark.parametrize("code", [500, 503, 429])
async def test_transient_errors_retried_then_bound(
    api: ApiClient, sim: SimServer, code: int
) -> None:
    """Two injected failures are retried and the bind then succeeds."""
    pod = await create_pod(api, f"p6-{code}")
    fault = FailFirst(sim, "bind", 2, code)
    binder, done = Binder(api, BinderOptions(backoff_base=0.01)), Outcomes()
    binder.dispatch(bind_request(pod, "node-0"), done)
    await done.wait(1)
    assert done.calls[0][1] is BindResult.BOUND
    assert fault.injected == 2
    assert await _node_of(api, pod.name) == "node-0"


async def test_persistent_errors_end_as_error(api: ApiClient, sim: SimServer) -> None:
    """A bind failing every time is tried 1 + retries times, then ERROR with the message."""
    pod = await create_pod(api, "p7")
    fault = FailFirst(sim, "bind", 100, 500)
    binder, done = Binder(api, BinderOptions(retries=3, backoff_base=0.01)), Outcomes()
    binder.dispatch(bind_request(pod, "node-0"), done)
    await done.wait(1)
    _, result, message = done.calls[0]
    assert result is BindResult.ERROR
    assert "500" in message
    assert "injected fault" in message
    assert fault.injected == 4
    assert await _node_of(api, "p7") is None


async def test_a_throttled_bind_is_retried_as_client_go_retries_it(
    api: ApiClient, sim: SimServer
) -> None:
    """429s are retried ``throttled_retries`` times (client-go: 10), more than other
    transient failures; then ERROR."""
    pod = await create_pod(api, "p7b")
    fault = FailFirst(sim, "bind", 100, 429)
    options = BinderOptions(retries=3, throttled_retries=10, backoff_base=0.001, backoff_cap=0.01)
    binder, done = Binder(api, options), Outcomes()
    binder.dispatch(bind_request(pod, "node-0"), done)
    await done.wait(1)
    assert done.calls[0][1] is BindResult.ERROR
    assert fault.injected == 11
    assert await _node_of(api, "p7b") is None


async def test_timeouts_are_retried(api: ApiClient, sim: SimServer) -> None:
    """Requests slower than the bind timeout end as ERROR once the retries and the window
    for an unanswered bind are spent, not hang."""
    pod = await create_pod(api, "p8")
    sim.faults.config = FaultConfig(latency=0.3)
    options = BinderOptions(retries=1, timeout=0.05, backoff_base=0.01, unanswered_timeout=0.2)
    binder, done = (
        Binder(api, options),
        Outcomes(),
    )
    binder.dispatch(bind_request(pod, "node-0"), done)
    await done.wait(1)
    assert done.calls[0][1] is BindResult.ERROR
    assert "timed out" in done.calls[0][2]


async def test_bounded_concurrency(
    api: ApiClient, sim: SimServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """40 binds with concurrency 4: never more than 4 requests on the wire, and 4 reached."""
    pods = [await create_pod(api, f"c{i}") for i in range(40)]
    sim.faults.config = FaultConfig(latency=0.02)
    on_wire = peak = 0
    request = api.request

    async def counting(*args: Any, **kw: Any) -> dict[str, Any]:
        nonlocal on_wire, peak
        on_wire += 1
        peak = max(peak, on_wire)
        try:
            return await request(*args, **kw)
        finally:
            on_wire -= 1

    monkeypatch.setattr(api, "request", counting)
    binder, done = Binder(api, BinderOptions(concurrency=4)), Outcomes()
    for pod in pods:
        binder.dispatch(bind_request(pod, "node-0"), done)
    assert binder.in_flight == 40
    assert binder.running == 4
    await done.wait(40)
    assert set(done.by_pod().values()) == {BindResult.BOUND}
    assert peak == 4
    assert binder.in_flight == 0


async def test_done_exceptions_are_swallowed(api: ApiClient) -> None:
    """A raising done callback is logged; later binds still complete."""
    first, second = await create_pod(api, "d1"), await create_pod(api, "d2")
    binder, done = Binder(api, BinderOptions(concurrency=1)), Outcomes()

    def bad(request: BindRequest, result: BindResult, message: str) -> None:
        done(request, result, message)
        raise RuntimeError("caller bug")

    binder.dispatch(bind_request(first, "node-0"), bad)
    binder.dispatch(bind_request(second, "node-0"), done)
    await done.wait(2)
    assert done.by_pod() == {"d1": BindResult.BOUND, "d2": BindResult.BOUND}


async def test_drain_and_close(api: ApiClient, sim: SimServer) -> None:
    """drain waits for in-flight binds; close ends the rest as ERROR, each done once."""
    pods = [await create_pod(api, f"s{i}") for i in range(6)]
    binder, done = Binder(api, BinderOptions(concurrency=2)), Outcomes()
    for pod in pods[:2]:
        binder.dispatch(bind_request(pod, "node-0"), done)
    assert await binder.drain(5.0)
    assert len(done.calls) == 2
    sim.faults.config = FaultConfig(latency=2.0)
    for pod in pods[2:]:
        binder.dispatch(bind_request(pod, "node-0"), done)
    assert not await binder.drain(0.1)
    await binder.close()
    assert len(done.calls) == 6
    assert [r for _, r, _ in done.calls[2:]] == [BindResult.ERROR] * 4
    binder.dispatch(bind_request(pods[0], "node-0"), done)
    assert done.calls[-1][1] is BindResult.ERROR


def test_assigned_node_parses_kube_message() -> None:
    """The node is read from kube's 409 wording, None for other conflicts."""
    msg = (
        'Operation cannot be fulfilled on pods/binding "p": pod p is already assigned to node "n-1"'
    )
    assert assigned_node(msg) == "n-1"
    assert (
        assigned_node("Precondition failed: UID in precondition: a, UID in object meta: b") is None
    )


class SlowApi:
    """A client whose every request is answered after ``latency`` (virtual) seconds."""

    def __init__(self, latency: float) -> None:
        self.latency = latency
        self.requests = 0

    async def request(self, method: str, path: str, **kw: Any) -> dict[str, Any]:
        self.requests += 1
        await asyncio.sleep(self.latency)
        return {}


@pytest.mark.looptime
async def test_bind_dispatched_as_the_last_worker_ends_is_bound() -> None:
    """End of a burst: a bind dispatched by the task the last outcome woke, while every
    worker has just run out of work, still gets a worker and is bound one latency later."""
    api = SlowApi(latency=1.0)
    binder = Binder(api, BinderOptions(concurrency=2))  # type: ignore[arg-type]
    done, woken = Outcomes(), asyncio.Event()
    burst = [pod_from_raw(make_pod(f"b{i}")) for i in range(4)]

    def outcome(request: BindRequest, result: BindResult, message: str) -> None:
        done(request, result, message)
        woken.set()  # the cycle this wakes runs before the finished workers are reaped

    for pod in burst:
        binder.dispatch(bind_request(pod, "node-0"), outcome)
    loop = asyncio.get_running_loop()
    while len(done.calls) < len(burst):
        woken.clear()
        await woken.wait()
    assert loop.time() == pytest.approx(2.0)  # two rounds of two binds
    late = pod_from_raw(make_pod("late"))
    binder.dispatch(bind_request(late, "node-0"), done)
    await done.wait(5)
    assert set(done.by_pod().values()) == {BindResult.BOUND}
    assert loop.time() == pytest.approx(3.0)
    assert binder.in_flight == 0
    assert api.requests == 5


class ScriptedApi:
    """A client whose bind requests fail with ``errors`` in turn, then succeed."""

    def __init__(self, *errors: ApiError) -> None:
        self.errors = list(errors)
        self.requests = 0
        self.retry_log = RetryLog()

    async def request(self, method: str, path: str, **kw: Any) -> dict[str, Any]:
        self.requests += 1
        if self.errors:
            raise self.errors.pop(0)
        return {}


RESET = TransportError("Server disconnected", reason="ServerDisconnectedError")
REFUSED = TransportError("Cannot connect to host", reason="ClientConnectorError")
FORBIDDEN = Unauthorized("pods/binding is forbidden", status=403)
LANDED = Conflict(
    'Operation cannot be fulfilled on pods/binding "u": pod u is already assigned to node "node-0"',
    status=409,
)


@pytest.mark.looptime
@pytest.mark.parametrize(
    ("failures", "result", "requests"),
    [
        ([RESET, REFUSED, REFUSED, REFUSED, REFUSED, LANDED], BindResult.BOUND, 6),
        ([RESET, REFUSED, FORBIDDEN, FORBIDDEN, FORBIDDEN, LANDED], BindResult.BOUND, 6),
        ([RESET, *[REFUSED] * 20], BindResult.ERROR, None),
        ([REFUSED] * 6, BindResult.ERROR, 4),
        ([FORBIDDEN, LANDED], BindResult.ERROR, 1),
    ],
    ids=[
        "a reset bind is retried past the retries until the server says it landed",
        "a restarted server's 403s do not settle a bind that may have landed",
        "a reset bind the server never answers ends as ERROR after the window",
        "refused connections sent nothing: ERROR after the retries",
        "a 403 with nothing sent before is an ERROR at once",
    ],
)
async def test_a_bind_that_may_have_landed_waits_for_the_server(
    failures: list[ApiError], result: BindResult, requests: int | None
) -> None:
    """After an unanswered bind only the server can say whether the pod is bound: the
    binder asks again until it answers (up to ``unanswered_timeout``) instead of having the
    pod decided a second time."""
    api = ScriptedApi(*failures)
    options = BinderOptions(retries=3, backoff_base=0.05, backoff_cap=1.0, unanswered_timeout=5.0)
    binder, done = Binder(api, options), Outcomes()  # type: ignore[arg-type]
    binder.dispatch(bind_request(pod_from_raw(make_pod("u")), "node-0"), done)
    await done.wait(1)
    assert done.calls[0][1] is result
    if requests is not None:
        assert api.requests == requests
    else:
        assert asyncio.get_running_loop().time() >= 5.0
