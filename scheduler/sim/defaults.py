"""Server-side defaulting and the little validation a scheduler's inputs depend on.

Only what kube-apiserver does and a scheduler reads: pod ``schedulerName``,
``priority``, ``phase`` and QoS class; node ``allocatable`` from ``capacity``;
namespace phase and finalizer. Validation rejects what the apiserver would (names,
pods without containers) with its 422 wording, so builder bugs surface here too.
"""

from __future__ import annotations

import re
from typing import Any

from scheduler.sim import errors
from scheduler.sim.discovery import EVENTS, EVENTS_V1, NAMESPACES, NODES, PODS, ResourceType

_DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_DNS_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, "
    "'-' or '.', and must start and end with an alphanumeric character"
)


def validate_name(rt: ResourceType, obj: dict[str, Any]) -> None:
    """422 unless metadata.name (or generateName) is a DNS subdomain, as kube requires."""
    meta = obj.get("metadata") or {}
    name = meta.get("name") or ""
    if not name and not meta.get("generateName"):
        raise errors.invalid(
            rt.kind, name, "metadata.name: Required value: name or generateName is required"
        )
    if name and (len(name) > 253 or not _DNS_SUBDOMAIN.match(name)):
        raise errors.invalid(rt.kind, name, f'metadata.name: Invalid value: "{name}": {_DNS_MSG}')


def _qos(spec: dict[str, Any]) -> str:
    containers = list(spec.get("containers") or []) + list(spec.get("initContainers") or [])
    requests_any = limits_all = False
    guaranteed = True
    for c in containers:
        res = c.get("resources") or {}
        req, lim = res.get("requests") or {}, res.get("limits") or {}
        requests_any = requests_any or bool(req) or bool(lim)
        for r in ("cpu", "memory"):
            if r not in lim or req.get(r, lim[r]) != lim[r]:
                guaranteed = False
        limits_all = True
    if not requests_any:
        return "BestEffort"
    return "Guaranteed" if guaranteed and limits_all else "Burstable"


def on_create(rt: ResourceType, obj: dict[str, Any]) -> None:
    """Default and validate a new object in place (the caller owns it)."""
    validate_name(rt, obj)
    if rt is PODS:
        spec = obj.setdefault("spec", {})
        if not spec.get("containers"):
            raise errors.invalid(
                "Pod", obj["metadata"].get("name", ""), "spec.containers: Required value"
            )
        spec.setdefault("schedulerName", "default-scheduler")
        spec.setdefault("priority", 0)
        spec.setdefault("restartPolicy", "Always")
        spec.setdefault("dnsPolicy", "ClusterFirst")
        spec.setdefault("terminationGracePeriodSeconds", 30)
        spec.setdefault("securityContext", {})
        status = obj.setdefault("status", {})
        status.setdefault("phase", "Pending")
        status.setdefault("qosClass", _qos(spec))
    elif rt is NODES:
        status = obj.setdefault("status", {})
        if "capacity" in status and "allocatable" not in status:
            status["allocatable"] = dict(status["capacity"])
        obj.setdefault("spec", {})
    elif rt is NAMESPACES:
        obj.setdefault("spec", {"finalizers": ["kubernetes"]})
        obj.setdefault("status", {"phase": "Active"})
        labels = obj["metadata"].setdefault("labels", {})
        labels.setdefault("kubernetes.io/metadata.name", obj["metadata"].get("name", ""))
    elif rt in (EVENTS, EVENTS_V1):
        obj.setdefault("involvedObject", {})
        obj.setdefault("reportingComponent", "")
        obj.setdefault("reportingInstance", "")
