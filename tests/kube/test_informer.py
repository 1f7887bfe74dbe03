"""The typed intake (``kube.intake``): what it skips, what it delivers, and its reflector.

The appliers are fed encoded events directly (no I/O): each case checks that a skip leaves
the scheduler exactly where a full parse through the controller's appliers would, and that
what changes a field we read is parsed. The reflector runs against the emulator: its LIST,
its watch, and the Replace after a 410.
"""

from __future__ import annotations

import asyncio
import copy
import dataclasses
import json
from typing import TYPE_CHECKING, Any

import pytest

from scheduler.cycle.eventhandlers import EventHandlers
from scheduler.kube.controller.nodes import NodeEvents
from scheduler.kube.controller.pods import PodEvents
from scheduler.kube.controller.settings import ControllerOptions
from scheduler.kube.controller.sync import CacheSync, Synced
from scheduler.kube.intake.appliers import NodeIntake, PodIntake
from scheduler.kube.intake.peek import peek_pod
from scheduler.kube.intake.reflector import Reflector
from scheduler.kube.kinds import Kind
from scheduler.model.keys import Uid
from scheduler.model.parse import pod_from_raw
from scheduler.sim.discovery import PODS
from tests.builders import make_node, make_pod, taint
from tests.harness import scheduler_for
from tests.kube.kube_helpers import create_pod

if TYPE_CHECKING:
    from scheduler.cycle.schedule_one import Scheduler
    from scheduler.kube.client import ApiClient
    from scheduler.sim.server import SimServer

Raw = dict[str, Any]


def _encoded(raw: Raw, version: str) -> bytes:
    raw = copy.deepcopy(raw)
    raw["metadata"]["resourceVersion"] = version
    return json.dumps(raw, separators=(",", ":")).encode()


def _intake(scheduler: Scheduler) -> tuple[PodIntake, NodeIntake]:
    handlers = EventHandlers(scheduler)
    pods = PodEvents(handlers, metrics=scheduler.metrics, reporter=scheduler.reporter)
    nodes = NodeEvents(handlers, metrics=scheduler.metrics)
    return (
        PodIntake(pods, metrics=scheduler.metrics),
        NodeIntake(nodes, metrics=scheduler.metrics),
    )


def _bound(raw: Raw, node: str) -> Raw:
    """``raw`` as the API server returns it after our bind: nodeName set, PodScheduled."""
    bound = copy.deepcopy(raw)
    spec = bound["spec"]
    bound["spec"] = {**spec, "nodeName": node}  # the serializer's member order may differ
    bound["status"]["conditions"] = [{"type": "PodScheduled", "status": "True"}]
    bound["metadata"]["managedFields"] = [{"manager": "batch-scheduler", "time": "now"}]
    return bound


def _running(raw: Raw, *, ready: bool) -> Raw:
    """A kubelet's status update of a bound pod: Running, then Ready."""
    out = copy.deepcopy(raw)
    out["status"]["phase"] = "Running"
    out["status"]["startTime"] = "2026-01-01T00:00:05Z"
    out["status"]["containerStatuses"] = [
        {"name": "c0", "ready": ready, "restartCount": 0, "state": {"running": {}}}
    ]
    out["status"]["conditions"] = [
        {"type": "PodScheduled", "status": "True"},
        {"type": "Ready", "status": "True" if ready else "False"},
    ]
    return out


def test_the_echo_of_our_bind_confirms_the_assumption_without_a_parse() -> None:
    scheduler, _, _ = scheduler_for([make_node("n1", cpu="4")], auto_bind=False)
    pods, _ = _intake(scheduler)
    raw = make_pod("p", cpu="1")
    pods.apply_raw("ADDED", _encoded(raw, "10"))
    uid = Uid(raw["metadata"]["uid"])
    queued = scheduler.queue.get(uid)
    assert queued is not None
    scheduler.queue.delete(uid)
    scheduler.cluster.assume(queued.pod, "n1")
    assert pods.counts.parsed == 1

    pods.apply_raw("MODIFIED", _encoded(_bound(raw, "n1"), "11"))

    assert (pods.counts.parsed, pods.counts.confirmed) == (1, 1)
    assert not scheduler.cluster.is_assumed(uid)
    cached = scheduler.cluster.get_pod(uid)
    assert cached is not None
    # What a full parse of the echo would have given, but for the version, which the
    # cache does not read: it is tracked beside it.
    echo = _bound(raw, "n1")
    echo["metadata"]["resourceVersion"] = "11"
    assert cached == dataclasses.replace(pod_from_raw(echo), resource_version="10")
    assert pods.events.versions[uid] == "11"


def test_a_bind_elsewhere_than_assumed_is_parsed() -> None:
    scheduler, _, _ = scheduler_for(
        [make_node("n1", cpu="4"), make_node("n2", cpu="4")], auto_bind=False
    )
    pods, _ = _intake(scheduler)
    raw = make_pod("p", cpu="1")
    pods.apply_raw("ADDED", _encoded(raw, "10"))
    uid = Uid(raw["metadata"]["uid"])
    queued = scheduler.queue.get(uid)
    assert queued is not None
    scheduler.queue.delete(uid)
    scheduler.cluster.assume(queued.pod, "n1")

    pods.apply_raw("MODIFIED", _encoded(_bound(raw, "n2"), "11"))

    assert (pods.counts.parsed, pods.counts.confirmed) == (2, 0)
    cached = scheduler.cluster.get_pod(uid)
    assert cached is not None
    assert cached.node_name == "n2"


def test_kubelet_updates_are_parsed_only_when_they_change_what_we_read() -> None:
    scheduler, _, _ = scheduler_for([make_node("n1", cpu="4")])
    pods, _ = _intake(scheduler)
    raw = make_pod("p", cpu="1", node_name="n1")
    uid = Uid(raw["metadata"]["uid"])
    pods.apply_raw("ADDED", _encoded(raw, "10"))
    running = _running(raw, ready=False)
    pods.apply_raw("MODIFIED", _encoded(running, "11"))  # phase and startTime: read
    assert (pods.counts.parsed, pods.counts.skipped) == (2, 0)
    cached = scheduler.cluster.get_pod(uid)
    assert cached is not None
    assert (cached.phase, cached.start_time) == ("Running", "2026-01-01T00:00:05Z")

    pods.apply_raw("MODIFIED", _encoded(_running(raw, ready=True), "12"))  # Ready: not read
    assert (pods.counts.parsed, pods.counts.skipped) == (2, 1)
    assert pods.events.versions[uid] == "12"
    assert scheduler.cluster.get_pod(uid) == cached

    labelled = _running(raw, ready=True)
    labelled["metadata"]["labels"] = {"tier": "web"}
    pods.apply_raw("MODIFIED", _encoded(labelled, "13"))
    # Labels alone: applied to the held record, as a full parse would give it.
    assert (pods.counts.parsed, pods.counts.restatused) == (2, 1)
    relabelled = scheduler.cluster.get_pod(uid)
    assert relabelled is not None
    assert relabelled.labels == {"tier": "web"}
    labelled["metadata"]["resourceVersion"] = "13"
    assert relabelled == pod_from_raw(labelled)


def test_a_status_patch_of_a_queued_pod_is_skipped_but_an_unqueued_one_is_queued() -> None:
    scheduler, _, _ = scheduler_for([make_node("n1", cpu="4")], auto_bind=False)
    pods, _ = _intake(scheduler)
    raw = make_pod("p", cpu="1")
    uid = Uid(raw["metadata"]["uid"])
    pods.apply_raw("ADDED", _encoded(raw, "10"))
    patched = copy.deepcopy(raw)
    patched["status"]["conditions"] = [
        {"type": "PodScheduled", "status": "False", "reason": "Unschedulable"}
    ]
    pods.apply_raw("MODIFIED", _encoded(patched, "11"))
    assert pods.counts.skipped == 1
    assert scheduler.queue.get(uid) is not None

    # Popped by a cycle (neither queued nor assumed): the handlers would queue it again.
    scheduler.queue.delete(uid)
    pods.apply_raw("MODIFIED", _encoded(patched, "12"))
    assert pods.counts.skipped == 1
    assert scheduler.queue.get(uid) is not None


def test_a_pod_listed_again_at_the_same_version_is_not_parsed() -> None:
    scheduler, _, _ = scheduler_for([make_node("n1", cpu="4")])
    pods, _ = _intake(scheduler)
    raw = make_pod("p", cpu="1", node_name="n1")
    pods.apply_raw(None, _encoded(raw, "10"))
    pods.apply_raw(None, _encoded(raw, "10"))
    assert (pods.counts.parsed, pods.counts.skipped) == (1, 0)


def test_a_bad_pod_is_reported_by_field_and_a_good_one_still_served() -> None:
    scheduler, _, reporter = scheduler_for([make_node("n1", cpu="4")])
    pods, _ = _intake(scheduler)
    bad = make_pod("bad", cpu="lots")
    pods.apply_raw("ADDED", _encoded(bad, "10"))
    pods.apply_raw("ADDED", b'{"metadata": ')  # not JSON at all
    pods.apply_raw("ADDED", _encoded(make_pod("good", cpu="1"), "11"))
    assert scheduler.metrics.bad_objects.labels(kind="Pod")._value.get() == 2
    message = reporter.unschedulable_messages["default/bad"]
    assert "spec.containers[0].resources.requests.cpu" in message, message
    assert scheduler.queue.get(Uid("uid-default-good")) is not None


def test_node_heartbeats_are_skipped_and_a_taint_is_not() -> None:
    scheduler, _, _ = scheduler_for([])
    _, nodes = _intake(scheduler)
    raw = make_node("n1", cpu="4")
    nodes.apply_raw("ADDED", _encoded(raw, "10"))
    beat = copy.deepcopy(raw)
    beat.setdefault("status", {})["conditions"] = [
        {"type": "Ready", "status": "True", "lastHeartbeatTime": "2026-01-01T00:00:10Z"}
    ]
    nodes.apply_raw("MODIFIED", _encoded(beat, "11"))
    assert (nodes.counts.parsed, nodes.counts.skipped) == (1, 1)
    assert nodes.events.versions["n1"] == "11"
    tainted = copy.deepcopy(beat)
    tainted["spec"]["taints"] = [taint("dedicated", "x")]
    nodes.apply_raw("MODIFIED", _encoded(tainted, "12"))
    assert nodes.counts.parsed == 2
    info = scheduler.cluster.node_info("n1")
    assert info is not None
    assert info.node is not None
    assert [t.key for t in info.node.taints] == ["dedicated"]
    nodes.apply_raw("DELETED", _encoded(tainted, "13"))
    assert "n1" not in scheduler.cluster.node_names()


@pytest.mark.parametrize("member", ["first", "last"])
def test_the_fingerprint_ignores_only_the_node_name(member: str) -> None:
    raw = make_pod("p", cpu="1")
    bound = copy.deepcopy(raw)
    spec = bound["spec"]
    bound["spec"] = {"nodeName": "n1", **spec} if member == "first" else {**spec, "nodeName": "n1"}
    assert peek_pod(_encoded(raw, "1")).fingerprint == peek_pod(_encoded(bound, "2")).fingerprint
    bound["spec"]["priority"] = 5
    assert peek_pod(_encoded(raw, "1")).fingerprint != peek_pod(_encoded(bound, "2")).fingerprint


# -- the reflector against the emulator ---------------------------------------------------------


def _reflectors(
    api: ApiClient, scheduler: Scheduler
) -> tuple[CacheSync, dict[Kind, Reflector], PodIntake]:
    pods, nodes = _intake(scheduler)
    options = ControllerOptions(watch_server_timeout=1)
    reflectors: dict[Kind, Reflector] = {}

    def lister(kind: Kind) -> Any:
        async def run() -> int:
            return await reflectors[kind].list()

        return run

    sync = CacheSync(
        api,
        pods=pods.events,
        nodes=nodes.events,
        synced=Synced(),
        interval=0,
        metrics=scheduler.metrics,
        informed={Kind.NODES: (nodes, lister(Kind.NODES)), Kind.PODS: (pods, lister(Kind.PODS))},
    )
    for kind, intake in ((Kind.NODES, nodes), (Kind.PODS, pods)):
        reflectors[kind] = Reflector(api, kind, intake, sync=sync, options=options)
    return sync, reflectors, pods


async def _until(predicate: Any) -> None:
    """Poll ``predicate`` (the emulator runs in another thread: no event to wait on)."""
    for _ in range(500):
        if predicate():
            return
        await asyncio.sleep(0.02)
    raise AssertionError("not within 10 s")


async def test_reflector_lists_watches_and_replaces_after_a_410(
    sim: SimServer, api: ApiClient
) -> None:
    scheduler, _, _ = scheduler_for([], auto_bind=False)
    sync, reflectors, pods = _reflectors(api, scheduler)
    gone = await create_pod(api, "gone", cpu="1")
    await sync.initial()
    assert scheduler.cluster.num_nodes == 3
    assert scheduler.queue.get(gone.uid) is not None
    tasks = [asyncio.create_task(r.run()) for r in reflectors.values()]
    try:
        later = await create_pod(api, "later", cpu="1")
        await _until(lambda: scheduler.queue.get(later.uid) is not None)

        # The server ends the watch after timeoutSeconds=1: it resumes, no re-list.
        await asyncio.sleep(1.5)
        assert reflectors[Kind.PODS].relists == 0
        assert reflectors[Kind.PODS].watches >= 2

        def vanish() -> None:  # no watcher sees it, and resuming yields 410
            sim.store.close_watchers()
            sim.store.delete(PODS, "default", "gone")
            sim.store.compact()

        sim.run_sync(vanish)
        await _until(lambda: scheduler.queue.get(gone.uid) is None)
        assert reflectors[Kind.PODS].relists >= 1
        assert scheduler.queue.get(later.uid) is not None
        assert Uid(gone.uid) not in pods.events.versions
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


# -- templates ----------------------------------------------------------------------------------


def _ephemeral(raw: Raw) -> Raw:
    raw["spec"]["volumes"] = [
        {
            "name": "scratch",
            "ephemeral": {
                "volumeClaimTemplate": {
                    "spec": {
                        "accessModes": ["ReadWriteOnce"],
                        "resources": {"requests": {"storage": "1Gi"}},
                    }
                }
            },
        }
    ]
    return raw


@pytest.mark.parametrize(
    "build",
    [
        pytest.param(lambda name: make_pod(name, cpu="100m", labels={"app": "web"}), id="plain"),
        pytest.param(
            lambda name: make_pod(
                name,
                cpu="1",
                labels={"app": "web"},
                affinity={
                    "podAntiAffinity": {
                        "requiredDuringSchedulingIgnoredDuringExecution": [
                            {
                                "labelSelector": {"matchLabels": {"app": "web"}},
                                "topologyKey": "kubernetes.io/hostname",
                            }
                        ]
                    }
                },
            ),
            id="affinity-resolved-to-the-namespace",
        ),
        pytest.param(lambda name: _ephemeral(make_pod(name, cpu="1")), id="ephemeral-volume"),
        pytest.param(lambda name: make_pod(name, cpu="1", node_name="n1"), id="assigned"),
    ],
)
def test_a_pod_of_a_known_template_is_the_record_a_parse_gives(build: Any) -> None:
    scheduler, _, _ = scheduler_for([make_node("n1", cpu="64")], auto_bind=False)
    pods, _ = _intake(scheduler)
    for i, namespace in enumerate(("default", "default", "other", "other")):
        raw = build(f"p-{i}")
        raw["metadata"]["namespace"] = namespace
        raw["metadata"]["uid"] = f"uid-{i}"
        pods.apply_raw("ADDED", _encoded(raw, str(10 + i)))
        raw["metadata"]["resourceVersion"] = str(10 + i)
        expected = pod_from_raw(raw)
        held = scheduler.cluster.get_pod(expected.uid)
        queued = scheduler.queue.get(expected.uid)
        got = held if expected.node_name else (queued.pod if queued is not None else None)
        assert got == expected
    if "ephemeral" in str(build("x")["spec"]):
        # Its claim is named after the pod: no two pods share a template.
        assert (pods.counts.parsed, pods.counts.templated) == (4, 0)
    else:
        # One parse per namespace: the second pod of each is its template's.
        assert (pods.counts.parsed, pods.counts.templated) == (2, 2)


def test_bad_pods_of_one_template_are_each_parsed_and_reported() -> None:
    scheduler, _, reporter = scheduler_for([make_node("n1", cpu="4")])
    pods, _ = _intake(scheduler)
    for name in ("bad-0", "bad-1"):
        raw = make_pod(name, cpu="lots")
        raw["metadata"]["uid"] = f"uid-{name}"
        pods.apply_raw("ADDED", _encoded(raw, "5"))
    assert pods.counts.templated == 0
    assert set(reporter.unschedulable_messages) == {"default/bad-0", "default/bad-1"}


async def test_bookmarks_move_the_version_on_and_a_failing_object_does_not_end_the_watch(
    sim: SimServer, api: ApiClient
) -> None:
    sim.api.bookmark_interval = 0.2
    scheduler, _, _ = scheduler_for([], auto_bind=False)
    sync, reflectors, pods = _reflectors(api, scheduler)
    await sync.initial()
    nodes = reflectors[Kind.NODES]
    listed = int(nodes.version)
    # Pods change (and the store's version with them); the node watch sees only bookmarks.
    failing = await create_pod(api, "fails-once", cpu="1")  # its ADDED: the first to fail
    await create_pod(api, "moves-the-version", cpu="1")
    real_apply = pods.apply_event
    calls = {"n": 0}

    def apply_or_fail(event: Any, line: Any) -> tuple[str, str]:
        calls["n"] += 1
        if calls["n"] == 1:
            raise RuntimeError("a fault of ours")
        return real_apply(event, line)

    pods.apply_event = apply_or_fail  # type: ignore[method-assign]
    reflectors[Kind.PODS].applier = pods
    tasks = [asyncio.create_task(r.run()) for r in reflectors.values()]
    try:
        await _until(lambda: int(nodes.version or 0) > listed)
        assert nodes.relists == 0
        after = await create_pod(api, "after-the-fault", cpu="1")
        await _until(lambda: scheduler.queue.get(after.uid) is not None)
        assert scheduler.queue.get(failing.uid) is None  # its event was lost to the fault
        pod = dict(await api.request("GET", "/api/v1/namespaces/default/pods/fails-once"))
        pod["metadata"]["labels"] = {"touched": "yes"}
        await api.request("PUT", "/api/v1/namespaces/default/pods/fails-once", body=pod)
        await _until(lambda: scheduler.queue.get(failing.uid) is not None)
        assert calls["n"] >= 3
        assert reflectors[Kind.PODS].relists == 0
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


@pytest.mark.parametrize(
    ("reported", "restated"),
    [
        pytest.param({"requests": {"cpu": "1"}}, True, id="statuses-restate-the-spec"),
        pytest.param({"requests": {"cpu": "2"}}, False, id="a-resize-is-parsed"),
    ],
)
def test_a_kubelet_running_update_is_applied_to_the_held_record(
    reported: dict[str, Any], restated: bool
) -> None:
    """Phase and startTime change, and the container statuses (if they only restate the
    spec's requests) change nothing the requests derive from: the held record takes the
    new status, equal to what a full parse gives; a status that reports other requests is
    parsed."""
    scheduler, _, _ = scheduler_for([make_node("n1", cpu="4")])
    pods, _ = _intake(scheduler)
    raw = make_pod("p", cpu="1", node_name="n1")
    uid = Uid(raw["metadata"]["uid"])
    pods.apply_raw("ADDED", _encoded(raw, "10"))
    running = _running(raw, ready=False)
    running["status"]["containerStatuses"] = [
        {"name": "c", "ready": False, "state": {"running": {}}, "resources": reported}
    ]
    pods.apply_raw("MODIFIED", _encoded(running, "11"))
    assert (pods.counts.restatused, pods.counts.parsed) == ((1, 1) if restated else (0, 2))
    cached = scheduler.cluster.get_pod(uid)
    running["metadata"]["resourceVersion"] = "11"
    assert cached == pod_from_raw(running)
    assert pods.events.versions[uid] == "11"


def test_a_nomination_of_a_queued_pod_is_applied_to_the_queued_record() -> None:
    scheduler, _, _ = scheduler_for([make_node("n1", cpu="4")], auto_bind=False)
    pods, _ = _intake(scheduler)
    raw = make_pod("p", cpu="1")
    uid = Uid(raw["metadata"]["uid"])
    pods.apply_raw("ADDED", _encoded(raw, "10"))
    nominated = copy.deepcopy(raw)
    nominated["status"]["nominatedNodeName"] = "n1"
    pods.apply_raw("MODIFIED", _encoded(nominated, "11"))
    assert (pods.counts.restatused, pods.counts.parsed) == (1, 1)
    queued = scheduler.queue.get(uid)
    assert queued is not None
    assert queued.pod.nominated_node_name == "n1"
    assert queued.signature is None  # a nominated pod is never batched


@pytest.mark.parametrize(
    ("spread", "parsed"),
    [
        pytest.param(False, 1, id="labels-applied-to-the-assumed-record"),
        pytest.param(True, 2, id="a-pod-whose-constraints-read-labels-is-parsed"),
    ],
)
def test_the_echo_of_our_bind_with_the_nodes_topology_labels(spread: bool, parsed: int) -> None:
    """kube-apiserver's PodTopologyLabels admission copies the node's zone and region onto
    the pod at the bind: the echo confirms the assumption with the new labels, equal to a
    full parse; a pod whose spread constraints read its labels (matchLabelKeys) is
    parsed."""
    scheduler, _, _ = scheduler_for([make_node("n1", cpu="4")], auto_bind=False)
    pods, _ = _intake(scheduler)
    constraints = [
        {
            "maxSkew": 1,
            "topologyKey": "kubernetes.io/hostname",
            "whenUnsatisfiable": "ScheduleAnyway",
            "labelSelector": {"matchLabels": {"app": "web"}},
        }
    ]
    raw = make_pod(
        "p", cpu="1", labels={"app": "web"}, topology_spread=constraints if spread else None
    )
    uid = Uid(raw["metadata"]["uid"])
    pods.apply_raw("ADDED", _encoded(raw, "10"))
    queued = scheduler.queue.get(uid)
    assert queued is not None
    scheduler.queue.delete(uid)
    scheduler.cluster.assume(queued.pod, "n1")
    echo = _bound(raw, "n1")
    echo["metadata"]["labels"] = {"app": "web", "topology.kubernetes.io/zone": "zone-a"}
    pods.apply_raw("MODIFIED", _encoded(echo, "11"))
    assert pods.counts.parsed == parsed
    assert not scheduler.cluster.is_assumed(uid)
    echo["metadata"]["resourceVersion"] = "11"
    assert scheduler.cluster.get_pod(uid) == pod_from_raw(echo)
    assert pods.events.versions[uid] == "11"
