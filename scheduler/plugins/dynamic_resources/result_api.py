"""The allocation result as kube's allocator builds it, and as PreBind writes it.

For each claim: one ``devices.results[]`` entry per device (``request`` is ``req`` or
``req/sub``; ``adminAccess`` only when asked for; the request's ``tolerations``;
``bindingConditions``/``bindingFailureConditions`` from the device; ``shareID`` and
``consumedCapacity`` for a share of a device allowing multiple allocations); the class
configurations (once per class) then the claim's, with ``requests`` cleared when a
configuration applies to every request; and the node selector: ``metadata.name In
[node]`` as soon as one device is local to the node (or binds to it), else the union of
the network-attached slices' single selector terms, else none.

Neighbours: ``allocation`` (calls :func:`allocation_result`), ``allocator`` (DeviceResult).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scheduler.model.dra_claims import AllocationResult, DeviceRequestAllocationResult

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from scheduler.model.dra_claims import DeviceToleration, ResourceClaim
    from scheduler.plugins.dynamic_resources.allocator import DeviceResult
    from scheduler.plugins.dynamic_resources.requests import Features, RequestData, RequestKey

Json = dict[str, object]


class NodeSelectorError(ValueError):
    """A network-attached slice with more than one selector term (validation forbids it)."""


def _node_selector(devices: Sequence[DeviceResult], node_name: str) -> Json | None:
    fields: list[object] = []
    expressions: list[object] = []
    for d in devices:
        a_slice = d.candidate.slice
        selection = d.candidate.device.node if a_slice.per_device_node_selection else a_slice.node
        if selection.node_name or d.candidate.device.binds_to_node:
            return {
                "nodeSelectorTerms": [
                    {
                        "matchFields": [
                            {"key": "metadata.name", "operator": "In", "values": [node_name]}
                        ]
                    }
                ]
            }
        raw = selection.node_selector_raw
        if raw is None:
            continue
        terms = raw.get("nodeSelectorTerms") or []
        assert isinstance(terms, list)
        if len(terms) > 1:
            raise NodeSelectorError(
                f"unsupported ResourceSlice.NodeSelector with {len(terms)} terms"
            )
        if terms:
            term = terms[0]
            assert isinstance(term, dict)
            _add_new(term.get("matchFields"), fields)
            _add_new(term.get("matchExpressions"), expressions)
    if not fields and not expressions:
        return None
    term_out: Json = {}
    if expressions:
        term_out["matchExpressions"] = expressions
    if fields:
        term_out["matchFields"] = fields
    return {"nodeSelectorTerms": [term_out]}


def _add_new(source: object, into: list[object]) -> None:
    """Requirements not already present (same key, operator and set of values)."""
    for req in source if isinstance(source, list) else ():
        if not isinstance(req, dict):
            continue
        values = set(req.get("values") or [])
        if not any(
            isinstance(old, dict)
            and old.get("key") == req.get("key")
            and old.get("operator") == req.get("operator")
            and set(old.get("values") or []) == values
            for old in into
        ):
            into.append(req)


def _config(
    claim: ResourceClaim, requests: Mapping[RequestKey, RequestData], ci: int
) -> tuple[Json, ...]:
    chosen: list[RequestData] = []
    for ri in range(len(claim.spec.requests)):
        data = requests[(ci, ri, 0)]
        if data.parent is not None:
            data = requests[(ci, ri, data.selected_sub_request)]
        chosen.append(data)
    out: list[Json] = []
    class_ranges: dict[str, tuple[int, int]] = {}
    for data in chosen:
        cls = data.device_class
        if cls is None:
            continue
        if cls.name in class_ranges:
            start, end = class_ranges[cls.name]
            for entry in out[start:end]:
                entry_requests = entry["requests"]
                assert isinstance(entry_requests, list)
                entry_requests.append(data.name)
            continue
        start = len(out)
        out.extend(
            {"source": "FromClass", "requests": [data.name], **_opaque(c.opaque)}
            for c in cls.config
        )
        class_ranges[cls.name] = (start, len(out))
    for config in claim.spec.config:
        applies = not config.requests or any(
            request.name in config.requests or data.name in config.requests
            for request, data in zip(claim.spec.requests, chosen, strict=True)
        )
        if applies:
            out.append(
                {"source": "FromClaim", "requests": list(config.requests), **_opaque(config.opaque)}
            )
    for entry in out:
        names = entry["requests"]
        assert isinstance(names, list)
        if names and all(
            request.name in names or data.name in names
            for request, data in zip(claim.spec.requests, chosen, strict=True)
        ):
            entry["requests"] = []
    for entry in out:
        if not entry["requests"]:
            del entry["requests"]
    return tuple(out)


def _opaque(opaque: Mapping[str, object] | None) -> Json:
    return {} if opaque is None else {"opaque": dict(opaque)}


def allocation_result(
    claim: ResourceClaim,
    devices: Sequence[DeviceResult],
    requests: Mapping[RequestKey, RequestData],
    ci: int,
    node_name: str,
    features: Features,
) -> AllocationResult:
    results = []
    for d in devices:
        device = d.candidate.device
        conditions = features.device_binding_and_status
        results.append(
            DeviceRequestAllocationResult(
                request=d.request.name,
                driver=d.candidate.device_id[0],
                pool=d.candidate.device_id[1],
                device=d.candidate.device_id[2],
                admin_access=True if d.request.admin_access else None,
                tolerations=d.request.spec.tolerations,
                binding_conditions=(device.binding_conditions or ()) if conditions else (),
                binding_failure_conditions=device.binding_failure_conditions if conditions else (),
                share_id=d.share_id,
                consumed_capacity=d.consumed,
            )
        )
    return AllocationResult(
        results=tuple(results),
        config=_config(claim, requests, ci),
        node_selector=_node_selector(devices, node_name),
    )


def _toleration_to_api(t: DeviceToleration) -> Json:
    out: Json = {}
    for name, value in (
        ("key", t.key),
        ("operator", t.operator),
        ("value", t.value),
        ("effect", t.effect),
    ):
        if value:
            out[name] = value
    if t.toleration_seconds is not None:
        out["tolerationSeconds"] = t.toleration_seconds
    return out


def allocation_to_api(allocation: AllocationResult) -> Json:
    """``status.allocation`` as JSON, fields in kube's order, empty ones omitted."""
    results: list[Json] = []
    for r in allocation.results:
        entry: Json = {"request": r.request, "driver": r.driver, "pool": r.pool, "device": r.device}
        if r.admin_access is not None:
            entry["adminAccess"] = r.admin_access
        if r.tolerations:
            entry["tolerations"] = [_toleration_to_api(t) for t in r.tolerations]
        if r.binding_conditions:
            entry["bindingConditions"] = list(r.binding_conditions)
        if r.binding_failure_conditions:
            entry["bindingFailureConditions"] = list(r.binding_failure_conditions)
        if r.share_id is not None:
            entry["shareID"] = r.share_id
        if r.consumed_capacity:
            entry["consumedCapacity"] = {k: q.text for k, q in r.consumed_capacity.items()}
        results.append(entry)
    devices: Json = {}
    if results:
        devices["results"] = results
    if allocation.config:
        devices["config"] = [dict(c) for c in allocation.config]
    out: Json = {"devices": devices}
    if allocation.node_selector is not None:
        out["nodeSelector"] = dict(allocation.node_selector)
    return out
