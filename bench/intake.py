"""What one pod or node watch event costs the typed intake (``kube.intake``), decode + dispatch.

``python -m bench.intake [--pods 5000] [--nodes 500] [--repeats 5] [--out DIR]``: no I/O;
encoded watch objects shaped as a real kube-apiserver sends them (a 2.2 KB pending pod with
its defaulted fields, service-account volume and managedFields) go through the same
``PodIntake``/``NodeIntake`` → ``PodEvents``/``NodeEvents`` → ``cycle.eventhandlers`` path as
``batch-scheduler run`` (a real scheduler core with ``--nodes`` nodes; pods are queued and
signed, nothing is scheduled). Per event, median over ``--repeats``:

* ``pod_added_us``: a new pending pod of the burst's template (peek, the template's record
  re-identified, enqueue and signing);
* ``pod_added_parsed_us``: a new pending pod of a template of its own (peek, ``orjson``
  decode, ``model.parse``, enqueue and signing);
* ``bind_echo_us``: the MODIFIED of our own bind of an assumed pod (skipped: no parse);
* ``bind_echo_labelled_us``: the same where the node has a zone, which kube-apiserver
  copies onto the pod at the bind (applied to the assumed record: no parse);
* ``kubelet_ready_us``: a kubelet's Ready update of a bound pod (skipped);
* ``kubelet_running_us``: its Running update (phase and startTime change: parsed);
* ``node_heartbeat_us``: a node status update that changes nothing we read (skipped);
* ``decode_*_us``: one pod object by ``json``, ``orjson``, ``msgspec`` (to dicts), the
  ``msgspec`` peek, and ``pod_from_raw`` of the decoded dict;
* ``gc_share``: the share of ``pod_added`` that is the cyclic garbage collector (the same
  run with ``gc`` disabled), and the same with ``gc.freeze()`` after the "initial sync".

Targets (issue 29): ≤ 50 µs per pod event, ≤ 10 µs per skipped event. Writes
``DIR/intake.json`` (default ``bench/results/``).
"""

from __future__ import annotations

import argparse
import copy
import gc
import json
import statistics
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec
import orjson

from scheduler.app.core import build_scheduler
from scheduler.app.local_binder import LocalBinder
from scheduler.batching.signature import BatchingMode
from scheduler.clock import FakeClock
from scheduler.cycle.eventhandlers import EventHandlers
from scheduler.cycle.schedule_one import BatchingSettings, Scheduler
from scheduler.framework.config import default_config
from scheduler.kube.controller.nodes import NodeEvents
from scheduler.kube.controller.pods import PodEvents
from scheduler.kube.intake.appliers import NodeIntake, PodIntake
from scheduler.kube.intake.peek import peek_pod
from scheduler.model.keys import Uid
from scheduler.model.parse import pod_from_raw
from scheduler.sim.workload import make_nodes

if TYPE_CHECKING:
    from collections.abc import Callable

    from scheduler.kube.intake.reflector import RawApplier
    from scheduler.model.pod import Pod

RESULTS = Path(__file__).parent / "results"


class _Silent:
    def scheduled(self, pod: Pod, node: str) -> None: ...

    def unschedulable(self, pod: Pod, message: str) -> None: ...

    def failed(self, pod: Pod, message: str) -> None: ...


def api_pod(i: int) -> dict[str, Any]:
    """A pending pod as kube-apiserver v1.37 returns it (defaults, a token volume named for
    the pod, managedFields)."""
    name = f"burst-{i:05d}"
    # ServiceAccount admission names each pod's token volume with a random suffix.
    token_volume = "kube-api-access-" + "".join(
        "bcdfghjklmnpqrstvwxz2456789"[(i * 7 + k * 13) % 27] for k in range(5)
    )
    return {
        "kind": "Pod",
        "apiVersion": "v1",
        "metadata": {
            "name": name,
            "namespace": "default",
            "uid": f"6f1c1a8e-0000-4000-8000-{i:012d}",
            "resourceVersion": str(100000 + i),
            "creationTimestamp": "2026-12-04T17:00:00Z",
            "labels": {"app": "burst", "batch": "b1"},
            "annotations": {"batch-scheduler.io/batching": "true"},
            "managedFields": [
                {
                    "manager": "bench",
                    "operation": "Update",
                    "apiVersion": "v1",
                    "time": "2026-12-04T17:00:00Z",
                    "fieldsType": "FieldsV1",
                    "fieldsV1": {
                        "f:metadata": {
                            "f:annotations": {".": {}, "f:batch-scheduler.io/batching": {}},
                            "f:labels": {".": {}, "f:app": {}, "f:batch": {}},
                        },
                        "f:spec": {
                            "f:containers": {
                                'k:{"name":"app"}': {
                                    ".": {},
                                    "f:image": {},
                                    "f:imagePullPolicy": {},
                                    "f:name": {},
                                    "f:resources": {
                                        ".": {},
                                        "f:requests": {".": {}, "f:cpu": {}, "f:memory": {}},
                                    },
                                    "f:terminationMessagePath": {},
                                    "f:terminationMessagePolicy": {},
                                }
                            },
                            "f:dnsPolicy": {},
                            "f:enableServiceLinks": {},
                            "f:restartPolicy": {},
                            "f:schedulerName": {},
                            "f:securityContext": {},
                            "f:terminationGracePeriodSeconds": {},
                        },
                    },
                }
            ],
        },
        "spec": {
            "volumes": [
                {
                    "name": token_volume,
                    "projected": {
                        "sources": [
                            {
                                "serviceAccountToken": {
                                    "expirationSeconds": 3607,
                                    "path": "token",
                                }
                            },
                            {
                                "configMap": {
                                    "name": "kube-root-ca.crt",
                                    "items": [{"key": "ca.crt", "path": "ca.crt"}],
                                }
                            },
                            {
                                "downwardAPI": {
                                    "items": [
                                        {
                                            "path": "namespace",
                                            "fieldRef": {
                                                "apiVersion": "v1",
                                                "fieldPath": "metadata.namespace",
                                            },
                                        }
                                    ]
                                }
                            },
                        ],
                        "defaultMode": 420,
                    },
                }
            ],
            "containers": [
                {
                    "name": "app",
                    "image": "registry.k8s.io/pause:3.10",
                    "resources": {"requests": {"cpu": "100m", "memory": "500Mi"}},
                    "volumeMounts": [
                        {
                            "name": token_volume,
                            "readOnly": True,
                            "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount",
                        }
                    ],
                    "terminationMessagePath": "/dev/termination-log",
                    "terminationMessagePolicy": "File",
                    "imagePullPolicy": "IfNotPresent",
                }
            ],
            "restartPolicy": "Always",
            "terminationGracePeriodSeconds": 30,
            "dnsPolicy": "ClusterFirst",
            "serviceAccountName": "default",
            "serviceAccount": "default",
            "securityContext": {},
            "schedulerName": "batch-scheduler",
            "tolerations": [
                {
                    "key": "node.kubernetes.io/not-ready",
                    "operator": "Exists",
                    "effect": "NoExecute",
                    "tolerationSeconds": 300,
                },
                {
                    "key": "node.kubernetes.io/unreachable",
                    "operator": "Exists",
                    "effect": "NoExecute",
                    "tolerationSeconds": 300,
                },
            ],
            "priority": 0,
            "enableServiceLinks": True,
            "preemptionPolicy": "PreemptLowerPriority",
        },
        "status": {"phase": "Pending", "qosClass": "Burstable"},
    }


def bound(raw: dict[str, Any], node: str, version: int, *, zone: str = "") -> dict[str, Any]:
    """The MODIFIED after a bind, as the API server writes it: nodeName in its place, and
    the node's ``zone`` label, if it has one, copied onto the pod (kube-apiserver's
    PodTopologyLabels admission)."""
    out = copy.deepcopy(raw)
    if zone:
        out["metadata"]["labels"] = {
            **out["metadata"]["labels"],
            "topology.kubernetes.io/zone": zone,
        }
    spec = out["spec"]
    out["spec"] = {}
    for key, value in spec.items():
        out["spec"][key] = value
        if key == "serviceAccount":
            out["spec"]["nodeName"] = node
    out["metadata"]["resourceVersion"] = str(version)
    out["status"]["conditions"] = [
        {
            "type": "PodScheduled",
            "status": "True",
            "lastProbeTime": None,
            "lastTransitionTime": "2026-12-04T17:00:01Z",
        }
    ]
    return out


def kubelet(raw: dict[str, Any], version: int, *, ready: bool) -> dict[str, Any]:
    """A kubelet's status update: Running (``ready`` False), then Ready."""
    out = copy.deepcopy(raw)
    out["metadata"]["resourceVersion"] = str(version)
    flag = "True" if ready else "False"
    out["status"] = {
        "phase": "Running",
        "conditions": [
            {
                "type": t,
                "status": s,
                "lastProbeTime": None,
                "lastTransitionTime": "2026-12-04T17:00:02Z",
            }
            for t, s in (
                ("PodReadyToStartContainers", "True"),
                ("Initialized", "True"),
                ("Ready", flag),
                ("ContainersReady", flag),
                ("PodScheduled", "True"),
            )
        ],
        "hostIP": "10.0.0.1",
        "podIP": "10.244.0.7",
        "startTime": "2026-12-04T17:00:02Z",
        "containerStatuses": [
            {
                "name": "app",
                "state": {"running": {"startedAt": "2026-12-04T17:00:03Z"}},
                "ready": ready,
                "restartCount": 0,
                "image": "registry.k8s.io/pause:3.10",
                "imageID": "registry.k8s.io/pause@sha256:ee6521f2",
                "containerID": "containerd://4f1e",
                "started": True,
                "resources": {"requests": {"cpu": "100m", "memory": "500Mi"}},
            }
        ],
        "qosClass": "Burstable",
    }
    return out


def _scheduler(nodes: int) -> Scheduler:
    binder = LocalBinder()
    scheduler = build_scheduler(
        default_config(),
        clock=FakeClock(),
        binder=binder,
        reporter=_Silent(),
        batching=BatchingSettings(mode=BatchingMode.ANNOTATED),
        seed=1,
    )
    binder.scheduler = scheduler
    return scheduler


def _encode(raw: dict[str, Any]) -> bytes:
    return json.dumps(raw, separators=(",", ":")).encode()


def _per_event(objects: list[bytes], intake: RawApplier, kind: str) -> float:
    """µs per watch line, as the reflector hands it on: decoded once, then applied."""
    lines = [b'{"type":"' + kind.encode() + b'","object":' + raw + b"}" for raw in objects]
    decode, apply = intake.decode_line, intake.apply_event
    start = time.perf_counter()
    for line in lines:
        apply(decode(line), line)
    return (time.perf_counter() - start) / len(lines) * 1e6


def run_once(pods: int, node_count: int, *, gc_mode: str) -> dict[str, float]:
    """One pass: list nodes, then ADDED, assume, bind echo, Running, Ready per pod."""
    scheduler = _scheduler(node_count)
    handlers = EventHandlers(scheduler)
    pod_events = PodEvents(handlers, metrics=scheduler.metrics, reporter=scheduler.reporter)
    intake = PodIntake(pod_events, metrics=scheduler.metrics)
    nodes = NodeIntake(NodeEvents(handlers, metrics=scheduler.metrics), metrics=scheduler.metrics)
    node_raws = make_nodes(node_count)
    for i, raw in enumerate(node_raws):
        raw["metadata"]["uid"] = f"uid-node-{i}"
        raw["metadata"]["resourceVersion"] = str(i + 1)
        nodes.apply_raw(None, _encode(raw))
    raws = [api_pod(i) for i in range(pods)]
    names = [n["metadata"]["name"] for n in node_raws]
    added = [_encode(r) for r in raws]
    # Half the nodes have a zone (kube-apiserver copies it onto the pod at the bind).
    zones = ["zone-a" if i % 2 else "" for i in range(pods)]
    echoes = [
        _encode(bound(r, names[i % len(names)], 200000 + i, zone=zones[i]))
        for i, r in enumerate(raws)
    ]
    running = [
        _encode(kubelet(bound(r, names[i % len(names)], 0, zone=zones[i]), 300000 + i, ready=False))
        for i, r in enumerate(raws)
    ]
    ready = [
        _encode(kubelet(bound(r, names[i % len(names)], 0, zone=zones[i]), 400000 + i, ready=True))
        for i, r in enumerate(raws)
    ]
    beats = []
    for i, raw in enumerate(node_raws):
        beat = copy.deepcopy(raw)
        beat["metadata"]["resourceVersion"] = str(500000 + i)
        beat.setdefault("status", {})["conditions"] = [
            {"type": "Ready", "status": "True", "lastHeartbeatTime": "2026-12-04T17:00:10Z"}
        ]
        beats.append(_encode(beat))
    if gc_mode == "freeze":
        gc.collect()
        gc.freeze()
    elif gc_mode == "off":
        gc.collect()
        gc.disable()
    distinct = []  # a template each (a label of its own): every one parsed in full
    for i in range(pods):
        raw = api_pod(pods + i)
        raw["metadata"]["labels"]["instance"] = str(i)
        raw["metadata"]["namespace"] = "distinct"
        distinct.append(_encode(raw))
    try:
        out = {"pod_added_us": _per_event(added, intake, "ADDED")}
        assert intake.counts.templated >= pods - 1, "the burst's pods were not templated"
        out["pod_added_parsed_us"] = _per_event(distinct, intake, "ADDED")
        for i, raw in enumerate(raws):  # what the cycle does before the echo: assume
            uid = Uid(raw["metadata"]["uid"])
            queued = scheduler.queue.get(uid)
            assert queued is not None, "pod not queued"
            scheduler.queue.delete(uid)
            scheduler.cluster.assume(queued.pod, names[i % len(names)])
        parsed = intake.counts.parsed
        out["bind_echo_us"] = _per_event(echoes[0::2], intake, "MODIFIED")
        out["bind_echo_labelled_us"] = _per_event(echoes[1::2], intake, "MODIFIED")
        assert intake.counts.parsed == parsed, "a bind echo was parsed"
        assert not any(scheduler.cluster.is_assumed(Uid(r["metadata"]["uid"])) for r in raws)
        out["kubelet_running_us"] = _per_event(running, intake, "MODIFIED")
        parsed = intake.counts.parsed
        out["kubelet_ready_us"] = _per_event(ready, intake, "MODIFIED")
        assert intake.counts.parsed == parsed, "a Ready update was parsed"
        out["node_heartbeat_us"] = _per_event(beats, nodes, "MODIFIED")
        assert nodes.counts.skipped == len(beats), "a heartbeat was parsed"
    finally:
        gc.enable()
        gc.unfreeze()
    return out


def decoders(pods: int) -> dict[str, float]:
    """µs per pod object for each decoder, and for the parse of a decoded dict."""
    added = [_encode(api_pod(i)) for i in range(pods)]
    dicts = [orjson.loads(raw) for raw in added]
    decoder = msgspec.json.Decoder()

    def each(fn: Callable[[Any], object], items: list[Any]) -> float:
        start = time.perf_counter()
        for item in items:
            fn(item)
        return (time.perf_counter() - start) / len(items) * 1e6

    return {
        "pod_bytes": statistics.median(len(raw) for raw in added),
        "decode_json_us": each(json.loads, added),
        "decode_orjson_us": each(orjson.loads, added),
        "decode_msgspec_us": each(decoder.decode, added),
        "peek_msgspec_us": each(peek_pod, added),
        "pod_from_raw_us": each(pod_from_raw, dicts),
    }


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.intake")
    parser.add_argument("--pods", type=int, default=5000)
    parser.add_argument("--nodes", type=int, default=500)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    runs: dict[str, list[dict[str, float]]] = {"on": [], "off": [], "freeze": []}
    decoded: list[dict[str, float]] = []
    for _ in range(args.repeats):
        for mode in runs:
            runs[mode].append(run_once(args.pods, args.nodes, gc_mode=mode))
        decoded.append(decoders(min(args.pods, 2000)))
    report: dict[str, Any] = {
        "pods": args.pods,
        "nodes": args.nodes,
        "repeats": args.repeats,
        "python": sys.version.split()[0],
    }
    for mode, rows in runs.items():
        report[f"gc_{mode}"] = {k: round(statistics.median(r[k] for r in rows), 2) for k in rows[0]}
    report["decoders"] = {k: round(statistics.median(r[k] for r in decoded), 2) for k in decoded[0]}
    on, off = report["gc_on"]["pod_added_us"], report["gc_off"]["pod_added_us"]
    report["gc_share_pod_added"] = round(1 - off / on, 3)
    print(json.dumps(report, indent=2))
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "intake.json").write_text(json.dumps(report, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
