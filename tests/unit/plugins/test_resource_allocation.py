"""The resource-allocation scorer's strategies, with Go's integer and float steps."""

from __future__ import annotations

import pytest

from scheduler.plugins import resource_allocation


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
    assert resource_allocation.broken_linear(shape)(p) == want


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
    assert resource_allocation.balanced_resource_scorer(requested, allocatable) == want
