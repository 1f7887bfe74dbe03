"""Go integer arithmetic and kube's DefaultNormalizeScore, shared by the scoring plugins.

kube computes scores on Go integers: division truncates toward zero where Python's ``//``
floors, and a port that used ``//`` would differ on negative intermediate values. Neighbours:
resource_allocation.py, balanced_allocation.py and image_locality.py divide with ``go_div``;
taint_toleration.py and node_affinity.py normalize with ``default_normalize_score``.
"""

from __future__ import annotations

import math


def go_div(a: int, b: int) -> int:
    """``a / b`` on Go integers: the quotient truncated toward zero (Python's ``//`` floors)."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def default_normalize_score(max_priority: int, reverse: bool, scores: list[int]) -> None:
    """kube's helper.DefaultNormalizeScore, in place: scale to 0..max_priority by the maximum.

    All zero: unchanged, or all ``max_priority`` when ``reverse`` (fewest bad things wins).
    """
    max_count = 0
    for value in scores:
        if value > max_count:
            max_count = value
    if max_count == 0:
        if reverse:
            for i in range(len(scores)):
                scores[i] = max_priority
        return
    for i, value in enumerate(scores):
        scaled = go_div(max_priority * value, max_count)
        scores[i] = max_priority - scaled if reverse else scaled


def round_half_away(value: float) -> int:
    """Go's math.Round for a non-negative float (Python's round() rounds half to even)."""
    whole = math.floor(value)
    return int(whole) + (1 if value - whole >= 0.5 else 0)
