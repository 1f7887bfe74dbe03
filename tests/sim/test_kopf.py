"""kopf against the emulator: discovery, list+watch of pods and nodes, posting events."""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import kopf
import kubernetes
from kubernetes.client import CoreV1Api

from scheduler.sim import workload
from scheduler.sim.faults import FaultConfig
from scheduler.sim.server import SimServer, run_in_thread

TOKEN = "kopf-token"
Seen = list[tuple[str, str | None, str]]


def _wait(cond: Callable[[], bool], timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if cond():
            return True
        time.sleep(0.05)
    return cond()


@contextlib.contextmanager
def _operator(server: SimServer) -> Iterator[tuple[CoreV1Api, Seen]]:
    """Run a kopf operator (pods and nodes on.event) in a thread against ``server``."""
    seen: Seen = []
    registry = kopf.OperatorRegistry()
    stop = threading.Event()
    with run_in_thread(server) as url:

        @kopf.on.login(registry=registry)
        def login(**_: Any) -> kopf.ConnectionInfo:
            return kopf.ConnectionInfo(server=url, token=TOKEN, scheme="Bearer")

        @kopf.on.startup(registry=registry)
        def configure(settings: kopf.OperatorSettings, **_: Any) -> None:
            settings.posting.level = 0
            settings.watching.connect_timeout = 5
            settings.networking.error_backoffs = [0.1]

        @kopf.on.event("v1", "pods", registry=registry)
        def on_pod(event: dict[str, Any], body: kopf.Body, **_: Any) -> None:
            seen.append(("pod", event["type"], body["metadata"]["name"]))
            if event["type"] == "ADDED":
                kopf.event(body, type="Normal", reason="Seen", message="seen by kopf")

        @kopf.on.event("v1", "nodes", registry=registry)
        def on_node(event: dict[str, Any], body: kopf.Body, **_: Any) -> None:
            seen.append(("node", event["type"], body["metadata"]["name"]))

        def operator() -> None:
            asyncio.run(
                kopf.operator(registry=registry, clusterwide=True, standalone=True, stop_flag=stop)
            )

        thread = threading.Thread(target=operator, daemon=True)
        thread.start()
        config = kubernetes.client.Configuration(
            host=url, api_key={"authorization": TOKEN}, api_key_prefix={"authorization": "Bearer"}
        )
        try:
            with kubernetes.client.ApiClient(config) as api:
                yield CoreV1Api(api), seen
        finally:
            stop.set()
            thread.join(timeout=15)
        assert not thread.is_alive(), "kopf did not stop"


def test_kopf_sees_pod_and_node_events_and_posts_events() -> None:
    """A kopf operator gets ADDED/MODIFIED/DELETED for pods and nodes and posts an Event."""
    with _operator(SimServer(nodes=1, token=TOKEN)) as (core, seen):
        assert _wait(lambda: ("node", None, "node-0") in seen), seen
        core.create_namespaced_pod("default", workload.make_pods(1)[0])
        core.create_node(workload.make_nodes(1, prefix="extra-")[0])
        assert _wait(lambda: ("pod", "ADDED", "pod-0") in seen), seen
        core.patch_namespaced_pod("pod-0", "default", {"metadata": {"labels": {"x": "1"}}})
        core.patch_node("extra-0", {"metadata": {"labels": {"x": "1"}}})
        core.delete_namespaced_pod("pod-0", "default")
        core.delete_node("extra-0")
        expected = [
            ("pod", "MODIFIED", "pod-0"),
            ("pod", "DELETED", "pod-0"),
            ("node", "ADDED", "extra-0"),
            ("node", "MODIFIED", "extra-0"),
            ("node", "DELETED", "extra-0"),
        ]
        assert _wait(lambda: all(e in seen for e in expected)), seen

        def posted() -> list[Any]:
            return core.list_namespaced_event(
                "default", field_selector="involvedObject.name=pod-0,reason=Seen"
            ).items

        assert _wait(lambda: bool(posted())), "kopf did not post its event"
        assert posted()[0].message == "seen by kopf"


def test_kopf_recovers_from_dropped_watches_and_compaction() -> None:
    """With watches dropped and history compacted often, kopf still sees every new pod."""
    faults = FaultConfig(drop_watches_every=0.3, compact_every=0.2)
    server = SimServer(nodes=1, token=TOKEN, faults=faults)
    with _operator(server) as (core, seen):
        assert _wait(lambda: ("node", None, "node-0") in seen), seen
        for pod in workload.make_pods(8):
            core.create_namespaced_pod("default", pod)
            time.sleep(0.1)
        names = {f"pod-{i}" for i in range(8)}
        assert _wait(lambda: names <= {n for kind, _, n in seen if kind == "pod"}), seen
    assert server.faults.counters["watch_drops"] >= 2
    assert server.faults.counters["compactions"] >= 2
