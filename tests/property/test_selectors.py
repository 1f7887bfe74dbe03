"""Selector matching laws (complements, integer comparisons) on parsed selectors."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from scheduler.model.labels import Operator, Requirement
from scheduler.model.parse import label_selector_from_raw, node_selector_term_from_raw

OBJ = "Pod default/p"
KEYS = ["app", "tier", "example.com/zone"]

keys = st.sampled_from(KEYS)
label_values = st.text(alphabet="abc01", min_size=1, max_size=3)
label_sets = st.dictionaries(keys, label_values, max_size=3)
value_lists = st.lists(label_values, min_size=1, max_size=3)

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
int64s = st.integers(INT64_MIN, INT64_MAX)


def term(key: str, op: str, values: list[str] | None = None) -> Requirement:
    """A parsed node-selector requirement (the parser's validation included)."""
    expr: dict[str, object] = {"key": key, "operator": op}
    if values is not None:
        expr["values"] = values
    parsed = node_selector_term_from_raw({"matchExpressions": [expr]}, obj=OBJ, field="t")
    (req,) = parsed.match_expressions
    return req


@given(keys, value_lists, label_sets)
def test_in_and_notin_are_complements(key: str, values: list[str], labels: dict[str, str]) -> None:
    """For the same key and values, exactly one of In and NotIn matches."""
    assert term(key, "In", values).matches(labels) != term(key, "NotIn", values).matches(labels)


@given(keys, label_sets)
def test_exists_and_doesnotexist_are_complements(key: str, labels: dict[str, str]) -> None:
    """Exactly one of Exists and DoesNotExist matches, and Exists means the key is set."""
    exists = term(key, "Exists").matches(labels)
    assert exists != term(key, "DoesNotExist").matches(labels)
    assert exists == (key in labels)


@given(int64s, int64s)
def test_gt_lt_compare_as_integers(have: int, want: int) -> None:
    """Gt and Lt compare a label's integer value with the operand, numerically."""
    labels = {"n": str(have)}
    assert term("n", "Gt", [str(want)]).matches(labels) == (have > want)
    assert term("n", "Lt", [str(want)]).matches(labels) == (have < want)


@given(int64s)
def test_gt_lt_never_match_a_missing_label(want: int) -> None:
    """Without the label, neither Gt nor Lt matches."""
    assert not term("n", "Gt", [str(want)]).matches({})
    assert not term("n", "Lt", [str(want)]).matches({})


@given(st.text(alphabet="abcxyz.-", min_size=1, max_size=6), int64s)
def test_gt_lt_never_match_a_non_numeric_label(value: str, want: int) -> None:
    """A label value that is not an integer matches neither Gt nor Lt."""
    labels = {"n": value}
    assert not term("n", "Gt", [str(want)]).matches(labels)
    assert not term("n", "Lt", [str(want)]).matches(labels)


@pytest.mark.parametrize(
    "value",
    [
        pytest.param("1_0", id="underscore-is-a-valid-label-value"),
        pytest.param("99999999999999999999", id="beyond-int64"),
    ],
)
def test_gt_ignores_values_go_cannot_parse(value: str) -> None:
    """Label values Go's ParseInt rejects match neither Gt nor Lt."""
    labels = {"n": value}
    assert not (term("n", "Gt", ["0"]).matches(labels))
    assert not (term("n", "Lt", ["0"]).matches(labels))


@given(st.dictionaries(keys, label_values, max_size=3), label_sets)
def test_match_labels_is_a_subset_test(wanted: dict[str, str], labels: dict[str, str]) -> None:
    """matchLabels matches exactly the label sets that contain every wanted pair."""
    selector = label_selector_from_raw({"matchLabels": wanted}, obj=OBJ, field="s")
    assert selector.matches(labels) == (wanted.items() <= labels.items())


@given(
    st.lists(
        st.tuples(keys, st.sampled_from(["In", "NotIn", "Exists", "DoesNotExist"]), value_lists),
        max_size=4,
    ),
    label_sets,
    st.data(),
)
def test_expression_order_does_not_matter(
    exprs: list[tuple[str, str, list[str]]], labels: dict[str, str], data: st.DataObject
) -> None:
    """Shuffling matchExpressions gives an equal selector that matches the same labels."""
    raw = [
        {"key": k, "operator": op, **({"values": vs} if op in ("In", "NotIn") else {})}
        for k, op, vs in exprs
    ]
    shuffled = data.draw(st.permutations(raw))
    a = label_selector_from_raw({"matchExpressions": raw}, obj=OBJ, field="s")
    b = label_selector_from_raw({"matchExpressions": shuffled}, obj=OBJ, field="s")
    assert a == b
    expected = all(
        term(k, op, vs if op in ("In", "NotIn") else None).matches(labels) for k, op, vs in exprs
    )
    assert a.matches(labels) == expected


def test_operator_enum_is_closed() -> None:
    """The operators the parser accepts are exactly kube's six."""
    assert {o.value for o in Operator} == {"In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"}
