"""Batching edge cases decided as kube-scheduler v1.37 decides them (issue 14).

kube's ``runtime/batch.go``: one scheduling-cycle counter for the whole scheduler, an empty
cached list is no state, equal scores leave the ranking in random order; and
``--batching-verify-ratio`` (ours) must never change a decision.
"""

from __future__ import annotations

from collections import defaultdict

from scheduler.model.parse import pod_from_raw
from tests.batch_counts import attempts, flushes, rescores
from tests.builders import make_node, make_pod
from tests.harness import config_with, drain, scheduler_for

SEEDS = range(20)


def test_other_profile_pod_in_between_breaks_the_batch() -> None:
    """Profiles a and b on three 4-CPU nodes: a1 (1 CPU), b1 (2 CPU), a2 (1 CPU). b1's cycle
    breaks a's continuity (kube: pod_skipped), so a2 gets a full pass and the empty node."""
    config = config_with(profiles=[{"schedulerName": "a"}, {"schedulerName": "b"}])
    for seed in SEEDS:
        scheduler, _, _ = scheduler_for(
            [make_node(f"n{i}") for i in range(3)], config=config, seed=seed
        )
        placed: dict[str, str | None] = {}
        for name, cpu, profile in (("a1", "1", "a"), ("b1", "2", "b"), ("a2", "1", "a")):
            scheduler.enqueue(pod_from_raw(make_pod(name, cpu=cpu, scheduler_name=profile)))
            placed.update(drain(scheduler))
        assert len(set(placed.values())) == 3, (seed, placed)
        assert flushes(scheduler, "a") == {"pod_skipped": 1}
        assert scheduler.counts().batched == 0


def test_same_profile_run_keeps_batching() -> None:
    """The same three pods all of profile a: no pod in between, a2 is hinted."""
    config = config_with(profiles=[{"schedulerName": "a"}, {"schedulerName": "b"}])
    scheduler, _, _ = scheduler_for([make_node(f"n{i}") for i in range(3)], config=config)
    for name in ("a1", "a2"):
        scheduler.enqueue(pod_from_raw(make_pod(name, cpu="1", scheduler_name="a")))
    drain(scheduler)
    assert scheduler.counts().batched == 1
    assert flushes(scheduler, "a") == {}


def _small_pods_on_big_nodes(seed: int, *, fast: bool) -> list[str | None]:
    scheduler, _, _ = scheduler_for(
        [make_node(f"n{i}", cpu="64") for i in range(4)], seed=seed, fast_rescore=fast
    )
    for i in range(6):
        scheduler.enqueue(pod_from_raw(make_pod(f"p{i}", cpu="100m")))
    placed = drain(scheduler)
    assert rescores(scheduler) == 5
    return [placed[f"default/p{i}"] for i in range(6)]


def test_fast_and_full_rescore_order_ties_alike() -> None:
    """Six 100m pods on four 64-CPU nodes: the fast and the full rescore path put the rescored
    node at the same place among equal scores, so the same seed places every pod alike."""
    placements = set()
    for seed in SEEDS:
        fast = _small_pods_on_big_nodes(seed, fast=True)
        full = _small_pods_on_big_nodes(seed, fast=False)
        assert fast == full, seed
        placements.add(tuple(fast))
    assert len(placements) > 1  # ties are drawn, not fixed by node index


def test_remaining_ties_leave_in_random_order() -> None:
    """Four equal nodes, one 3-CPU pod per node: after the first pick, the tied rest is not
    popped in index order but, as kube's heap with random tie-breakers, in varying order."""
    orders: dict[str | None, set[tuple[str | None, ...]]] = defaultdict(set)
    for seed in range(40):
        scheduler, _, _ = scheduler_for([make_node(f"n{i}") for i in range(4)], seed=seed)
        for i in range(4):
            scheduler.enqueue(pod_from_raw(make_pod(f"p{i}", cpu="3")))
        placed = drain(scheduler)
        sequence = tuple(placed[f"default/p{i}"] for i in range(4))
        assert scheduler.counts().batched == 3
        orders[sequence[0]].add(sequence[1:])
    assert all(len(rest) > 1 for rest in orders.values()), dict(orders)


def test_exhausted_list_is_a_full_pass_even_if_the_last_node_still_fits() -> None:
    """An empty cached list is no state (kube's stateEmpty): the pod gets a full pass, though
    the node chosen last could take it, and nothing is flushed."""
    scheduler, _, _ = scheduler_for([make_node(f"n{i}", cpu="64") for i in range(3)])
    batch = scheduler.batches["batch-scheduler"]
    scheduler.enqueue(pod_from_raw(make_pod("a", cpu="100m")))
    drain(scheduler)
    assert batch.state is not None
    batch.state.sort()
    batch.state.order.clear()  # as if every kept node had been handed out
    batch.state.keys.clear()
    scheduler.enqueue(pod_from_raw(make_pod("b", cpu="100m")))
    drain(scheduler)
    assert scheduler.counts().full_passes == 2
    assert scheduler.counts().batched == 0
    assert flushes(scheduler) == {}
    assert rescores(scheduler) == 0
    assert attempts(scheduler) == {"no_hint": 2}
    assert batch.state is not None  # rebuilt by the pass
    assert batch.state.width - 1 == 2  # kept, to be sorted when a hint is asked


def _mixed_run(seed: int, verify: float) -> tuple[dict[str, str | None], int]:
    """Runs of two pod shapes on equal nodes: hints (verified or not) and full passes."""
    scheduler, _, _ = scheduler_for(
        [make_node(f"n{i}", cpu="16") for i in range(6)], seed=seed, verify_ratio=verify
    )
    for block in range(4):
        cpu = "1" if block % 2 == 0 else "2"
        for i in range(4):
            scheduler.enqueue(pod_from_raw(make_pod(f"b{block}-p{i}", cpu=cpu)))
    placed = drain(scheduler)
    assert scheduler.counts().divergences == 0
    return placed, scheduler.counts().verified


def test_verification_never_changes_a_decision() -> None:
    """Same seed, --batching-verify-ratio 0 vs 1: identical placements (the verifying passes
    rotate and draw from their own selector, not the profile's)."""
    for seed in SEEDS:
        unverified, none = _mixed_run(seed, 0.0)
        verified, checked = _mixed_run(seed, 1.0)
        assert none == 0
        assert checked > 0
        assert verified == unverified, seed
