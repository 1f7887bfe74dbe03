"""Go integer semantics and kube's DefaultNormalizeScore."""

from __future__ import annotations

import pytest

from scheduler.plugins import score_math


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
    assert score_math.go_div(a, b) == want


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
    score_math.default_normalize_score(100, reverse, scores)
    assert scores == want
