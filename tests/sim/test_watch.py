"""Watch semantics over raw HTTP: selector transitions, bookmarks, timeouts, initial state."""

from __future__ import annotations

import asyncio
import json
from typing import TYPE_CHECKING, Any

import aiohttp
import pytest

from scheduler.sim import workload
from scheduler.sim.server import SimServer

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

PODS = "/api/v1/namespaces/default/pods"


@pytest.fixture
async def served() -> AsyncIterator[tuple[SimServer, aiohttp.ClientSession]]:
    """An emulator on the test's loop and a client session bound to it."""
    server = SimServer(nodes=2, bookmark_interval=0.1)
    url = await server.start()
    async with aiohttp.ClientSession(url) as session:
        yield server, session
    await server.stop()


async def _events(
    session: aiohttp.ClientSession, path: str, count: int, **params: str
) -> list[dict[str, Any]]:
    """Read ``count`` watch events (or until the stream ends)."""
    out: list[dict[str, Any]] = []
    async with session.get(path, params={"watch": "true", **params}) as resp:
        assert resp.status == 200
        async for line in resp.content:
            out.append(json.loads(line))
            if len(out) == count:
                break
    return out


async def _post(session: aiohttp.ClientSession, path: str, body: Any) -> dict[str, Any]:
    async with session.post(path, json=body) as resp:
        data: dict[str, Any] = await resp.json()
        assert resp.status < 300, data
        return data


async def test_selector_transitions_become_added_and_deleted(
    served: tuple[SimServer, aiohttp.ClientSession],
) -> None:
    """With spec.nodeName=, binding a pod is seen as DELETED; a new pending pod as ADDED."""
    server, session = served
    await workload.create_all(server.url, workload.make_pods(1))
    rv = (await (await session.get(PODS)).json())["metadata"]["resourceVersion"]
    bind = {"metadata": {"name": "pod-0"}, "target": {"name": "node-0"}}
    await _post(session, f"{PODS}/pod-0/binding", bind)
    await workload.create_all(server.url, workload.make_pods(1, start=1))
    events = await _events(
        session, "/api/v1/pods", 2, resourceVersion=rv, fieldSelector="spec.nodeName="
    )
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in events] == [
        ("DELETED", "pod-0"),
        ("ADDED", "pod-1"),
    ]
    deleted = events[0]["object"]
    assert deleted["spec"].get("nodeName") is None, "DELETED carries the previous content"
    assert int(deleted["metadata"]["resourceVersion"]) > int(rv), "... with the new RV"


async def test_watch_from_zero_sends_current_objects_as_added(
    served: tuple[SimServer, aiohttp.ClientSession],
) -> None:
    """resourceVersion=0 starts with a synthetic ADDED per existing object."""
    _, session = served
    events = await _events(session, "/api/v1/nodes", 2, resourceVersion="0")
    assert sorted(e["object"]["metadata"]["name"] for e in events) == ["node-0", "node-1"]
    assert {e["type"] for e in events} == {"ADDED"}
    assert events[0]["object"]["kind"] == "Node"


async def test_bookmarks_and_timeout(served: tuple[SimServer, aiohttp.ClientSession]) -> None:
    """allowWatchBookmarks yields BOOKMARKs with only an RV; timeoutSeconds ends the stream."""
    server, session = served
    loop = asyncio.get_running_loop()
    start = loop.time()
    events = await _events(
        session,
        PODS,
        100,
        resourceVersion=str(server.store.rv),
        allowWatchBookmarks="true",
        timeoutSeconds="1",
    )
    assert 0.9 <= loop.time() - start < 3
    assert events
    assert {e["type"] for e in events} == {"BOOKMARK"}
    assert events[0]["object"] == {
        "kind": "Pod",
        "apiVersion": "v1",
        "metadata": {"resourceVersion": str(server.store.rv)},
    }


async def test_dropped_watch_ends_stream(served: tuple[SimServer, aiohttp.ClientSession]) -> None:
    """close_watchers ends open streams so clients must re-watch."""
    server, session = served

    async def drop_soon() -> None:
        await asyncio.sleep(0.2)
        assert server.store.close_watchers() == 1

    task = asyncio.create_task(drop_soon())
    events = await asyncio.wait_for(_events(session, PODS, 10, resourceVersion="1"), 5)
    await task
    assert events == []


async def test_history_ring_bound_expires_old_versions() -> None:
    """With a small history, resuming from before the ring is a 410 ERROR event."""
    server = SimServer(history_limit=5)
    url = await server.start()
    try:
        await workload.create_all(url, workload.make_pods(10), concurrency=1)
        async with aiohttp.ClientSession(url) as session:
            events = await _events(session, PODS, 1, resourceVersion="2")
            ok = await _events(session, PODS, 1, resourceVersion=str(server.store.rv - 2))
    finally:
        await server.stop()
    assert events[0]["type"] == "ERROR"
    assert events[0]["object"]["code"] == 410
    assert events[0]["object"]["reason"] == "Expired"
    assert ok[0]["type"] == "ADDED"


async def test_namespace_delete_cascades_to_its_objects(
    served: tuple[SimServer, aiohttp.ClientSession],
) -> None:
    """Deleting a namespace deletes its pods, and pod watchers see DELETED."""
    server, session = served
    await _post(session, "/api/v1/namespaces", {"metadata": {"name": "team"}})
    await workload.create_all(server.url, workload.make_pods(2, namespace="team"))
    rv = str(server.store.rv)
    async with session.delete("/api/v1/namespaces/team") as resp:
        assert resp.status == 200
    events = await _events(session, "/api/v1/pods", 2, resourceVersion=rv)
    assert sorted((e["type"], e["object"]["metadata"]["name"]) for e in events) == [
        ("DELETED", "pod-0"),
        ("DELETED", "pod-1"),
    ]
    async with session.get("/api/v1/namespaces/team/pods") as resp:
        assert (await resp.json())["items"] == []


async def test_unknown_paths_and_methods_answer_with_status(
    served: tuple[SimServer, aiohttp.ClientSession],
) -> None:
    """Unknown resources are a 404 Status; a PUT on a collection is a 405 Status."""
    _, session = served
    async with session.get("/apis/apps/v1/daemonsets") as resp:
        body = await resp.json()
        assert resp.status == 404
        assert body["kind"] == "Status"
        assert body["reason"] == "NotFound"
    async with session.put(PODS, json={}) as resp:
        assert resp.status == 405
        assert (await resp.json())["reason"] == "MethodNotAllowed"


async def test_label_selector_watch_and_deletecollection(
    served: tuple[SimServer, aiohttp.ClientSession],
) -> None:
    """A labelSelector watch sees only matching pods; deletecollection removes only those."""
    server, session = served
    rv = str(server.store.rv)
    await workload.create_all(server.url, workload.make_pods(2, labels={"app": "a"}))
    await workload.create_all(server.url, workload.make_pods(1, prefix="b-", labels={"app": "b"}))
    events = await _events(
        session, PODS, 3, resourceVersion=rv, labelSelector="app=b", timeoutSeconds="1"
    )
    assert [e["object"]["metadata"]["name"] for e in events] == ["b-0"]
    async with session.delete(PODS, params={"labelSelector": "app=a"}) as resp:
        assert len((await resp.json())["items"]) == 2
    async with session.get(PODS) as resp:
        assert [p["metadata"]["name"] for p in (await resp.json())["items"]] == ["b-0"]


async def test_send_initial_events_ends_with_annotated_bookmark(
    served: tuple[SimServer, aiohttp.ClientSession],
) -> None:
    """sendInitialEvents=true streams current objects, then the initial-events-end BOOKMARK."""
    _, session = served
    events = await _events(
        session,
        "/api/v1/nodes",
        3,
        sendInitialEvents="true",
        resourceVersionMatch="NotOlderThan",
        allowWatchBookmarks="true",
    )
    assert [e["type"] for e in events] == ["ADDED", "ADDED", "BOOKMARK"]
    annotations = events[2]["object"]["metadata"]["annotations"]
    assert annotations == {"k8s.io/initial-events-end": "true"}
