"""The emulator kept honest: the same scripted requests against scheduler/sim and kube-apiserver.

Each test runs one script against both backends (the emulator over http, kube-apiserver
v1.37 over https as kubernetes-admin) and compares what our code and kopf read: status
codes, ``kind``, ``reason``, the ``details`` we branch on, list metadata, watch event types
and the shape of returned objects. Each test also states what the real server answers, so
that both being wrong the same way fails too. What still differs on purpose is listed in
docs/architecture.md ("Emulator vs kube-apiserver").

Backends differ only in transport and in how history is compacted (etcd's compaction API
for the real one, ``Store.compact`` for the emulator); every request is the same.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import threading
import uuid
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any

import pytest

from scheduler.kube.client import STRATEGIC_MERGE_PATCH
from scheduler.kube.reporter import FAILED_SCHEDULING, UNSCHEDULABLE, Reporter
from tests.cluster.conformance import Backend, both, status_of

if TYPE_CHECKING:
    pass

LEASES = "/apis/coordination.k8s.io/v1/namespaces/{ns}/leases"
MESSAGE = "0/4 nodes are available: 4 Insufficient cpu."


def pod(name: str, *, cpu: str = "100m", memory: str = "64Mi", **spec: Any) -> dict[str, Any]:
    labels = spec.pop("labels", {})
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "labels": labels},
        "spec": {
            "schedulerName": "conformance-nobody",
            "containers": [
                {
                    "name": "c",
                    "image": "registry.k8s.io/pause:3.10",
                    "resources": {"requests": {"cpu": cpu, "memory": memory}},
                }
            ],
            **spec,
        },
    }


def create(b: Backend, ns: str, body: dict[str, Any]) -> dict[str, Any]:
    status, created = b.request("POST", f"/api/v1/namespaces/{ns}/pods", body)
    assert status == 201, (b.name, created)
    assert isinstance(created, dict)
    return created


def names(body: dict[str, Any]) -> list[str]:
    return [item["metadata"]["name"] for item in body.get("items") or []]


def micro_now() -> str:
    return datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


# -- create and validate --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("resource", "value"),
    [("cpu", "1_000"), ("cpu", "NaN"), ("memory", "1K"), ("cpu", "--1"), ("memory", "1.2.3")],
)
def test_an_unparseable_quantity_is_refused_by_the_decoder(
    backends: list[Backend], ns: str, resource: str, value: str
) -> None:
    """kube-apiserver cannot decode the body: 400 BadRequest naming the Pod, no field."""

    def script(b: Backend) -> Any:
        body = pod("bad", **{resource: value})
        reply = b.request("POST", f"/api/v1/namespaces/{ns}/pods", body)
        return status_of(reply), reply[1]["message"]

    digest, message = both(backends, script)
    assert digest["http"] == 400
    assert digest["reason"] == "BadRequest"
    assert message.startswith('Pod in version "v1" cannot be handled as a Pod: ')


def test_a_negative_request_is_invalid_with_the_field_named(
    backends: list[Backend], ns: str
) -> None:
    def script(b: Backend) -> Any:
        reply = b.request("POST", f"/api/v1/namespaces/{ns}/pods", pod("neg", cpu="-1"))
        return status_of(reply), reply[1]["message"]

    digest, message = both(backends, script)
    assert digest["http"] == 422
    assert digest["reason"] == "Invalid"
    assert digest["details"]["causes"] == [
        {
            "reason": "FieldValueInvalid",
            "message": 'Invalid value: "-1": must be greater than or equal to 0',
            "field": "spec.containers[0].resources.requests[cpu]",
        }
    ]
    assert message.startswith('Pod "neg" is invalid: spec.containers[0].resources.requests[cpu]')


def test_valid_quantities_and_an_undecodable_patch(backends: list[Backend], ns: str) -> None:
    """Odd but valid quantities are stored; a patch that makes one unparseable is a 422
    naming the ``patch`` (kube decodes the patched object, not the patch)."""

    def script(b: Backend) -> Any:
        codes = [
            b.request("POST", f"/api/v1/namespaces/{ns}/pods", pod(f"ok-{i}", cpu=q))[0]
            for i, q in enumerate(("1e3", "0.5", "Ki", "+1"))
        ]
        patch = {
            "spec": {
                "containers": [
                    {"name": "c", "image": "x", "resources": {"requests": {"cpu": "1_000"}}}
                ]
            }
        }
        reply = b.request(
            "PATCH", f"/api/v1/namespaces/{ns}/pods/ok-0", patch, content_type=STRATEGIC_MERGE_PATCH
        )
        digest = status_of(reply)
        causes = [c["field"] for c in digest.pop("details")["causes"]]
        return codes, digest, causes

    codes, digest, causes = both(backends, script)
    assert codes == [201] * 4
    assert (digest["http"], digest["reason"], causes) == (422, "Invalid", ["patch"])


# -- binding -------------------------------------------------------------------------------


def binding(name: str, node: str, uid: str | None = None) -> dict[str, Any]:
    """The Binding our binder sends (scheduler/kube/binder.py)."""
    meta: dict[str, Any] = {"name": name}
    if uid is not None:
        meta["uid"] = uid
    return {
        "apiVersion": "v1",
        "kind": "Binding",
        "metadata": meta,
        "target": {"apiVersion": "v1", "kind": "Node", "name": node},
    }


def test_binding(backends: list[Backend], ns: str) -> None:
    """Bind to a node that does not exist (accepted: nothing looks the node up), bind again
    (409 naming the node, which the binder parses), stale UID, missing pod, bad bodies."""
    path = f"/api/v1/namespaces/{ns}/pods/{{}}/binding"

    def script(b: Backend) -> Any:
        uid = create(b, ns, pod("p"))["metadata"]["uid"]
        other = create(b, ns, pod("q"))["metadata"]["uid"]
        out: dict[str, Any] = {}
        out["missing node"] = b.request("POST", path.format("p"), binding("p", "no-such-node", uid))
        _status, bound = b.request("GET", f"/api/v1/namespaces/{ns}/pods/p")
        out["bound"] = (
            bound["spec"]["nodeName"],
            [(c["type"], c["status"], sorted(c)) for c in bound["status"]["conditions"]],
        )
        again = b.request("POST", path.format("p"), binding("p", "node-1", uid))
        out["again"] = (status_of(again), again[1]["message"])
        stale = b.request("POST", path.format("q"), binding("q", "node-1", str(uuid.uuid4())))
        out["stale uid"] = (
            status_of(stale),
            stale[1]["message"].replace(other, "<uid>").split(": UID")[0],
        )
        out["missing pod"] = status_of(b.request("POST", path.format("z"), binding("z", "n")))
        out["name mismatch"] = b.request("POST", path.format("q"), binding("other", "n"))
        out["no target"] = status_of(
            b.request("POST", path.format("q"), {"metadata": {"name": "q"}, "target": {}})
        )
        return out

    real = both(backends, script)
    assert real["missing node"] == (
        201,
        {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201},
    )
    assert real["bound"] == (
        "no-such-node",
        [("PodScheduled", "True", ["lastProbeTime", "lastTransitionTime", "status", "type"])],
    )
    assert real["again"][0]["http"] == 409
    assert real["again"][0]["reason"] == "Conflict"
    assert real["again"][1].endswith('pod p is already assigned to node "no-such-node"')
    assert real["stale uid"][0]["http"] == 409
    assert real["missing pod"]["http"] == 404
    assert real["name mismatch"][0] == 400
    assert real["no target"]["http"] == 500


# -- selectors and paging ------------------------------------------------------------------


def test_field_and_label_selectors(backends: list[Backend], ns: str) -> None:
    field_selectors = [
        "spec.nodeName=",
        "spec.nodeName=n1",
        "spec.schedulerName=batch-scheduler",
        "spec.nodeName=,spec.schedulerName=batch-scheduler",
        "status.phase!=Succeeded,status.phase!=Failed",
        "metadata.name=p3",
        "metadata.namespace=" + ns,
        "spec.foo=bar",
        "metadata.labels=x",
    ]
    label_selectors = ["app=a", "app!=a", "app in (a,b)", "app notin (a)", "app", "!app", "tier"]

    def script(b: Backend) -> Any:
        for i in range(5):
            sched = "batch-scheduler" if i % 2 else "conformance-nobody"
            labels = {"app": "a" if i < 3 else "b", **({"tier": "x"} if i == 4 else {})}
            create(b, ns, pod(f"p{i}", schedulerName=sched, labels=labels))
        b.request("POST", f"/api/v1/namespaces/{ns}/pods/p1/binding", binding("p1", "n1"))
        out: dict[str, Any] = {}
        for kind, selectors in (
            ("fieldSelector", field_selectors),
            ("labelSelector", label_selectors),
        ):
            for sel in selectors:
                code, body = b.request("GET", f"/api/v1/namespaces/{ns}/pods", params={kind: sel})
                out[sel] = (code, sorted(names(body)) if code == 200 else body["message"])
        code, body = b.request(
            "GET", "/api/v1/nodes", params={"fieldSelector": "metadata.name=nope"}
        )
        out["nodes by name"] = (code, names(body))
        code, _ = b.request("GET", f"/api/v1/namespaces/{ns}/pods", params={"labelSelector": "a b"})
        out["bad label selector"] = code
        return out

    real = both(backends, script)
    assert real["spec.nodeName="] == (200, ["p0", "p2", "p3", "p4"])
    assert real["spec.nodeName=,spec.schedulerName=batch-scheduler"] == (200, ["p3"])
    assert real["spec.foo=bar"] == (400, "field label not supported: spec.foo")
    assert real["tier"] == (200, ["p4"])


def test_paged_list_is_one_snapshot(backends: list[Backend], ns: str) -> None:
    """``limit``/``continue`` as our cache sync and kopf page: key order, remainingItemCount,
    one resourceVersion for every page, and later pages served from the first page's
    snapshot (a pod created or deleted meanwhile does not change them)."""
    path = f"/api/v1/namespaces/{ns}/pods"

    def script(b: Backend) -> Any:
        for name in ("e", "c", "a", "d", "b"):
            create(b, ns, pod(name))
        pages = []
        code, body = b.request("GET", path, params={"limit": "2"})
        first_rv = body["metadata"]["resourceVersion"]
        create(b, ns, pod("aa"))
        b.request("DELETE", f"{path}/e")
        while True:
            meta = body["metadata"]
            pages.append(
                (
                    code,
                    body["kind"],
                    names(body),
                    sorted(meta),
                    meta.get("remainingItemCount"),
                    meta["resourceVersion"] == first_rv,
                    any("kind" in item for item in body["items"]),
                )
            )
            if not meta.get("continue"):
                break
            code, body = b.request("GET", path, params={"limit": "2", "continue": meta["continue"]})
        code, body = b.request("GET", path, params={"limit": "2", "labelSelector": "!nothing"})
        filtered = (code, names(body), sorted(body["metadata"]))
        bad = status_of(b.request("GET", path, params={"limit": "2", "continue": "garbage"}))
        return pages, filtered, (bad["http"], bad["reason"])

    pages, filtered, bad = both(backends, script)
    assert [p[2] for p in pages] == [["a", "b"], ["c", "d"], ["e"]]
    assert [p[4] for p in pages] == [3, 1, None]
    assert all(p[5] for p in pages)
    assert filtered == (200, ["a", "aa"], ["continue", "resourceVersion"])
    assert bad == (400, "BadRequest")


# -- watch ---------------------------------------------------------------------------------


def event_body(ns: str, name: str, pod_name: str = "p") -> dict[str, Any]:
    return {
        "metadata": {"name": name},
        "involvedObject": {"kind": "Pod", "name": pod_name, "namespace": ns},
        "reason": "Test",
        "message": "m",
        "type": "Normal",
        "source": {"component": "conformance"},
        "firstTimestamp": "2026-01-01T00:00:00Z",
        "lastTimestamp": "2026-01-01T00:00:00Z",
    }


def test_watch_from_a_compacted_version_is_410_expired(backends: list[Backend], ns: str) -> None:
    """Events (not watch-cached by kube-apiserver, so etcd's compaction shows) written,
    history compacted, a watch resumed from before: 200 and one ERROR event with the 410."""
    path = f"/api/v1/namespaces/{ns}/events"

    def script(b: Backend) -> Any:
        first = b.request("POST", path, event_body(ns, "e1"))[1]["metadata"]["resourceVersion"]
        b.request("POST", path, event_body(ns, "e2"))
        b.request("POST", path, event_body(ns, "e3"))
        b.compact()
        code, events = b.watch(path, {"resourceVersion": first, "timeoutSeconds": "2"}, seconds=4)
        return code, [
            (e["type"], e["object"].get("code"), e["object"].get("reason"), e["object"].get("kind"))
            for e in events
        ]

    assert both(backends, script) == (200, [("ERROR", 410, "Expired", "Status")])


def test_watch_bookmarks_and_initial_events(backends: list[Backend], ns: str) -> None:
    """kopf's watch: ``allowWatchBookmarks`` (a BOOKMARK carrying a resourceVersion, which
    is all kopf reads of it) and WatchList's ``sendInitialEvents`` (the initial state, then
    a BOOKMARK annotated ``k8s.io/initial-events-end``)."""
    path = f"/api/v1/namespaces/{ns}/pods"

    def script(b: Backend) -> Any:
        create(b, ns, pod("w0"))
        rv = b.request("GET", path)[1]["metadata"]["resourceVersion"]
        started = threading.Event()
        result: list[tuple[int, list[dict[str, Any]]]] = []
        params = {"resourceVersion": rv, "allowWatchBookmarks": "true", "timeoutSeconds": "3"}
        reader = threading.Thread(
            target=lambda: result.append(
                b.watch(
                    path,
                    params,
                    seconds=6,
                    started=started,
                    until=lambda ev: ev[-1]["type"] == "BOOKMARK",
                )
            )
        )
        reader.start()
        assert started.wait(10)
        created_rv = int(create(b, ns, pod("w1"))["metadata"]["resourceVersion"])
        reader.join(10)
        code, events = result[0]
        marks = [e["object"] for e in events if e["type"] == "BOOKMARK"]
        bookmark = (
            [
                (m["kind"], m["apiVersion"], int(m["metadata"]["resourceVersion"]) >= created_rv)
                for m in marks[:1]
            ],
            [
                (e["type"], e["object"]["metadata"]["name"])
                for e in events
                if e["type"] != "BOOKMARK"
            ],
        )
        initial = b.watch(
            path,
            {
                "sendInitialEvents": "true",
                "resourceVersionMatch": "NotOlderThan",
                "allowWatchBookmarks": "true",
                "timeoutSeconds": "3",
            },
            seconds=5,
            until=lambda ev: ev[-1]["type"] == "BOOKMARK",
        )
        listed = [
            (
                e["type"],
                e["object"]["metadata"].get("name"),
                e["object"]["metadata"].get("annotations"),
            )
            for e in initial[1]
        ]
        refused = b.watch(path, {"sendInitialEvents": "true", "timeoutSeconds": "1"}, seconds=3)
        return (
            code,
            bookmark,
            (initial[0], listed),
            (refused[0], [status_of((refused[0], e)) for e in refused[1]]),
        )

    code, bookmark, initial, refused = both(backends, script)
    assert code == 200
    assert bookmark == ([("Pod", "v1", True)], [("ADDED", "w1")])
    assert initial == (
        200,
        [
            ("ADDED", "w0", None),
            ("ADDED", "w1", None),
            ("BOOKMARK", None, {"k8s.io/initial-events-end": "true"}),
        ],
    )
    assert refused[0] == 422


# -- leader election -----------------------------------------------------------------------


def lease_body(ns: str, holder: str, rv: str | None = None) -> dict[str, Any]:
    """The Lease our elector writes (scheduler/kube/leader.py)."""
    meta: dict[str, Any] = {"name": "batch-scheduler", "namespace": ns}
    if rv is not None:
        meta["resourceVersion"] = rv
    now = micro_now()
    return {
        "apiVersion": "coordination.k8s.io/v1",
        "kind": "Lease",
        "metadata": meta,
        "spec": {
            "holderIdentity": holder,
            "leaseDurationSeconds": 15,
            "acquireTime": now,
            "renewTime": now,
            "leaseTransitions": 0,
        },
    }


def test_lease_optimistic_concurrency(backends: list[Backend], ns: str) -> None:
    leases = LEASES.format(ns=ns)
    one = f"{leases}/batch-scheduler"

    def script(b: Backend) -> Any:
        out: dict[str, Any] = {}
        code, created = b.request("POST", leases, lease_body(ns, "a"))
        rv = created["metadata"]["resourceVersion"]
        out["create"] = (code, created["kind"], sorted(created["spec"]))
        out["create again"] = status_of(b.request("POST", leases, lease_body(ns, "a")))
        code, renewed = b.request("PUT", one, lease_body(ns, "a", rv))
        out["renew"] = (
            code,
            renewed["metadata"]["resourceVersion"] != rv,
            renewed["spec"]["holderIdentity"],
        )
        out["noop"] = (
            b.request("PUT", one, renewed)[1]["metadata"]["resourceVersion"]
            == renewed["metadata"]["resourceVersion"]
        )
        out["stale"] = status_of(b.request("PUT", one, lease_body(ns, "b", rv)))
        out["no version"] = status_of(b.request("PUT", one, lease_body(ns, "b")))
        bad_time = lease_body(ns, "b", renewed["metadata"]["resourceVersion"])
        bad_time["spec"]["renewTime"] = "2026-01-01T00:00:00Z"
        out["seconds only"] = status_of(b.request("PUT", one, bad_time))
        code, made = b.request(
            "PUT", f"{leases}/other", {**lease_body(ns, "c"), "metadata": {"name": "other"}}
        )
        out["put creates"] = (code, made["metadata"]["name"])
        return out

    real = both(backends, script)
    assert real["create"][0] == 201
    assert real["create again"]["reason"] == "AlreadyExists"
    assert real["renew"] == (200, True, "a")
    assert real["noop"] is True
    assert (real["stale"]["http"], real["stale"]["reason"]) == (409, "Conflict")
    assert real["no version"]["http"] == 422
    assert real["no version"]["details"]["causes"][0]["field"] == "metadata.resourceVersion"
    assert real["seconds only"]["http"] == 400
    assert real["put creates"] == (201, "other")


# -- what the reporter writes --------------------------------------------------------------


def reporter_writes(pod_obj: dict[str, Any], reason: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """(pods/status patch, Event) as scheduler/kube/reporter.py writes them for ``pod_obj``
    with condition reason ``reason``: the reporter itself runs, against a recording client."""
    meta = pod_obj["metadata"]
    model = SimpleNamespace(
        name=meta["name"],
        namespace=meta["namespace"],
        uid=meta["uid"],
        key=f"{meta['namespace']}/{meta['name']}",
    )
    sent: dict[str, dict[str, Any]] = {}

    class Recorder:
        async def request(self, method: str, path: str, *, body: Any = None, **_: Any) -> Any:
            sent[method] = body
            return {}

    async def run() -> None:
        reporter = Reporter(Recorder(), identity="batch-scheduler-conformance")  # type: ignore[arg-type]
        report = reporter.unschedulable if reason == UNSCHEDULABLE else reporter.failed
        report(model, MESSAGE)  # type: ignore[arg-type]
        writer = asyncio.create_task(reporter.run())
        try:
            assert await reporter.drain(10)
        finally:
            writer.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await writer

    # On a thread of its own: asyncio.run in the main thread would orphan the loop that the
    # test plugins (looptime) installed there.
    writer = threading.Thread(target=asyncio.run, args=(run(),))
    writer.start()
    writer.join(20)
    return sent["PATCH"], sent["POST"]


def test_condition_and_event_writes(backends: list[Backend], ns: str) -> None:
    """The reporter's strategic-merge patch of pods/status (merged by condition type) and
    its core/v1 Event are accepted and stored as written; a second Event of the same name
    is AlreadyExists (which the reporter treats as its own earlier write landing)."""
    base = f"/api/v1/namespaces/{ns}"

    def script(b: Backend) -> Any:
        created = create(b, ns, pod("u"))
        out: dict[str, Any] = {}
        patch, event = reporter_writes(created, UNSCHEDULABLE)
        code, patched = b.request(
            "PATCH", f"{base}/pods/u/status", patch, content_type=STRATEGIC_MERGE_PATCH
        )
        out["patch"] = (
            code,
            [
                (c["type"], c["status"], c.get("reason"), c.get("message"))
                for c in patched["status"]["conditions"]
            ],
            patched["status"]["phase"],
        )
        patch2, _ = reporter_writes(created, "SchedulerError")
        code, patched = b.request(
            "PATCH", f"{base}/pods/u/status", patch2, content_type=STRATEGIC_MERGE_PATCH
        )
        out["patch again"] = (
            code,
            [(c["type"], c.get("reason")) for c in patched["status"]["conditions"]],
        )
        out["patch gone"] = status_of(
            b.request(
                "PATCH", f"{base}/pods/gone/status", patch, content_type=STRATEGIC_MERGE_PATCH
            )
        )
        code, stored = b.request("POST", f"{base}/events", event)
        kept = {k: v for k, v in stored.items() if k not in ("metadata",)}
        sent = {k: v for k, v in event.items() if k not in ("metadata",)}
        out["event"] = (
            code,
            kept == sent
            or {
                k: (sent.get(k), kept.get(k))
                for k in set(sent) | set(kept)
                if sent.get(k) != kept.get(k)
            },
        )
        again = status_of(b.request("POST", f"{base}/events", event))
        assert again["details"].pop("name") == event["metadata"]["name"]  # a timestamp
        out["event again"] = again
        code, listed = b.request(
            "GET",
            f"{base}/events",
            params={"fieldSelector": f"involvedObject.name=u,reason={FAILED_SCHEDULING}"},
        )
        out["listed"] = (code, len(listed["items"]))
        out["no namespace"] = status_of(
            b.request(
                "POST",
                "/api/v1/namespaces/conf-missing/events",
                {**event, "metadata": {"name": "x.1"}},
            )
        )
        return out

    real = both(backends, script)
    assert real["patch"] == (
        200,
        [("PodScheduled", "False", UNSCHEDULABLE, MESSAGE)],
        "Pending",
    )
    assert real["patch again"] == (200, [("PodScheduled", "SchedulerError")])
    assert real["patch gone"]["http"] == 404
    assert real["event"] == (201, True)
    assert real["event again"]["reason"] == "AlreadyExists"
    assert real["listed"] == (200, 1)
    assert real["no namespace"]["http"] == 404


# -- admission -----------------------------------------------------------------------------


def test_priority_admission(backends: list[Backend], ns: str) -> None:
    """Priority admission: ``spec.priority`` comes from the PriorityClass named; a bare
    integer or an unknown class is refused with 403 Forbidden."""
    classes = "/apis/scheduling.k8s.io/v1/priorityclasses"
    high = f"conf-high-{ns}"

    def script(b: Backend) -> Any:
        out: dict[str, Any] = {}
        code, made = b.request("POST", classes, {"metadata": {"name": high}, "value": 1000})
        try:
            out["class"] = (code, made["value"], made["preemptionPolicy"])
            for label, spec in (
                ("bare priority", {"priority": 5}),
                ("unknown class", {"priorityClassName": "conf-nope"}),
                ("class and other priority", {"priorityClassName": high, "priority": 7}),
            ):
                reply = b.request("POST", f"/api/v1/namespaces/{ns}/pods", pod("x", **spec))
                out[label] = (status_of(reply), reply[1]["message"])
            for label, spec in (
                ("with class", {"priorityClassName": high}),
                ("class and its priority", {"priorityClassName": high, "priority": 1000}),
                ("no class", {}),
            ):
                made_pod = create(b, ns, pod(label.replace(" ", "-"), **spec))["spec"]
                out[label] = (made_pod.get("priority"), made_pod.get("preemptionPolicy"))
        finally:
            b.request("DELETE", f"{classes}/{high}")
        return out

    real = both(backends, script)
    assert real["class"] == (201, 1000, "PreemptLowerPriority")
    assert real["bare priority"][0]["http"] == 403
    assert real["bare priority"][1].endswith("computed 0 from the given PriorityClass name")
    assert real["unknown class"][1].endswith("no PriorityClass with name conf-nope was found")
    assert real["with class"] == (1000, "PreemptLowerPriority")
    assert real["no class"] == (0, "PreemptLowerPriority")
    assert real["class and its priority"] == (1000, "PreemptLowerPriority")


def test_a_created_pod_reads_the_same(backends: list[Backend], ns: str) -> None:
    """What the scheduler's pod parser reads of a new pod is stored alike: defaults
    (schedulerName, priority, preemptionPolicy, phase, QoS class) and admission's
    tolerations (DefaultTolerationSeconds), next to one of the pod's own."""
    own = {"key": "dedicated", "operator": "Equal", "value": "batch", "effect": "NoSchedule"}
    read = ("schedulerName", "priority", "preemptionPolicy", "tolerations", "nodeName")

    def script(b: Backend) -> Any:
        spec = pod("shape", tolerations=[own], nodeSelector={"pool": "a"}, labels={"app": "x"})
        del spec["spec"]["schedulerName"]
        made = create(b, ns, spec)
        tolerating = create(b, ns, pod("tolerates-all", tolerations=[{"operator": "Exists"}]))
        return (
            made["kind"],
            {k: made["spec"].get(k) for k in read},
            made["spec"]["containers"][0]["resources"],
            {k: made["status"].get(k) for k in ("phase", "qosClass", "conditions")},
            sorted(k for k in made["metadata"] if k not in ("managedFields", "generation")),
            tolerating["spec"]["tolerations"],
        )

    kind, spec, resources, status, meta, tolerating = both(backends, script)
    assert (kind, resources) == ("Pod", {"requests": {"cpu": "100m", "memory": "64Mi"}})
    assert meta == ["creationTimestamp", "labels", "name", "namespace", "resourceVersion", "uid"]
    assert spec["schedulerName"] == "default-scheduler"
    assert [t["key"] for t in spec["tolerations"]] == [
        "dedicated",
        "node.kubernetes.io/not-ready",
        "node.kubernetes.io/unreachable",
    ]
    assert status == {"phase": "Pending", "qosClass": "Burstable", "conditions": None}
    assert tolerating == [{"operator": "Exists"}]
