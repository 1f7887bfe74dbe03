"""What a chaos run measured: the invariants on the cluster's final state, the scheduler's
requests as the API server's audit log saw them, and its error-level log lines.

* **Final state** (every pod and node listed at the end): pods bound; pods *lost* (neither
  bound nor carrying ``PodScheduled=False`` with reason ``Unschedulable``; a pod being
  deleted does not count); pods bound to a deleted node *after* its deletion (the bind's
  resourceVersion, from the runner's watch, above the one read right after the DELETE:
  any scheduler can, with a bind on the wire or sent before the deletion's watch event
  arrived, as kube-apiserver accepts a Binding to a deleted node);
  nodes *overcommitted* (requests of the pods on them, terminating ones included as kube
  counts them, above allocatable cpu, memory or pods).
* **Audit** (the API server logs every request of the two schedulers' identities at
  Metadata level, binds with their body, :func:`audit_args`): binds by outcome (409
  "already assigned" to another node than the bind asks = a bind rejected as already bound,
  a second decision; to the same node = a retried bind that had landed), 429s and 410s
  answered to the scheduler, and its pod LISTs (first pages, and kube's streaming lists:
  watches with ``sendInitialEvents``; its initial list and every re-list) and pod watches.
  The API server writes an event when a request completes: one SIGKILLed loses those in
  flight, so these counts are lower bounds in ``apiserver-kill``. A 410 that ends a
  watch already streaming arrives as an ERROR event inside a 200 answer, which the audit
  log does not see; the re-list that follows it, it does.
* **Binds after the deletion was seen** (ours: its log and the audit log,
  :func:`late_binds`): binds that landed on a node although they started after ours'
  cache had dropped it, the invariant a scheduler can keep; and deleted nodes its cache
  never dropped.
* **Logs**: kube-scheduler's klog lines at error level (``E....``), ours' JSON lines at
  ``error`` or ``critical``, with the commonest kinds; ours' ``watch_expired`` lines
  (410s it took).

Neighbours: :mod:`bench.chaos.run` (collects them), :mod:`bench.chaos.report`.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from datetime import datetime
from typing import TYPE_CHECKING, Any

import yaml

from controlplane.launcher import SCHEDULER_ACCOUNT, SCHEDULER_NAMESPACE
from scheduler.model.quantity import parse_quantity

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator, Mapping
    from fractions import Fraction
    from pathlib import Path

    from bench.chaos.watch import Bind

Obj = dict[str, Any]
Record = dict[str, Any]
SCHEDULER_USERS = (
    "system:kube-scheduler",
    f"system:serviceaccount:{SCHEDULER_NAMESPACE}:{SCHEDULER_ACCOUNT}",
)
KLOG_ERROR = re.compile(r"^E\d{4} \d\d:\d\d:\d\d")
ALREADY_ASSIGNED = re.compile(r'already assigned to node "([^"]*)"')
SAMPLES = 5
KIND_CHARS = 110
BLUR = re.compile(r"pod-\d+|chaos-node-\d+|\d+(\.\d+)*")
RESOURCES = ("cpu", "memory", "pods")


def audit_args(workdir: Path) -> list[str]:
    """kube-apiserver flags that log the schedulers' requests (JSON; Metadata level, binds
    at Request level: :func:`late_binds` reads their target node)."""
    policy = workdir / "audit-policy.yaml"
    policy.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "audit.k8s.io/v1",
                "kind": "Policy",
                "omitStages": ["RequestReceived", "ResponseStarted"],
                "rules": [
                    {
                        "level": "Request",
                        "users": list(SCHEDULER_USERS),
                        "resources": [{"group": "", "resources": ["pods/binding"]}],
                    },
                    {"level": "Metadata", "users": list(SCHEDULER_USERS)},
                    {"level": "None"},
                ],
            }
        )
    )
    return [
        f"--audit-policy-file={policy}",
        f"--audit-log-path={workdir / 'audit.log'}",
        "--audit-log-format=json",
    ]


def audit_figures(path: Path) -> Record:
    """The schedulers' requests by outcome, from the audit log."""
    counts: Counter[str] = Counter()
    events = _audit_events(path)
    if events is None:
        return {"audit": "missing"}
    for event in events:
        status = event.get("responseStatus") or {}
        code = int(status.get("code") or 0)
        ref = event.get("objectRef") or {}
        verb = event.get("verb")
        if code == 429:
            counts["code_429"] += 1
        elif code == 410:
            counts["code_410"] += 1
        uri = str(event.get("requestURI"))
        if ref.get("subresource") == "binding" and verb == "create":
            counts[_bind_outcome(code, str(status.get("message")), event)] += 1
        elif ref.get("resource") == "pods" and not ref.get("subresource"):
            listing = verb == "list" and "continue=" not in uri
            if listing or (verb == "watch" and "sendInitialEvents=true" in uri):
                counts["pod_lists"] += 1
            if verb == "watch":
                counts["pod_watches"] += 1
    return dict(sorted(counts.items()))


def _audit_events(path: Path) -> Iterator[Obj] | None:
    """The audit log's events (None: no log). kube-apiserver rotates it at 100 MB
    (``audit-<time>.log`` beside it)."""
    files = sorted(path.parent.glob(f"{path.stem}*{path.suffix}"))
    if not files:
        return None
    return _parsed(line for f in files for line in f.read_text(errors="replace").splitlines())


def _parsed(lines: Iterable[str]) -> Iterator[Obj]:
    for line in lines:
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if isinstance(event, dict):
            yield event


def late_binds(logs: Iterable[Path], audit: Path, deleted: Iterable[str]) -> Record:
    """For the nodes the runner ``deleted``: ``binds_after_deletion_seen``, binds of ours
    that landed on such a node although they started after its cache had dropped it, and
    ``nodes_not_seen_deleted``, deleted nodes its cache never dropped. Ours' ``node_deleted``
    line is written as the cache drops the node and names the binds to it then unanswered;
    a bind that landed (audit: 2xx) and reached the API server after that line, for a pod
    the line does not name, started after the drop. With several replicas a node's last
    line and every pod the lines name count (lenient: a standby that drops the node later
    excuses the leader). kube-scheduler logs no such line: not measured for it."""
    wanted = set(deleted)
    lines: dict[str, tuple[datetime, set[str]]] = {}
    for line in _ours_lines(logs):
        node = str(line.get("node"))
        if line.get("event") != "node_deleted" or node not in wanted or "timestamp" not in line:
            continue
        at = _instant(str(line["timestamp"]))
        before, named = lines.get(node, (at, set()))
        lines[node] = (max(at, before), named | set(line.get("binds_on_wire") or ()))
    figures: Record = {
        "nodes_not_seen_deleted": len(wanted - lines.keys()),
        "binds_on_wire_at_deletion": sum(len(named) for _, named in lines.values()),
    }
    events = _audit_events(audit)
    if events is None:
        return {**figures, "binds_after_deletion_seen": None if wanted else 0}
    late: list[str] = []
    for event in events:
        ref = event.get("objectRef") or {}
        code = int((event.get("responseStatus") or {}).get("code") or 0)
        if ref.get("subresource") != "binding" or event.get("verb") != "create" or code >= 300:
            continue
        target = str(((event.get("requestObject") or {}).get("target") or {}).get("name"))
        pod = f"{ref.get('namespace')}/{ref.get('name')}"
        if target not in lines or "requestReceivedTimestamp" not in event:
            continue
        dropped_at, on_wire = lines[target]
        if _instant(str(event["requestReceivedTimestamp"])) > dropped_at and pod not in on_wire:
            late.append(f"{pod} on {target}")
    return {
        **figures,
        "binds_after_deletion_seen": len(late),
        "binds_after_deletion_seen_sample": sorted(late)[:SAMPLES],
    }


def _ours_lines(logs: Iterable[Path]) -> Iterator[Obj]:
    return _parsed(line for line in _log_lines(logs) if line.startswith("{"))


def _log_lines(logs: Iterable[Path]) -> Iterator[str]:
    """Every line of the schedulers' logs (one that cannot be read: none)."""
    for path in logs:
        try:
            text = path.read_text(errors="replace")
        except OSError:
            continue
        yield from text.splitlines()


def _instant(stamp: str) -> datetime:
    """An RFC 3339 time (ours' ``timestamp``, the audit's ``requestReceivedTimestamp``)."""
    return datetime.fromisoformat(stamp)


def _bind_outcome(code: int, message: str, event: Obj) -> str:
    """``binds_ok``; ``binds_already_bound`` (409: the pod is on another node than this bind
    asks: a second decision for a bound pod); ``binds_repeated`` (409: already on the very
    node asked, a retry of a bind that had landed); else ``binds_failed_<code>``."""
    if code < 300:
        return "binds_ok"
    assigned = ALREADY_ASSIGNED.search(message)
    if code == 409 and assigned:
        target = ((event.get("requestObject") or {}).get("target") or {}).get("name")
        return "binds_repeated" if target == assigned.group(1) else "binds_already_bound"
    return f"binds_failed_{code}"


def log_figures(logs: Iterable[Path]) -> Record:
    """Error-level lines: how many, and the commonest kinds (the message with names and
    numbers blurred); ours' ``watch_expired`` lines."""
    kinds: Counter[str] = Counter()
    expired = 0
    for line in _log_lines(logs):
        if '"watch_expired"' in line:
            expired += 1
        kind = _error_kind(line)
        if kind is not None:
            kinds[kind] += 1
    return {
        "error_lines": sum(kinds.values()),
        "error_kinds": dict(kinds.most_common(SAMPLES)),
        "watch_expired": expired,
    }


def _error_kind(line: str) -> str | None:
    """The error line's kind (None: not an error line)."""
    if KLOG_ERROR.match(line):
        message = line.partition("] ")[2]
    elif line.startswith("{") and '"level"' in line:
        try:
            record = json.loads(line)
        except ValueError:
            return None
        if record.get("level") not in ("error", "critical"):
            return None
        message = f"{record.get('event')}: {record.get('error', '')}"
    else:
        return None
    return BLUR.sub("N", message)[:KIND_CHARS]


def _requests(pod: Obj) -> dict[str, Fraction]:
    total = {"pods": parse_quantity(1)}
    for container in (pod.get("spec") or {}).get("containers") or []:
        for name, value in ((container.get("resources") or {}).get("requests") or {}).items():
            if name in RESOURCES:
                total[name] = total.get(name, parse_quantity(0)) + parse_quantity(value)
    return total


def _unschedulable(pod: Obj) -> bool:
    return any(
        c.get("type") == "PodScheduled"
        and c.get("status") == "False"
        and c.get("reason") == "Unschedulable"
        for c in (pod.get("status") or {}).get("conditions") or []
    )


def state_figures(
    pods: list[Obj],
    nodes: list[Obj],
    *,
    deleted_nodes: Mapping[str, int],
    binds: Mapping[str, Bind],
) -> Record:
    """The invariants on the final state (see the module docstring)."""
    allocatable = {
        n["metadata"]["name"]: {
            r: parse_quantity(v) for r, v in (n["status"].get("allocatable") or {}).items()
        }
        for n in nodes
    }
    used: dict[str, dict[str, Fraction]] = {}
    figures = Counter(bound=0, lost=0, unschedulable=0, terminating=0, on_deleted_nodes=0)
    lost: list[str] = []
    for pod in pods:
        name = pod["metadata"]["name"]
        node = (pod.get("spec") or {}).get("nodeName")
        terminating = bool(pod["metadata"].get("deletionTimestamp"))
        figures["terminating"] += terminating
        if node:
            figures["bound"] += 1
            bind = binds.get(name)
            if node in deleted_nodes and bind is not None and bind.version > deleted_nodes[node]:
                figures["on_deleted_nodes"] += 1
            usage = used.setdefault(node, {})
            for resource, amount in _requests(pod).items():
                usage[resource] = usage.get(resource, parse_quantity(0)) + amount
        elif terminating:
            continue
        elif _unschedulable(pod):
            figures["unschedulable"] += 1
        else:
            figures["lost"] += 1
            lost.append(name)
    over = [
        node
        for node, usage in used.items()
        if node in allocatable
        and any(amount > allocatable[node].get(r, amount) for r, amount in usage.items())
    ]
    return {
        **figures,
        "overcommitted_nodes": len(over),
        "overcommitted_sample": sorted(over)[:SAMPLES],
        "lost_sample": sorted(lost)[:SAMPLES],
    }
