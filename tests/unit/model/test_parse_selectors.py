"""label_selector_from_raw / node_selector_term_from_raw: records, canonical form, matching."""

from __future__ import annotations

import pytest

from scheduler.model.errors import ModelError
from scheduler.model.labels import LabelSelector, NodeSelectorTerm, Operator, Requirement
from scheduler.model.parse import (
    is_scalar_resource_name,
    label_selector_from_raw,
    node_selector_term_from_raw,
)

OBJ = "Pod ns/p"


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        pytest.param({}, LabelSelector(), id="empty-matches-everything"),
        pytest.param(
            {"matchLabels": {"b": "2", "a": "1"}},
            LabelSelector(
                (Requirement("a", Operator.IN, ("1",)), Requirement("b", Operator.IN, ("2",)))
            ),
            id="match-labels-sorted-by-key",
        ),
        pytest.param(
            {"matchExpressions": [{"key": "a", "operator": "In", "values": ["y", "x", "y"]}]},
            LabelSelector((Requirement("a", Operator.IN, ("x", "y")),)),
            id="values-sorted-and-deduplicated",
        ),
        pytest.param(
            {
                "matchLabels": {"a": "1"},
                "matchExpressions": [{"key": "a", "operator": "In", "values": ["1"]}],
            },
            LabelSelector((Requirement("a", Operator.IN, ("1",)),)),
            id="duplicate-requirement-dropped",
        ),
        pytest.param(
            {
                "matchExpressions": [
                    {"key": "a", "operator": "Exists"},
                    {"key": "a", "operator": "DoesNotExist", "values": []},
                ]
            },
            LabelSelector(
                (Requirement("a", Operator.DOES_NOT_EXIST), Requirement("a", Operator.EXISTS))
            ),
            id="contradiction-kept-matches-nothing",
        ),
    ],
)
def test_label_selector(raw: dict[str, object], expected: LabelSelector) -> None:
    """Label selectors parse to canonical requirement tuples."""
    assert label_selector_from_raw(raw, obj=OBJ, field="s") == expected


@pytest.mark.parametrize(
    ("raw", "labels", "node", "matches"),
    [
        pytest.param({}, {}, "n", False, id="empty-term-matches-no-node"),
        pytest.param(
            {"matchExpressions": [{"key": "cpu", "operator": "Gt", "values": ["8"]}]},
            {"cpu": "16"},
            "n",
            True,
            id="gt",
        ),
        pytest.param(
            {"matchExpressions": [{"key": "cpu", "operator": "Lt", "values": ["8"]}]},
            {"cpu": "16"},
            "n",
            False,
            id="lt",
        ),
        pytest.param(
            {"matchExpressions": [{"key": "cpu", "operator": "Gt", "values": ["-3"]}]},
            {"cpu": "-2"},
            "n",
            True,
            id="gt-negative",
        ),
        pytest.param(
            {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]},
            {},
            "n1",
            True,
            id="field-in",
        ),
        pytest.param(
            {"matchFields": [{"key": "metadata.name", "operator": "NotIn", "values": ["n1"]}]},
            {},
            "n1",
            False,
            id="field-notin",
        ),
        pytest.param(
            {
                "matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}],
                "matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}],
            },
            {"zone": "b"},
            "n1",
            False,
            id="expressions-and-fields-both-must-hold",
        ),
    ],
)
def test_node_selector_term(
    raw: dict[str, object], labels: dict[str, str], node: str, matches: bool
) -> None:
    """Node-selector terms parse and match labels and the node name."""
    term = node_selector_term_from_raw(raw, obj=OBJ, field="t")
    assert isinstance(term, NodeSelectorTerm)
    assert term.matches(labels, node) is matches


@pytest.mark.parametrize(
    ("raw", "field"),
    [
        pytest.param(
            {"matchExpressions": {"key": "a"}}, "t.matchExpressions", id="expressions-not-a-list"
        ),
        pytest.param(
            {"matchExpressions": [{"operator": "Exists"}]},
            "t.matchExpressions[0].key",
            id="missing-key",
        ),
        pytest.param(
            {"matchExpressions": [{"key": "a"}]},
            "t.matchExpressions[0].operator",
            id="missing-operator",
        ),
        pytest.param(
            {"matchExpressions": [{"key": "a", "operator": "in", "values": ["x"]}]},
            "t.matchExpressions[0].operator",
            id="operator-case-matters",
        ),
        pytest.param(
            {"matchExpressions": [{"key": "a", "operator": "In", "values": "x"}]},
            "t.matchExpressions[0].values",
            id="values-not-a-list",
        ),
        pytest.param(
            {"matchExpressions": [{"key": "a", "operator": "In", "values": [1]}]},
            "t.matchExpressions[0].values[0]",
            id="value-not-a-string",
        ),
        pytest.param(
            {"matchExpressions": [{"key": "a", "operator": "Gt", "values": ["1.5"]}]},
            "t.matchExpressions[0].values[0]",
            id="gt-fraction",
        ),
        pytest.param(
            {"matchExpressions": [{"key": "a", "operator": "Gt", "values": [str(2**63)]}]},
            "t.matchExpressions[0].values[0]",
            id="gt-beyond-int64",
        ),
        pytest.param(
            {"matchFields": [{"key": "metadata.labels", "operator": "In", "values": ["x"]}]},
            "t.matchFields[0].key",
            id="unsupported-field",
        ),
    ],
)
def test_node_selector_term_errors(raw: dict[str, object], field: str) -> None:
    """Invalid node-selector terms name the exact field."""
    with pytest.raises(ModelError) as info:
        node_selector_term_from_raw(raw, obj=OBJ, field="t")
    assert info.value.field == field
    assert info.value.obj == OBJ


@pytest.mark.parametrize(
    ("name", "scalar"),
    [
        pytest.param("nvidia.com/gpu", True, id="extended"),
        pytest.param("hugepages-2Mi", True, id="hugepages"),
        pytest.param("attachable-volumes-aws-ebs", True, id="attachable-volumes"),
        pytest.param("kubernetes.io/something", True, id="prefixed-native"),
        pytest.param("widgets", False, id="no-domain"),
        pytest.param("Bad_Domain.com/x", False, id="invalid-domain"),
        pytest.param("example.com/", False, id="empty-name"),
    ],
)
def test_scalar_resource_names(name: str, scalar: bool) -> None:
    """Only names kube's IsScalarResourceName accepts are accounted."""
    assert is_scalar_resource_name(name) is scalar
