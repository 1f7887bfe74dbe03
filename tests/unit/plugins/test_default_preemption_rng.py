"""DefaultPreemption's offset source: derived from the profile's, never a replay of it."""

from __future__ import annotations

from scheduler.cache.cluster_state import ClusterState
from scheduler.plugins.default_preemption import DefaultPreemption
from tests.harness import profile_for


def _offsets(seed: int) -> list[int]:
    plugin = DefaultPreemption({}, profile_for(ClusterState(), seed=seed))
    return [plugin.offset_and_num_candidates(1000)[0] for _ in range(8)]


def test_offsets_do_not_repeat_the_profiles_draws() -> None:
    """The dry run's offsets are not the profile's tie-break draws, and leave them unmoved."""
    profile = profile_for(ClusterState(), seed=7)
    before = profile.rng.getstate()
    plugin = DefaultPreemption({}, profile)
    assert profile.rng.getstate() == before
    offsets = [plugin.offset_and_num_candidates(1000)[0] for _ in range(8)]
    assert offsets != [profile.rng.randrange(1000) for _ in range(8)]


def test_offsets_are_reproducible_with_the_seed() -> None:
    """Same profile seed, same offsets; another seed, others."""
    assert _offsets(3) == _offsets(3)
    assert _offsets(3) != _offsets(4)
