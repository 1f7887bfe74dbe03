"""Figures from samples: a percentile of latencies, and the medians over repeats that the
reports of :mod:`bench.e2e` and :mod:`bench.real` show, one row per group of records."""

from __future__ import annotations

import statistics
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

Record = dict[str, Any]


def percentile(values: list[float], q: float) -> float | None:
    """The nearest-rank ``q`` quantile of ``values``; None when there are none."""
    if not values:
        return None
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))
    return ordered[index]


def rounded(value: float | None, digits: int) -> float | None:
    """``value`` rounded to ``digits``, None kept."""
    return None if value is None else round(value, digits)


def median_fields(records: list[Record], *keys: str) -> dict[str, Any]:
    """The median of each of ``keys`` over ``records`` (None values left out; None if all)."""
    out: dict[str, Any] = {}
    for key in keys:
        values = [r[key] for r in records if r[key] is not None]
        out[key] = statistics.median(values) if values else None
    return out


def grouped_medians(
    records: list[Record],
    by: Sequence[str],
    fields: Sequence[str],
    more: Callable[[list[Record]], dict[str, Any]] | None = None,
) -> list[Record]:
    """One row per distinct value of the ``by`` keys, in order of first appearance: those
    keys, ``pods`` (of the first record), ``repeats``, ``complete`` (every record was), the
    median of each of ``fields``, then what ``more`` makes of the group's records."""
    groups: dict[tuple[Any, ...], list[Record]] = {}
    for r in records:
        groups.setdefault(tuple(r[key] for key in by), []).append(r)
    rows = []
    for values, rs in groups.items():
        row: Record = dict(zip(by, values, strict=True))
        row.update(pods=rs[0]["pods"], repeats=len(rs), complete=all(r["complete"] for r in rs))
        row.update(median_fields(rs, *fields))
        if more is not None:
            row.update(more(rs))
        rows.append(row)
    return rows
