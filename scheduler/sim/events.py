"""One Event storage, two API versions: core ``v1`` and ``events.k8s.io/v1``.

kube-apiserver stores events once and converts between the two versions. kopf and
``kubectl describe`` use core events; kube-scheduler's recorder writes
``events.k8s.io/v1``. Objects are stored in core form and converted at the edge.
"""

from __future__ import annotations

from typing import Any

# events.k8s.io/v1 field -> core/v1 field
_V1_TO_CORE: dict[str, str] = {
    "regarding": "involvedObject",
    "note": "message",
    "reportingController": "reportingComponent",
    "deprecatedSource": "source",
    "deprecatedFirstTimestamp": "firstTimestamp",
    "deprecatedLastTimestamp": "lastTimestamp",
    "deprecatedCount": "count",
}
_CORE_TO_V1 = {core: v1 for v1, core in _V1_TO_CORE.items()}
FIELD_ALIASES: dict[str, str] = dict(_V1_TO_CORE)
_COMMON = (
    "metadata",
    "eventTime",
    "series",
    "reportingInstance",
    "action",
    "reason",
    "related",
    "type",
)


def _micro_time(ts: str) -> str:
    """RFC3339 seconds -> MicroTime ("...T00:00:00.000000Z"); events.k8s.io requires eventTime."""
    return ts[:-1] + ".000000Z" if ts.endswith("Z") and "." not in ts else ts


def to_v1(core: dict[str, Any]) -> dict[str, Any]:
    """Core event (bare, no kind) -> events.k8s.io/v1 event (bare)."""
    out: dict[str, Any] = {k: core[k] for k in _COMMON if core.get(k) is not None}
    for core_name, v1_name in _CORE_TO_V1.items():
        if core.get(core_name) not in (None, "", {}):
            out[v1_name] = core[core_name]
    if "eventTime" not in out:
        stamp = core.get("firstTimestamp") or core.get("metadata", {}).get("creationTimestamp")
        if stamp:
            out["eventTime"] = _micro_time(stamp)
    return out


def to_core(v1: dict[str, Any]) -> dict[str, Any]:
    """events.k8s.io/v1 event (any kind/apiVersion dropped) -> core event (bare)."""
    out: dict[str, Any] = {k: v1[k] for k in _COMMON if v1.get(k) is not None}
    for v1_name, core_name in _V1_TO_CORE.items():
        if v1.get(v1_name) is not None:
            out[core_name] = v1[v1_name]
    return out
