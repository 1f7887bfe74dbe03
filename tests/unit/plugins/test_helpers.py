"""Shared score math: Go integer semantics, DefaultNormalizeScore and the scorers."""

from __future__ import annotations

import pytest

from scheduler.plugins import helpers


@pytest.mark.parametrize(
    ("a", "b", "want"),
    [
        pytest.param(7, 2, 3, id="positive-quotient-truncates"),
        pytest.param(-7, 2, -3, id="negative-quotient-truncates-toward-zero-not-floor"),
        pytest.param(7, -2, -3, id="negative-divisor-truncates-toward-zero"),
        pytest.param(-6, 3, -2, id="exact-negative-division"),
    ],
)
def test_go_div(a: int, b: int, want: int) -> None:
    """Integer division behaves like Go's, not like Python's floor division."""
    assert helpers.go_div(a, b) == want


@pytest.mark.parametrize(
    ("reverse", "scores", "want"),
    [
        pytest.param(False, [0, 0, 0], [0, 0, 0], id="all-zero-stays-zero"),
        pytest.param(True, [0, 0, 0], [100, 100, 100], id="all-zero-reversed-is-max"),
        pytest.param(False, [2, 4, 11], [18, 36, 100], id="scaled-by-max-truncated"),
        pytest.param(True, [0, 1, 2], [100, 50, 0], id="reversed-fewest-wins"),
        pytest.param(True, [1, 3], [67, 0], id="reversed-after-truncation"),
    ],
)
def test_default_normalize_score(reverse: bool, scores: list[int], want: list[int]) -> None:
    """Scores scale to 0..100 by the maximum as kube's helper.DefaultNormalizeScore."""
    helpers.default_normalize_score(100, reverse, scores)
    assert scores == want


@pytest.mark.parametrize(
    ("shape", "p", "want"),
    [
        pytest.param(((0, 100), (100, 0)), 75, 25, id="decreasing-line"),
        pytest.param(((0, 100), (30, 0)), 10, 67, id="negative-slope-truncates-toward-zero"),
        pytest.param(((10, 20), (50, 60)), 0, 20, id="below-first-point-is-first-score"),
        pytest.param(((10, 20), (50, 60)), 90, 60, id="beyond-last-point-is-last-score"),
        pytest.param(((0, 0), (50, 100), (100, 0)), 75, 50, id="three-point-peak"),
    ],
)
def test_broken_linear(shape: tuple[tuple[int, int], ...], p: int, want: int) -> None:
    """The broken-linear function interpolates between shape points with Go integers."""
    assert helpers.broken_linear(shape)(p) == want


@pytest.mark.parametrize(
    ("requested", "allocatable", "want"),
    [
        pytest.param([3000, 5000], [4000, 10000], 87, id="two-resources-std-is-half-difference"),
        pytest.param([3000, 5000], [6000, 10000], 100, id="equal-fractions-score-max"),
        pytest.param([6, 5, 2], [10, 10, 10], 83, id="three-resources-population-std"),
        pytest.param([8000, 5000], [4000, 10000], 75, id="fraction-capped-at-one"),
        pytest.param([5, 0], [10, 0], 100, id="zero-allocatable-resource-left-out"),
    ],
)
def test_balanced_resource_scorer(requested: list[int], allocatable: list[int], want: int) -> None:
    """(1 - std of the usage fractions) * 100, truncated."""
    assert helpers.balanced_resource_scorer(requested, allocatable) == want


@pytest.mark.parametrize(
    ("name", "scalar", "extended"),
    [
        pytest.param("example.com/gpu", True, True, id="domain-prefixed-is-extended"),
        pytest.param("hugepages-2Mi", True, False, id="hugepages-is-scalar-not-extended"),
        pytest.param("kubernetes.io/foo", True, False, id="prefixed-native-is-scalar"),
        pytest.param("cpu", False, False, id="cpu-is-neither"),
        pytest.param("pods", False, False, id="pods-is-neither"),
    ],
)
def test_resource_name_kinds(name: str, scalar: bool, extended: bool) -> None:
    """Resource names are classified as kube's v1helper does."""
    assert helpers.is_scalar_resource_name(name) is scalar
    assert helpers.is_extended_resource_name(name) is extended
