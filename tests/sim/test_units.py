"""Selectors and patches as pure functions, table-driven."""

from __future__ import annotations

from typing import Any

import pytest

from scheduler.sim import errors, patching, selectors

OBJ = {
    "metadata": {"name": "p1", "namespace": "ns", "labels": {"app": "web", "tier": "db"}},
    "spec": {"nodeName": "", "schedulerName": "batch-scheduler"},
    "status": {"phase": "Pending"},
}


@pytest.mark.parametrize(
    ("selector", "expected"),
    [
        pytest.param("app=web", True, id="equality-matches"),
        pytest.param("app==web", True, id="double-equals"),
        pytest.param("app!=web", False, id="inequality"),
        pytest.param("app in (x, web)", True, id="in-set"),
        pytest.param("app notin (web)", False, id="notin-set"),
        pytest.param("tier", True, id="exists"),
        pytest.param("!tier", False, id="not-exists"),
        pytest.param("!missing,app=web", True, id="and-of-terms"),
        pytest.param("app in (a,b),tier=db", False, id="comma-inside-parens-is-not-a-term-split"),
        pytest.param("missing!=x", True, id="inequality-on-missing-label"),
    ],
)
def test_label_selector(selector: str, expected: bool) -> None:
    """Each label selector form matches as kube's labels.Parse does."""
    pred = selectors.parse_label_selector(selector)
    assert pred is not None
    assert pred(OBJ) is expected


@pytest.mark.parametrize(
    ("selector", "expected"),
    [
        pytest.param("spec.nodeName=", True, id="empty-value-matches-unassigned"),
        pytest.param("spec.nodeName!=", False, id="not-empty"),
        pytest.param("metadata.name=p1,metadata.namespace=ns", True, id="name-and-namespace"),
        pytest.param("status.phase==Running", False, id="phase"),
        pytest.param("spec.schedulerName=batch-scheduler", True, id="scheduler-name"),
    ],
)
def test_field_selector(selector: str, expected: bool) -> None:
    """Field selectors compare the string value of dotted paths; missing reads as empty."""
    pred = selectors.parse_field_selector(selector)
    assert pred is not None
    assert pred(OBJ) is expected


def test_bad_selector_is_400() -> None:
    """An unparsable field selector is a 400 BadRequest, as kube answers."""
    with pytest.raises(errors.ApiError) as exc:
        selectors.parse_field_selector("spec.nodeName")
    assert exc.value.code == 400


def _pod(conds: list[dict[str, Any]]) -> dict[str, Any]:
    return {"metadata": {"name": "p"}, "status": {"conditions": conds}}


def test_strategic_merge_merges_conditions_by_type() -> None:
    """Strategic merge updates a condition of the same type and keeps the others."""
    base = _pod([{"type": "Ready", "status": "False"}, {"type": "PodScheduled", "status": "True"}])
    patch = {"status": {"conditions": [{"type": "PodScheduled", "status": "False"}]}}
    out = patching.apply_patch(patching.STRATEGIC_MERGE_PATCH, base, patch)
    assert out["status"]["conditions"] == [
        {"type": "Ready", "status": "False"},
        {"type": "PodScheduled", "status": "False"},
    ]
    assert base["status"]["conditions"][1]["status"] == "True", "input must not change"


def test_merge_patch_replaces_lists_and_deletes_nulls() -> None:
    """RFC 7386: lists are replaced wholesale and null removes a key."""
    base = {"metadata": {"labels": {"a": "1", "b": "2"}}, "spec": {"l": [1, 2]}}
    patch = {"metadata": {"labels": {"a": None}}, "spec": {"l": [3]}}
    out = patching.apply_patch(patching.MERGE_PATCH, base, patch)
    assert out == {"metadata": {"labels": {"b": "2"}}, "spec": {"l": [3]}}


def test_strategic_merge_directives() -> None:
    """$patch: delete removes a keyed element and $setElementOrder is ignored."""
    base = {"spec": {"containers": [{"name": "a"}, {"name": "b"}], "finalizers": ["x"]}}
    patch = {
        "spec": {
            "$setElementOrder/containers": [{"name": "b"}],
            "containers": [{"name": "a", "$patch": "delete"}],
            "finalizers": ["y"],
        }
    }
    out = patching.apply_patch(patching.STRATEGIC_MERGE_PATCH, base, patch)
    assert out["spec"] == {"containers": [{"name": "b"}], "finalizers": ["x", "y"]}


def test_json_patch_ops_and_failed_test() -> None:
    """RFC 6902 add/replace/remove work; a failing test op is a 422."""
    base = {"metadata": {"labels": {"a": "1"}}, "spec": {"l": [1]}}
    ops = [
        {"op": "add", "path": "/spec/l/-", "value": 2},
        {"op": "replace", "path": "/metadata/labels/a", "value": "9"},
        {"op": "remove", "path": "/spec/l/0"},
    ]
    out = patching.apply_patch(patching.JSON_PATCH, base, ops)
    assert out == {"metadata": {"labels": {"a": "9"}}, "spec": {"l": [2]}}
    with pytest.raises(errors.ApiError) as exc:
        patching.apply_patch(
            patching.JSON_PATCH, base, [{"op": "test", "path": "/spec/l/0", "value": 5}]
        )
    assert exc.value.code == 422
