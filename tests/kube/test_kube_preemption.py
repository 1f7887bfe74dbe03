"""ApiPreemptor against the emulator: what a preemption writes, read back, and in what order."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from scheduler.kube import errors
from scheduler.kube.preemption import ApiPreemptor
from scheduler.model.parse import pod_from_raw
from tests.builders import make_pod

if TYPE_CHECKING:
    from scheduler.kube.client import ApiClient
    from scheduler.model.pod import Pod

NODE = "node-0"


class Recording:
    """The client, with every request it made (method, path, body)."""

    def __init__(self, api: ApiClient) -> None:
        self._api = api
        self.calls: list[tuple[str, str, Any]] = []

    async def request(self, method: str, path: str, **kw: Any) -> dict[str, Any]:
        self.calls.append((method, path, kw.get("body")))
        return await self._api.request(method, path, **kw)


async def _get(api: ApiClient, pod: Pod) -> dict[str, Any] | None:
    try:
        return await api.request("GET", f"/api/v1/namespaces/default/pods/{pod.name}")
    except errors.NotFound:
        return None


async def _events(api: ApiClient, reason: str) -> list[dict[str, Any]]:
    listed = await api.request("GET", "/api/v1/namespaces/default/events")
    return [e for e in listed.get("items", []) if e.get("reason") == reason]


@pytest.fixture
def recording(api: ApiClient) -> Recording:
    return Recording(api)


@pytest.fixture
async def classes(api: ApiClient) -> None:
    """PriorityClasses ``low`` (0) and ``high`` (1000): admission sets ``spec.priority``."""
    for name, value in (("low", 0), ("high", 1000)):
        body = {
            "apiVersion": "scheduling.k8s.io/v1",
            "kind": "PriorityClass",
            "metadata": {"name": name},
            "value": value,
        }
        await api.request("POST", "/apis/scheduling.k8s.io/v1/priorityclasses", body=body)


async def create_pod(api: ApiClient, name: str, *, priority_class: str, **kw: Any) -> Pod:
    raw = make_pod(name, **kw)
    raw["spec"]["priorityClassName"] = priority_class
    for key in ("uid", "resourceVersion", "creationTimestamp"):
        raw["metadata"].pop(key, None)
    created = await api.request("POST", "/api/v1/namespaces/default/pods", body=raw)
    return pod_from_raw(created)


@pytest.mark.usefixtures("classes")
async def test_preempt_nominates_marks_deletes_and_tells(
    api: ApiClient, recording: Recording
) -> None:
    """Nominated node first; per victim the DisruptionTarget condition, a DELETE, and a
    ``Preempted`` Event naming the preemptor's UID and the node."""
    victims = [
        await create_pod(api, f"low-{i}", node_name=NODE, priority_class="low", cpu="1")
        for i in range(2)
    ]
    preemptor = await create_pod(api, "high", priority_class="high", cpu="2")
    writer = ApiPreemptor(recording, identity="sched-1")  # type: ignore[arg-type]
    writer.preempt(preemptor, NODE, victims)
    assert await writer.drain(5.0)

    high = await _get(api, preemptor)
    assert high is not None
    assert high["status"]["nominatedNodeName"] == NODE
    for victim in victims:
        assert await _get(api, victim) is None
    events = await _events(api, "Preempted")
    assert sorted(e["involvedObject"]["name"] for e in events) == ["low-0", "low-1"]
    for event in events:
        assert event["message"] == f"Preempted by pod {preemptor.uid} on node {NODE}"
        assert event["type"] == "Normal"
        assert event["related"]["uid"] == str(preemptor.uid)
    assert writer.deleted == 2

    assert recording.calls[0][:2] == (
        "PATCH",
        "/api/v1/namespaces/default/pods/high/status",
    )
    for victim in victims:
        path = f"/api/v1/namespaces/default/pods/{victim.name}"
        patches = [c for c in recording.calls if c[:2] == ("PATCH", f"{path}/status")]
        (condition,) = patches[0][2]["status"]["conditions"]
        assert condition["type"] == "DisruptionTarget"
        assert condition["status"] == "True"
        assert condition["reason"] == "PreemptionByScheduler"
        assert condition["message"] == (
            "batch-scheduler: preempting to accommodate a higher priority pod"
        )
        order = [c[:2] for c in recording.calls]
        assert order.index(("PATCH", f"{path}/status")) < order.index(("DELETE", path))
    await writer.close()


@pytest.mark.usefixtures("classes")
async def test_victims_gone_or_terminating_are_skipped(
    api: ApiClient, recording: Recording
) -> None:
    """A victim deleted meanwhile (404) is no error; one already terminating gets no call."""
    gone = await create_pod(api, "gone", node_name=NODE, priority_class="low")
    await api.request("DELETE", "/api/v1/namespaces/default/pods/gone")
    kept = await create_pod(api, "terminating", node_name=NODE, priority_class="low")
    terminating = kept.__class__(**{**_fields(kept), "deleting": True})
    preemptor = await create_pod(api, "high", priority_class="high")
    writer = ApiPreemptor(recording, identity="sched-1")  # type: ignore[arg-type]
    writer.preempt(preemptor, NODE, [gone, terminating])
    assert await writer.drain(5.0)
    assert writer.failed == 0
    assert writer.deleted == 0
    assert await _get(api, kept) is not None
    assert not [c for c in recording.calls if "terminating" in c[1]]
    assert await _events(api, "Preempted") == []
    await writer.close()


@pytest.mark.usefixtures("classes")
async def test_clear_nominated_node(api: ApiClient) -> None:
    """``clear_nominated_node`` empties ``status.nominatedNodeName``."""
    pod = await create_pod(api, "waiting", priority_class="low")
    writer = ApiPreemptor(api, identity="sched-1")
    writer.preempt(pod, NODE, [])
    assert await writer.drain(5.0)
    raw = await _get(api, pod)
    assert raw is not None
    assert raw["status"]["nominatedNodeName"] == NODE
    writer.clear_nominated_node([pod])
    assert await writer.drain(5.0)
    raw = await _get(api, pod)
    assert raw is not None
    assert not raw["status"].get("nominatedNodeName")
    await writer.close()


def _fields(pod: Pod) -> dict[str, Any]:
    return {name: getattr(pod, name) for name in pod.__dataclass_fields__}


@pytest.mark.usefixtures("classes")
async def test_running_until_every_delete_is_answered(api: ApiClient, recording: Recording) -> None:
    """``is_running`` from ``preempt`` until the DELETEs are answered; the callback says
    whether they all went through, before the ``Preempted`` Events are posted."""
    victim = await create_pod(api, "low", node_name=NODE, priority_class="low")
    preemptor = await create_pod(api, "high", priority_class="high")
    writer = ApiPreemptor(recording, identity="sched-1")  # type: ignore[arg-type]
    finished: list[tuple[str, bool, int]] = []

    def on_finished(uid: Any, ok: bool) -> None:
        posted = sum(1 for c in recording.calls if c[0] == "POST")
        finished.append((str(uid), ok, posted))

    writer.on_finished(on_finished)
    writer.preempt(preemptor, NODE, [victim])
    assert writer.is_running(preemptor.uid)
    assert await writer.drain(5.0)
    assert not writer.is_running(preemptor.uid)
    assert finished == [(str(preemptor.uid), True, 0)]
    assert await _get(api, victim) is None
    await writer.close()


@pytest.mark.usefixtures("classes")
async def test_events_wait_behind_the_evictions(api: ApiClient, recording: Recording) -> None:
    """The ``Preempted`` Events of a preemption do not hold the next one back: with one
    worker, the second preemption's DELETE goes out before the first one's Event."""
    victims = [
        await create_pod(api, f"low-{i}", node_name=NODE, priority_class="low") for i in range(2)
    ]
    preemptors = [await create_pod(api, f"high-{i}", priority_class="high") for i in range(2)]
    writer = ApiPreemptor(recording, identity="sched-1", concurrency=1)  # type: ignore[arg-type]
    for preemptor, victim in zip(preemptors, victims, strict=True):
        writer.preempt(preemptor, NODE, [victim])
    assert await writer.drain(5.0)
    writes = [(c[0], c[1].rsplit("/", 1)[-1]) for c in recording.calls if c[0] != "PATCH"]
    assert writes == [
        ("DELETE", "low-0"),
        ("DELETE", "low-1"),
        ("POST", "events"),
        ("POST", "events"),
    ]
    assert len(await _events(api, "Preempted")) == 2
    await writer.close()


@pytest.mark.usefixtures("classes")
async def test_failed_eviction_finishes_not_ok(api: ApiClient) -> None:
    """A DELETE refused by the API: the preemption ends, and says it failed."""

    class Refusing(Recording):
        async def request(self, method: str, path: str, **kw: Any) -> dict[str, Any]:
            if method == "DELETE":
                raise errors.ApiError("refused")
            return await super().request(method, path, **kw)

    victim = await create_pod(api, "low", node_name=NODE, priority_class="low")
    preemptor = await create_pod(api, "high", priority_class="high")
    writer = ApiPreemptor(Refusing(api), identity="sched-1")  # type: ignore[arg-type]
    finished: list[bool] = []
    writer.on_finished(lambda uid, ok: finished.append(ok))
    writer.preempt(preemptor, NODE, [victim])
    assert await writer.drain(5.0)
    assert finished == [False]
    assert writer.failed == 1
    assert await _get(api, victim) is not None
    await writer.close()


@pytest.mark.usefixtures("classes")
async def test_queued_preemptions_are_dropped_after_leadership_is_lost(
    api: ApiClient, recording: Recording
) -> None:
    """Review finding 5: once the lease is lost, queued jobs write nothing."""
    victim = await create_pod(api, "low", node_name=NODE, priority_class="low")
    preemptor = await create_pod(api, "high", priority_class="high")
    leading = [True]
    writer = ApiPreemptor(
        recording,  # type: ignore[arg-type]
        identity="sched-1",
        leading=lambda: leading[0],
    )
    finished: list[bool] = []
    writer.on_finished(lambda uid, ok: finished.append(ok))
    writer.preempt(preemptor, NODE, [victim])
    writer.clear_nominated_node([victim])
    leading[0] = False  # lost before the worker ran
    assert await writer.drain(5.0)
    assert recording.calls == []
    assert writer.dropped == 2
    assert finished == [False]
    assert not writer.is_running(preemptor.uid)
    assert await _get(api, victim) is not None
    await writer.close()
