"""``simulate`` end to end on a ``kubectl get -o json``-shaped snapshot, against its
scheduling time (issue 31, item 4: the end-to-end time at most 3x the scheduling time).

``python -m bench.snapshot_load [--nodes 500] [--pods 10000] [--format json|yaml]
[--batching annotated|all|off] [--repeats 3]`` writes one snapshot to a temporary file,
then, per repeat, times what ``batch-scheduler simulate FILE`` does: read and parse the file
(``app.input_file``), build the records (``app.snapshot_file``), load the cache and place
every pending pod (``app.simulate``). The scheduling time is the report's own
``wall_seconds`` (the placing loop); the ratio is the end-to-end time over it. Medians over
repeats, one line of JSON on stdout.

The objects are dressed as the API server returns them and kubectl prints them (one
``kind: List``; uid, resourceVersion, creationTimestamp, owner references,
the defaulted fields, the service-account volume, the not-ready/unreachable tolerations,
status), about 1.4 kB a pod, so the file is the size a user's is.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

from scheduler.app.simulate import read_snapshot_file, simulate
from scheduler.batching.signature import BatchingMode
from scheduler.framework.config import DEFAULT_SCHEDULER_NAME, default_config
from scheduler.logs.setup import configure_logging
from scheduler.sim.workload import make_nodes, make_pods

_STAMP = "2026-01-02T03:04:05Z"


def snapshot(nodes: int, pods: int) -> dict[str, Any]:
    """A ``kubectl get nodes,pods -A -o json`` of ``nodes`` nodes and ``pods`` pending pods."""
    items = [_as_served(node, i) for i, node in enumerate(make_nodes(nodes, zones=("a", "b")))]
    for i, pod in enumerate(
        make_pods(
            pods,
            prefix="web-7d4b9c-",
            scheduler_name=DEFAULT_SCHEDULER_NAME,
            cpu="100m",
            memory="200Mi",
            labels={"app": "web", "pod-template-hash": "7d4b9c"},
        )
    ):
        items.append(_as_served(_dressed_pod(pod), nodes + i))
    return {"apiVersion": "v1", "items": items, "kind": "List", "metadata": {"resourceVersion": ""}}


def _as_served(obj: dict[str, Any], index: int) -> dict[str, Any]:
    meta = obj["metadata"]
    meta["uid"] = f"0b6c{index:08x}-5e1d-4c3a-9f00-{index:012x}"
    meta["resourceVersion"] = str(1000 + index)
    meta["creationTimestamp"] = _STAMP
    return obj


def _dressed_pod(pod: dict[str, Any]) -> dict[str, Any]:
    meta, spec = pod["metadata"], pod["spec"]
    meta["generateName"] = "web-7d4b9c-"
    meta["ownerReferences"] = [
        {
            "apiVersion": "apps/v1",
            "blockOwnerDeletion": True,
            "controller": True,
            "kind": "ReplicaSet",
            "name": "web-7d4b9c",
            "uid": "5f0e8d2a-1b3c-4d5e-8f90-a1b2c3d4e5f6",
        }
    ]
    container = spec["containers"][0]
    container.update(
        imagePullPolicy="IfNotPresent",
        terminationMessagePath="/dev/termination-log",
        terminationMessagePolicy="File",
        ports=[{"containerPort": 8080, "name": "http", "protocol": "TCP"}],
        volumeMounts=[
            {
                "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount",
                "name": "kube-api-access-x7k2p",
                "readOnly": True,
            }
        ],
    )
    spec.update(
        dnsPolicy="ClusterFirst",
        enableServiceLinks=True,
        preemptionPolicy="PreemptLowerPriority",
        priority=0,
        restartPolicy="Always",
        securityContext={},
        serviceAccount="default",
        serviceAccountName="default",
        terminationGracePeriodSeconds=30,
        tolerations=[
            {
                "effect": "NoExecute",
                "key": f"node.kubernetes.io/{taint}",
                "operator": "Exists",
                "tolerationSeconds": 300,
            }
            for taint in ("not-ready", "unreachable")
        ],
        volumes=[
            {
                "name": "kube-api-access-x7k2p",
                "projected": {
                    "defaultMode": 420,
                    "sources": [
                        {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
                        {"configMap": {"name": "kube-root-ca.crt"}},
                    ],
                },
            }
        ],
    )
    pod["status"] = {"phase": "Pending", "qosClass": "Burstable"}
    return pod


def measure(path: Path, mode: BatchingMode) -> dict[str, float]:
    """One ``simulate`` of ``path``: each stage's seconds and the ratio."""
    config = default_config()
    names = {profile.scheduler_name for profile in config.profiles}
    started = time.perf_counter()
    loaded = read_snapshot_file(path, names)
    read = time.perf_counter() - started
    report = simulate(loaded, config, mode=mode, seed=0)
    total = time.perf_counter() - started
    scheduling = report["summary"]["wall_seconds"]
    assert report["summary"]["scheduled"] == len(loaded.pending), report["summary"]
    return {
        "read_seconds": read,
        "scheduling_seconds": scheduling,
        "end_to_end_seconds": total,
        "ratio": total / scheduling,
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.snapshot_load", description=__doc__)
    parser.add_argument("--nodes", type=int, default=500)
    parser.add_argument("--pods", type=int, default=10_000)
    parser.add_argument("--format", choices=("json", "yaml"), default="json")
    parser.add_argument("--batching", choices=("annotated", "all", "off"), default="annotated")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    configure_logging(fmt="console", level="warning")
    data = snapshot(args.nodes, args.pods)
    text = json.dumps(data, indent=4) if args.format == "json" else yaml.safe_dump(data)
    size = len(text.encode())
    del data  # as in ``simulate``, nothing else is in memory while the file is read
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"snapshot.{args.format}"
        path.write_text(text)
        del text
        runs = [measure(path, BatchingMode(args.batching)) for _ in range(args.repeats)]
    medians = {key: round(statistics.median(run[key] for run in runs), 3) for key in runs[0]}
    record = {
        "nodes": args.nodes,
        "pods": args.pods,
        "format": args.format,
        "batching": args.batching,
        "file_mb": round(size / 1e6, 1),
        "repeats": args.repeats,
        **medians,
    }
    print(json.dumps(record))


if __name__ == "__main__":
    main()
