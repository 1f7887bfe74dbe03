"""The three PATCH content types kube-apiserver accepts from these clients.

* ``application/merge-patch+json``: RFC 7386 (maps merge, ``null`` deletes, lists replace).
* ``application/strategic-merge-patch+json``: like merge patch, but lists with a known
  patch merge key merge element-wise (pod ``status.conditions`` by ``type``, containers by
  ``name`` ...), and the ``$patch``, ``$retainKeys``, ``$deleteFromPrimitiveList`` and
  ``$setElementOrder`` directives that kubectl sends are honoured or ignored safely.
  The merge keys come from the Kubernetes Go struct tags for the fields of the objects
  served here; lists not in the table are replaced, as in kube.
* ``application/json-patch+json``: RFC 6902 operations.

All functions return new objects and never modify their inputs.
"""

from __future__ import annotations

import copy
from typing import Any

from scheduler.sim.errors import ApiError, bad_request

MERGE_PATCH = "application/merge-patch+json"
STRATEGIC_MERGE_PATCH = "application/strategic-merge-patch+json"
JSON_PATCH = "application/json-patch+json"
CONTENT_TYPES = frozenset({MERGE_PATCH, STRATEGIC_MERGE_PATCH, JSON_PATCH})

# field name -> patchMergeKey (from the core/v1, meta/v1 and resource/v1 Go types).
MERGE_KEYS: dict[str, str] = {
    "conditions": "type",
    "containers": "name",
    "initContainers": "name",
    "ephemeralContainers": "name",
    "volumes": "name",
    "volumeMounts": "mountPath",
    "volumeDevices": "devicePath",
    "env": "name",
    "ports": "containerPort",
    "addresses": "type",
    "taints": "key",
    "ownerReferences": "uid",
    "imagePullSecrets": "name",
    "hostAliases": "ip",
    "topologySpreadConstraints": "topologyKey",
    "resourceClaims": "name",
    "podIPs": "ip",
    "hostIPs": "ip",
    "containerStatuses": "name",
    "initContainerStatuses": "name",
    "reservedFor": "uid",
}
# The same field name with another merge key elsewhere: a Service's ``spec.ports`` merge by
# ``port`` (container ports always carry ``containerPort``, service ports ``port``).
OTHER_MERGE_KEYS: dict[str, str] = {"ports": "port"}
# primitive lists with patchStrategy "merge": union of values.
MERGE_PRIMITIVE_LISTS = frozenset({"finalizers"})


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386 JSON merge patch."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    result = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = merge_patch(result.get(key), value)
    return result


def strategic_merge_patch(target: Any, patch: Any) -> Any:
    """Strategic merge patch with the merge keys of :data:`MERGE_KEYS`."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    if patch.get("$patch") == "replace":
        return {k: copy.deepcopy(v) for k, v in patch.items() if k != "$patch"}
    if patch.get("$patch") == "delete":
        return None
    result = dict(target) if isinstance(target, dict) else {}
    retain = patch.get("$retainKeys")
    for key, value in patch.items():
        if key.startswith("$setElementOrder/") or key in ("$retainKeys", "$patch"):
            continue  # ordering hints only: our lists keep server order
        if key.startswith("$deleteFromPrimitiveList/"):
            name = key.split("/", 1)[1]
            drop = set(map(_hashable, value or []))
            result[name] = [v for v in result.get(name) or [] if _hashable(v) not in drop]
            continue
        if value is None:
            result.pop(key, None)
        elif isinstance(value, list) and key in MERGE_KEYS:
            result[key] = _merge_list(result.get(key), value, _merge_key(key, value))
        elif isinstance(value, list) and key in MERGE_PRIMITIVE_LISTS:
            merged = list(result.get(key) or [])
            merged.extend(v for v in value if v not in merged)
            result[key] = merged
        elif isinstance(value, dict):
            sub = strategic_merge_patch(result.get(key), value)
            if sub is None:
                result.pop(key, None)
            else:
                result[key] = sub
        else:
            result[key] = copy.deepcopy(value)
    if isinstance(retain, list):
        result = {k: v for k, v in result.items() if k in retain}
    return result


def _merge_key(field: str, patch: list[Any]) -> str:
    """The merge key of the list ``field``, told apart by what its elements carry."""
    key = MERGE_KEYS[field]
    other = OTHER_MERGE_KEYS.get(field)
    dicts = [e for e in patch if isinstance(e, dict) and "$patch" not in e]
    if other and dicts and all(key not in e and other in e for e in dicts):
        return other
    return key


def _hashable(value: Any) -> Any:
    return value if isinstance(value, str | int | float | bool) else repr(value)


def _merge_list(target: Any, patch: list[Any], key: str) -> list[Any]:
    items: list[Any] = list(target) if isinstance(target, list) else []
    for element in patch:
        if not isinstance(element, dict) or key not in element:
            if isinstance(element, dict) and element.get("$patch") == "replace":
                return [e for e in patch if not (isinstance(e, dict) and "$patch" in e)]
            items.append(copy.deepcopy(element))
            continue
        index = next(
            (i for i, e in enumerate(items) if isinstance(e, dict) and e.get(key) == element[key]),
            None,
        )
        if element.get("$patch") == "delete":
            if index is not None:
                del items[index]
        elif index is None:
            items.append(strategic_merge_patch({}, element))
        else:
            items[index] = strategic_merge_patch(items[index], element)
    return items


def _pointer(path: str) -> list[str]:
    if path == "":
        return []
    if not path.startswith("/"):
        raise bad_request(f"invalid JSON pointer {path!r}")
    return [p.replace("~1", "/").replace("~0", "~") for p in path[1:].split("/")]


def _walk(doc: Any, parts: list[str]) -> Any:
    for part in parts:
        if isinstance(doc, list):
            doc = doc[int(part)]
        elif isinstance(doc, dict):
            doc = doc[part]
        else:
            raise KeyError(part)
    return doc


def _add(doc: Any, parts: list[str], value: Any) -> Any:
    if not parts:
        return value
    parent = _walk(doc, parts[:-1])
    last = parts[-1]
    if isinstance(parent, list):
        parent.insert(len(parent) if last == "-" else int(last), value)
    elif isinstance(parent, dict):
        parent[last] = value
    else:
        raise KeyError(last)
    return doc


def _remove(doc: Any, parts: list[str]) -> Any:
    parent = _walk(doc, parts[:-1])
    last = parts[-1]
    if isinstance(parent, list):
        return parent.pop(int(last))
    return parent.pop(last)


def json_patch(target: Any, operations: Any) -> Any:
    """RFC 6902 JSON patch; a failed ``test`` or a bad path is a 422 as in kube."""
    if not isinstance(operations, list):
        raise bad_request("json patch must be a list of operations")
    doc = copy.deepcopy(target)
    for op in operations:
        try:
            kind = op["op"]
            parts = _pointer(op["path"])
            if kind == "add":
                doc = _add(doc, parts, copy.deepcopy(op["value"]))
            elif kind == "remove":
                _remove(doc, parts)
            elif kind == "replace":
                _walk(doc, parts)  # must exist
                if parts:
                    _remove(doc, parts)
                doc = _add(doc, parts, copy.deepcopy(op["value"]))
            elif kind in ("move", "copy"):
                source = _pointer(op["from"])
                value = _walk(doc, source)
                if kind == "move":
                    _remove(doc, source)
                doc = _add(doc, parts, copy.deepcopy(value))
            elif kind == "test":
                if _walk(doc, parts) != op["value"]:
                    raise ApiError(
                        422, "Invalid", f"the server rejected our request: test failed at {op}"
                    )
            else:
                raise bad_request(f"unknown json patch operation {kind!r}")
        except (KeyError, IndexError, ValueError, TypeError) as e:
            raise ApiError(
                422, "Invalid", f"the server rejected our request due to an error: {op}: {e!r}"
            ) from e
    return doc


def apply_patch(content_type: str, target: dict[str, Any], patch: Any) -> Any:
    """Apply a patch body of the given content type to a copy of ``target``."""
    ctype = content_type.split(";")[0].strip()
    if ctype == MERGE_PATCH:
        return merge_patch(target, patch)
    if ctype == STRATEGIC_MERGE_PATCH:
        return strategic_merge_patch(target, patch)
    if ctype == JSON_PATCH:
        return json_patch(target, patch)
    raise ApiError(
        415, "UnsupportedMediaType", f"the body of the request was in an unknown format: {ctype}"
    )
