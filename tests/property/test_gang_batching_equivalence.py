"""A pod group's cycle places its members as placing them one by one would (issue 38): the
two claims of ``bench/gang_differential.py`` (the group cycle is its members one by one;
batching a group changes speed, not outcomes) on a sample of its seeded scenarios — gangs
and basic groups, some spread by host or zone, mixed with plain pods, nodes filling up."""

from __future__ import annotations

import pytest

from bench.gang_differential import compare, scenario

SEEDS = range(16)


@pytest.mark.parametrize("seed", SEEDS)
def test_group_cycle_against_one_by_one(seed: int) -> None:
    """Every pod where the one-by-one reference puts it, as many per entity with batching
    on, and no batched decision a full pass would not make."""
    differences, paths = compare(seed, scenario(seed))
    assert differences == []
    assert paths  # decisions were made


def test_the_sample_takes_every_path() -> None:
    """The sample reaches the hint, rescore and exact paths and full passes."""
    seen: dict[str, float] = {}
    for seed in SEEDS:
        for path, count in compare(seed, scenario(seed))[1].items():
            seen[path] = seen.get(path, 0.0) + count
    assert {"full", "hint", "rescore", "exact"} <= set(seen)
